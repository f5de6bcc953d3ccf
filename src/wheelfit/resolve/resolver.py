"""``resolve(report, knowledge, request) -> Plan``: the build that has kernels for this machine.

Pure: no I/O, no clock, no environment. Hard constraints reject a candidate
with a reason; among what is left the newest torch wins, then the build that
fits the driver best. When the newest release has nothing for the GPU, the
newest release that does is chosen and the plan says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..errors import first_line
from ..kb.matrix import Companions, DriverVersion, Knowledge, PlatformBuilds, Release, Variant
from ..kb.overrides import rocm_known_broken, rocm_overrides
from ..report import Accelerator, HardwareReport
from .coverage import cuda_runs, describe_archs, gfx_override_value, intel_runs, sm_tuple
from .machine import GpuGroup, Machine, ResolveError
from .plan import PackagePin, Plan, Rejection

__all__ = ["COMPANIONS", "DEFAULT_INDEX", "Request", "resolve"]

DEFAULT_INDEX = "https://download.pytorch.org/whl"

#: Packages that come at the version matching the chosen torch, from the same variant index.
COMPANIONS = ("torchvision", "torchaudio", "triton")


@dataclass(frozen=True)
class Request:
    """What the user asked for: ``torch`` (and companions) with ordinary specifiers."""

    requirements: tuple[Requirement, ...]
    allow_cpu: bool = False
    index_base: str = DEFAULT_INDEX
    #: Near-miss AMD targets: ``{"gfx1031": ("gfx1030", "10.3.0", risk or None)}``.
    rocm_overrides: dict[str, tuple[str, str, str | None]] = field(default_factory=lambda: dict(rocm_overrides()))
    #: Listed targets whose kernels are missing from a ROCm version on: ``{"gfx906": ("6.4", why)}``.
    rocm_broken: dict[str, tuple[str, str]] = field(default_factory=lambda: dict(rocm_known_broken()))

    @classmethod
    def parse(cls, specs: Sequence[str], **kwargs: object) -> Request:
        reqs: list[Requirement] = []
        for spec in specs:
            try:
                req = Requirement(spec)
            except InvalidRequirement as exc:
                raise ResolveError(f"cannot read the requirement {spec!r}: {first_line(exc)}") from exc
            name = canonicalize_name(req.name)
            if name != "torch" and name not in COMPANIONS:
                raise ResolveError(
                    f"wheelfit plans torch and its companions ({', '.join(COMPANIONS)}); {req.name} is not one of them"
                )
            reqs.append(req)
        if not any(canonicalize_name(r.name) == "torch" for r in reqs):
            reqs.insert(0, Requirement("torch"))
        reqs.sort(key=lambda r: canonicalize_name(r.name) != "torch")
        return cls(tuple(reqs), **kwargs)  # type: ignore[arg-type]

    @property
    def torch(self) -> Requirement:
        return self.requirements[0]

    @property
    def companions(self) -> tuple[Requirement, ...]:
        return self.requirements[1:]


@dataclass
class _Found:
    release: Release
    version: Version
    variant: Variant
    native: bool = True
    warnings: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    why: list[str] = field(default_factory=list)


@dataclass
class _Search:
    found: _Found | None
    rejected: list[Rejection]
    newest: Version | None
    newest_builds: PlatformBuilds | None = None


def resolve(report: HardwareReport, kb: Knowledge, request: Request) -> Plan:
    """Plan the build for ``report``'s machine from ``kb``'s facts."""
    machine = Machine.from_report(report)
    group = machine.gpus
    notes: list[str] = []
    warnings: list[str] = []
    if group is not None and group.set_aside:
        warnings.append("not used by this build: " + "; ".join(group.set_aside))

    if group is not None and group.kind != "mps":
        search, excluded = _gpu_search(kb, machine, request, group)
        found = search.found
        if found is not None:
            if excluded:
                _exclude(found, group, excluded)
            if search.newest is not None and found.version.release[:2] != search.newest.release[:2]:
                if request.allow_cpu:
                    cpu = _cpu_search(kb, machine, request)
                    return _plan(
                        machine,
                        request,
                        cpu,
                        search.rejected,
                        [
                            *warnings,
                            f"--allow-cpu: torch {cpu.version} has no {group.kind} build for "
                            f"{_devices(found, group)}; installing its CPU build (torch {found.version} "
                            f"+{found.variant.label} would run on the GPU)",
                        ],
                        notes,
                    )
                found.why.insert(0, _dropped(kb, machine, request, search, group))
            return _plan(machine, request, found, search.rejected, warnings, notes)
        cpu = _cpu_search(kb, machine, request)
        warnings.append(
            f"no PyTorch build matching {request.torch} has kernels for "
            f"{', '.join(_describe(a) for a in group.devices)}: installing the CPU build"
        )
        return _plan(machine, request, cpu, search.rejected, warnings, notes)

    if group is not None and group.kind == "mps":
        return _plan(machine, request, _mps_search(kb, machine, request, group, warnings), [], warnings, notes)
    cpu = _cpu_search(kb, machine, request)
    cpu.why.insert(0, "no GPU usable by PyTorch was found: the CPU build fits")
    return _plan(machine, request, cpu, [], warnings, notes)


# -- searching ---------------------------------------------------------------------------------


def _releases(
    kb: Knowledge, machine: Machine, request: Request, rejected: list[Rejection]
) -> Iterator[tuple[Release, Version, PlatformBuilds]]:
    """Releases newest first that publish a usable build for this platform and Python."""
    for release in kb.releases_newest_first():
        version = _pick_version(release, request)
        if version is None:
            continue
        builds = release.platform(machine.platform_key)
        if builds is None:
            rejected.append(
                Rejection("*", str(version), f"torch {release.name} publishes no {machine.platform_key} build")
            )
            continue
        tags = release.python_tags_for(version, machine.platform_key)
        if machine.python_tag not in tags:
            rejected.append(
                Rejection("*", str(version), f"no wheels for Python {machine.python} (has {', '.join(tags)})")
            )
            continue
        if builds.min_macos and machine.macos is not None and machine.macos < builds.min_macos:
            rejected.append(
                Rejection(
                    "*", str(version), f"its wheels need macOS >= {builds.min_macos}, this Mac has {machine.macos}"
                )
            )
            continue
        if builds.min_glibc and machine.glibc is not None and machine.glibc < builds.min_glibc:
            rejected.append(
                Rejection("*", str(version), f"needs glibc >= {builds.min_glibc}, this machine has {machine.glibc}")
            )
            continue
        yield release, version, builds


def _pick_version(release: Release, request: Request) -> Version | None:
    for version in sorted(release.versions, reverse=True):
        if not request.torch.specifier.contains(version, prereleases=True):
            continue
        pins = release.companions.get(version)
        if all(_companion_fits(pins, r) for r in request.companions):
            return version
    return None


def _companion_fits(pins: Companions | None, req: Requirement) -> bool:
    """Whether the companion pinned for a torch version can meet the user's own specifier."""
    pin = None if pins is None else pins.pins.get(canonicalize_name(req.name))
    if pin is None:
        return False
    exact = _exact(pin)
    return exact is None or req.specifier.contains(exact, prereleases=True)


