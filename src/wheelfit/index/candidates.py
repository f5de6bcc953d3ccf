"""Gathering the candidates: the builds the PyTorch index (or a mirror) really has, with the knowledge base's facts.

The index says what exists; the knowledge says what it holds. For each variant the knowledge base lists for
the machine's kind of GPU (and ``cpu``), ``<base>/<variant>/torch/`` is read (in parallel, cached,
revalidated). A knowledge-base build that is not on its page becomes a candidate with no files, which the
planner turns down as absent; a build on the page that the knowledge base does not know (a release newer than
it) becomes a candidate with inferred facts. When the index cannot be reached at all, the knowledge base alone
is used and the candidates say so. Once a plan is made, the companions it pins are looked up on the same index
(:func:`check_companions`). This module does I/O; the candidates it returns are plain values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..candidates.knowledge import infer_candidate, knowledge_set
from ..candidates.model import Candidate, CandidateSet, Fact
from ..fetch.errors import NetworkError
from ..kb.matrix import Knowledge
from ..kinds import BuildKind, Confidence, Mode
from ..resolve.machine import Machine, ResolveError
from ..resolve.plan import PackagePin, Plan
from ..resolve.request import TRITONS
from ..simple.errors import IndexPageError, NoMatchingFileError, OfflineError, ProjectNotFoundError
from ..simple.filenames import parse_wheel_name as parse_plain_wheel_name
from ..simple.links import FileLink
from ..simple.select import select_wheel
from ..variants.errors import VariantError
from ..variants.filename import parse_wheel_name
from .client import IndexClient, project_url

__all__ = ["check_companions", "gather_candidates", "labels_to_read", "triton_from_metadata"]

#: Pages read at once: download.pytorch.org serves HTTP/1.1, one connection per page.
_PARALLEL = 8


@dataclass(frozen=True)
class _Page:
    label: str
    url: str
    #: ``None``: not read (offline and not cached, or the network failed: ``error`` says which).
    links: tuple[FileLink, ...] | None
    error: str | None = None
    #: Not read because wheelfit is offline and the page is not cached (not a failure of the index).
    offline: bool = False


def _kinds(machine: Machine) -> set[BuildKind]:
    """The kinds of build worth reading for this machine: its GPU's, and the CPU build."""
    kinds = {BuildKind.CPU}
    if machine.gpus is not None and machine.gpus.kind.gpu_build:
        kinds.add(machine.gpus.kind)
    return kinds


def labels_to_read(candidates: Sequence[Candidate], machine: Machine) -> list[str]:
    """The per-variant indexes worth reading for this machine (:func:`_kinds`)."""
    kinds = _kinds(machine)
    return list(dict.fromkeys(c.label for c in candidates if c.kind in kinds))


def gather_candidates(
    kb: Knowledge,
    machine: Machine,
    index: IndexClient | None,
    base: str,
    *,
    project: str = "torch",
    pre: bool = False,
    label: str | None = None,
) -> CandidateSet:
    """The candidates for ``machine``: the knowledge base's builds checked against the index at ``base``
    (``<base>/<label>/<project>/``), plus the index's builds that are newer than the knowledge base; with ``pre``
    also the builds of the knowledge base's lines not released yet: release candidates of a test-channel line
    (``<base>/test/<label>/``) and nightly builds of a nightly line (``<base>/nightly/<label>/``).
    ``label`` (the user's chosen build, ``cu128``): that variant's page alone is read, whether or not the knowledge
    base lists it for the machine's kind of GPU. ``index=None`` plans from the knowledge base alone."""
    # what every answer says: the knowledge base's builds, its span and date, its facts about the platform
    facts = knowledge_set(kb, machine.platform_key, jetson=machine.jetson)
    known = facts.candidates
    channels = {c: _channel_labels(kb, machine, c) if pre else [] for c in _PRE_CHANNELS}
    if label is not None:
        channels = {c: [x for x in labels if x == label] for c, labels in channels.items()}
    channels = {c: labels for c, labels in channels.items() if labels}
    if index is None:
        where = ", ".join(f"{base.rstrip('/')}/{c}" for c in channels)
        unread = f"--pre: nightly builds and release candidates are planned only from the index ({where}), "
        unread += "not read here"
        return replace(facts, notes=(unread,) if channels else ())
    base = base.rstrip("/")
    unreleased: list[Candidate] = []
    for channel, labels in channels.items():
        unreleased += _prerelease(kb, machine, index, base, channel, labels, project)
    pages = _read(index, base, [label] if label is not None else labels_to_read(known, machine), project)
    read = {p.label: p for p in pages if p.links is not None}
    failed = [p for p in pages if p.links is None]
    if not read:
        why = (failed[0].error if failed else None) or "no page to read"
        if failed and failed[0].offline:
            note = f"--offline and no cached pages of {base}: planned from the knowledge base alone"
        else:
            note = f"could not read the PyTorch index {base} ({why}): planned from the knowledge base alone"
        return replace(facts, candidates=(*known, *unreleased), notes=(note,))
    by_build = {label: _by_build(page.links or (), label, machine, project) for label, page in read.items()}
    listed = tuple(sorted({v for builds in by_build.values() for v in builds}, reverse=True))
    # A release candidate the release index now has too (released under the same version): the release's wins.
    candidates = [c for c in unreleased if c.version not in by_build.get(c.label, {})]
    out: list[Candidate] = []
    for c in known:
        page = read.get(c.label)
        if page is None:  # not read
            out.append(c)
            continue
        files = by_build[c.label].pop(c.version, ())
        said = f"torch {c.version}+{c.label} is {'on' if files else 'not on'} the index"
        exists = Fact(said, Confidence.PRIMARY, page.url)
        out.append(replace(c, files=tuple(files), index_url=f"{base}/{c.label}", facts={**c.facts, "exists": exists}))
    out += candidates
    newest = max((c.version for c in known), default=None)
    series = {c.series for c in known}
    for label, builds in by_build.items():
        for version, files in builds.items():
            if version.is_devrelease or not (
                newest is None or version > newest or f"{version.major}.{version.minor}" in series
            ):
                continue  # an older release the knowledge base never covered: nothing to infer from
            inferred = infer_candidate(kb, machine.platform_key, version, label, files, f"{base}/{label}")
            if inferred is not None:
                out.append(inferred)
    notes: list[str] = []
    if failed:
        names = ", ".join(p.label for p in failed)
        notes.append(
            f"could not read {names} on {base} ({failed[0].error}): those builds are from the knowledge base alone"
        )
    return replace(
        facts, candidates=tuple(out), index=base, index_complete=not failed, index_versions=listed, notes=tuple(notes)
    )


