"""Planning for another machine: ``--target`` (a saved report or a ``key=value,...`` spec) and the
override variables other tools already use (uv's, and the reference variant providers').

GPU-less CI builders and Docker builds cannot probe the machine the build is for; they say
what it has instead. Everything here turns that statement into an ordinary hardware report.
"""

from __future__ import annotations

import json
import platform as _platform
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..builds import RocmBuild
from ..errors import ReportError, UsageError, clip
from ..report import Accelerator, Cpu, HardwareReport, Platform

if TYPE_CHECKING:
    from ..kb.matrix import Knowledge

__all__ = ["OVERRIDE_VARIABLES", "TargetError", "apply_overrides", "load_target"]

_OS = {"linux": ("Linux", "x86_64"), "windows": ("Windows", "x86_64"), "macos": ("Darwin", "arm64")}
_KEYS = ("cuda", "driver", "rocm", "xpu", "cpu", "os", "arch", "python", "l4t")
#: ``l4t=36.4``: a Jetson on that Linux for Tegra release (an aarch64 Linux machine whose integrated GPU PyTorch's
#: own builds do not serve).
_L4T = re.compile(r"\d{1,3}(\.\d{1,3}){0,2}")
_ARCHES = ("x86_64", "amd64", "aarch64", "arm64")
_PYTHON = re.compile(r"3\.\d{1,2}(\.\d+)?")

#: Variables honoured on top of detection, as uv and the WheelNext reference providers read them.
OVERRIDE_VARIABLES = (
    "UV_CUDA_DRIVER_VERSION",
    "UV_AMD_GPU_ARCHITECTURE",
    "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION",
    "NV_VARIANT_PROVIDER_FORCE_SM_ARCH",
    "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH",
    "INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP",
)

#: Level Zero device IP -> Intel family (the ``intel :: device_ip`` values of PyTorch's xpu variant:
#: wheelnext/variant-repack ``configs/torch-2.9`` and ``configs/torch-2.10`` ``torch_variant_config.toml`` @ e75a16d).
_DEVICE_IP_FAMILY = {
    "20.4.4": ("lnl", "lnl-m"),
    "20.1.0": ("bmg", "bmg"),
    "12.74.4": ("arl", "arl-h"),
    "12.71.4": ("mtl", "mtl-h"),
    "12.60.7": ("pvc", "pvc"),
    "12.55.8": ("dg2", "dg2"),
    "30.0.4": ("ptl", "ptl-h"),
    "30.1.0": ("ptl", "ptl-u"),
}


class TargetError(UsageError, ValueError):
    """A ``--target`` or override value cannot be read."""


def load_target(value: str, host_python: str | None = None, kb: Knowledge | None = None) -> HardwareReport:
    """A saved ``wheelfit detect --json`` file, or a spec like ``cuda=6.1+8.9,driver=580.95.05``."""
    path = Path(value)
    shown = clip(value)
    try:
        is_file = path.is_file()
    except OSError:  # a spec too long to be a file name (File name too long)
        is_file = False
    if "=" not in value or is_file:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise TargetError(
                f"--target {shown}: no such file, and not a key=value spec ({', '.join(_KEYS)})"
            ) from None
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
            raise TargetError(f"--target {shown}: cannot read it ({why}); give a saved report or a spec") from None
        except ValueError as exc:
            raise TargetError(f"--target {shown}: not a readable JSON hardware report ({clip(str(exc))})") from None
        try:
            return HardwareReport.from_dict(data)
        except ReportError as exc:  # a saved report the user names, with a field of the wrong shape: exit 2
            raise TargetError(f"--target {shown}: {clip(str(exc), 400)}") from None
    return _from_spec(value, host_python or _platform.python_version(), kb)