def _exact(spec: SpecifierSet) -> str | None:
    specs = list(spec)
    return specs[0].version if len(specs) == 1 and specs[0].operator == "==" else None


def _gpu_search(
    kb: Knowledge, machine: Machine, request: Request, group: GpuGroup
) -> tuple[_Search, tuple[Accelerator, ...]]:
    """Cover every GPU of the vendor; if no build does, the most capable ones (naming the rest)."""
    first: _Search | None = None
    # Builds the release matrix advertises first: one that is only built (cu129 in 2.13, cu134 in 2.14)
    # may be missing from the index, so it is chosen only when no advertised build anywhere fits.
    for advertised_only in (True, False):
        for devices in _capability_tiers(group):
            search = _search_kind(kb, machine, request, group.kind, devices, advertised_only)
            first = first or search
            if search.found is not None:
                if not search.found.variant.advertised:
                    search.found.warnings.append(
                        f"{search.found.variant.label} is built but not advertised for torch {search.found.version}; "
                        "it may be missing from the index"
                    )
                return search, tuple(a for a in group.devices if a not in devices)
    assert first is not None  # noqa: S101 - _capability_tiers yields at least once
    return first, ()


def _capability_tiers(group: GpuGroup) -> Iterator[tuple[Accelerator, ...]]:
    """All devices, then without the least capable class, and so on."""
    devices = list(group.devices)
    if group.kind != "cuda":
        yield tuple(devices)
        return
    ccs = sorted({sm_tuple(a.compute_capability or "0.0") for a in devices})
    for floor in ccs:
        yield tuple(a for a in devices if sm_tuple(a.compute_capability or "0.0") >= floor)