#: The channels of lines not released yet, each an index beside the release one (``<base>/<channel>/<label>/``).
_PRE_CHANNELS = ("test", "nightly")


def _channel_labels(kb: Knowledge, machine: Machine, channel: str) -> list[str]:
    """The variants of the knowledge base's lines of ``channel`` worth reading for this machine (:func:`_kinds`)."""
    kinds = _kinds(machine)
    labels: list[str] = []
    for release in kb.releases_newest_first(pre=True):
        builds = release.platform(machine.platform_key)
        if release.channel == channel and builds is not None:
            labels += [v.label for v in builds.variants.values() if v.kind in kinds]
    return list(dict.fromkeys(labels))


def _prerelease(
    kb: Knowledge,
    machine: Machine,
    index: IndexClient,
    base: str,
    channel: str,
    labels: Sequence[str],
    project: str,
) -> list[Candidate]:
    """The builds on ``<base>/<channel>/<label>/`` of the knowledge base's lines of that channel, with their facts:
    a nightly line's dev builds (2.17.0.dev20261201), a test channel's release candidates (2.16.0)."""
    lines = [r for r in kb.releases_newest_first(pre=True) if r.channel == channel]
    out: list[Candidate] = []
    for page in _read(index, f"{base}/{channel}", labels, project):
        for version, files in _by_build(page.links or (), page.label, machine, project).items():
            if any(r.builds_version(version) for r in lines):
                url = f"{base}/{channel}/{page.label}"
                found = infer_candidate(kb, machine.platform_key, version, page.label, files, url)
                if found is not None:
                    out.append(found)
    return out


def _read(index: IndexClient, base: str, labels: Sequence[str], project: str) -> list[_Page]:
    """Every label's page; the first alone first, so an unreachable index costs one page's retries, not all."""
    if not labels:
        return []
    first = _page(index, base, labels[0], project)
    if first.links is None and not first.offline:
        return [first] + [_Page(label, _url(base, label, project), None, first.error) for label in labels[1:]]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=_PARALLEL) as pool:
        rest = list(pool.map(lambda label: _page(index, base, label, project), labels[1:]))
    return [first, *rest]


def _page(index: IndexClient, base: str, label: str, project: str) -> _Page:
    return _project_page(index, f"{base}/{label}", label, project)


def _project_page(index: IndexClient, index_url: str, label: str, project: str) -> _Page:
    url = project_url(index_url, project)
    try:
        page = index.project_page(index_url, project)
    except ProjectNotFoundError:
        return _Page(label, url, ())
    except OfflineError:
        return _Page(label, url, None, "offline, and the page is not cached", offline=True)
    except NetworkError as exc:
        return _Page(label, url, None, exc.detail)
    return _Page(label, page.url, page.links)


def _url(base: str, label: str, project: str) -> str:
    return project_url(f"{base}/{label}", project)


def _by_build(links: Sequence[FileLink], label: str, machine: Machine, project: str) -> dict[Version, list[FileLink]]:
    """The page's wheels of the project and label by public version (macOS wheels carry no local label)."""
    macos = machine.platform_key.startswith("macos")
    name = canonicalize_name(project)
    out: dict[Version, list[FileLink]] = {}
    for link in links:
        try:
            wheel = parse_wheel_name(link.filename)
        except VariantError:
            continue
        local = wheel.version.local
        if wheel.label is not None or wheel.name != name or not (local == label or (macos and local is None)):
            continue
        out.setdefault(Version(wheel.version.public), []).append(link)
    return out