def _from_spec(spec: str, host_python: str, kb: Knowledge | None) -> HardwareReport:
    fields: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        key, eq, val = part.partition("=")
        key = key.strip().lower()
        if not eq or key not in _KEYS or not val.strip():
            raise TargetError(f"--target: cannot read {clip(part)!r}; use key=value with keys {', '.join(_KEYS)}")
        fields[key] = val.strip()
    os_name = fields.get("os", "linux").lower()
    if os_name not in _OS:
        raise TargetError(f"--target os={os_name}: use linux, windows or macos")
    system, default_arch = _OS[os_name]
    arch = fields.get("arch", "aarch64" if "l4t" in fields else default_arch).lower()
    if arch not in _ARCHES:
        raise TargetError(f"--target arch={arch}: use {', '.join(_ARCHES)}")
    python = fields.get("python", host_python)
    if not _PYTHON.fullmatch(python):
        raise TargetError(f"--target python={python}: a Python version looks like 3.12")
    level = fields.get("cpu")
    if level is not None and level.lower().removeprefix("x86-64-") not in ("v1", "v2", "v3", "v4"):
        raise TargetError(f"--target cpu={level}: use an x86-64 level v1..v4")
    accels: list[Accelerator] = []
    driver = _driver(fields["driver"], os_name == "windows") if "driver" in fields else None
    for i, cc in enumerate(_plus_list(fields.get("cuda"))):
        accels.append(
            Accelerator(
                "nvidia",
                f"target GPU sm_{_known_cc(cc, fields['cuda']).replace('.', '')}",
                None,
                "target",
                integrated=False,
                compute_capability=cc,
                driver_version=driver,
                cuda_driver_version=_cuda_for(driver, os_name == "windows"),
                extra={"index": i},
            )
        )
    for gfx in _plus_list(fields.get("rocm")):
        _known_gfx(gfx, fields["rocm"], kb)
        accels.append(
            Accelerator("amd", f"target GPU {gfx}", None, "target", integrated=False, gfx=gfx, effective_gfx=gfx)
        )
    for xpu in _plus_list(fields.get("xpu")):
        accels.append(_intel_target(xpu))
    # No macOS version is invented: the plan says what the builds need instead (wheels and MPS have floors).
    l4t = fields.get("l4t")
    if l4t is not None and (not _L4T.fullmatch(l4t) or system != "Linux" or arch not in ("aarch64", "arm64") or accels):
        raise TargetError(f"--target l4t={l4t}: a Jetson is an aarch64 Linux machine (arch=aarch64) whose GPU is "
                          "the Tegra's, with an L4T release such as 36.4")  # fmt: skip
    plat = Platform(system=system, machine=arch, python=python, libc=None, wsl=False, release=None, l4t=l4t)
    if system == "Darwin" and arch in ("arm64", "aarch64"):
        accels.append(Accelerator("apple", "target Apple GPU", None, "target", integrated=True, mps=True))
    cpu = Cpu(
        arch="aarch64" if arch in ("arm64", "aarch64") else arch,
        x86_64_level=("v" + level.lower().removeprefix("x86-64-v").removeprefix("v")) if level else None,
    )
    return HardwareReport(plat, cpu, tuple(accels), sysroot=None)


def _driver(text: str, windows: bool) -> str:
    """``580.95.05`` as written; a bare branch such as ``580`` as that branch's first release in NVIDIA's table
    (580.65.06, the CUDA 13.0 GA driver), since every driver of a branch runs what its first one runs."""
    if _is_driver(text):
        return text
    if text.isdigit() and 2 <= len(text) <= 4:
        first = _branch_first(int(text), windows)
        if first is not None:
            return first
        return f"{text}.0"
    raise TargetError(f"--target driver={text}: an NVIDIA driver version looks like 580.95.05 (or a branch: 580)")


def _branch_first(branch: int, windows: bool) -> str | None:
    """The lowest driver of ``branch`` that NVIDIA's CUDA table names (a CUDA release's minimum), if any."""
    from wheelfit_probekit.drivers import toolkit_floor, version_key

    found: list[str] = []
    for major in range(9, 20):
        for minor in range(10):
            row = toolkit_floor(f"{major}.{minor}", windows)
            if row is not None and row.min_driver and version_key(row.min_driver)[0] == branch:
                found.append(row.min_driver)
    return min(found, key=version_key) if found else None


def _known_cc(cc: str, value: str) -> str:
    from ..kb.notes import known_compute_capabilities

    if not _is_cc(cc):
        raise TargetError(f"--target cuda={value}: compute capabilities look like 8.6 (joined by +)")

    def key(c: str) -> tuple[int, int]:
        major, _, minor = c.partition(".")
        return int(major), int(minor)

    known = sorted(known_compute_capabilities(), key=key)
    # A GPU newer than the tables (cuda=13.0) is planned: PTX may serve it. One inside their range that NVIDIA
    # never shipped (9.9, 6.5) is a typo.
    if cc not in known and key(cc) <= key(known[-1]):
        raise TargetError(
            f"--target cuda={cc}: not a compute capability NVIDIA has shipped (known: {', '.join(known)}; "
            f"newer than {known[-1]} is planned as a future GPU)"
        )
    return cc