def _search_kind(
    kb: Knowledge,
    machine: Machine,
    request: Request,
    kind: str,
    devices: tuple[Accelerator, ...],
    advertised_only: bool,
) -> _Search:
    rejected: list[Rejection] = []
    newest: Version | None = None
    newest_builds: PlatformBuilds | None = None
    judge = _JUDGES[kind]
    for release, version, builds in _releases(kb, machine, request, rejected):
        if newest is None:
            newest, newest_builds = version, builds
        ok: list[_Found] = []
        for variant in builds.variants.values():
            if variant.kind != kind or (advertised_only and not variant.advertised):
                continue
            verdict = judge(kb, machine, request, release, version, variant, devices)
            if isinstance(verdict, str):
                rejected.append(Rejection(variant.label, str(version), f"{variant.label}: {verdict}"))
            else:
                ok.append(verdict)
        if ok:
            return _Search(_best(kb, machine, kind, ok, devices), rejected, newest, newest_builds)
    return _Search(None, rejected, newest, newest_builds)


def _judge_cuda(
    kb: Knowledge,
    machine: Machine,
    request: Request,
    release: Release,
    version: Version,
    variant: Variant,
    devices: tuple[Accelerator, ...],
) -> _Found | str:
    for a in devices:
        cc = a.compute_capability or ""
        if not cuda_runs(cc, variant.sass, variant.ptx):
            return f"no SASS for sm_{cc.replace('.', '')} (has {describe_archs(variant.sass, variant.ptx)})"
    fit, detail = _driver_fit(kb, machine, variant, devices)
    if fit == "fail":
        return detail or "the driver is too old"
    found = _Found(release, version, variant)
    archs = sorted({a.compute_capability or "" for a in devices}, key=sm_tuple)
    found.why.append(
        f"{variant.label} has kernels for {', '.join('sm_' + c.replace('.', '') for c in archs)} "
        f"({describe_archs(variant.sass, variant.ptx)})"
    )
    return found


def _judge_rocm(
    kb: Knowledge,
    machine: Machine,
    request: Request,
    release: Release,
    version: Version,
    variant: Variant,
    devices: tuple[Accelerator, ...],
) -> _Found | str:
    found = _Found(release, version, variant)
    runs_as: list[str] = []
    for a in devices:
        gfx = a.effective_gfx or a.gfx or ""
        broken = request.rocm_broken.get(a.gfx or gfx)
        if broken is not None and Version(variant.rocm or "0") >= Version(broken[0]):
            return f"{a.gfx or gfx} is listed, but {broken[1]}"
        if gfx in variant.gfx and a.gfx and gfx != a.gfx:
            # The user's HSA_OVERRIDE_GFX_VERSION already makes it pretend: still unsupported, say so.
            value = gfx_override_value(gfx)
            found.native = False
            found.env["HSA_OVERRIDE_GFX_VERSION"] = value
            runs_as.append(f"{gfx} (HSA_OVERRIDE_GFX_VERSION set for {a.gfx})")
            found.warnings.append(
                f"{a.gfx} runs {gfx} kernels only because HSA_OVERRIDE_GFX_VERSION={value} is set "
                "(not supported by AMD): keep it set when running torch"
            )
            continue
        if gfx in variant.gfx:
            runs_as.append(gfx)
            continue
        near = request.rocm_overrides.get(gfx)
        if near is None or near[0] not in variant.gfx:
            return f"{gfx} is not in its gfx list ({', '.join(variant.gfx)})"
        target, value, risk = near
        if found.env.get("HSA_OVERRIDE_GFX_VERSION", value) != value:
            # The override is process-wide: one value for every GPU (ROCm/ROCm#3065).
            return f"{gfx} would need HSA_OVERRIDE_GFX_VERSION={value}, another GPU needs a different value"
        found.native = False
        found.env["HSA_OVERRIDE_GFX_VERSION"] = value
        runs_as.append(f"{target} (the override target of {gfx})")
        found.warnings.append(
            f"{gfx} is in no {variant.label} build; it can run {target} kernels only with "
            f"HSA_OVERRIDE_GFX_VERSION={value} set (not supported by AMD)" + (f": {risk}" if risk else "")
        )
    found.why.append(f"{variant.label} lists {', '.join(sorted(set(runs_as)))}")
    return found


