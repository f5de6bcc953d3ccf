"""Does the torch in an environment run on this machine? Imports torch there (a child process) and judges it.

Judged by kernels and runtime, never by the plan alone: a build other than wheelfit's pick (PyPI's ``torch``, a
cu128 build where the plan says cu130) passes when it has kernels for every GPU and a runtime the driver supports;
the plan is a note. The GPUs are those torch sees; with none visible (no driver where this runs), those of the
machine's report (detected or ``--target``), against the build's arch list as torch reports it or else as the
knowledge base lists it for that version and label. torchvision and torchaudio must be the ones of that torch.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ..candidate import Candidate, Kernels, Runtime
from ..kb.candidates import infer_candidate, kb_candidates
from ..kb.drivers import compat_floor, toolkit_floor
from ..kb.matrix import Knowledge
from ..report import Accelerator
from ..resolve.coverage import cuda_runs, describe_archs, intel_runs, sm_tuple
from ..resolve.judges import driver_fit
from ..resolve.machine import Machine
from ..resolve.plan import Plan
from ..variants.legacy import legacy_variant
from .errors import EnvironmentProbeError

__all__ = [
    "COMPANIONS",
    "Check",
    "Companion",
    "TorchFacts",
    "Verification",
    "covers",
    "expected_runtime",
    "judge",
    "probe_torch",
    "verify",
]

#: The packages whose build must be the one of the torch beside them.
COMPANIONS = ("torchvision", "torchaudio")

_SCRIPT = r"""
import json, sys
out = {"companions": [], "gpus": [], "arch_list": []}
try:
    import importlib.metadata as md
    for name in sys.argv[1:]:
        try:
            d = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        out["companions"].append({"name": name, "version": d.version, "requires": list(d.requires or [])})
    try:
        md.distribution("torch")
        dist = True
    except md.PackageNotFoundError:
        dist = False
except BaseException:
    dist = True
try:
    import torch
except BaseException as exc:
    out["error"] = "%s: %s" % (type(exc).__name__, exc)
    out["missing"] = not dist and isinstance(exc, ImportError) and getattr(exc, "name", None) == "torch"
    print(json.dumps(out))
    raise SystemExit(0)
v = getattr(torch, "version", None)
out.update({"version": str(getattr(torch, "__version__", "")), "cuda": getattr(v, "cuda", None),
            "hip": getattr(v, "hip", None), "xpu": getattr(v, "xpu", None)})
try:
    cuda = getattr(torch, "cuda", None)
    if cuda is not None:
        if cuda.is_available():
            for i in range(cuda.device_count()):
                p = cuda.get_device_properties(i)
                gcn = getattr(p, "gcnArchName", "") or ""
                arch = gcn.split(":")[0] if gcn else "sm_%d%d" % (p.major, p.minor)
                out["gpus"].append({"name": p.name, "arch": arch})
        out["arch_list"] = list(cuda.get_arch_list())
    xpu = getattr(torch, "xpu", None)
    if xpu is not None and xpu.is_available():
        for i in range(xpu.device_count()):
            out["gpus"].append({"name": xpu.get_device_name(i), "arch": "xpu"})
        out["arch_list"] = list(getattr(xpu, "get_arch_list", lambda: [])())
except BaseException as exc:
    out["gpu_error"] = "%s: %s" % (type(exc).__name__, exc)
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Companion:
    """An installed torchvision or torchaudio: its version and its Requires-Dist lines."""

    name: str
    version: str
    requires: tuple[str, ...] = ()