def triton_from_metadata(plan: Plan, cset: CandidateSet, machine: Machine, index: IndexClient) -> Plan:
    """A Triton pin the knowledge base could not give (a torch newer than it), read from the chosen torch wheel's own
    Requires-Dist (its PEP 658 metadata file, never the wheel itself). The plan as it was when the index serves no
    metadata file or it cannot be read; without Triton (and saying so) when this torch requires none here."""
    wanted = [p for p in plan.packages if p.name in TRITONS and any(f.inferred for f in p.uncertain)]
    torch = plan.packages[0]
    if not wanted or torch.filename is None:
        return plan
    link = next((f for c in cset.candidates for f in c.files or () if f.filename == torch.filename), None)
    if link is None or link.core_metadata is False:
        return plan
    try:
        metadata = index.core_metadata(link)
    except (IndexPageError, NetworkError, OfflineError):
        return plan
    env = {**machine.markers, "extra": ""}
    pinned: Requirement | None = None
    from email.parser import BytesParser  # ~8 ms to import: only when torch's metadata is read

    for text in BytesParser().parsebytes(metadata, headersonly=True).get_all("Requires-Dist") or []:
        try:
            req = Requirement(str(text))
        except InvalidRequirement:
            continue
        if canonicalize_name(req.name) in TRITONS and (req.marker is None or req.marker.evaluate(env)):
            pinned = req
            break
    pin = wanted[0]
    others = tuple(p for p in plan.packages if p is not pin)
    if pinned is None:
        note = f"{pin.name} is not planned: torch {plan.torch_version}+{plan.variant} requires no Triton here"
        return replace(plan, packages=others, warnings=(*plan.warnings, f"{note} ({link.filename} METADATA)"))
    name = canonicalize_name(pinned.name)
    spec = pinned.specifier & (SpecifierSet(pin.version) if name == pin.name else SpecifierSet())
    exact = [s.version for s in spec if s.operator == "=="]
    new = PackagePin(name, exact[0] if len(exact) == 1 else str(spec), f"{name}{spec}")
    why = f"{name}{spec}: what torch {plan.torch_version}+{plan.variant} requires ({link.filename} METADATA)"
    packages = tuple(new if p is pin else p for p in plan.packages)
    return replace(plan, packages=packages, reasons=(*plan.reasons, why))


def check_companions(plan: Plan, machine: Machine, index: IndexClient, *, skip: Sequence[str] = ()) -> Plan:
    """Every companion the plan pins (torchvision, torchaudio, a Triton) looked up on the index it is installed
    from, as torch's own build is: a pin the index has no file of for this machine would fail only at install.
    Raises :class:`ResolveError` naming the pin, the torch it goes with and the index. Nothing is checked when
    torch's own file was not read from the index (planned from the knowledge base alone, offline and not cached),
    nor for the names in ``skip`` (installed from files the user gave); a page that cannot be read now leaves its
    pin unchecked, and the plan says so."""
    torch = plan.packages[0] if plan.packages else None
    if plan.mode is not Mode.INDEX or torch is None or torch.name != "torch" or torch.url is None:
        return plan
    python = machine.markers.get("python_full_version") or machine.python
    given = {canonicalize_name(name) for name in skip}
    unchecked: list[str] = []
    for pin in plan.packages[1:]:
        if canonicalize_name(pin.name) in given:
            continue
        page = _project_page(index, plan.index_url, plan.variant, pin.name)
        if page.links is None:
            if not page.offline:
                unchecked.append(f"{pin.requirement} could not be looked up on {plan.index_url} ({page.error})")
            continue
        try:
            select_wheel(page.links, pin.requirement, tags=machine.tags, python_version=python)
        except NoMatchingFileError as exc:
            raise ResolveError(
                f"{pin.requirement}, planned with torch {plan.torch_version}+{plan.variant}, is not on the index "
                f"for this machine ({plan.index_url}: {_what_it_has(page.links, pin, exc)})"
            ) from None
    return replace(plan, warnings=(*plan.warnings, *unchecked)) if unchecked else plan


def _what_it_has(links: Sequence[FileLink], pin: PackagePin, problem: NoMatchingFileError) -> str:
    """What the index has of the pin's project instead: none of it, other versions, or files that do not fit."""
    name = canonicalize_name(pin.name)
    wheels = [w for w in map(parse_plain_wheel_name, (link.filename for link in links)) if w is not None]
    versions = sorted({w.version for w in wheels if w.name == name}, reverse=True)
    spec = Requirement(pin.requirement).specifier
    if not versions:
        return f"no {name} there"
    if not any(spec.contains(v, prereleases=True) for v in versions):
        return f"its {name} versions are {', '.join(map(str, versions[:4]))}" + (", ..." if len(versions) > 4 else "")
    return str(problem)