def _judge_xpu(
    kb: Knowledge,
    machine: Machine,
    request: Request,
    release: Release,
    version: Version,
    variant: Variant,
    devices: tuple[Accelerator, ...],
) -> _Found | str:
    found = _Found(release, version, variant)
    for a in devices:
        target, sub = a.extra.get("aot_target"), a.extra.get("subfamily")
        how = intel_runs(
            a.family, sub if isinstance(sub, str) else None, target if isinstance(target, str) else None, variant.aot
        )
        if how == "jit":
            found.native = False
            found.warnings.append(
                f"{a.name} ({target or sub or a.family}) is not an AOT target of torch {version} xpu "
                f"({', '.join(variant.aot)}); its kernels are JIT-compiled from SPIR-V at first use "
                "(slower start, not validated by Intel)"
            )
    aot = sorted({a.family or "" for a in devices}) if found.native else []
    found.why.append(f"xpu has AOT kernels for {', '.join(aot)}" if aot else "xpu carries SPIR-V for other Xe GPUs")
    return found


def _best(kb: Knowledge, machine: Machine, kind: str, ok: list[_Found], devices: tuple[Accelerator, ...]) -> _Found:
    native = [f for f in ok if f.native] or ok
    if kind == "cuda":
        return _best_cuda(kb, machine, native, devices)
    if kind == "rocm":
        host = _rocm_host(devices)
        ranked = sorted(native, key=lambda f: Version(f.variant.rocm or "0"))
        fitting = [f for f in ranked if host is None or Version(f.variant.rocm or "0").release[:2] <= host.release[:2]]
        best = fitting[-1] if fitting else ranked[0]  # closest to the installed ROCm
        if host is not None and not fitting:
            best.warnings.append(
                f"every ROCm build is newer than the installed ROCm {host}; the wheels bundle "
                "their runtime, but an old amdgpu kernel driver may not run them"
            )
        return best
    return native[0]


def _driver_fit(
    kb: Knowledge, machine: Machine, variant: Variant, devices: tuple[Accelerator, ...]
) -> tuple[str, str | None]:
    """How the NVIDIA driver meets a CUDA build: ``own`` (the toolkit's own minimum), ``compat``
    (minor-version compatibility only), ``fail`` or ``unknown``, with a sentence saying so."""
    cuda = Version(variant.cuda or "0")
    driver = _driver(devices)
    if driver is not None:
        floor = kb.minor_compat_floor(cuda.major, machine.driver_os)
        if floor is not None and driver < floor:
            return "fail", f"driver {driver} is below {floor}, the minimum for any CUDA {cuda.major}.x build"
        own = _own_floor(kb, variant.cuda or "", machine.driver_os)
        if own is not None and own <= driver:
            return "own", f"driver {driver} meets CUDA {cuda}'s own minimum ({own})"
        return "compat", (
            f"driver {driver} is older than CUDA {cuda} needs on its own ({own or 'unknown'}); "
            f"{variant.label} runs through minor-version compatibility (features that need a newer "
            "driver fail): update the driver if you can"
        )
    supported = _cuda_driver(devices)
    if supported is not None:
        if cuda.release[:2] <= supported.release[:2]:
            return "own", f"the driver supports CUDA {supported}"
        if cuda.major == supported.major:
            return "compat", (
                f"the driver supports CUDA {supported}; {variant.label} runs through minor-version compatibility"
            )
        return "fail", f"the driver supports CUDA {supported}; CUDA {cuda.major}.x builds need a newer driver"
    return "unknown", None