def _known_gfx(gfx: str, value: str, kb: Knowledge | None) -> None:
    if not gfx.startswith("gfx"):
        raise TargetError(f"--target rocm={value}: gfx targets look like gfx942 (joined by +)")
    known = _gfx_targets(kb)
    if gfx not in known:
        raise TargetError(
            f"--target rocm={gfx}: not a gfx target any ROCm build or table of wheelfit knows "
            f"(known: {', '.join(known)}; `rocminfo` or `wheelfit detect` on the machine shows its own)"
        )


def _gfx_targets(kb: Knowledge | None) -> tuple[str, ...]:
    """The gfx targets of every ROCm build in the knowledge base (the one the plan is given, ``--kb``), and of the
    device notes (near misses)."""
    from ..kb.matrix import load_knowledge
    from ..kb.notes import known_gfx_targets

    found = set(known_gfx_targets())
    for release in (kb or load_knowledge()).releases.values():
        for builds in release.platforms.values():
            for _, build in builds.builds_of(RocmBuild):
                found.update(build.gfx)
    return tuple(sorted(found, key=lambda g: (len(g), g)))


def _is_driver(text: str) -> bool:
    from wheelfit_probekit.drivers import is_driver_version

    return is_driver_version(text)


def _cuda_for(driver: str | None, windows: bool) -> str | None:
    """The highest CUDA a driver runs (580.95.05 -> 13.0), as NVML would report it on that machine."""
    if not driver:
        return None
    from wheelfit_probekit.drivers import max_cuda_for_driver

    return max_cuda_for_driver(driver, windows)


def _plus_list(value: str | None) -> list[str]:
    return [v.strip() for v in value.split("+") if v.strip()] if value else []


def _is_cc(text: str) -> bool:
    major, dot, minor = text.partition(".")
    return bool(dot) and major.isdigit() and minor.isdigit()


def _intel_target(value: str) -> Accelerator:
    from wheelfit_intel.devices import lookup

    from ..kb.notes import known_intel_families

    v = value.lower()
    if ":" in v:
        vendor, _, dev = v.partition(":")
        try:
            if int(vendor, 16) != 0x8086:
                raise ValueError(vendor)
            info = lookup(int(dev, 16))
        except ValueError:
            raise TargetError(f"--target xpu={value}: an Intel PCI id looks like 8086:e20b") from None
        if not info.known:
            raise TargetError(
                f"--target xpu={value}: not in wheelfit's Intel device table; give the family instead "
                f"({', '.join(known_intel_families())})"
            )
        return Accelerator(
            "intel",
            info.name,
            info.pci_id,
            "target",
            integrated=info.integrated,
            family=info.family,
            xpu_capable=info.xpu_capable,
            extra={"aot_target": info.aot_target} if info.aot_target else {},
        )
    families = {fam: (fam, aot) for fam, aot in _DEVICE_IP_FAMILY.values()}
    family = _DEVICE_IP_FAMILY.get(v) or families.get(v)
    if family is None and v in known_intel_families():
        family = (v, v)
    if family is None:
        raise TargetError(
            f"--target xpu={value}: not an Intel GPU family or device IP wheelfit knows "
            f"(families: {', '.join(known_intel_families())}; device IPs: {', '.join(_DEVICE_IP_FAMILY)}; "
            "or a PCI id such as 8086:e20b)"
        )
    return Accelerator(
        "intel",
        f"target Intel GPU {v}",
        None,
        "target",
        family=family[0],
        xpu_capable=family[0] != "legacy",
        device_ip=v if v in _DEVICE_IP_FAMILY else None,
        extra={"aot_target": family[1]},
    )


def _forced_intel(value: str) -> tuple[str, tuple[str, str]] | None:
    """The first forced IP (one, or several separated by commas or spaces, as the reference reads them) that an
    XPU build targets, itself or through the base platform IP it runs code of (20.2.0 -> 20.1.0, bmg)."""
    from wheelfit_intel.variant_plugin import KNOWN_DEVICE_IPS

    for ip in (p for p in re.split(r"[,\s;]+", value.strip()) if p):
        for candidate in (ip, KNOWN_DEVICE_IPS.get(ip)):
            if candidate in _DEVICE_IP_FAMILY:
                return candidate, _DEVICE_IP_FAMILY[candidate]
    return None