@dataclass(frozen=True)
class TorchFacts:
    """What ``import torch`` said in the target environment (and which companions are installed there)."""

    version: str
    cuda: str | None = None
    hip: str | None = None
    xpu: str | None = None
    #: ``{"name": ..., "arch": "sm_86" | "gfx942" | "xpu"}`` for each GPU torch can use.
    gpus: tuple[Mapping[str, str], ...] = ()
    arch_list: tuple[str, ...] = ()
    gpu_error: str | None = None
    companions: tuple[Companion, ...] = ()
    #: Why ``import torch`` failed (``None``: it worked); ``missing``: torch is not installed at all.
    error: str | None = None
    missing: bool = False

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TorchFacts:
        return cls(
            version=str(data.get("version", "")),
            cuda=data.get("cuda"),
            hip=data.get("hip"),
            xpu=data.get("xpu"),
            gpus=tuple(data.get("gpus", ())),
            arch_list=tuple(data.get("arch_list", ())),
            gpu_error=data.get("gpu_error"),
            companions=tuple(
                Companion(str(c["name"]), str(c["version"]), tuple(map(str, c.get("requires", ()))))
                for c in data.get("companions", ())
            ),
            error=data.get("error"),
            missing=bool(data.get("missing", False)),
        )


@dataclass(frozen=True)
class Check:
    name: str
    #: True passed, False failed, None a note or not checked (and ``detail`` says why).
    ok: bool | None
    detail: str


@dataclass(frozen=True)
class Verification:
    facts: TorchFacts
    checks: tuple[Check, ...] = field(default_factory=tuple)
    #: The build torch is (``cu128``, ``rocm7.1``, ``cpu``) and its runtime in words (``CUDA 12.8``).
    label: str | None = None
    runtime: str | None = None
    #: Whose GPUs were judged (``torch``, ``--target``, ``detection``) and whose arch list.
    gpus_from: str | None = None
    kernels_from: str | None = None
    #: Whether it is wheelfit's plan for this machine (``None``: no plan was made), and that plan's build.
    planned: bool | None = None
    plan_build: str | None = None

    @property
    def ok(self) -> bool:
        return all(c.ok is not False for c in self.checks)

    @property
    def failures(self) -> tuple[str, ...]:
        return tuple(c.detail for c in self.checks if c.ok is False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "reason": "; ".join(self.failures) or None,
            "torch": {
                "version": self.facts.version or None,
                "label": self.label,
                "runtime": self.runtime,
                "cuda": self.facts.cuda,
                "hip": self.facts.hip,
                "xpu": self.facts.xpu,
                "gpus": [dict(g) for g in self.facts.gpus],
                "arch_list": list(self.facts.arch_list),
                "error": self.facts.error,
                "missing": self.facts.missing,
            },
            "companions": [{"name": c.name, "version": c.version} for c in self.facts.companions],
            "gpus_from": self.gpus_from,
            "kernels_from": self.kernels_from,
            "planned": self.planned,
            "plan_build": self.plan_build,
            "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in self.checks],
        }


