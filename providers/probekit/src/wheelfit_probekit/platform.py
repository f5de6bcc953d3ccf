"""Operating system, CPU architecture, Python and C library of a machine (real or sysroot)."""

from __future__ import annotations

import os
import platform as _platform
import re
from typing import Any

from .system import ProbeError, System, split_kv

__all__ = ["normalize_arch", "platform_info"]

_ARCH_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "armv8": "aarch64"}


def normalize_arch(machine: str) -> str:
    """``AMD64``/``arm64`` -> ``x86_64``/``aarch64``; other names lowercased."""
    m = machine.strip().lower()
    return _ARCH_ALIASES.get(m, m)


def platform_info(system: System) -> dict[str, Any]:
    """The report's ``platform`` section; each field falls back to ``None`` rather than failing."""
    osname = system.os_name
    release = _kernel_release(system)
    return {
        "system": osname,
        "machine": _machine(system, osname),
        "python": _platform.python_version(),
        "libc": _libc(system, osname),
        "wsl": _is_wsl(system, osname, release),
        "release": release if osname == "Linux" else _os_version(system, osname),
        "container": osname == "Linux" and (system.exists("/.dockerenv") or system.exists("/run/.containerenv")),
        "l4t": _l4t(system) if osname == "Linux" else None,
    }


def _safe_read(system: System, path: str) -> str | None:
    try:
        return system.read_text(path, limit=1 << 20)
    except ProbeError:
        return None


#: ``/etc/nv_tegra_release``'s first line: ``# R36 (release), REVISION: 4.7, GCID: ...`` (L4T 36.4.7).
_L4T = re.compile(r"#\s*R(\d{1,3})\s*\(release\),\s*REVISION:\s*(\d{1,3}(?:\.\d{1,3}){0,2})", re.ASCII)


def _l4t(system: System) -> str | None:
    """The Linux for Tegra release of a Jetson (``36.4.7``: JetPack 6), from ``/etc/nv_tegra_release``; else None."""
    text = _safe_read(system, "/etc/nv_tegra_release")
    m = _L4T.match(text.lstrip()) if text else None
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _kernel_release(system: System) -> str | None:
    text = _safe_read(system, "/proc/sys/kernel/osrelease")
    if text and text.strip():
        return text.strip()
    if not system.is_sysroot and system.os_name == "Linux":
        return _platform.release() or None
    return None


def _machine(system: System, osname: str) -> str | None:
    if not system.is_sysroot:
        return normalize_arch(_platform.machine()) or None
    arch = _safe_read(system, "/proc/sys/kernel/arch")
    if arch and arch.strip():
        return normalize_arch(arch)
    if osname == "Linux":
        info = split_kv((_safe_read(system, "/proc/cpuinfo") or "").split("\n\n")[0])
        if "flags" in info and "vendor_id" in info:
            return "x86_64" if " lm " in f" {info['flags']} " else "i686"
        if "CPU implementer" in info:
            return "aarch64"
        if "isa" in info:
            return "riscv64"
        if "cpu" in info and "POWER" in info.get("cpu", ""):
            return "ppc64le"
    return None


def _is_wsl(system: System, osname: str, release: str | None) -> bool:
    # Docker Desktop on WSL2 shows the same kernel string; /dev/dxg is the GPU-paravirtualisation
    # device that only a WSL userland (or a container given it) sees.
    if osname != "Linux":
        return False
    kernel_says = bool(release and "microsoft" in release.lower())
    return kernel_says and (system.exists("/dev/dxg") or "WSL_DISTRO_NAME" in system.environ)


def _libc(system: System, osname: str) -> str | None:
    if osname != "Linux":
        return None
    if not system.is_sysroot:
        try:
            value = os.confstr("CS_GNU_LIBC_VERSION")
        except (ValueError, OSError, AttributeError):
            value = None
        if value:
            return value  # "glibc 2.36"
        lib, ver = _platform.libc_ver()
        return f"{lib} {ver}".strip() or None
    try:
        out = system.run("ldd", "--version", timeout=min(system.command_timeout, 5.0))
    except ProbeError:
        return None
    return parse_ldd_version(out.stdout + "\n" + out.stderr)


def parse_ldd_version(text: str) -> str | None:
    """``ldd (Debian GLIBC 2.36-9+deb12u4) 2.36`` -> ``glibc 2.36``; musl's banner -> ``musl 1.2.4``."""
    m = re.search(r"^ldd \(.*\) (\d+\.\d+)", text, re.MULTILINE | re.ASCII)
    if m:
        return f"glibc {m.group(1)}"
    if "musl" in text:
        v = re.search(r"^Version (\d+\.\d+(?:\.\d+)?)", text, re.MULTILINE | re.ASCII)
        return f"musl {v.group(1)}" if v else "musl"
    return None


def _os_version(system: System, osname: str) -> str | None:
    if osname == "Darwin":
        if system.is_sysroot:
            plist = _safe_read(system, "/System/Library/CoreServices/SystemVersion.plist") or ""
            m = re.search(r"<key>ProductVersion</key>\s*<string>([^<]+)</string>", plist)
            return m.group(1) if m else None
        ver = _platform.mac_ver()[0]
        if ver == "10.16":  # Python built against an old SDK sees Big Sur+ as 10.16; ask sysctl
            try:
                out = system.run("sysctl", "-n", "kern.osproductversion", timeout=5.0)
                ver = out.stdout.strip() or ver
            except ProbeError:
                pass
        return ver or None
    if osname == "Windows" and not system.is_sysroot:
        return _platform.version() or None
    return None
