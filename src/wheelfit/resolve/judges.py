"""The judges: does one candidate run on the machine, and if not, which rule says no. Pure.

Each judge returns a :class:`Found` (it runs, with why and what to watch out for) or a :class:`Refusal`
naming its rule (:class:`Judge`), so callers decide by the rule, never by searching the reason's words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from packaging.version import Version

from ..candidates.model import Candidate, Fact
from ..kb.matrix import DriverVersion
from ..kinds import BuildKind, Confidence, Mode
from ..report import Accelerator
from ..simple.links import FileLink
from ..simple.select import requires_python_problem
from ..variants.errors import VariantError
from ..variants.filename import parse_wheel_name
from .coverage import cuda_runs, describe_archs, gfx_override_value, intel_runs, sm_tuple
from .machine import Machine
from .request import Request

if TYPE_CHECKING:
    from packaging.tags import Tag

    from ..variants.metadata import Variant

__all__ = ["Found", "Judge", "Refusal", "describe", "driver_fit", "gate", "judge_kernels"]


class Judge(str, Enum):
    """The rule that turned a candidate down (its value is the stable name in ``--json``)."""

    ABSENT = "absent"  # the index was read and does not have the build
    FILES = "files"  # the index has the build, but no wheel for this platform and Python
    PYTHON = "python"
    GLIBC = "glibc"
    MACOS = "macos"
    KERNELS = "kernels"
    DRIVER = "driver"
    ROCM = "rocm"  # a listed gfx target whose kernels a ROCm version lost
    #: A near-miss AMD GPU that would need HSA_OVERRIDE_GFX_VERSION (not set, not allowed), or GPUs that would
    #: need different values of it.
    OVERRIDE = "override"
    PROPERTIES = "properties"  # a variant property the machine does not support (PEP 825 ranking)
    #: No index confirmed the build, the knowledge base is unsure it exists, and a build known to exist runs here.
    UNCONFIRMED = "unconfirmed"

    #: Rules about the release and the platform rather than the build: one row for all of a version's builds.
    @property
    def platform_wide(self) -> bool:
        return self in (Judge.PYTHON, Judge.GLIBC, Judge.MACOS)


@dataclass(frozen=True)
class Refusal:
    judge: Judge
    reason: str
    #: ``reason`` names what the build lacks (``no SASS for sm_61 (has sm_75-sm_120)``), so that said of the build
    #: it reads ``cu128 has no SASS ...`` (:func:`~wheelfit.resolve.choice.refusal_text`).
    lacks: bool = False


@dataclass
class Found:
    """A candidate that runs here, and what the plan should say about it."""

    candidate: Candidate
    #: False when it runs only through a workaround (an override, JIT compilation): others are preferred.
    native: bool = True
    warnings: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    why: list[str] = field(default_factory=list)
    #: The wheel chosen among the candidate's files (when an index was read).
    file: FileLink | None = None
    #: Variant mode: the variant narrowed to what the machine supports.
    variant: Variant | None = None
    #: The fact topics (``kernels``, ``driver``, ...) the decision used.
    used: list[str] = field(default_factory=list)

    @property
    def facts(self) -> tuple[Fact, ...]:
        c = self.candidate
        return tuple(c.facts[t] for t in ("exists", *self.used) if t in c.facts)


# -- the release and the platform ----------------------------------------------------------------------------


def gate(c: Candidate, machine: Machine, exact: bool) -> FileLink | Refusal | None:
    """Whether the build can be installed here at all: its file for this platform and Python when the index was
    read (``None`` when it was not and the knowledge base's Python tags and platform floors allow it)."""
    if c.files is not None:
        return _pick_file(c, machine, exact)
    if c.python_tags is not None and machine.python_tag not in c.python_tags:
        has = ", ".join(c.python_tags)
        return Refusal(Judge.PYTHON, f"no wheels for Python {machine.python} (has {has})", lacks=True)
    rt = c.runtime
    if rt.min_macos and machine.macos is not None and machine.macos < rt.min_macos:
        return Refusal(Judge.MACOS, f"its wheels need macOS >= {rt.min_macos}, this Mac has {machine.macos}")
    if rt.min_glibc and machine.glibc is not None and machine.glibc < rt.min_glibc:
        return Refusal(Judge.GLIBC, f"needs glibc >= {rt.min_glibc}, this machine has {machine.glibc}")
    return None


def _pick_file(c: Candidate, machine: Machine, exact: bool) -> FileLink | Refusal:
    """The best wheel of the build for the machine's tags (tag preference, then build tag); a yanked file only
    for an exact pin (PEP 592), as :func:`wheelfit.simple.select.select_wheel` chooses."""
    if not c.files:
        return Refusal(Judge.ABSENT, f"not on the index ({c.index_url or 'no index URL'})")
    priority = {tag: i for i, tag in reversed(list(enumerate(machine.tags)))}
    python = Version(machine.markers.get("python_full_version") or machine.python)
    best: tuple[tuple[bool, int, tuple[int, str] | tuple[()]], FileLink] | None = None
    yanked = False
    for link in c.files:
        try:
            wheel = parse_wheel_name(link.filename)
        except VariantError:
            continue
        if c.mode is Mode.VARIANT:
            if wheel.label != c.label:
                continue
        elif wheel.label is not None or (wheel.version.local or "") != _local(c):
            continue
        if Version(wheel.version.public) != c.version or requires_python_problem(link.requires_python, python):
            continue
        ranks = [priority[t] for t in wheel.tags if t in priority]
        if not ranks:
            continue
        if link.yanked is not None and not exact:
            yanked = True
            continue
        key = (link.yanked is None, -min(ranks), wheel.build or ())
        if best is None or key > best[0]:
            best = (key, link)
    if best is None:
        only = ", only yanked ones (an exact pin takes those)" if yanked else ""
        return Refusal(Judge.FILES, f"on the index, but no wheel for {_tags_hint(machine.tags)}{only}")
    return best[1]


def _local(c: Candidate) -> str:
    """The local version label of the build's files: macOS wheels carry none."""
    return "" if c.platform.startswith("macos") else c.label


def _tags_hint(tags: tuple[Tag, ...]) -> str:
    return f"{tags[0].interpreter} on {tags[0].platform}" if tags else "this platform"


# -- kernels and runtimes -------------------------------------------------------------------------------------


def judge_kernels(
    c: Candidate, machine: Machine, request: Request, devices: tuple[Accelerator, ...]
) -> Found | Refusal:
    """Whether the build has kernels (and a runtime) for every one of ``devices``."""
    match c.kind:
        case BuildKind.CUDA:
            return _cuda(c, machine, devices)
        case BuildKind.ROCM:
            return _rocm(c, request, devices)
        case BuildKind.XPU:
            return _xpu(c, devices)
    return Found(c)


def _cuda(c: Candidate, machine: Machine, devices: tuple[Accelerator, ...]) -> Found | Refusal:
    found = Found(c)
    if c.kernels is not None:
        for a in devices:
            cc = a.compute_capability or ""
            if cuda_runs(cc, c.kernels.sass, c.kernels.ptx):
                continue
            has = describe_archs(c.kernels.sass, c.kernels.ptx)
            if c.mode is Mode.VARIANT:
                return Refusal(
                    Judge.KERNELS,
                    f"no kernels for {describe(a)}: nvidia :: sm_arch covers {has} "
                    "(the reference providers judge by the highest compute capability only)",
                    lacks=True,
                )
            return Refusal(Judge.KERNELS, f"no SASS for sm_{cc.replace('.', '')} (has {has})", lacks=True)
        found.used.append("kernels")
        if c.mode is Mode.INDEX:
            archs = sorted({a.compute_capability or "" for a in devices}, key=sm_tuple)
            found.why.append(
                f"{c.label} has kernels for {', '.join('sm_' + x.replace('.', '') for x in archs)} "
                f"({describe_archs(c.kernels.sass, c.kernels.ptx)})"
            )
    fit, detail = driver_fit(c, machine, devices)
    if fit == "fail":
        return Refusal(Judge.DRIVER, detail or "the driver is too old")
    if fit != "unknown":
        found.used.append("driver")
    return found


def _rocm(c: Candidate, request: Request, devices: tuple[Accelerator, ...]) -> Found | Refusal:
    found = Found(c)
    if c.kernels is None:
        return found
    gfx_list = c.kernels.gfx
    runs_as: list[str] = []
    for a in devices:
        gfx = a.effective_gfx or a.gfx or ""
        broken = request.rocm_broken.get(a.gfx or gfx)
        if broken is not None and Version(c.runtime.rocm or "0") >= Version(broken[0]):
            return Refusal(Judge.ROCM, f"{a.gfx or gfx} is listed, but {broken[1]}")
        if gfx in gfx_list and a.gfx and gfx != a.gfx:
            # The user's HSA_OVERRIDE_GFX_VERSION already makes it pretend: still unsupported, say so.
            value = gfx_override_value(gfx)
            found.native = False
            found.env["HSA_OVERRIDE_GFX_VERSION"] = value
            runs_as.append(f"{gfx} (HSA_OVERRIDE_GFX_VERSION set for {a.gfx})")
            found.warnings.append(
                f"{a.gfx} runs {gfx} kernels only because HSA_OVERRIDE_GFX_VERSION={value} is set: the user's "
                "choice, used (not supported by AMD): keep it set when running torch"
            )
            continue
        if gfx in gfx_list:
            runs_as.append(gfx)
            continue
        near = request.rocm_overrides.get(gfx)
        if near is None or near[0] not in gfx_list:
            if c.mode is Mode.VARIANT:
                why = f"no kernels for {describe(a)}: amd :: gfx_arch does not list {gfx}"
                return Refusal(Judge.KERNELS, why, lacks=True)
            return Refusal(Judge.KERNELS, f"{gfx} is not in its gfx list ({', '.join(gfx_list)})")
        target, value, risk = near
        if not request.allow_hsa_override:
            # Not by default: the override is unsupported and has hung GPUs (pytorch/pytorch#179653). The user's own
            # HSA_OVERRIDE_GFX_VERSION (above) or --allow-hsa-override chooses it.
            return Refusal(
                Judge.OVERRIDE,
                f"{gfx} is not in its gfx list; it would run {target} kernels only with "
                f"HSA_OVERRIDE_GFX_VERSION={value} (not supported by AMD), which is not set",
            )
        if found.env.get("HSA_OVERRIDE_GFX_VERSION", value) != value:
            # The override is process-wide: one value for every GPU (ROCm/ROCm#3065).
            why = f"{gfx} would need HSA_OVERRIDE_GFX_VERSION={value}, another GPU needs a different value"
            return Refusal(Judge.OVERRIDE, why)
        found.native = False
        found.env["HSA_OVERRIDE_GFX_VERSION"] = value
        runs_as.append(f"{target} (the override target of {gfx})")
        found.warnings.append(
            f"{gfx} is in no {c.label} build; it can run {target} kernels only with "
            f"HSA_OVERRIDE_GFX_VERSION={value} set (not supported by AMD)" + (f": {risk}" if risk else "")
        )
    found.used.append("kernels")
    if c.mode is Mode.INDEX:
        found.why.append(f"{c.label} lists {', '.join(sorted(set(runs_as)))}")
    return found


def _xpu(c: Candidate, devices: tuple[Accelerator, ...]) -> Found | Refusal:
    found = Found(c)
    if c.kernels is None:
        return found
    aot_list = c.kernels.aot
    for a in devices:
        target, sub = a.extra.get("aot_target"), a.extra.get("subfamily")
        how = intel_runs(
            a.family, sub if isinstance(sub, str) else None, target if isinstance(target, str) else None, aot_list
        )
        if how == "jit":
            found.native = False
            found.warnings.append(
                f"{a.name} ({target or sub or a.family}) is not an AOT target of torch {c.version} xpu "
                f"({', '.join(aot_list)}); its kernels are JIT-compiled from SPIR-V at first use "
                "(slower start, not validated by Intel)"
            )
    found.used.append("kernels")
    aot = sorted({a.family or "" for a in devices}) if found.native else []
    if c.mode is Mode.INDEX:
        found.why.append(f"xpu has AOT kernels for {', '.join(aot)}" if aot else "xpu carries SPIR-V for other Xe GPUs")
    return found


def driver_fit(c: Candidate, machine: Machine, devices: tuple[Accelerator, ...]) -> tuple[str, str | None]:
    """How the NVIDIA driver meets a CUDA build: ``own`` (the toolkit's own minimum), ``compat``
    (minor-version compatibility only), ``fail`` or ``unknown``, with a sentence saying so."""
    rt = c.runtime
    if rt.driver_floor is None and rt.compat_floor is None:
        return "unknown", None  # variant mode: the nvidia namespace's cuda_version_lower_bound decided
    cuda = Version(rt.cuda or "0")
    driver = _driver(devices)
    if driver is not None:
        floor = rt.compat_floor.for_os(machine.driver_os) if rt.compat_floor is not None else None
        if floor is not None and driver < floor:
            return "fail", f"driver {driver} is below {floor}, the minimum for any CUDA {cuda.major}.x build"
        own = own_floor(c, machine.driver_os)
        release = _release(c, machine.driver_os)
        if own is not None and own <= driver:
            return "own", f"driver {driver} meets CUDA {cuda}'s own minimum ({own}, {release})"
        return "compat", (
            f"driver {driver} is older than CUDA {cuda} needs on its own ({own or 'unknown'}, {release}); "
            f"{c.label} runs through minor-version compatibility (features that need a newer "
            "driver fail): update the driver if you can"
        )
    supported = _first_version(devices, "cuda_driver_version")
    if supported is not None:
        if cuda.release[:2] <= supported.release[:2]:
            return "own", f"the driver supports CUDA {supported}"
        if cuda.major == supported.major:
            return "compat", f"the driver supports CUDA {supported}; {c.label} runs through minor-version compatibility"
        return "fail", f"the driver supports CUDA {supported}; CUDA {cuda.major}.x builds need a newer driver"
    return "unknown", None


def own_floor(c: Candidate, driver_os: str) -> DriverVersion | None:
    """The driver a CUDA toolkit asks for on its own (NVIDIA Table 3); None when unknown.

    For CUDA 13.x NVIDIA prints "N/A" on Windows (the driver is no longer bundled); the Linux
    figure names the driver branch it needs, which is the conservative reading.
    """
    toolkit = c.runtime.driver_floor
    if toolkit is None:
        return None
    own = toolkit.for_os(driver_os)
    if own is None and driver_os == "windows" and toolkit.confidence.get("windows") is not Confidence.UNCERTAIN:
        return toolkit.linux
    return own


def _release(c: Candidate, driver_os: str) -> str:
    """Which NVIDIA release the toolkit floor is (``12.6 GA``): the one the floor's number came from."""
    floor = c.runtime.driver_floor
    if floor is None:
        return "no release known"
    if floor.for_os(driver_os) is None and own_floor(c, driver_os) is not None:
        driver_os = "linux"  # the Linux figure stands in (Windows 13.x: N/A)
    return floor.releases.get(driver_os, f"CUDA {c.runtime.cuda}")


def _driver(devices: tuple[Accelerator, ...]) -> DriverVersion | None:
    for a in devices:
        if a.driver_version:
            try:
                return DriverVersion.parse(a.driver_version)
            except ValueError:
                return None
    return None


def _first_version(devices: tuple[Accelerator, ...], attr: str) -> Version | None:
    """The first device's value of ``attr`` that is set, as a version; None if unset or unreadable."""
    for a in devices:
        text = getattr(a, attr)
        if text:
            try:
                return Version(text)
            except ValueError:
                return None
    return None


def rocm_host(devices: tuple[Accelerator, ...]) -> Version | None:
    return _first_version(devices, "rocm_version")


def describe(a: Accelerator) -> str:
    """``target GPU sm_61 (compute capability 6.1)``, ``Radeon 780M (gfx1103)``."""
    if a.vendor == "nvidia" and a.compute_capability:
        return f"{a.name} (compute capability {a.compute_capability})"
    return f"{a.name} ({a.arch})" if a.arch else a.name
