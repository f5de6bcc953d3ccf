"""The kernel driver's own files: ``/sys/module/nvidia/version`` and ``/proc/driver/nvidia/version``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from wheelfit_probekit.drivers import is_driver_version

__all__ = ["NvrmInfo", "is_tegra_numbering", "parse_module_version", "parse_nvrm"]

# Anchored on the NVRM line: the GCC line after it can hold garbage with version-like numbers.
_NVRM_RE = re.compile(r"^NVRM version:.*?\s(\d+\.\d+(?:\.\d+)?)(?=\s|$)", re.MULTILINE)
_OPEN_ARCH_RE = re.compile(r"Open Kernel Module for (\S+)")
_PROPRIETARY_ARCH_RE = re.compile(r"NVIDIA UNIX (\S+) Kernel Module")


@dataclass(frozen=True)
class NvrmInfo:
    """What the NVRM banner says about the loaded kernel module."""

    version: str
    #: ``open`` (open-gpu-kernel-modules, required by Blackwell) or ``proprietary``; ``None`` if the line says neither.
    kernel_module: str | None
    #: ``x86_64`` / ``aarch64`` when the banner names it.
    arch: str | None


def parse_module_version(text: str) -> str | None:
    """``/sys/module/nvidia/version`` holds one line, e.g. ``550.144.03``; anything else is ``None``."""
    value = text.strip()
    return value if is_driver_version(value) else None


def parse_nvrm(text: str) -> NvrmInfo | None:
    """Parse ``/proc/driver/nvidia/version``; ``None`` when there is no well-formed NVRM line."""
    m = _NVRM_RE.search(text)
    if m is None or not is_driver_version(m.group(1)):
        return None
    line = text[m.start() :].split("\n", 1)[0]
    open_arch = _OPEN_ARCH_RE.search(line)
    prop_arch = _PROPRIETARY_ARCH_RE.search(line)
    if open_arch:
        return NvrmInfo(m.group(1), "open", open_arch.group(1))
    if prop_arch:
        return NvrmInfo(m.group(1), "proprietary", prop_arch.group(1))
    return NvrmInfo(m.group(1), None, None)


def is_tegra_numbering(version: str, arch: str | None) -> bool:
    """Jetson (L4T) modules report 540.x on aarch64 whatever CUDA is installed: not a desktop driver number."""
    return arch == "aarch64" and version.split(".")[0] == "540"