def probe_torch(python: str, env: Mapping[str, str], timeout: float = 120.0) -> TorchFacts:
    """Import torch with ``python`` and report what it says; an import that fails (or crashes the interpreter) is
    reported in the facts, since that is a verdict too. Only an interpreter that cannot run at all raises."""
    try:
        out = subprocess.run(
            [python, "-c", _SCRIPT, *COMPANIONS],
            capture_output=True,
            text=True,
            env=dict(env),
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentProbeError(f"cannot run {python} ({exc}); pass --python with a working interpreter") from exc
    lines = out.stdout.strip().splitlines()
    try:
        data = json.loads(lines[-1]) if out.returncode == 0 and lines else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        last = (out.stderr.strip().splitlines() or [f"exit code {out.returncode}"])[-1]
        return TorchFacts("", error=f"the interpreter crashed while importing torch: {last}")
    return TorchFacts.from_dict(data)


def expected_runtime(variant: str) -> tuple[str, str | None]:
    """``cu126`` -> ("cuda", "12.6"), ``rocm7.2`` -> ("hip", "7.2"), ``xpu`` -> ("xpu", None), else ("cpu", None)."""
    if variant.startswith("cu") and variant[2:].isdigit() and len(variant) > 3:
        digits = variant[2:]
        return "cuda", f"{int(digits[:-1])}.{digits[-1]}"
    if variant.startswith("rocm"):
        return "hip", variant[4:]
    if variant == "xpu":
        return "xpu", None
    return "cpu", None


def covers(arch: str, arch_list: Sequence[str]) -> bool:
    """Whether a build with ``arch_list`` (``sm_86``, ``compute_90``, ``gfx942``) has kernels for ``arch``: the
    planner's rule (:func:`~wheelfit.resolve.coverage.cuda_runs`) for CUDA, the exact target for the rest."""
    if arch in arch_list:
        return True
    want = arch.removeprefix("sm_")
    if not arch.startswith("sm_") or not _arch_number(want):
        return False
    kernels = _split_arch_list(arch_list)
    return cuda_runs(want, kernels.sass, kernels.ptx)


def _split_arch_list(arch_list: Sequence[str]) -> Kernels:
    """``torch.cuda.get_arch_list()`` (``sm_86``, ``sm_90a``, ``compute_120``, ``gfx942``) as kernel lists."""
    sass: list[str] = []
    ptx: list[str] = []
    gfx: list[str] = []
    other: list[str] = []
    for entry in arch_list:
        kind, _, num = entry.partition("_")
        num = num.rstrip("af")  # sm_90a, sm_100f: family-specific builds of the same capability
        if kind == "sm" and _arch_number(num):
            sass.append(num)
        elif kind == "compute" and _arch_number(num):
            ptx.append(num)
        elif entry.startswith("gfx"):
            gfx.append(entry.split(":")[0])
        else:
            other.append(entry)
    return Kernels(tuple(dict.fromkeys(sass)), tuple(dict.fromkeys(ptx)), tuple(gfx), tuple(other))


def _arch_number(num: str) -> bool:
    return num.isdigit() and len(num) >= 2


# -- the build torch is ---------------------------------------------------------------------------------------

_RUNTIME_NAMES = {"cuda": "CUDA", "rocm": "ROCm", "xpu": "XPU", "cpu": "CPU"}


def _runtime_of(facts: TorchFacts) -> tuple[str, str | None, str]:
    """(kind, version, label) that ``torch.version`` says: ``("cuda", "12.8", "cu128")``, ``("cpu", None, "cpu")``."""
    if facts.cuda:
        major, _, minor = str(facts.cuda).partition(".")
        return "cuda", str(facts.cuda), f"cu{major}{minor.split('.')[0]}"
    if facts.hip:
        hip = ".".join(str(facts.hip).split(".")[:2])
        return "rocm", hip, f"rocm{hip}"
    if facts.xpu:
        return "xpu", str(facts.xpu), "xpu"
    return "cpu", None, "cpu"


def _runtime_words(kind: str, version: str | None) -> str:
    """``CUDA 12.8``, ``ROCm 7.1``, ``XPU``, ``no GPU runtime (a CPU build)``."""
    if kind == "cpu":
        return "no GPU runtime (a CPU build)"
    if kind == "xpu":
        return "XPU (Intel GPUs)"
    return f"{_RUNTIME_NAMES[kind]} {version}"


def _pypi_label(kb: Knowledge, version: Version, platform: str) -> str | None:
    """The build ``pip install torch==X`` gets from PyPI on ``platform`` (``cu128`` for 2.9 on Linux x86_64)."""
    release = kb.release(f"{version.major}.{version.minor}")
    builds = release.platform(platform) if release is not None else None
    return builds.pypi_default if builds is not None else None


def _kb_build(kb: Knowledge, platform: str, version: Version, label: str) -> Candidate | None:
    """The knowledge base's candidate for this exact build, else one inferred from its label (a newer release)."""
    for c in kb_candidates(kb, platform):
        if c.version == version and c.label == label:
            return c
    return infer_candidate(kb, platform, version, label, (), "")


# -- judging --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Gpu:
    index: int
    name: str
    #: ``sm_86``, ``gfx942``, an Intel family, ``xpu`` (torch saw an XPU), ``mps``.
    arch: str
    kind: str
    device: Accelerator | None = None

    @property
    def title(self) -> str:
        return f"GPU {self.index} {self.name}" + ("" if self.arch in self.name else f" ({self.arch})")


def _kind_of_arch(arch: str) -> str:
    if arch.startswith("sm_"):
        return "cuda"
    if arch.startswith("gfx"):
        return "rocm"
    return "xpu"


def judge(
    facts: TorchFacts,
    machine: Machine | None,
    kb: Knowledge,
    *,
    machine_from: str = "the machine's report",
    plan: Plan | None = None,
    plan_error: str | None = None,
) -> Verification:
    """Whether the torch of ``facts`` runs on ``machine`` (kernels for each GPU, a runtime its driver supports,
    companions of the same build), and whether it is ``plan``'s build (a note). Pure."""
    if facts.error is not None:
        if facts.missing:
            why = "torch is not installed in this environment; install it with `wheelfit install torch`"
        else:
            why = f"import torch failed ({facts.error}); reinstall it with `wheelfit install torch`"
        return Verification(facts, (Check("torch", False, why),))
    try:
        version = Version(facts.version)
    except InvalidVersion:
        return Verification(facts, (Check("torch", False, f"torch says its version is {facts.version!r}"),))
    kind, runtime_version, runtime_label = _runtime_of(facts)
    platform = machine.platform_key if machine is not None else ""
    public = Version(version.public)
    pypi = _pypi_label(kb, public, platform) if platform else None
    label = version.local or runtime_label
    if version.local:
        how = f"torch {version}"
    elif platform.startswith("macos"):
        how = f"torch {version} (macOS builds carry no local label)"
    elif pypi == label:
        how = f"torch {version}: PyPI's build for {platform} ({label})"
    else:
        how = f"torch {version} (no local label; {label} by its runtime)"
    checks = [Check("torch", True, how)]
    runtimes = [k for k, v in (("CUDA", facts.cuda), ("ROCm", facts.hip), ("XPU", facts.xpu)) if v]
    words = _runtime_words(kind, runtime_version)
    attr = {"cuda": "cuda", "rocm": "hip", "xpu": "xpu"}.get(kind)
    shown = f"{words} (torch.version.{attr} = {runtime_version})" if attr else words
    if len(runtimes) > 1:
        checks.append(Check("runtime", False, f"carries {' and '.join(runtimes)} at once: not a PyTorch build"))
    elif version.local and label != runtime_label and legacy_variant(label) != runtime_label:
        checks.append(Check("runtime", None, f"{shown}, though its label says {label}: judged by the runtime"))
    else:
        checks.append(Check("runtime", True, shown))

    build = _kb_build(kb, platform, public, label) if platform else None
    gpus, gpus_from = _gpus(facts, machine, machine_from)
    kernels, kernels_from = _kernels(facts, build, label, platform)
    checks += _kernel_checks(facts, gpus, gpus_from, kind, kernels, kernels_from, platform)
    if kind == "cuda" and machine is not None and runtime_version is not None:
        checks += _driver_checks(machine, public, label, platform, runtime_version)
    checks += _companion_checks(facts, version, label, pypi, kb, machine)
    planned, plan_build, note = _plan_note(facts, plan, plan_error)
    if note is not None:
        checks.append(note)
    return Verification(
        facts, tuple(checks), label, words, gpus_from if gpus else None, kernels_from if gpus else None, planned,
        plan_build,
    )  # fmt: skip


def _gpus(facts: TorchFacts, machine: Machine | None, machine_from: str) -> tuple[list[_Gpu], str]:
    """The GPUs to judge: those torch sees, else the machine report's (the vendor a build would serve)."""
    if facts.gpus:
        found = [
            _Gpu(i, str(g.get("name", "?")), str(g.get("arch", "?")), _kind_of_arch(str(g.get("arch", ""))))
            for i, g in enumerate(facts.gpus)
        ]
        return found, "torch"
    group = machine.gpus if machine is not None else None
    if group is None:
        return [], machine_from
    out: list[_Gpu] = []
    for i, a in enumerate(group.devices):
        kind = group.kind
        arch = a.arch or ("mps" if kind == "mps" else "?")
        out.append(_Gpu(i, a.name, arch, kind, a))
    return out, machine_from


def _kernels(facts: TorchFacts, build: Candidate | None, label: str, platform: str) -> tuple[Kernels | None, str]:
    """The build's kernels and where the list comes from: torch's own arch list when it reports one."""
    if facts.arch_list:
        via = "torch.xpu" if facts.xpu and not facts.cuda and not facts.hip else "torch.cuda"
        return _split_arch_list(facts.arch_list), f"{via}.get_arch_list()"
    if build is None or build.kernels is None:
        return None, f"nowhere: the knowledge base knows no {label} build for {platform or 'this platform'}"
    fact = build.facts.get("kernels")
    if build.inferred and fact is not None:
        return build.kernels, f"the knowledge base, {fact.source}"
    return build.kernels, f"the knowledge base's list for torch {build.version} {label} ({platform})"


def _kernel_checks(
    facts: TorchFacts,
    gpus: list[_Gpu],
    gpus_from: str,
    kind: str,
    kernels: Kernels | None,
    kernels_from: str,
    platform: str,
) -> list[Check]:
    if facts.gpu_error:
        return [Check("kernels", False, f"torch could not query its GPUs: {facts.gpu_error}")]
    if not gpus:
        where = "" if gpus_from == "torch" else f" ({gpus_from})"
        return [Check("kernels", None, f"no GPU is visible to torch here, nor in the machine's report{where}")]
    seen = "" if gpus_from == "torch" else f"no GPU is visible to torch here; judged from {gpus_from}: "
    out: list[Check] = []
    for gpu in gpus:
        head = f"{seen}{gpu.title}"
        if gpu.kind == "mps":
            ok = kind == "cpu" and platform.startswith("macos")
            out.append(Check("kernels", ok, f"{head}: " + ("every macOS build has MPS" if ok else "not a macOS build")))
            continue
        if gpu.kind != kind:
            build = "a CPU build" if kind == "cpu" else f"a {_RUNTIME_NAMES[kind]} build"
            out.append(Check("kernels", False, f"{head}: {build} has no kernels for {gpu.arch} GPUs"))
            continue
        if gpu.arch == "xpu":
            out.append(Check("kernels", True, f"{head}: torch.xpu sees it"))
            continue
        if kernels is None:
            out.append(Check("kernels", None, f"{head}: which kernels the build has is known {kernels_from}"))
            continue
        out.append(_one_gpu(gpu, head, kind, kernels, kernels_from))
    return out


def _one_gpu(gpu: _Gpu, head: str, kind: str, kernels: Kernels, kernels_from: str) -> Check:
    if kind == "cuda":
        sm = gpu.arch.removeprefix("sm_")
        has = describe_archs(kernels.sass, kernels.ptx)
        try:
            ok = cuda_runs(sm, kernels.sass, kernels.ptx)
            sm_tuple(sm)
        except ValueError:
            return Check("kernels", False, f"{head}: cannot read the architecture {gpu.arch}")
        if ok:
            return Check("kernels", True, f"{head}: the build has kernels for it ({has}; from {kernels_from})")
        return Check("kernels", False, f"{head}: no kernels for {gpu.arch} (has {has}; from {kernels_from})")
    if kind == "rocm":
        gfx = kernels.gfx or kernels.aot
        ok = gpu.arch in gfx
        text = "the build has kernels for it" if ok else f"no kernels for {gpu.arch}"
        return Check("kernels", ok, f"{head}: {text} (has {', '.join(gfx) or 'none'}; from {kernels_from})")
    device = gpu.device
    aot = kernels.aot
    target = device.extra.get("aot_target") if device is not None else None
    sub = device.extra.get("subfamily") if device is not None else None
    how = intel_runs(
        device.family if device is not None else gpu.arch,
        sub if isinstance(sub, str) else None,
        target if isinstance(target, str) else None,
        aot,
    )
    if how == "aot":
        return Check("kernels", True, f"{head}: the build has AOT kernels for it (from {kernels_from})")
    return Check(
        "kernels",
        True,
        f"{head}: not an AOT target ({', '.join(aot) or 'none'}); its kernels are JIT-compiled from SPIR-V at first "
        "use (slower start)",
    )


def _driver_checks(machine: Machine, version: Version, label: str, platform: str, cuda: str) -> list[Check]:
    """The NVIDIA driver of the machine's report against the CUDA runtime torch carries (NVIDIA's tables)."""
    group = machine.gpus
    devices = group.devices if group is not None and group.kind == "cuda" else ()
    if not devices:
        return []
    major = cuda.split(".")[0]
    runtime = Runtime(
        cuda=cuda,
        driver_floor=toolkit_floor(cuda),
        compat_floor=compat_floor(int(major)) if major.isdigit() else None,
    )
    build = Candidate(version=version, label=label, kind="cuda", platform=platform, runtime=runtime)
    fit, detail = driver_fit(build, machine, devices)
    if fit == "fail":
        return [Check("driver", False, f"{detail}: update the NVIDIA driver, or install a build of an older CUDA")]
    if fit == "unknown":
        return [Check("driver", None, f"the driver's version is unknown: whether it runs CUDA {cuda} was not checked")]
    return [Check("driver", True, detail or f"the driver runs CUDA {cuda}")]


def _companion_checks(
    facts: TorchFacts, torch: Version, label: str, pypi: str | None, kb: Knowledge, machine: Machine | None
) -> list[Check]:
    """Each installed torchvision/torchaudio: made for this torch version (its ``torch==X`` pin, else the knowledge
    base's pairing) and for the same build (its local label)."""
    macos = machine is not None and machine.platform_key.startswith("macos")
    markers = {**(machine.markers if machine is not None else {}), "extra": ""}
    out: list[Check] = []
    for comp in facts.companions:
        try:
            have = Version(comp.version)
        except InvalidVersion:
            out.append(Check(comp.name, False, f"{comp.name} says its version is {comp.version!r}"))
            continue
        problems: list[str] = []
        pins = [r for r in map(_requirement, comp.requires) if r is not None and canonicalize_name(r.name) == "torch"]
        pins = [r for r in pins if r.marker is None or r.marker.evaluate(markers)]
        spec = next((r.specifier for r in pins if r.specifier), None)
        if spec is not None:
            if not spec.contains(torch, prereleases=True):
                problems.append(f"needs torch{spec}, torch is {torch}")
        else:
            series = kb.release(f"{torch.major}.{torch.minor}")
            pairing = series.companions.get(Version(torch.public)) if series is not None else None
            want = pairing.pins.get(comp.name) if pairing is not None else None
            if want is not None and not want.contains(Version(have.public), prereleases=True):
                problems.append(f"torch {torch.public} pairs with {comp.name}{want} (knowledge base)")
        theirs = have.local or (label if not torch.local else pypi)
        unknown = not macos and theirs is None
        if not macos and theirs is not None and theirs != label and legacy_variant(theirs) != label:
            what = "a CPU build" if theirs == "cpu" else f"a {theirs} build"
            problems.append(f"{what}, torch is {label}")
        if problems:
            fix = f"install the {comp.name} of torch {torch} (`wheelfit install torch {comp.name}`)"
            out.append(Check(comp.name, False, f"{comp.name} {comp.version}: {'; '.join(problems)}: {fix}"))
        else:
            pin = f"needs torch{spec}" if spec is not None else "torch's pairing"
            if unknown:
                why = f"which build it is cannot be told (no local label; torch is {label})"
                out.append(Check(comp.name, None, f"{comp.name} {comp.version}: {pin}; {why}"))
            else:
                same = "" if macos else f", the same {label} build"
                out.append(Check(comp.name, True, f"{comp.name} {comp.version}: {pin}{same}"))
    return out


def _requirement(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


def _plan_note(
    facts: TorchFacts, plan: Plan | None, plan_error: str | None
) -> tuple[bool | None, str | None, Check | None]:
    """Whether torch is the plan's build: a note either way, never a failure on its own."""
    if plan is None:
        if plan_error is None:
            return None, None, None
        return None, None, Check("plan", None, f"no plan for this machine to compare with: {plan_error}")
    build = _plan_build(plan)
    same = all(c.ok for c in verify(facts, plan).checks if c.name in ("version", "runtime"))
    if same:
        return True, build, Check("plan", True, f"wheelfit's planned build for this machine (torch {build})")
    return (
        False,
        build,
        Check("plan", None, f"not wheelfit's planned build: the plan for this machine is torch {build}"),
    )


def _plan_build(plan: Plan) -> str:
    if plan.mode == "variant":
        return f"{plan.torch_version} (variant {plan.variant})"
    return plan.torch_version if plan.platform.startswith("macos") else f"{plan.torch_version}+{plan.variant}"


# -- the plan's build, exactly --------------------------------------------------------------------------------


def verify(facts: TorchFacts, plan: Plan) -> Verification:
    """Whether torch is exactly ``plan``'s build (version, local label, runtime), and has kernels for the GPUs torch
    sees. Pure. :func:`judge` decides whether torch runs; this says only whether it is the plan."""
    checks: list[Check] = []
    if plan.mode == "variant":
        # A variant wheel's version has no local label; the build inside may still say the one it was
        # repacked from (cuda12.8 <- +cu128).
        built_from = legacy_variant(plan.variant)
        checks.append(_variant_version(facts.version, plan.torch_version, built_from))
        if built_from is None:
            checks.append(Check("runtime", None, f"variant {plan.variant} is not one of PyTorch's; not checked"))
            return Verification(facts, (*checks, *_gpu_checks(facts)))
        runtime_of = built_from
    else:
        local = "" if plan.platform.startswith("macos") else f"+{plan.variant}"
        want = f"{plan.torch_version}{local}"
        try:
            same = Version(facts.version) == Version(want)
        except InvalidVersion:
            same = False
        checks.append(Check("version", same, f"torch {facts.version}" + ("" if same else f", the plan says {want}")))
        runtime_of = plan.variant

    kind, version = expected_runtime(runtime_of)
    runtime = {"cuda": facts.cuda, "hip": facts.hip, "xpu": facts.xpu}
    names = {"cuda": "CUDA", "hip": "ROCm", "xpu": "XPU"}
    if kind == "cpu":
        extra = [f"{names[k]} {v}" for k, v in runtime.items() if v]
        checks.append(
            Check(
                "runtime", not extra, "CPU build" if not extra else f"has {', '.join(extra)}, the plan is a CPU build"
            )
        )
    else:
        got = runtime[kind]
        ok = bool(got) and (version is None or got == version or str(got).startswith(version + "."))
        detail = f"torch.version.{kind} = {got}"
        if not ok:
            detail += f", the plan needs {kind} {version or '(any)'}"
        checks.append(Check("runtime", ok, detail))
        others = [k for k, v in runtime.items() if v and k != kind]
        if others:
            checks.append(Check("runtime", False, f"also carries {', '.join(others)}: not the planned build"))
    return Verification(facts, (*checks, *_gpu_checks(facts)))


def _variant_version(have: str, public: str, built_from: str | None) -> Check:
    try:
        version = Version(have)
        same = version.public == Version(public).public and version.local in (None, built_from)
    except InvalidVersion:
        same = False
    want = public if built_from is None else f"{public} (or {public}+{built_from})"
    return Check("version", same, f"torch {have}" + ("" if same else f", the plan says {want}"))


def _gpu_checks(facts: TorchFacts) -> list[Check]:
    checks: list[Check] = []
    if facts.gpu_error:
        checks.append(Check("gpu", False, f"torch could not query its GPUs: {facts.gpu_error}"))
    elif not facts.gpus:
        checks.append(Check("gpu", None, "no GPU is visible to torch here; kernel coverage was not checked"))
    else:
        for i, gpu in enumerate(facts.gpus):
            arch = gpu.get("arch", "?")
            if arch == "xpu":
                checks.append(Check("gpu", True, f"GPU {i} {gpu.get('name')}: torch.xpu sees it"))
                continue
            ok = covers(arch, facts.arch_list)
            detail = f"GPU {i} {gpu.get('name')} ({arch}): " + (
                "the build has kernels for it" if ok else f"no kernels for it in {', '.join(facts.arch_list) or '[]'}"
            )
            checks.append(Check("gpu", ok, detail))
    return checks