def _own_floor(kb: Knowledge, cuda: str, driver_os: str) -> DriverVersion | None:
    """The driver a CUDA toolkit asks for on its own (NVIDIA Table 3); None when unknown.

    For CUDA 13.x NVIDIA prints "N/A" on Windows (the driver is no longer bundled); the Linux
    figure names the driver branch it needs, which is the conservative reading.
    """
    toolkit = kb.cuda_toolkits.get(cuda)
    if toolkit is None:
        return None
    own = toolkit.for_os(driver_os)
    if own is None and driver_os == "windows" and toolkit.confidence.get("windows") != "U":
        return toolkit.linux
    return own


def _best_cuda(kb: Knowledge, machine: Machine, ok: list[_Found], devices: tuple[Accelerator, ...]) -> _Found:
    """The highest CUDA whose own driver minimum is met, else the lowest that runs by minor-version
    compatibility (warned), else (driver unknown) the highest, warned."""
    ranked = sorted(ok, key=lambda f: Version(f.variant.cuda or "0"))
    fits = {id(f): _driver_fit(kb, machine, f.variant, devices) for f in ranked}
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
    floor = kb.minor_compat_floor(Version(best.variant.cuda or "0").major, machine.driver_os)
    best.warnings.append(
        f"the NVIDIA driver version is unknown: {best.variant.label} needs a driver >= {floor}"
        if floor
        else "the NVIDIA driver version is unknown"
    )
    return best


def _cpu_search(kb: Knowledge, machine: Machine, request: Request) -> _Found:
    rejected: list[Rejection] = []
    for release, version, builds in _releases(kb, machine, request, rejected):
        cpu = next((v for v in builds.variants.values() if v.kind == "cpu"), None)
        if cpu is not None:
            return _Found(
                release, version, cpu, why=[f"torch {version} is the newest release matching {request.torch}"]
            )
    detail = "; ".join(list(dict.fromkeys(r.reason for r in rejected))[:3])  # releases often fail alike
    raise ResolveError(
        f"no PyTorch release matches {', '.join(map(str, request.requirements))} on this machine"
        + (f" ({detail})" if detail else "")
    )


def _mps_search(kb: Knowledge, machine: Machine, request: Request, group: GpuGroup, warnings: list[str]) -> _Found:
    rejected: list[Rejection] = []
    newest: Version | None = None
    for release, version, builds in _releases(kb, machine, request, rejected):
        newest = newest or version
        cpu = next((v for v in builds.variants.values() if v.kind == "cpu"), None)
        if cpu is None:
            continue
        need = builds.mps_min_macos
        if machine.macos is not None and need is not None and machine.macos < need:
            if request.allow_cpu:
                warnings.append(f"--allow-cpu: torch {version} needs macOS {need} for MPS; it will run on the CPU")
                return _Found(release, version, cpu, why=[f"torch {version} is the newest release"])
            continue
        found = _Found(
            release,
            version,
            cpu,
            why=[
                f"{group.devices[0].name}: MPS needs macOS >= {need}"
                f"{'' if machine.macos is None else f', this Mac has {machine.macos}'}"
            ],
        )
        if newest != version:
            found.why.insert(
                0,
                f"torch {newest} needs a newer macOS for MPS; torch {version} is the newest "
                f"release with MPS on macOS {machine.macos}",
            )
        return found
    macs = (r.platform(machine.platform_key) for r in kb.releases_newest_first())
    floors = sorted({b.mps_min_macos for b in macs if b is not None and b.mps_min_macos is not None})
    warnings.append(
        f"no PyTorch release matching {request.torch} has MPS on macOS {machine.macos} "
        f"(MPS needs macOS >= {floors[0] if floors else '?'}): the CPU build it is"
    )
    return _cpu_search(kb, machine, request)


_JUDGES = {"cuda": _judge_cuda, "rocm": _judge_rocm, "xpu": _judge_xpu}


# -- helpers -----------------------------------------------------------------------------------


