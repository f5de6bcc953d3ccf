"""Does the torch in an environment run on this machine? Judged by kernels and runtime, never by the plan alone.

A build other than wheelfit's pick (PyPI's ``torch``, a cu128 build where the plan says cu130) passes when it has
kernels for every GPU and a runtime the driver supports; the plan is a note. The GPUs are those torch sees; with
none visible (no driver where this runs), those of the machine's report (detected or ``--target``), against the
build's arch list as torch reports it, else as the knowledge base lists it for that version and label. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

from ..candidates.knowledge import infer_candidate, kb_candidates, pypi_label
from ..candidates.model import Candidate, Kernels, Runtime
from ..kb.drivers import compat_floor, toolkit_floor
from ..kb.matrix import Knowledge
from ..kinds import BuildKind, Mode
from ..report import Accelerator
from ..resolve.coverage import cuda_runs, describe_archs, intel_runs, sm_tuple
from ..resolve.judges import driver_fit
from ..resolve.machine import Machine
from ..resolve.plan import Plan
from ..variants.legacy import legacy_variant
from .companions import companion_checks
from .verify import VERSION_ATTRS, Check, Problem, TorchFacts, Verification, arch_kernels, verify

__all__ = ["judge"]


# -- the build torch is ---------------------------------------------------------------------------------------

_RUNTIME_NAMES = {BuildKind.CUDA: "CUDA", BuildKind.ROCM: "ROCm", BuildKind.XPU: "XPU", BuildKind.CPU: "CPU"}


def _runtime_of(facts: TorchFacts) -> tuple[BuildKind, str | None, str]:
    """(kind, version, label) that ``torch.version`` says: ``(CUDA, "12.8", "cu128")``, ``(CPU, None, "cpu")``."""
    if facts.cuda:
        major, _, minor = str(facts.cuda).partition(".")
        return BuildKind.CUDA, str(facts.cuda), f"cu{major}{minor.split('.')[0]}"
    if facts.hip:
        hip = ".".join(str(facts.hip).split(".")[:2])
        return BuildKind.ROCM, hip, f"rocm{hip}"
    if facts.xpu:
        return BuildKind.XPU, str(facts.xpu), "xpu"
    return BuildKind.CPU, None, "cpu"


def _runtime_words(kind: BuildKind, version: str | None) -> str:
    """``CUDA 12.8``, ``ROCm 7.1``, ``XPU``, ``no GPU runtime (a CPU build)``."""
    if kind is BuildKind.CPU:
        return "no GPU runtime (a CPU build)"
    if kind is BuildKind.XPU:
        return "XPU (Intel GPUs)"
    return f"{_RUNTIME_NAMES[kind]} {version}"


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
    kind: BuildKind
    device: Accelerator | None = None

    @property
    def title(self) -> str:
        return f"GPU {self.index} {self.name}" + ("" if self.arch in self.name else f" ({self.arch})")


def _kind_of_arch(arch: str) -> BuildKind:
    if arch.startswith("sm_"):
        return BuildKind.CUDA
    if arch.startswith("gfx"):
        return BuildKind.ROCM
    return BuildKind.XPU


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
        problem = Problem.NOT_INSTALLED if facts.missing else Problem.IMPORT_FAILS
        return Verification(facts, (Check("torch", False, why, problem),))
    try:
        version = Version(facts.version)
    except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
        why = f"torch says its version is {facts.version!r}"
        return Verification(facts, (Check("torch", False, why, Problem.BAD_VERSION),))
    kind, runtime_version, runtime_label = _runtime_of(facts)
    platform = machine.platform_key if machine is not None else ""
    public = Version(version.public)
    pypi = pypi_label(kb, public, platform) if platform else None
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
    attr = VERSION_ATTRS.get(kind)
    shown = f"{words} (torch.version.{attr} = {runtime_version})" if attr else words
    if len(runtimes) > 1:
        why = f"carries {' and '.join(runtimes)} at once: not a PyTorch build"
        checks.append(Check("runtime", False, why, Problem.MIXED_RUNTIMES))
    elif version.local and label != runtime_label and legacy_variant(label) != runtime_label:
        checks.append(Check("runtime", None, f"{shown}, though its label says {label}: judged by the runtime"))
    else:
        checks.append(Check("runtime", True, shown))

    build = _kb_build(kb, platform, public, label) if platform else None
    gpus, gpus_from = _gpus(facts, machine, machine_from)
    kernels, kernels_from = _kernels(facts, build, label, platform)
    checks += _kernel_checks(facts, gpus, gpus_from, kind, kernels, kernels_from, platform)
    if kind is BuildKind.CUDA and machine is not None and runtime_version is not None:
        checks += _driver_checks(machine, public, label, platform, runtime_version)
    checks += companion_checks(facts, version, label, pypi, kb, machine)
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
        arch = a.arch or ("mps" if kind is BuildKind.MPS else "?")
        out.append(_Gpu(i, a.name, arch, kind, a))
    return out, machine_from


def _kernels(facts: TorchFacts, build: Candidate | None, label: str, platform: str) -> tuple[Kernels | None, str]:
    """The build's kernels and where the list comes from: torch's own arch list when it reports one."""
    if facts.arch_list:
        via = "torch.xpu" if facts.xpu and not facts.cuda and not facts.hip else "torch.cuda"
        return arch_kernels(facts.arch_list), f"{via}.get_arch_list()"
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
    kind: BuildKind,
    kernels: Kernels | None,
    kernels_from: str,
    platform: str,
) -> list[Check]:
    if facts.gpu_error:
        return [Check("kernels", False, f"torch could not query its GPUs: {facts.gpu_error}", Problem.GPU_QUERY_FAILS)]
    if not gpus:
        where = "" if gpus_from == "torch" else f" ({gpus_from})"
        return [Check("kernels", None, f"no GPU is visible to torch here, nor in the machine's report{where}")]
    seen = "" if gpus_from == "torch" else f"no GPU is visible to torch here; judged from {gpus_from}: "
    out: list[Check] = []
    for gpu in gpus:
        head = f"{seen}{gpu.title}"
        if gpu.kind is BuildKind.MPS:
            ok = kind is BuildKind.CPU and platform.startswith("macos")
            words = "every macOS build has MPS" if ok else "not a macOS build"
            out.append(Check("kernels", ok, f"{head}: {words}", None if ok else Problem.WRONG_KIND))
            continue
        if gpu.kind is not kind:
            build = "a CPU build" if kind is BuildKind.CPU else f"a {_RUNTIME_NAMES[kind]} build"
            why = f"{head}: {build} has no kernels for {gpu.arch} GPUs"
            out.append(Check("kernels", False, why, Problem.WRONG_KIND))
            continue
        if gpu.arch == "xpu":
            out.append(Check("kernels", True, f"{head}: torch.xpu sees it"))
            continue
        if kernels is None:
            out.append(Check("kernels", None, f"{head}: which kernels the build has is known {kernels_from}"))
            continue
        out.append(_one_gpu(gpu, head, kind, kernels, kernels_from))
    return out


def _one_gpu(gpu: _Gpu, head: str, kind: BuildKind, kernels: Kernels, kernels_from: str) -> Check:
    if kind is BuildKind.CUDA:
        sm = gpu.arch.removeprefix("sm_")
        has = describe_archs(kernels.sass, kernels.ptx)
        try:
            ok = cuda_runs(sm, kernels.sass, kernels.ptx)
            sm_tuple(sm)
        except ValueError:
            return Check("kernels", False, f"{head}: cannot read the architecture {gpu.arch}", Problem.NO_KERNELS)
        if ok:
            return Check("kernels", True, f"{head}: the build has kernels for it ({has}; from {kernels_from})")
        why = f"{head}: no kernels for {gpu.arch} (has {has}; from {kernels_from})"
        return Check("kernels", False, why, Problem.NO_KERNELS)
    if kind is BuildKind.ROCM:
        gfx = kernels.gfx or kernels.aot
        ok = gpu.arch in gfx
        text = "the build has kernels for it" if ok else f"no kernels for {gpu.arch}"
        why = f"{head}: {text} (has {', '.join(gfx) or 'none'}; from {kernels_from})"
        return Check("kernels", ok, why, None if ok else Problem.NO_KERNELS)
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
    devices = group.devices if group is not None and group.kind is BuildKind.CUDA else ()
    if not devices:
        return []
    major = cuda.split(".")[0]
    runtime = Runtime(
        cuda=cuda,
        driver_floor=toolkit_floor(cuda),
        compat_floor=compat_floor(int(major)) if major.isdigit() else None,
    )
    build = Candidate(version=version, label=label, kind=BuildKind.CUDA, platform=platform, runtime=runtime)
    fit, detail = driver_fit(build, machine, devices)
    if fit == "fail":
        why = f"{detail}: update the NVIDIA driver, or install a build of an older CUDA"
        return [Check("driver", False, why, Problem.DRIVER_TOO_OLD)]
    if fit == "unknown":
        return [Check("driver", None, f"the driver's version is unknown: whether it runs CUDA {cuda} was not checked")]
    return [Check("driver", True, detail or f"the driver runs CUDA {cuda}")]


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
    if plan.mode is Mode.VARIANT:
        return f"{plan.torch_version} (variant {plan.variant})"
    return plan.torch_version if plan.platform.startswith("macos") else f"{plan.torch_version}+{plan.variant}"
