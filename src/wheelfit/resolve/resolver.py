"""``resolve(machine, candidates, request) -> Plan``: the build that has kernels for this machine.

Pure: no I/O, no clock, no environment. The candidates are the builds that exist (the index's, or the
knowledge base's when no index was read), in either source: per-variant indexes or wheel variants. Hard
rules (:mod:`.judges`) reject a candidate with a reason; among what is left the newest torch wins, then the
build that fits best: the driver for CUDA, the installed ROCm, the PEP 825 ranking for variants. When the
newest release has nothing for the GPU, the newest release that does is chosen and the plan says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..candidates.model import Candidate, CandidateSet, Fact
from ..kinds import BuildKind, Confidence, Mode
from ..report import Accelerator
from ..simple.links import FileLink
from ..variants.ranking import Ranking, rank_variants
from .choice import judge_chosen, refusal_text
from .coverage import sm_tuple
from .judges import Found, Judge, Refusal, describe, driver_fit, gate, judge_kernels, rocm_host
from .machine import GpuGroup, GpuRequiredError, Machine, ResolveError
from .plan import PackagePin, Plan, Rejection
from .request import TRITONS, Request

__all__ = ["resolve"]


@dataclass
class _Search:
    found: Found | None
    rejected: list[Rejection]
    newest: Version | None
    newest_candidates: tuple[Candidate, ...] = ()


@dataclass
class _Pool:
    """The candidates of the request, by version newest first, with each version's variant ranking."""

    machine: Machine
    cset: CandidateSet
    request: Request
    versions: list[tuple[Version, tuple[Candidate, ...]]] = field(default_factory=list)
    rankings: dict[str, Ranking] = field(default_factory=dict)
    #: Each candidate's verdict of :func:`gate` (its file, read from its file names), asked for by every search.
    gates: dict[int, FileLink | Refusal | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        by_version: dict[Version, list[Candidate]] = {}
        spec = self.request.torch.specifier
        for c in self.cset.candidates:
            if c.platform == self.machine.platform_key and spec.contains(_labelled(c), self.request.prereleases):
                by_version.setdefault(c.version, []).append(c)
        for version in sorted(by_version, reverse=True):
            if _companions_fit(by_version[version], self.request):
                self.versions.append((version, tuple(by_version[version])))

    def gate(self, c: Candidate) -> FileLink | Refusal | None:
        if id(c) not in self.gates:
            self.gates[id(c)] = gate(c, self.machine, self.request.exact)
        return self.gates[id(c)]

    def ranking(self, c: Candidate) -> Ranking | None:
        vf = c.variants_file
        if vf is None:
            return None
        if vf.filename not in self.rankings:
            self.rankings[vf.filename] = rank_variants(
                vf.metadata, self.machine.variant_configs, environment=self.machine.markers
            )
        return self.rankings[vf.filename]


def resolve(machine: Machine, candidates: CandidateSet, request: Request) -> Plan:
    """Plan the build for ``machine`` from ``candidates``: the user's chosen build when the request names one
    (judged, refused unless ``force``), else wheelfit's own choice."""
    pool = _Pool(machine, candidates, request)
    if request.torch_backend is not None:
        return _chosen_plan(pool)
    return _offer_hsa_override(pool, _auto(pool))


def _auto(pool: _Pool) -> Plan:
    machine, request = pool.machine, pool.request
    group = machine.gpus
    warnings: list[str] = []
    if group is not None and group.set_aside:
        warnings.append("not used by this build: " + "; ".join(group.set_aside))

    if group is not None and group.kind is not BuildKind.MPS:
        search, excluded = _gpu_search(pool, group)
        found = search.found
        if found is not None:
            if excluded:
                _exclude(found, group, excluded)
            if search.newest is not None and found.candidate.version.release[:2] != search.newest.release[:2]:
                if request.allow_cpu and not request.require_gpu:
                    cpu = _cpu_search(pool)
                    why = (
                        f"torch {cpu.candidate.version} has no {group.kind} build for {_devices(group)}; installing "
                        f"its CPU build (torch {found.candidate} would run on the GPU)"
                    )
                    warnings.append(f"--allow-cpu: {why}")
                    return replace(_plan(pool, cpu, search.rejected, warnings), gpu_fallback=why)
                found.why.insert(0, _dropped(pool, search, group))
            return _plan(pool, found, search.rejected, warnings)
        none = f"no PyTorch build matching {request.torch} has kernels for {_devices(group)}"
        if request.require_gpu:
            raise GpuRequiredError(f"{none}, and a GPU build is required")
        cpu = _cpu_search(pool)
        why = f"{none}: installing the CPU build"
        warnings.append(why)
        return replace(_plan(pool, cpu, search.rejected, warnings), gpu_fallback=why)

    if group is not None and group.kind is BuildKind.MPS:
        turned_down: list[Rejection] = []
        return _plan(pool, _mps_search(pool, group, warnings, turned_down), turned_down, warnings)
    cpu = _cpu_search(pool)
    cpu.why.insert(0, _no_gpu(pool.cset))
    return _plan(pool, cpu, [], warnings)


# -- the user's choice ------------------------------------------------------------------------------------------


def _chosen_plan(pool: _Pool) -> Plan:
    """The build the user chose (``request.torch_backend``): the newest release matching the request whose build
    of that label runs here (on the most capable GPUs if not all); none runs: refused with the first reason, or with
    ``force`` the newest one planned anyway, the reason kept as a warning. Never another label."""
    machine, request = pool.machine, pool.request
    label = request.torch_backend
    assert label is not None  # noqa: S101 - only called for a chosen build
    group = machine.gpus
    said = request.torch_backend_from
    chosen = (
        f"{said}: planning the {label} build, as --torch-backend {label}"
        if request.torch_backend_how == "index-url"
        else f"the {label} build was chosen by the user ({said})"
    )
    warnings: list[str] = []
    if group is not None and group.set_aside:
        warnings.append("not used by this build: " + "; ".join(group.set_aside))
    tiers: list[tuple[Accelerator, ...] | None] = [None]
    if group is not None and group.kind is _label_kind_of(pool, label):
        tiers = list(_capability_tiers(group))
    rejected: list[Rejection] = []
    first: tuple[Found, str, Judge] | None = None
    newest = pool.versions[0][0] if pool.versions else None
    for version, cands in pool.versions:
        mine = [c for c in cands if c.label == label]
        for c, gated in _gated(pool, version, mine, rejected):
            refusal: Refusal | None = None
            for devices in tiers:
                verdict = judge_chosen(c, machine, request, devices)
                if isinstance(verdict, Refusal):
                    refusal = refusal or verdict
                    continue
                verdict.file, verdict.variant = gated.file, gated.variant
                if group is not None and devices is not None and len(devices) < len(group.devices):
                    _exclude(verdict, group, tuple(a for a in group.devices if a not in devices))
                verdict.why.insert(0, chosen)
                if c.kind is BuildKind.CUDA and group is not None and group.kind is BuildKind.CUDA:
                    fit, detail = driver_fit(c, machine, devices or group.devices)
                    if fit == "own" and detail:
                        verdict.why.append(detail)
                    elif fit == "compat" and detail:
                        verdict.warnings.append(detail)
                if version != newest:
                    has = any(c.label == label for c in pool.versions[0][1])
                    lacks = (
                        f"torch {newest}'s {label} build does not run here"
                        if has
                        else f"torch {newest} has no {label} build"
                    )
                    verdict.why.insert(
                        1, f"{lacks}; torch {version} is the newest release whose {label} build runs here"
                    )
                return _plan(pool, verdict, rejected, warnings)
            assert refusal is not None  # noqa: S101 - at least one tier was judged
            reason = refusal_text(label, refusal)
            rejected.append(Rejection(label, str(version), reason, refusal.judge.value))
            if first is None:
                first = (gated, reason, refusal.judge)
    asked = ", ".join(map(str, request.requirements))
    if first is None:
        if any(r.variant == label or r.variant == "*" for r in rejected):
            raise _no_release(pool, rejected)
        have = sorted(
            {c.version for c in pool.cset.candidates if c.label == label and c.platform == machine.platform_key},
            reverse=True,
        )
        known = f"its {label} builds: torch {', '.join(map(str, have[:4]))}" if have else f"it knows no {label} build"
        raise ResolveError(
            f"no {label} build of torch matches {asked} ({request.torch_backend_from}) for {machine.platform_key}; "
            f"{known}: change the version or the build"
        )
    found, reason, judge = first
    if request.force:
        found.why.insert(0, chosen)
        warnings.append(f"--force-build: {reason}; planned anyway, it will not run on this machine's GPU")
        return _plan(pool, found, rejected, warnings)
    raise ResolveError(
        f"torch {found.candidate} ({request.torch_backend_from}) does not run on this machine: {reason}; "
        + ("pass --allow-hsa-override to run it under that override, " if judge is Judge.OVERRIDE else "")
        + "choose another build, or pass --force-build to plan it anyway"
    )


def _label_kind_of(pool: _Pool, label: str) -> BuildKind | None:
    """The kind (cuda, rocm, xpu, cpu) of the candidates labelled ``label``."""
    return next((c.kind for c in pool.cset.candidates if c.label == label), None)


def _offer_hsa_override(pool: _Pool, plan: Plan) -> Plan:
    """A near-miss AMD GPU got a safe plan (the CPU build, an older release): name, in one line, the build it
    would get under HSA_OVERRIDE_GFX_VERSION and how to take it (the user's choice, never the default)."""
    request, group = pool.request, pool.machine.gpus
    if group is None or group.kind is not BuildKind.ROCM or request.allow_hsa_override:
        return plan
    if not any(r.judge == Judge.OVERRIDE.value for r in plan.rejected):
        return plan
    other = _auto(_Pool(pool.machine, pool.cset, replace(request, allow_hsa_override=True)))
    value = other.env.get("HSA_OVERRIDE_GFX_VERSION")
    if value is None or (other.torch_version, other.variant) == (plan.torch_version, plan.variant):
        return plan
    risks = [r for gfx, (_, v, r) in request.rocm_overrides.items() if v == value and r and _has_gfx(group, gfx)]
    risk = f": {risks[0]}" if risks else ""
    offer = (
        f"torch {other.torch_version}+{other.variant} would run on {_devices(group)} only with "
        f"HSA_OVERRIDE_GFX_VERSION={value}, which AMD does not support{risk}; to take that risk: "
        f"export HSA_OVERRIDE_GFX_VERSION={value}, or pass --allow-hsa-override"
    )
    return replace(plan, warnings=(*plan.warnings, offer))


def _has_gfx(group: GpuGroup, gfx: str) -> bool:
    return any((a.effective_gfx or a.gfx) == gfx for a in group.devices)


# -- searching ---------------------------------------------------------------------------------------------------


def _labelled(c: Candidate) -> Version:
    """The version a requirement is matched against: with its build label (``2.9.0+cu128``), so that
    ``==2.9.0+cu128`` matches that build alone while ``==2.9.0`` matches every label (PEP 440 local versions)."""
    if c.mode is not Mode.INDEX or c.platform.startswith("macos"):
        return c.version
    return Version(f"{c.version}+{c.label}")


def _companions_fit(candidates: Sequence[Candidate], request: Request) -> bool:
    """Whether the companions pinned for this torch version can meet the user's own specifiers (a companion the
    knowledge base has no pin for, as every one of a newer release from the index, is left to the index, as
    :func:`_companion_pins` plans it). Every Triton name is the knowledge base's ``triton`` pin (PyTorch builds its
    ROCm and XPU Triton at the same version)."""
    pins = next((c.companions for c in candidates if c.companions), None)
    if pins is None:
        return True
    label = request.torch_backend
    for req in request.companions:
        name = canonicalize_name(req.name)
        pin = pins.get("triton" if name in TRITONS else name)
        if pin is None:
            continue
        exact = _exact(pin)
        if exact is None:
            continue
        local = None if label is None or name in TRITONS else f"{exact}+{label}"
        if not req.specifier.contains(exact, prereleases=True) and not (
            local is not None and req.specifier.contains(local, prereleases=True)
        ):
            return False
    return True


def _exact(spec: SpecifierSet) -> str | None:
    specs = list(spec)
    return specs[0].version if len(specs) == 1 and specs[0].operator == "==" else None


def _gated(
    pool: _Pool, version: Version, cands: Sequence[Candidate], rejected: list[Rejection]
) -> Iterator[tuple[Candidate, Found]]:
    """The candidates that can be installed here (platform, Python, files, variant properties), each as a
    :class:`Found` holding its wheel; rejections for the others, one row when a rule rejects the whole release."""
    passed: list[tuple[Candidate, Found]] = []
    refused: list[tuple[Candidate, Refusal]] = []
    for c in cands:
        verdict = pool.gate(c)
        if isinstance(verdict, Refusal):
            refused.append((c, verdict))
            continue
        found = Found(c, file=verdict)
        ranking = pool.ranking(c)
        if ranking is not None:
            ranked = next((r for r in ranking.compatible if r.label == c.label), None)
            if ranked is None:
                continue  # excluded by the ranking: listed once per version by _ranking_rejections
            found.variant = ranked.variant
        passed.append((c, found))
    shared = {(r.judge, r.reason) for _, r in refused}
    if refused and not passed and len(shared) == 1 and (len(refused) > 1 or refused[0][1].judge.platform_wide):
        judge, reason = shared.pop()
        rejected.append(Rejection("*", str(version), reason, judge.value))
    else:
        rejected += [Rejection(c.label, str(version), f"{c.label}: {r.reason}", r.judge.value) for c, r in refused]
    yield from passed


def _ranking_rejections(pool: _Pool, cands: Sequence[Candidate], rejected: list[Rejection]) -> None:
    for c in cands:
        ranking = pool.ranking(c)
        if ranking is None:
            continue
        for excl in ranking.incompatible:
            if excl.label == c.label:
                rejected.append(Rejection(c.label, str(c.version), excl.reason, Judge.PROPERTIES.value))


def _gpu_search(pool: _Pool, group: GpuGroup) -> tuple[_Search, tuple[Accelerator, ...]]:
    """Cover every GPU of the vendor; if no build does, the most capable ones (naming the rest)."""
    first: _Search | None = None
    # Builds the index has, or the release matrix advertises, first: one that is only built (cu129 in 2.13)
    # may be missing from the index, so it is chosen only when no advertised build anywhere fits.
    for advertised_only in (True, False):
        for devices in _capability_tiers(group):
            search = _search_kind(pool, group.kind, devices, advertised_only)
            first = first or search
            if search.found is not None:
                c = search.found.candidate
                if not c.advertised and c.on_index is None:
                    search.found.warnings.append(
                        f"{c.label} is built but not advertised for torch {c.version}; it may be missing from the index"
                    )
                return search, tuple(a for a in group.devices if a not in devices)
    assert first is not None  # noqa: S101 - _capability_tiers yields at least once
    return first, ()


def _capability_tiers(group: GpuGroup) -> Iterator[tuple[Accelerator, ...]]:
    """All devices, then without the least capable class, and so on."""
    devices = list(group.devices)
    if group.kind is not BuildKind.CUDA:
        yield tuple(devices)
        return
    ccs = sorted({sm_tuple(a.compute_capability or "0.0") for a in devices})
    for floor in ccs:
        yield tuple(a for a in devices if sm_tuple(a.compute_capability or "0.0") >= floor)


def _search_kind(pool: _Pool, kind: BuildKind, devices: tuple[Accelerator, ...], advertised_only: bool) -> _Search:
    rejected: list[Rejection] = []
    newest: Version | None = None
    newest_cands: tuple[Candidate, ...] = ()
    for version, cands in pool.versions:
        if newest is None and _installable(pool, cands):
            newest, newest_cands = version, cands
        of_kind = [c for c in cands if c.kind is kind and (c.advertised or c.on_index or not advertised_only)]
        _ranking_rejections(pool, cands, rejected)
        ok: list[Found] = []
        for c, gated in _gated(pool, version, of_kind, rejected):
            verdict = judge_kernels(c, pool.machine, pool.request, devices)
            if isinstance(verdict, Refusal):
                rejected.append(Rejection(c.label, str(version), f"{c.label}: {verdict.reason}", verdict.judge.value))
                continue
            verdict.file, verdict.variant = gated.file, gated.variant
            ok.append(verdict)
        if ok:
            return _Search(_best_known(pool, kind, ok, devices, rejected), rejected, newest, newest_cands)
    return _Search(None, rejected, newest, newest_cands)


def _best_known(
    pool: _Pool, kind: BuildKind, ok: list[Found], devices: tuple[Accelerator, ...], rejected: list[Rejection]
) -> Found:
    """The best of a release's builds that run here and are known to exist; the others are passed over, each with
    why. With no index to confirm them, a build the knowledge base is unsure of may simply not be published (a
    plan that cannot install); one it is sure of is taken instead, at the cost of a less fitting CUDA or ROCm."""
    known = [f for f in ok if not _existence_doubtful(f.candidate)]
    best = _best(pool, kind, known or ok, devices, rejected)
    if known:
        for f in ok:
            c = f.candidate
            if not _existence_doubtful(c):
                continue
            fact = c.facts.get("exists")
            said = f"the knowledge base marks it {fact.confidence}" if fact is not None else "nothing says it does"
            reason = (
                f"{c.label}: not known to exist ({said}, and no index page was read for it); "
                f"{best.candidate.label} is known to exist"
            )
            rejected.append(Rejection(c.label, str(c.version), reason, Judge.UNCONFIRMED.value))
    return best


def _existence_doubtful(c: Candidate) -> bool:
    """Whether the build may not be published: no index page was read for it and the knowledge base only guesses
    that it is (an index page that was read decides: a build it lacks is turned down as absent before this)."""
    if c.on_index is not None:
        return not c.on_index
    fact = c.facts.get("exists")
    return fact is None or fact.doubtful


def _installable(pool: _Pool, cands: Sequence[Candidate]) -> bool:
    """Whether some build of a release can be installed here (Python, platform, files), whatever its kernels."""
    return any(not isinstance(pool.gate(c), Refusal) for c in cands)


def _best(
    pool: _Pool, kind: BuildKind, ok: list[Found], devices: tuple[Accelerator, ...], rejected: Sequence[Rejection]
) -> Found:
    native = [f for f in ok if f.native] or ok
    if native[0].candidate.mode is Mode.VARIANT:
        return _best_variant(pool, native, rejected)
    if kind is BuildKind.CUDA:
        return _best_cuda(pool.machine, native, devices)
    if kind is BuildKind.ROCM:
        host = rocm_host(devices)
        ranked = sorted(native, key=lambda f: Version(f.candidate.runtime.rocm or "0"))
        fitting = [f for f in ranked if host is None or _rocm(f).release[:2] <= host.release[:2]]
        best = fitting[-1] if fitting else ranked[0]  # closest to the installed ROCm
        if host is not None and not fitting:
            best.warnings.append(
                f"every ROCm build is newer than the installed ROCm {host}; the wheels bundle "
                "their runtime, but an old amdgpu kernel driver may not run them"
            )
        return best
    return native[0]


def _rocm(found: Found) -> Version:
    return Version(found.candidate.runtime.rocm or "0")


def _best_cuda(machine: Machine, ok: list[Found], devices: tuple[Accelerator, ...]) -> Found:
    """The highest CUDA whose own driver minimum is met, else the lowest that runs by minor-version
    compatibility (warned), else (driver unknown) the highest, warned."""
    ranked = sorted(ok, key=lambda f: Version(f.candidate.runtime.cuda or "0"))
    fits = {id(f): driver_fit(f.candidate, machine, devices) for f in ranked}
    own = [f for f in ranked if fits[id(f)][0] == "own"]
    if own:
        best = own[-1]
        best.why.append(fits[id(best)][1] or "")
        return best
    compat = [f for f in ranked if fits[id(f)][0] == "compat"]
    if compat:
        best = compat[0]
        best.warnings.append(fits[id(best)][1] or "")
        return best
    best = ranked[-1]
    compat_floor = best.candidate.runtime.compat_floor
    floor = compat_floor.for_os(machine.driver_os) if compat_floor is not None else None
    best.warnings.append(
        f"the NVIDIA driver version is unknown: {best.candidate.label} needs a driver >= {floor}"
        if floor
        else "the NVIDIA driver version is unknown"
    )
    return best


def _best_variant(pool: _Pool, ok: list[Found], rejected: Sequence[Rejection]) -> Found:
    """The best-ranked label (PEP 825 order, as variantlib sorts), saying why when it is not the ranking's top."""
    ranking = pool.ranking(ok[0].candidate)
    assert ranking is not None  # noqa: S101 - variant candidates carry their variants file
    order = ranking.labels
    best = min(ok, key=lambda f: order.index(f.candidate.label))
    c = best.candidate
    gpu_order = [r.label for r in ranking.compatible if not r.is_null]
    top = gpu_order[0] if gpu_order else c.label
    shown = ", ".join(order)
    if c.label == top:
        best.why.insert(0, f"{c.label} ranks first of the variants of torch {c.version} that run here ({shown})")
    else:
        skipped = [r for r in rejected if r.version == str(c.version) and r.variant == top]
        because = f", which has {skipped[0].reason.removeprefix(f'{top}: ')}" if skipped else ""
        best.why.insert(
            0,
            f"{c.label} is the best-ranked variant with kernels for every GPU and a wheel here; "
            f"the reference ranking ({shown}) would take {top}{because}",
        )
    return best


def _cpu_search(pool: _Pool) -> Found:
    rejected: list[Rejection] = []
    for version, cands in pool.versions:
        cpus = [c for c in cands if c.kind is BuildKind.CPU]
        _ranking_rejections(pool, cpus, rejected)
        for c, found in _gated(pool, version, cpus, rejected):
            null = " (the null variant, CPU only)" if c.mode is Mode.VARIANT else ""
            found.why.append(f"torch {version}{null} is the newest release matching {pool.request.torch}")
            return found
    raise _no_release(pool, rejected)


def _no_release(pool: _Pool, rejected: Sequence[Rejection]) -> ResolveError:
    """Why nothing matches: the machine (with the distinct reasons), or missing knowledge (with what to do)."""
    request, cset = pool.request, pool.cset
    asked = ", ".join(map(str, request.requirements))
    if not pool.versions:
        known = cset.knowledge or "no releases"
        kb = f"the knowledge base covers torch {known}" + (
            f" (updated {cset.knowledge_updated})" if cset.knowledge_updated else ""
        )
        if cset.index is None:
            where = "the PyTorch index was not read"
            todo = (
                "let wheelfit read the index (no --offline, a reachable --pytorch-index), "
                "or give a newer knowledge base with --kb FILE"
            )
        else:
            spec = request.torch.specifier
            have = [v for v in cset.index_versions if spec.contains(v, prereleases=request.prereleases)]
            if have:
                listed = ", ".join(str(v) for v in have[:3])
                where = f"{cset.index} has {listed}, but no build for {pool.machine.platform_key}"
                todo = "check the platform (--target os=, arch=)"
            else:
                newest = f" (its newest is {cset.index_versions[0]})" if cset.index_versions else ""
                where = f"{cset.index} does not have it either{newest}"
                todo = "check the version, or give a newer knowledge base with --kb FILE"
        return ResolveError(f"no PyTorch release matches {asked}: {kb}, and {where}; {todo}")
    detail = "; ".join(list(dict.fromkeys(r.reason for r in rejected))[:3])  # releases often fail alike
    return ResolveError(f"no PyTorch release matches {asked} on this machine" + (f" ({detail})" if detail else ""))


def _no_gpu(cset: CandidateSet) -> str:
    """Why the CPU build when no GPU is planned for: none found, or one PyTorch's own builds do not serve."""
    if cset.elsewhere is not None:
        return f"{cset.elsewhere.what}: PyTorch's own builds do not use its GPU; this is PyTorch's CPU build"
    return "no GPU usable by PyTorch was found: the CPU build fits"


def _mps_search(pool: _Pool, group: GpuGroup, warnings: list[str], rejected: list[Rejection]) -> Found:
    """The newest release whose wheels install on this macOS and whose MPS it meets; ``rejected`` gets the newer
    releases turned down, each with the macOS floor it needs. An unknown macOS version is not guessed: the newest
    release is planned and the plan says which macOS it needs."""
    machine, request = pool.machine, pool.request
    newest: Version | None = None
    floors: set[Version] = set()
    for version, cands in pool.versions:
        newest = newest or version
        for c, found in _gated(pool, version, [c for c in cands if c.kind is BuildKind.CPU], rejected):
            need = c.runtime.mps_min_macos
            if need is not None:
                floors.add(need)
            if machine.macos is not None and need is not None and machine.macos < need:
                if request.allow_cpu:
                    warnings.append(f"--allow-cpu: torch {version} needs macOS {need} for MPS; it will run on the CPU")
                    found.why.append(f"torch {version} is the newest release")
                    return found
                reason = f"MPS needs macOS >= {need}, this Mac has {machine.macos}"
                rejected.append(Rejection(c.label, str(version), reason, Judge.MACOS.value))
                continue
            found.used.append("kernels")
            if machine.macos is None:
                wheels = c.runtime.min_macos
                found.why.append(f"{group.devices[0].name}: MPS needs macOS >= {need}")
                warnings.append(
                    f"the macOS version is not known (--target os=macos without one): torch {version} needs "
                    f"macOS >= {max(v for v in (wheels, need) if v is not None) if wheels or need else '?'}"
                    f"{f' (its wheels {wheels}, MPS {need})' if wheels and need and wheels != need else ''}; "
                    "on an older macOS wheelfit would plan an older release"
                )
            else:
                found.why.append(f"{group.devices[0].name}: MPS needs macOS >= {need}, this Mac has {machine.macos}")
            if newest != version:
                found.why.insert(
                    0,
                    f"torch {newest} needs a newer macOS; torch {version} is the newest "
                    f"release with MPS on macOS {machine.macos}",
                )
            _name_macos_floors(pool, rejected)
            return found
    warnings.append(
        f"no PyTorch release matching {request.torch} has MPS on macOS {machine.macos} "
        f"(MPS needs macOS >= {min(floors) if floors else '?'}): the CPU build it is"
    )
    cpu = _cpu_search(pool)
    if newest is not None and cpu.candidate.version != newest:
        cpu.why[:] = [
            f"torch {newest} and the other releases listed below do not install on macOS {machine.macos}; "
            f"torch {cpu.candidate.version} is the newest that does"
        ]
    rejected[:] = [r for r in rejected if Version(r.version) > cpu.candidate.version]
    _name_macos_floors(pool, rejected)
    return cpu


def _name_macos_floors(pool: _Pool, rejected: list[Rejection]) -> None:
    """A release the index has no wheel of for this Mac's tags says the macOS its wheels need, when the knowledge
    base knows that floor is above this Mac's (2.12+: macosx_14_0)."""
    mac = pool.machine.macos
    if mac is None:
        return
    floors = {str(v): c.runtime.min_macos for v, cands in pool.versions for c in cands if c.kind is BuildKind.CPU}
    for i, r in enumerate(rejected):
        need = floors.get(r.version)
        if r.judge == Judge.FILES.value and need is not None and mac < need:
            rejected[i] = replace(r, reason=f"{r.reason}: its wheels need macOS >= {need}, this Mac has {mac}")


# -- helpers -----------------------------------------------------------------------------------------------------


def _devices(group: GpuGroup) -> str:
    return ", ".join(describe(a) for a in group.devices)


def _dropped(pool: _Pool, search: _Search, group: GpuGroup) -> str:
    """Why an older release: name the GPUs the newest release has no kernels for, or its first obstacle."""
    found = search.found
    assert found is not None and search.newest is not None  # noqa: S101
    newest = search.newest
    builds = [c for c in search.newest_candidates if c.kind is group.kind]

    def has_kernels(a: Accelerator) -> bool:
        for c in builds:
            verdict = judge_kernels(c, pool.machine, pool.request, (a,))
            if isinstance(verdict, Found) or verdict.judge is Judge.DRIVER:
                return True
        return False

    missing = [a for a in group.devices if not has_kernels(a)]
    newer = f"torch {found.candidate.version} is the newest release that has one ({found.candidate.label})"
    if missing:
        archs = ", ".join(sorted({a.arch or "?" for a in missing}))
        return f"torch {newest} has no build with kernels for {archs}; {newer}"
    obstacle = next((r.reason for r in search.rejected if r.version == str(newest) and r.variant != "*"), None)
    return f"torch {newest} has no build that runs here ({obstacle or 'see the rejected builds'}); {newer}"


def _exclude(found: Found, group: GpuGroup, excluded: tuple[Accelerator, ...]) -> None:
    used = [a for a in group.devices if a not in excluded]
    found.warnings.append(
        "no build has kernels for every GPU; not used by this build: " + "; ".join(describe(a) for a in excluded)
    )
    indices = [str(a.extra.get("index", group.devices.index(a))) for a in used]
    found.env["CUDA_VISIBLE_DEVICES"] = ",".join(indices)
    found.why.append(f"built for the most capable GPUs: {', '.join(describe(a) for a in used)}")


def _uncertain(facts: Sequence[Fact | None]) -> tuple[Fact, ...]:
    return tuple(f for f in facts if f is not None and not f.certain)


def _plan(pool: _Pool, found: Found, rejected: list[Rejection], warnings: list[str]) -> Plan:
    machine, request, cset = pool.machine, pool.request, pool.cset
    c = found.candidate
    version = str(c.version)
    torch_doubts = _uncertain(found.facts)
    if c.mode is Mode.VARIANT:
        link = found.file
        assert link is not None and c.variants_file is not None  # noqa: S101 - variant candidates have files
        index = (cset.index or "").rstrip("/")
        pins = [PackagePin("torch", version, f"torch=={version}", link.filename, link.url, torch_doubts)]
        reasons = [f"variant mode: {index}/torch/ serves {c.variants_file.filename}", *found.why]
        chosen = found.variant or c.variant
        properties = tuple(str(p) for p in chosen.properties()) if chosen is not None else ()
        index_url = index
    else:
        local = "" if machine.platform_key.startswith("macos") else f"+{c.label}"  # macOS wheels: no label
        link = found.file
        pins = [
            PackagePin(
                "torch",
                version,
                f"torch=={version}{local}",
                link.filename if link else None,
                link.url if link else None,
                torch_doubts,
            )
        ]
        pins += _companion_pins(c, request.companions, local, warnings)
        reasons = list(found.why)
        properties = ()
        index_url = c.index_url or f"{request.index_base.rstrip('/')}/{c.label}"
    end = cset.platform_end
    if end is not None and c.version <= end.last_version:  # an Intel Mac: why nothing newer
        reasons.insert(0, f"torch {end.last_version} is the last release built for {end.what}: {end.note}")
        rejected = [*rejected, Rejection("*", f">{end.last_version}", f"no {end.what} build: {end.note}", "platform")]
    if cset.elsewhere is not None and c.kind is BuildKind.CPU:
        warnings.append(f"{cset.elsewhere.what}: {cset.elsewhere.note}")
    if c.measured:
        reasons.append(f"its kernels are as torch said on this machine ({c.facts['kernels'].source})")
    if c.inferred:
        warnings.append(
            f"torch {c} is newer than the knowledge base ({cset.knowledge}); its kernels are inferred: "
            f"{c.facts['kernels'].source}"
        )
    if found.file is not None and found.file.yanked is not None:
        why = f": {found.file.yanked}" if found.file.yanked else ""
        warnings.append(f"{found.file.filename} is yanked{why}; it is used only because {request.torch} pins it")
    return Plan(
        torch_version=version,
        variant=c.label,
        index_url=index_url,
        packages=tuple(pins),
        reasons=tuple(reasons),
        rejected=_shown(rejected, c),
        warnings=(*cset.notes, *warnings, *found.warnings),
        env=dict(found.env),
        mode=c.mode,
        platform=machine.platform_key,
        python=machine.python,
        variant_properties=properties,
        sources=_sources(cset),
    )


def _companion_pins(c: Candidate, wanted: Sequence[Requirement], local: str, notes: list[str]) -> list[PackagePin]:
    pins: list[PackagePin] = []
    doubts = _uncertain([c.facts.get("companions")])
    for req in wanted:
        name = canonicalize_name(req.name)
        if name in TRITONS:
            pin = _triton_pin(c, req, doubts, notes)
            if pin is not None and all(p.name != pin.name for p in pins):
                pins.append(pin)
            continue
        spec = c.companions.get(name)
        if spec is None:  # a release newer than the knowledge base: the index's newest that fits torch
            merged = req.specifier
            what = f"the {name} release that pairs with torch {c.version}"
            inferred = (Fact(what, Confidence.INFERRED, "not known"),)
            pins.append(PackagePin(name, str(merged), f"{name}{merged}", uncertain=inferred))
            continue
        exact = _exact(spec)
        if exact is not None:
            pins.append(PackagePin(name, exact, f"{name}=={exact}{local}", uncertain=doubts))
        else:  # torchaudio ~=2.11.0 since torch 2.12: a range, narrowed by what the user asked
            merged = spec & req.specifier
            pins.append(PackagePin(name, str(merged), f"{name}{merged}", uncertain=doubts))
    return pins


#: The Triton each kind of build requires (torch's own Requires-Dist: ``triton`` on the cuNNN indexes,
#: ``pytorch-triton-rocm``/``-xpu`` on the ROCm and XPU ones; docs.pytorch.org's selector and wheel METADATA).
_TRITON_OF_KIND = {
    BuildKind.CUDA: "triton", BuildKind.ROCM: "pytorch-triton-rocm", BuildKind.XPU: "pytorch-triton-xpu",
}  # fmt: skip


def _triton_pin(c: Candidate, req: Requirement, doubts: tuple[Fact, ...], notes: list[str]) -> PackagePin | None:
    """The Triton the chosen torch's metadata pins, under the name its kind of build requires, with no build label
    (Triton wheels carry none): the knowledge base's pin for known releases, else left to the index (inferred).
    ``None`` (and a note why) where torch requires no Triton: the CPU build, the non-Linux wheels."""
    asked = canonicalize_name(req.name)
    own = _TRITON_OF_KIND.get(c.kind)
    if own is None:
        notes.append(f"{req.name} is not planned: torch's CPU build does not require Triton")
        return None
    if not c.platform.startswith("linux"):
        notes.append(f"{req.name} is not planned: torch's {c.label} wheels require Triton on Linux only")
        return None
    if asked != own:
        notes.append(f"{req.name} asked for: torch {c} requires {own} (PyTorch's Triton for {c.kind}), planned instead")
    users = req.specifier if asked == own else SpecifierSet()
    spec = c.companions.get("triton")
    if spec is None:  # a release newer than the knowledge base: the index's, as torch's Requires-Dist names it
        said = "not known: torch's Requires-Dist"
        inferred = (Fact(f"the {own} release torch {c.version} pins", Confidence.INFERRED, said),)
        return PackagePin(own, str(users), f"{own}{users}", uncertain=inferred)
    exact = _exact(spec)
    if exact is not None:
        return PackagePin(own, exact, f"{own}=={exact}", uncertain=doubts)
    merged = spec & users  # triton ~=3.8.0 since torch 2.14
    return PackagePin(own, str(merged), f"{own}{merged}", uncertain=doubts)


def _shown(rejected: Sequence[Rejection], chosen: Candidate) -> tuple[Rejection, ...]:
    """Rejections without the chosen build, and without an older patch release's row that repeats the newer
    one's (2.14.0 turned down for the reason 2.14.1 was)."""
    seen: set[tuple[str, str, str]] = set()
    out: list[Rejection] = []
    for r in rejected:
        if r.variant == chosen.label and r.version == str(chosen.version):
            continue
        try:
            series = ".".join(Version(r.version).base_version.split(".")[:2])
        except ValueError:
            series = r.version
        key = (series, r.variant, r.reason)
        if key in seen:
            continue
        seen.add(key)
        out.append(r)
    return tuple(out)


def _sources(cset: CandidateSet) -> tuple[str, ...]:
    kb = f"knowledge base: torch {cset.knowledge}"
    if cset.knowledge_updated:
        kb += f", updated {cset.knowledge_updated}"
    if cset.index is None:
        return (kb, "index: not read (planned from the knowledge base alone)")
    return (kb, f"index: {cset.index}" + ("" if cset.index_complete else " (some pages could not be read)"))
