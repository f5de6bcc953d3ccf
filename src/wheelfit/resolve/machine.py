"""The facts about a machine that decide a build, distilled from a hardware report."""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from ..errors import WheelfitError
from ..report import Accelerator, HardwareReport

__all__ = ["GpuGroup", "Machine", "ResolveError", "choose_gpus"]


class ResolveError(WheelfitError):
    """No build can be planned; the message says why and what to try."""


#: Which kind of PyTorch build serves each vendor's GPUs.
KIND_OF_VENDOR = {"nvidia": "cuda", "amd": "rocm", "intel": "xpu", "apple": "mps"}


@dataclass(frozen=True)
class GpuGroup:
    """The GPUs a build must serve: one vendor, and the others that were set aside."""

    kind: str
    devices: tuple[Accelerator, ...]
    #: Devices of other vendors that will not be used, with why.
    set_aside: tuple[str, ...] = ()


@dataclass(frozen=True)
class Machine:
    platform_key: str
    python_tag: str
    python: str
    #: ``linux`` or ``windows``: whose NVIDIA driver numbering applies (WSL2 uses the Windows driver).
    driver_os: str
    glibc: Version | None
    macos: Version | None
    gpus: GpuGroup | None

    @classmethod
    def from_report(cls, report: HardwareReport) -> Machine:
        p = report.platform
        arch = (p.machine or report.cpu.arch or "").lower()
        system = p.system
        if system == "Linux" and arch in ("x86_64", "aarch64"):
            key = f"linux_{arch}"
        elif system == "Windows" and arch in ("x86_64", "amd64"):
            key = "windows_amd64"
        elif system == "Darwin" and arch in ("arm64", "aarch64"):
            key = "macos_arm64"
        else:
            raise ResolveError(
                f"PyTorch publishes no builds for {system} {arch or 'unknown architecture'}: "
                "supported are Linux x86_64/aarch64, Windows x86_64 and macOS arm64"
            )
        parts = p.python.split(".")
        if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
            raise ResolveError(f"cannot read the Python version {p.python!r} from the report")
        glibc = _version(p.libc.split()[1]) if p.libc and p.libc.startswith("glibc ") else None
        macos = _version(p.release) if system == "Darwin" and p.release else None
        driver_os = "windows" if system == "Windows" or p.wsl else "linux"
        return cls(
            key,
            f"cp{parts[0]}{parts[1]}",
            f"{parts[0]}.{parts[1]}",
            driver_os,
            glibc,
            macos,
            choose_gpus(report.accelerators),
        )


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _usable(a: Accelerator) -> bool:
    if a.vendor == "nvidia":
        return bool(a.compute_capability) and a.extra.get("visible", True) is not False
    if a.vendor == "amd":
        return bool(a.effective_gfx or a.gfx)
    if a.vendor == "intel":
        return bool(a.xpu_capable)
    return bool(a.mps)


def choose_gpus(accels: tuple[Accelerator, ...]) -> GpuGroup | None:
    """Pick the vendor whose GPUs the build serves.

    Discrete GPUs beat integrated ones; among discrete vendors NVIDIA, then AMD,
    then Intel (the order of PyTorch's build maturity). Everything not chosen is
    named in ``set_aside`` so the plan can say so.
    """
    usable = [a for a in accels if _usable(a)]
    if not usable:
        return None
    order = ("nvidia", "amd", "intel", "apple")

    def rank(a: Accelerator) -> tuple[int, int]:
        return (1 if a.integrated else 0, order.index(a.vendor))

    best = min(usable, key=rank)
    chosen = tuple(a for a in usable if a.vendor == best.vendor and bool(a.integrated) == bool(best.integrated))
    aside = tuple(f"{a.name} ({a.vendor}{', integrated' if a.integrated else ''})" for a in usable if a not in chosen)
    return GpuGroup(KIND_OF_VENDOR[best.vendor], chosen, aside)
