"""Does the torch in an environment match the plan? Imports torch there (a child process) and compares.

Checks: version and local label, the accelerator runtime the build carries (``torch.version.cuda`` / ``hip`` /
``xpu``), and, for each GPU torch can see, that its arch list has kernels for it. With no GPU visible that last
check is reported as not done, never as passed.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from packaging.version import InvalidVersion, Version

from ..resolve.coverage import cuda_runs
from ..resolve.plan import Plan
from ..variants.legacy import legacy_variant
from .errors import EnvironmentProbeError

__all__ = ["Check", "TorchFacts", "Verification", "covers", "expected_runtime", "probe_torch", "verify"]

_SCRIPT = r"""
import json, sys
try:
    import torch
except BaseException as exc:
    print(json.dumps({"error": "%s: %s" % (type(exc).__name__, exc)}))
    raise SystemExit(0)
v = getattr(torch, "version", None)
out = {"version": str(getattr(torch, "__version__", "")), "cuda": getattr(v, "cuda", None),
       "hip": getattr(v, "hip", None), "xpu": getattr(v, "xpu", None), "gpus": [], "arch_list": []}
try:
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and cuda.is_available():
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
class TorchFacts:
    """What ``import torch`` said in the target environment."""

    version: str
    cuda: str | None = None
    hip: str | None = None
    xpu: str | None = None
    #: ``{"name": ..., "arch": "sm_86" | "gfx942" | "xpu"}`` for each GPU torch can use.
    gpus: tuple[Mapping[str, str], ...] = ()
    arch_list: tuple[str, ...] = ()
    gpu_error: str | None = None

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
        )


@dataclass(frozen=True)
class Check:
    name: str
    #: True passed, False failed, None not checked (and ``detail`` says why).
    ok: bool | None
    detail: str


@dataclass(frozen=True)
class Verification:
    facts: TorchFacts
    checks: tuple[Check, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return all(c.ok is not False for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "torch": {
                "version": self.facts.version,
                "cuda": self.facts.cuda,
                "hip": self.facts.hip,
                "xpu": self.facts.xpu,
                "gpus": [dict(g) for g in self.facts.gpus],
                "arch_list": list(self.facts.arch_list),
            },
            "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in self.checks],
        }


def probe_torch(python: str, env: Mapping[str, str], timeout: float = 120.0) -> TorchFacts:
    """Import torch with ``python`` and report what it says."""
    try:
        out = subprocess.run(
            [python, "-c", _SCRIPT], capture_output=True, text=True, env=dict(env), timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentProbeError(f"cannot run {python} ({exc}); pass --python with a working interpreter") from exc
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        last = (out.stderr.strip().splitlines() or [f"exit code {out.returncode}"])[-1]
        raise EnvironmentProbeError(f"{python} crashed while importing torch: {last}")
    data = json.loads(lines[-1])
    if "error" in data:
        raise EnvironmentProbeError(
            f"import torch failed in {python}: {data['error']}; install it with `wheelfit install --python {python}`"
        )
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
    built: dict[str, list[str]] = {"sm": [], "compute": []}
    for entry in arch_list:
        kind, _, num = entry.partition("_")
        num = num.rstrip("af")  # sm_90a, sm_100f: family-specific builds of the same capability
        if kind in built and _arch_number(num):
            built[kind].append(num)
    return cuda_runs(want, built["sm"], built["compute"])


def _arch_number(num: str) -> bool:
    return num.isdigit() and len(num) >= 2


def verify(facts: TorchFacts, plan: Plan) -> Verification:
    """Compare what torch says with what the plan chose. Pure."""
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
    if kind == "cpu":
        extra = {k: v for k, v in runtime.items() if v}
        checks.append(
            Check("runtime", not extra, "CPU build" if not extra else f"has {extra}, the plan is a CPU build")
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