_T = TypeVar("_T")


def _first(devices: tuple[Accelerator, ...], attr: str, parse: Callable[[str], _T]) -> _T | None:
    """The first device's value of ``attr`` that is set, parsed; None if unset or unreadable."""
    for a in devices:
        text = getattr(a, attr)
        if text:
            try:
                return parse(text)
            except ValueError:
                return None
    return None


def _driver(devices: tuple[Accelerator, ...]) -> DriverVersion | None:
    return _first(devices, "driver_version", DriverVersion.parse)


def _cuda_driver(devices: tuple[Accelerator, ...]) -> Version | None:
    return _first(devices, "cuda_driver_version", Version)


def _rocm_host(devices: tuple[Accelerator, ...]) -> Version | None:
    return _first(devices, "rocm_version", Version)


def _describe(a: Accelerator) -> str:
    return f"{a.name} ({a.arch})" if a.arch else a.name


def _devices(found: _Found, group: GpuGroup) -> str:
    return ", ".join(_describe(a) for a in group.devices)


def _dropped(kb: Knowledge, machine: Machine, request: Request, search: _Search, group: GpuGroup) -> str:
    """Why an older release: name the GPUs the newest release has no kernels for, or its first obstacle."""
    found = search.found
    assert found is not None and search.newest is not None and search.newest_builds is not None  # noqa: S101
    judge = _JUDGES[group.kind]
    newest = search.newest
    variants = [v for v in search.newest_builds.variants.values() if v.kind == group.kind]

    def has_kernels(a: Accelerator) -> bool:
        verdicts = (judge(kb, machine, request, found.release, newest, v, (a,)) for v in variants)
        return any(isinstance(v, _Found) or "driver" in v for v in verdicts)

    missing = [a for a in group.devices if not has_kernels(a)]
    newer = f"torch {found.version} is the newest release that has one ({found.variant.label})"
    if missing:
        archs = ", ".join(sorted({a.arch or "?" for a in missing}))
        return f"torch {newest} has no build with kernels for {archs}; {newer}"
    obstacle = next((r.reason for r in search.rejected if r.version == str(newest) and r.variant != "*"), None)
    return f"torch {newest} has no build that runs here ({obstacle or 'see the rejected builds'}); {newer}"


def _exclude(found: _Found, group: GpuGroup, excluded: tuple[Accelerator, ...]) -> None:
    used = [a for a in group.devices if a not in excluded]
    names = ", ".join(_describe(a) for a in excluded)
    found.warnings.append(f"no build has kernels for every GPU: {names} will not be used")
    indices = [str(a.extra.get("index", group.devices.index(a))) for a in used]
    found.env["CUDA_VISIBLE_DEVICES"] = ",".join(indices)
    found.why.append(f"built for the most capable GPUs: {', '.join(_describe(a) for a in used)}")


def _plan(
    machine: Machine, request: Request, found: _Found, rejected: list[Rejection], warnings: list[str], notes: list[str]
) -> Plan:
    label = found.variant.label
    local = "" if machine.platform_key == "macos_arm64" else f"+{label}"
    pins = [PackagePin("torch", str(found.version), f"torch=={found.version}{local}")]
    companions = found.release.companions.get(found.version)
    for req in request.companions:
        name = canonicalize_name(req.name)
        spec = companions.pins[name] if companions else SpecifierSet()
        exact = _exact(spec)
        if exact is not None:
            pins.append(PackagePin(name, exact, f"{name}=={exact}{local}"))
        else:  # torchaudio ~=2.11.0 since torch 2.12: a range, narrowed by what the user asked
            merged = spec & req.specifier
            pins.append(PackagePin(name, str(merged), f"{name}{merged}"))
    index = f"{request.index_base.rstrip('/')}/{label}"
    return Plan(
        torch_version=str(found.version),
        variant=label,
        index_url=index,
        packages=tuple(pins),
        reasons=tuple(found.why + notes),
        rejected=tuple(r for r in rejected if r.variant != label or r.version != str(found.version)),
        warnings=tuple(warnings + found.warnings),
        env=dict(found.env),
        platform=machine.platform_key,
        python=machine.python,
    )
