"""What the torch in an environment says it is (a child process imports it), and whether it is a plan's build.

:func:`probe_torch` gathers the facts (version, ``torch.version.cuda``/``hip``/``xpu``, the GPUs torch sees and its
arch list, the torchvision/torchaudio installed beside it); a torch that is missing or fails to import is a fact
too. Whether it runs here is :func:`wheelfit.install.runs_here.judge`; :func:`verify` says only whether it is
exactly a plan's build, which the judgement reports as a note.
"""

from __future__ import annotations

import enum
import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from packaging.version import Version

from ..candidates.model import Kernels
from ..kinds import BuildKind, Mode
from ..resolve.coverage import cuda_runs
from ..resolve.plan import Plan
from ..variants.legacy import legacy_variant
from .errors import EnvironmentProbeError

__all__ = [
    "COMPANIONS",
    "VERSION_ATTRS",
    "Check",
    "Companion",
    "Problem",
    "TorchFacts",
    "TorchInstall",
    "Verification",
    "arch_kernels",
    "covers",
    "expected_runtime",
    "probe_torch",
    "verify",
]

#: The packages whose build must be the one of the torch beside them.
COMPANIONS = ("torchvision", "torchaudio")

_SCRIPT = r"""
import json, os, sys
out = {"companions": [], "gpus": [], "arch_list": [], "installs": []}
try:
    import site
    if site.ENABLE_USER_SITE:
        out["user_site"] = site.getusersitepackages()
except BaseException:
    pass
try:
    import importlib.metadata as md
    for name in sys.argv[1:]:
        try:
            d = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        entry = {"name": name, "version": d.version, "requires": list(d.requires or [])}
        try:  # where it came from (PEP 610): a wheel's file name says its build when its version does not
            entry["url"] = json.loads(d.read_text("direct_url.json") or "{}").get("url")
        except BaseException:
            pass
        out["companions"].append(entry)
    try:
        out["requires"] = list(md.distribution("torch").requires or [])
        dist = True
    except md.PackageNotFoundError:
        dist = False
    try:
        found = md.distributions(name="torch")
    except TypeError:  # Python 3.9: no name=
        found = (d for d in md.distributions() if (d.metadata["Name"] or "").lower() == "torch")
    for d in found:
        out["installs"].append({"version": d.version, "path": str(d.locate_file(""))})
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
            "hip": getattr(v, "hip", None), "xpu": getattr(v, "xpu", None),
            "location": os.path.dirname(os.path.dirname(os.path.abspath(getattr(torch, "__file__", "") or ".")))})
abi = getattr(getattr(torch, "_C", None), "_GLIBCXX_USE_CXX11_ABI", None)
if isinstance(abi, bool):
    out["cxx11abi"] = abi
try:
    cuda = getattr(torch, "cuda", None)
    if cuda is not None:
        if cuda.is_available():
            for i in range(cuda.device_count()):
                p = cuda.get_device_properties(i)
                gcn = getattr(p, "gcnArchName", "") or ""
                arch = gcn.split(":")[0] if gcn else "sm_%d%d" % (p.major, p.minor)
                out["gpus"].append({"name": p.name, "arch": arch})
        elif (out["cuda"] or out["hip"]) and hasattr(cuda, "init"):
            try:  # what is_available() keeps to itself: "Found no NVIDIA driver", "driver too old", ...
                cuda.init()
            except BaseException as exc:
                out["cuda_error"] = "%s: %s" % (type(exc).__name__, exc)
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
    """An installed distribution beside torch (torchvision, a Triton, an extension): version and Requires-Dist."""

    name: str
    version: str
    requires: tuple[str, ...] = ()
    #: The URL it was installed from (``direct_url.json``), if it says.
    url: str | None = None


@dataclass(frozen=True)
class TorchInstall:
    """One torch ``.dist-info`` on the interpreter's path: more than one means one shadows the other."""

    version: str
    #: The directory holding it (a site-packages, the user site).
    path: str


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
    #: torchvision and torchaudio.
    companions: tuple[Companion, ...] = ()
    #: Why ``import torch`` failed (``None``: it worked); ``missing``: torch is not installed at all.
    error: str | None = None
    missing: bool = False
    #: The other distributions asked about (a Triton, extensions built against torch) that are installed.
    others: tuple[Companion, ...] = ()
    #: torch's own Requires-Dist, every torch ``.dist-info`` on the path, and the directory torch imported from.
    requires: tuple[str, ...] = ()
    installs: tuple[TorchInstall, ...] = ()
    location: str | None = None
    #: The user site directory when the interpreter reads it (``None``: a venv, or ``-s``).
    user_site: str | None = None
    #: Why a GPU build sees no GPU: ``torch.cuda.init()``'s error ("Found no NVIDIA driver ...").
    cuda_error: str | None = None
    #: ``torch._C._GLIBCXX_USE_CXX11_ABI`` (``None``: not said): extensions must be built with the same.
    cxx11abi: bool | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TorchFacts:
        """Checked, since an interpreter's output is not trusted: a value of the wrong type is dropped."""

        def text(key: str) -> str | None:
            value = data.get(key)
            return str(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None

        def items(key: str) -> list[Mapping[str, Any]]:
            value = data.get(key)
            return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []

        def strings(value: object) -> tuple[str, ...]:
            return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()

        dists = [
            Companion(str(c["name"]), str(c["version"]), strings(c.get("requires")), _url(c.get("url")))
            for c in items("companions")
            if isinstance(c.get("name"), str) and isinstance(c.get("version"), str)
        ]
        abi = data.get("cxx11abi")
        return cls(
            version=text("version") or "",
            cuda=text("cuda"),
            hip=text("hip"),
            xpu=text("xpu"),
            gpus=tuple({k: str(v) for k, v in g.items() if isinstance(v, str)} for g in items("gpus")),
            arch_list=strings(data.get("arch_list")),
            gpu_error=text("gpu_error"),
            companions=tuple(c for c in dists if c.name in COMPANIONS),
            error=text("error"),
            missing=data.get("missing") is True,
            others=tuple(c for c in dists if c.name not in COMPANIONS),
            requires=strings(data.get("requires")),
            installs=tuple(
                TorchInstall(str(i["version"]), str(i["path"]))
                for i in items("installs")
                if isinstance(i.get("version"), str) and isinstance(i.get("path"), str)
            ),
            location=text("location"),
            user_site=text("user_site"),
            cuda_error=text("cuda_error"),
            cxx11abi=abi if isinstance(abi, bool) else None,
        )


def _url(value: object) -> str | None:
    return value if isinstance(value, str) else None


class Problem(enum.Enum):
    """What a failed check found, for whoever acts on it (``doctor``'s fixes): never read from its words."""

    NOT_INSTALLED = "not-installed"
    IMPORT_FAILS = "import-fails"
    BAD_VERSION = "bad-version"
    MIXED_RUNTIMES = "mixed-runtimes"
    GPU_QUERY_FAILS = "gpu-query-fails"
    #: A build of another kind than the GPU (a CPU build on an NVIDIA GPU, a CUDA build on an AMD one).
    WRONG_KIND = "wrong-kind"
    NO_KERNELS = "no-kernels"
    DRIVER_TOO_OLD = "driver-too-old"
    COMPANION = "companion"


@dataclass(frozen=True)
class Check:
    name: str
    #: True passed, False failed, None a note or not checked (and ``detail`` says why).
    ok: bool | None
    detail: str
    #: What a failure is, as a value.
    problem: Problem | None = None


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


def probe_torch(
    python: str, env: Mapping[str, str], timeout: float = 120.0, others: Sequence[str] = ()
) -> TorchFacts:
    """Import torch with ``python`` and report what it says, and the metadata of the companions and of ``others``
    installed; an import that fails (or crashes the interpreter) is reported in the facts, since that is a verdict
    too. Only an interpreter that cannot run at all raises."""
    try:
        out = subprocess.run(
            [python, "-c", _SCRIPT, *COMPANIONS, *others],
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


#: The ``torch.version`` attribute that names each kind's runtime (a CPU build has none).
VERSION_ATTRS = {BuildKind.CUDA: "cuda", BuildKind.ROCM: "hip", BuildKind.XPU: "xpu"}


def expected_runtime(variant: str) -> tuple[BuildKind, str | None]:
    """``cu126`` -> (CUDA, "12.6"), ``rocm7.2`` -> (ROCm, "7.2"), ``xpu`` -> (XPU, None), else (CPU, None)."""
    if variant.startswith("cu") and variant[2:].isdigit() and len(variant) > 3:
        digits = variant[2:]
        return BuildKind.CUDA, f"{int(digits[:-1])}.{digits[-1]}"
    if variant.startswith("rocm"):
        return BuildKind.ROCM, variant[4:]
    if variant == "xpu":
        return BuildKind.XPU, None
    return BuildKind.CPU, None


def covers(arch: str, arch_list: Sequence[str]) -> bool:
    """Whether a build with ``arch_list`` (``sm_86``, ``compute_90``, ``gfx942``) has kernels for ``arch``: the
    planner's rule (:func:`~wheelfit.resolve.coverage.cuda_runs`) for CUDA, the exact target for the rest."""
    if arch in arch_list:
        return True
    want = arch.removeprefix("sm_")
    if not arch.startswith("sm_") or not _arch_number(want):
        return False
    kernels = arch_kernels(arch_list)
    return cuda_runs(want, kernels.sass, kernels.ptx)


def arch_kernels(arch_list: Sequence[str]) -> Kernels:
    """``torch.cuda.get_arch_list()`` (``sm_86``, ``sm_90a``, ``compute_120``, ``gfx942``) as kernel lists."""
    return Kernels.from_arch_list(arch_list)


def _arch_number(num: str) -> bool:
    return num.isdigit() and len(num) >= 2


# -- the plan's build, exactly --------------------------------------------------------------------------------


def verify(facts: TorchFacts, plan: Plan) -> Verification:
    """Whether torch is exactly ``plan``'s build (version, local label, runtime), and has kernels for the GPUs torch
    sees. Pure. :func:`judge` decides whether torch runs; this says only whether it is the plan."""
    checks: list[Check] = []
    if plan.mode is Mode.VARIANT:
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
        except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
            same = False
        checks.append(Check("version", same, f"torch {facts.version}" + ("" if same else f", the plan says {want}")))
        runtime_of = plan.variant

    kind, version = expected_runtime(runtime_of)
    runtime = {"cuda": facts.cuda, "hip": facts.hip, "xpu": facts.xpu}
    names = {"cuda": "CUDA", "hip": "ROCm", "xpu": "XPU"}
    if kind is BuildKind.CPU:
        extra = [f"{names[k]} {v}" for k, v in runtime.items() if v]
        checks.append(
            Check(
                "runtime", not extra, "CPU build" if not extra else f"has {', '.join(extra)}, the plan is a CPU build"
            )
        )
    else:
        attr = VERSION_ATTRS[kind]
        got = runtime[attr]
        ok = bool(got) and (version is None or got == version or str(got).startswith(version + "."))
        detail = f"torch.version.{attr} = {got}"
        if not ok:
            detail += f", the plan needs {attr} {version or '(any)'}"
        checks.append(Check("runtime", ok, detail))
        others = [k for k, v in runtime.items() if v and k != attr]
        if others:
            why = f"also carries {', '.join(others)}: not the planned build"
            checks.append(Check("runtime", False, why, Problem.MIXED_RUNTIMES))
    return Verification(facts, (*checks, *_gpu_checks(facts)))


def _variant_version(have: str, public: str, built_from: str | None) -> Check:
    try:
        version = Version(have)
        same = version.public == Version(public).public and version.local in (None, built_from)
    except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
        same = False
    want = public if built_from is None else f"{public} (or {public}+{built_from})"
    return Check("version", same, f"torch {have}" + ("" if same else f", the plan says {want}"))


def _gpu_checks(facts: TorchFacts) -> list[Check]:
    checks: list[Check] = []
    if facts.gpu_error:
        why = f"torch could not query its GPUs: {facts.gpu_error}"
        checks.append(Check("gpu", False, why, Problem.GPU_QUERY_FAILS))
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