def apply_overrides(report: HardwareReport, environ: Mapping[str, str]) -> tuple[HardwareReport, list[str]]:
    """Apply the override variables; returns the report and one note per variable used."""
    notes: list[str] = []
    accels = list(report.accelerators)

    def note(var: str) -> None:
        notes.append(f"{var}={environ[var]} overrides detection")

    sm = environ.get("NV_VARIANT_PROVIDER_FORCE_SM_ARCH")
    driver = environ.get("UV_CUDA_DRIVER_VERSION")
    cuda = environ.get("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION")
    if sm:
        if not _is_cc(sm):
            raise TargetError(f"NV_VARIANT_PROVIDER_FORCE_SM_ARCH={sm}: use a compute capability such as 9.0")
        note("NV_VARIANT_PROVIDER_FORCE_SM_ARCH")
        nvidia = [a for a in accels if a.vendor == "nvidia"]
        if nvidia:
            accels = [replace(a, compute_capability=sm) if a.vendor == "nvidia" else a for a in accels]
        else:
            accels.append(
                Accelerator(
                    "nvidia",
                    f"forced GPU sm_{sm.replace('.', '')}",
                    None,
                    "override",
                    integrated=False,
                    compute_capability=sm,
                    extra={"index": 0},
                )
            )
    updates: dict[str, Any] = {}
    if driver and not _is_driver(driver):
        raise TargetError(f"UV_CUDA_DRIVER_VERSION={driver}: an NVIDIA driver version looks like 580.95.05")
    if cuda:
        from wheelfit_probekit.drivers import cuda_major_minor

        parsed = cuda_major_minor(cuda)  # read as the NVIDIA variant provider reads it: 13 -> 13.0
        if parsed is None:
            raise TargetError(
                f"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION={cuda}: a CUDA driver version looks like 12.8"
            )
        cuda = f"{parsed[0]}.{parsed[1]}"
    if driver:
        note("UV_CUDA_DRIVER_VERSION")
        updates["driver_version"] = driver
        windows = report.platform.system == "Windows" or report.platform.wsl
        updates["cuda_driver_version"] = _cuda_for(driver, windows)
    if cuda:
        note("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION")
        updates["cuda_driver_version"] = cuda
    if updates:
        if not any(a.vendor == "nvidia" for a in accels):
            notes.append(
                "NVIDIA driver overrides are set but no NVIDIA GPU is known: set "
                "NV_VARIANT_PROVIDER_FORCE_SM_ARCH or --target cuda=X.Y to plan a CUDA build"
            )
        accels = [replace(a, **updates) if a.vendor == "nvidia" else a for a in accels]
    gfx_value = environ.get("AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH") or environ.get("UV_AMD_GPU_ARCHITECTURE")
    if gfx_value:
        var = (
            "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH"
            if environ.get("AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH")
            else "UV_AMD_GPU_ARCHITECTURE"
        )
        note(var)
        gfxs = [g.strip() for g in gfx_value.split(",") if g.strip()]
        if not all(g.startswith("gfx") for g in gfxs):
            raise TargetError(f"{var}={gfx_value}: gfx targets look like gfx942")
        accels = [a for a in accels if a.vendor != "amd"] + [
            Accelerator("amd", f"forced GPU {g}", None, "override", integrated=False, gfx=g, effective_gfx=g)
            for g in gfxs
        ]
    ip = environ.get("INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP")
    if ip:
        note("INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP")
        accels = [a for a in accels if a.vendor != "intel"]
        forced = _forced_intel(ip)
        if forced is None:
            # As the reference provider does: an IP no XPU build targets gives no xpu variant, not an error, so a
            # CI job written for it keeps working.
            notes.append(
                f"INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP={ip}: no PyTorch XPU build targets this device IP "
                f"(they target {', '.join(_DEVICE_IP_FAMILY)}); planned as the reference Intel provider answers, "
                "as if there were no Intel GPU"
            )
        else:
            device_ip, (family, aot) = forced
            accels.append(
                Accelerator(
                    "intel",
                    f"forced Intel GPU {device_ip}",
                    None,
                    "override",
                    family=family,
                    xpu_capable=True,
                    device_ip=device_ip,
                    extra={"aot_target": aot},
                )
            )
    return replace(report, accelerators=tuple(accels)), notes
