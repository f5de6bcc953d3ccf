"""Gathering the candidates: the builds the PyTorch index (or a mirror) really has, with the knowledge base's facts.

The index says what exists; the knowledge says what it holds. For each variant the knowledge base lists for
the machine's kind of GPU (and ``cpu``), ``<base>/<variant>/torch/`` is read (in parallel, cached,
revalidated). A knowledge-base build that is not on its page becomes a candidate with no files, which the
planner turns down as absent; a build on the page that the knowledge base does not know (a release newer than
it) becomes a candidate with inferred facts. When the index cannot be reached at all, the knowledge base alone
is used and the candidates say so. This module does I/O; the candidates it returns are plain values.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from email.parser import BytesParser

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..candidate import Candidate, CandidateSet, Fact
from ..fetch.errors import NetworkError
from ..kb.candidates import infer_candidate, kb_candidates, knowledge_span
from ..kb.matrix import Knowledge
from ..resolve.machine import Machine
from ..resolve.plan import PackagePin, Plan
from ..resolve.request import TRITONS
from ..variants.errors import VariantError
from ..variants.filename import parse_wheel_name
from .client import IndexClient, project_url
from .errors import IndexPageError, OfflineError, ProjectNotFoundError
from .links import FileLink

__all__ = ["gather_candidates", "labels_to_read", "triton_from_metadata"]

#: Pages read at once: download.pytorch.org serves HTTP/1.1, one connection per page.
_PARALLEL = 8


@dataclass(frozen=True)
class _Page:
    label: str
    url: str
    #: ``None``: not read (offline and not cached, or the network failed: ``error`` says which).
    links: tuple[FileLink, ...] | None
    error: str | None = None


def _kinds(machine: Machine) -> set[str]:
    """The kinds of build worth reading for this machine: its GPU's, and the CPU build."""
    kinds = {"cpu"}
    if machine.gpus is not None and machine.gpus.kind in ("cuda", "rocm", "xpu"):
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
    also the nightly builds of the knowledge base's nightly lines (``<base>/nightly/<label>/``).
    ``label`` (the user's chosen build, ``cu128``): that variant's page alone is read, whether or not the knowledge
    base lists it for the machine's kind of GPU. ``index=None`` plans from the knowledge base alone."""
    known = kb_candidates(kb, machine.platform_key)
    span, updated = knowledge_span(kb), kb.updated
    nightly_labels = _nightly_labels(kb, machine) if pre else []
    if label is not None:
        nightly_labels = [x for x in nightly_labels if x == label]
    if index is None:
        unread = f"--pre: nightly builds are planned only from the index ({base.rstrip('/')}/nightly), not read here"
        return CandidateSet(known, knowledge=span, knowledge_updated=updated, notes=(unread,) if nightly_labels else ())
    base = base.rstrip("/")
    if nightly_labels:
        known = known + _nightly(kb, machine, index, base, nightly_labels, project)
    pages = _read(index, base, [label] if label is not None else labels_to_read(known, machine), project)
    read = {p.label: p for p in pages if p.links is not None}
    failed = [p for p in pages if p.links is None]
    if not read:
        why = (failed[0].error if failed else None) or "no page to read"
        if why.startswith("offline"):
            note = f"--offline and no cached pages of {base}: planned from the knowledge base alone"
        else:
            note = f"could not read the PyTorch index {base} ({why}): planned from the knowledge base alone"
        return CandidateSet(known, knowledge=span, knowledge_updated=updated, notes=(note,))
    by_build = {label: _by_build(page.links or (), label, machine, project) for label, page in read.items()}
    listed = tuple(sorted({v for builds in by_build.values() for v in builds}, reverse=True))
    out: list[Candidate] = []
    for c in known:
        page = read.get(c.label)
        if page is None or c.files is not None:  # not read, or a nightly build with its own page
            out.append(c)
            continue
        files = by_build[c.label].pop(c.version, ())
        exists = Fact(f"torch {c.version}+{c.label} is {'on' if files else 'not on'} the index", "P", page.url)
        out.append(replace(c, files=tuple(files), index_url=f"{base}/{c.label}", facts={**c.facts, "exists": exists}))
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
    return CandidateSet(
        tuple(out),
        knowledge=span,
        knowledge_updated=updated,
        index=base,
        index_complete=not failed,
        index_versions=listed,
        notes=tuple(notes),
    )


def _nightly_labels(kb: Knowledge, machine: Machine) -> list[str]:
    """The variants of the knowledge base's nightly lines worth reading for this machine (:func:`_kinds`)."""
    kinds = _kinds(machine)
    labels: list[str] = []
    for release in kb.releases_newest_first(nightly=True):
        builds = release.platform(machine.platform_key)
        if release.nightly and builds is not None:
            labels += [v.label for v in builds.variants.values() if v.kind in kinds]
    return list(dict.fromkeys(labels))


def _nightly(
    kb: Knowledge, machine: Machine, index: IndexClient, base: str, labels: Sequence[str], project: str
) -> tuple[Candidate, ...]:
    """The nightly builds on ``<base>/nightly/<label>/`` of the knowledge base's nightly series, with its facts."""
    series = {r.name for r in kb.releases_newest_first(nightly=True) if r.nightly}
    out: list[Candidate] = []
    for page in _read(index, f"{base}/nightly", labels, project):
        for version, files in _by_build(page.links or (), page.label, machine, project).items():
            if version.is_devrelease and f"{version.major}.{version.minor}" in series:
                found = infer_candidate(
                    kb, machine.platform_key, version, page.label, files, f"{base}/nightly/{page.label}"
                )
                if found is not None:
                    out.append(found)
    return tuple(out)


def _read(index: IndexClient, base: str, labels: Sequence[str], project: str) -> list[_Page]:
    """Every label's page; the first alone first, so an unreachable index costs one page's retries, not all."""
    if not labels:
        return []
    first = _page(index, base, labels[0], project)
    if first.links is None and first.error is not None and not first.error.startswith("offline"):
        return [first] + [_Page(label, _url(base, label, project), None, first.error) for label in labels[1:]]
    with ThreadPoolExecutor(max_workers=_PARALLEL) as pool:
        rest = list(pool.map(lambda label: _page(index, base, label, project), labels[1:]))
    return [first, *rest]


def _page(index: IndexClient, base: str, label: str, project: str) -> _Page:
    url = _url(base, label, project)
    try:
        page = index.project_page(f"{base}/{label}", project)
    except ProjectNotFoundError:
        return _Page(label, url, ())
    except OfflineError:
        return _Page(label, url, None, "offline, and the page is not cached")
    except NetworkError as exc:
        return _Page(label, url, None, str(exc).split("; or use --offline")[0])
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
    wanted = [p for p in plan.packages if p.name in TRITONS and any(f.confidence == "inferred" for f in p.uncertain)]
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
