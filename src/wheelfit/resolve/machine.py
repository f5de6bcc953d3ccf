"""The facts about a machine that decide a build, distilled from a hardware report."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from packaging.tags import Tag, compatible_tags, cpython_tags, mac_platforms
from packaging.version import Version

from ..errors import WheelfitError
from ..kinds import BuildKind
from ..report import Accelerator, HardwareReport
from ..variants.machine import marker_environment
from ..variants.ranking import SupportedConfigs

__all__ = ["GpuGroup", "Machine", "ResolveError", "choose_gpus", "target_tags"]

#: Oldest glibc the manylinux tags go down to (manylinux1), and what an unknown glibc is taken to be.
_OLDEST_GLIBC = 5
_ASSUMED_GLIBC = 28
#: The legacy manylinux names of PEP 600's ``manylinux_2_<minor>`` (PyTorch's 2.5 wheels are manylinux1).
_LEGACY_MANYLINUX = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
#: The newest macOS major, for the wheel tags of a Mac whose version is not known.
_NEWEST_MACOS = 26


class ResolveError(WheelfitError):
    """No build can be planned; the message says why and what to try."""


class GpuRequiredError(ResolveError):
    """A machine with a GPU would get the CPU build, and a GPU build was required."""


#: Which kind of PyTorch build serves each vendor's GPUs.
KIND_OF_VENDOR = {"nvidia": BuildKind.CUDA, "amd": BuildKind.ROCM, "intel": BuildKind.XPU, "apple": BuildKind.MPS}


@dataclass(frozen=True)
class GpuGroup:
    """The GPUs a build must serve: one vendor, and the others that were set aside."""

    #: The build that serves them: CUDA, ROCm, XPU, or MPS (Apple GPUs, which the macOS CPU builds serve).
    kind: BuildKind
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
    #: The wheel tags the machine's Python and platform accept, most preferred first.
    tags: tuple[Tag, ...] = ()
    #: The PEP 508 environment of the machine (``enable-if`` and dependency markers are evaluated in it).
    markers: Mapping[str, str] = field(default_factory=dict)
    #: What the variant providers say the machine supports, by namespace (PEP 817): variant mode ranks with it.
    variant_configs: SupportedConfigs = field(default_factory=dict)
    #: A Jetson (Tegra integrated GPU, which the NVIDIA provider records but does not report as a CUDA GPU).
    jetson: bool = False
    #: A Jetson's Linux for Tegra release (``36.4.7``), which decides the index that serves its torch builds.
    l4t: str | None = None

    @classmethod
    def from_report(cls, report: HardwareReport, variant_configs: SupportedConfigs | None = None) -> Machine:
        """The machine of ``report``; ``variant_configs`` come from the variant providers (I/O-free, but they are
        plugins, so the caller runs them: :func:`wheelfit.variants.machine.supported_configs`)."""
        p = report.platform
        arch = (p.machine or report.cpu.arch or "").lower()
        system = p.system
        if system == "Linux" and arch in ("x86_64", "aarch64"):
            key = f"linux_{arch}"
        elif system == "Windows" and arch in ("x86_64", "amd64"):
            key = "windows_amd64"
        elif system == "Darwin" and arch in ("arm64", "aarch64"):
            key = "macos_arm64"
        elif system == "Darwin" and arch == "x86_64":
            key = "macos_x86_64"  # an Intel Mac: builds up to torch 2.2.2 (the knowledge base's platform_ends)
        else:
            raise ResolveError(
                f"PyTorch publishes no builds for {system} {arch or 'unknown architecture'}: "
                "supported are Linux x86_64/aarch64, Windows x86_64, macOS arm64 (and macOS x86_64 up to torch 2.2)"
            )
        parts = p.python.split(".")
        if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
            raise ResolveError(f"cannot read the Python version {p.python!r} from the report")
        glibc = _version(p.libc.split()[1]) if p.libc and p.libc.startswith("glibc ") else None
        macos = _version(p.release) if system == "Darwin" and p.release else None
        driver_os = "windows" if system == "Windows" or p.wsl else "linux"
        jetson = _jetson(report)
        return cls(
            key,
            f"cp{parts[0]}{parts[1]}",
            f"{parts[0]}.{parts[1]}",
            driver_os,
            glibc,
            macos,
            choose_gpus(report.accelerators),
            tuple(target_tags(report)),
            marker_environment(report),
            dict(variant_configs or {}),
            jetson=jetson,
            l4t=p.l4t,
        )


def target_tags(report: HardwareReport) -> list[Tag]:
    """The wheel tags the report's Python and platform accept, most preferred first.

    Derived from the report, not from the running interpreter, so a ``--target`` plan is
    made for the target: Linux gets ``manylinux_2_<glibc>`` down to ``2_17`` (``2_28``
    assumed when the glibc is unknown) and ``linux_<arch>``.
    """
    p = report.platform
    parts = p.python.split(".")
    if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
        raise ResolveError(f"cannot read the Python version {p.python!r} from the report")
    py = (int(parts[0]), int(parts[1]))
    arch = (p.machine or report.cpu.arch or "").lower()
    platforms: Sequence[str]
    if p.system == "Linux":
        arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch)
        glibc = _ASSUMED_GLIBC
        if p.libc and p.libc.startswith("glibc "):
            with contextlib.suppress(IndexError, ValueError):
                glibc = int(p.libc.split()[1].split(".")[1])
        linux: list[str] = []
        for minor in range(glibc, _OLDEST_GLIBC - 1, -1):
            linux.append(f"manylinux_2_{minor}_{arch}")
            if minor in _LEGACY_MANYLINUX:
                linux.append(f"{_LEGACY_MANYLINUX[minor]}_{arch}")
        platforms = [*linux, f"linux_{arch}"]
    elif p.system == "Windows":
        platforms = ["win_arm64" if arch in ("arm64", "aarch64") else "win_amd64"]
    elif p.system == "Darwin":
        # An unknown macOS version (--target os=macos) is not guessed low: every wheel's tag is accepted, and the
        # plan names the floors instead (macosx_14_0 wheels, MPS).
        release = (p.release or f"{_NEWEST_MACOS}.0").split(".")
        try:
            mac = (int(release[0]), int(release[1]) if len(release) > 1 else 0)
        except ValueError:
            mac = (11, 0)
        platforms = list(mac_platforms(mac, "arm64" if arch in ("arm64", "aarch64") else arch))
    else:
        platforms = []
    interpreter = f"cp{py[0]}{py[1]}"
    return [*cpython_tags(py, [interpreter], platforms), *compatible_tags(py, interpreter, platforms)]


def _jetson(report: HardwareReport) -> bool:
    """An L4T release in the platform, or the NVIDIA provider's ``tegra`` probe ran (``/etc/nv_tegra_release``,
    L4T driver numbering), and no NVIDIA GPU was reported: a Jetson before Thor, whose GPU PyTorch's own builds do
    not serve."""
    tegra = report.platform.l4t is not None or any(p.provider == "nvidia" and p.source == "tegra"
                                                   for p in report.probes)  # fmt: skip
    return tegra and not report.by_vendor("nvidia")


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
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
