"""The ``cpu`` detector: read the platform's CPU source, name the microarchitecture, find the Apple GPU."""

from __future__ import annotations

import platform as _platform
import sys
from dataclasses import dataclass
from typing import Any

from wheelfit_probekit import ProbeError, ProbeLog, ProviderResult, System, normalize_arch

from .cpuid import read_cpuid
from .cpuinfo import CpuinfoError, info_from_cpuinfo
from .darwin import SYSCTL_ARGS, apple_gpu, info_from_sysctl, parse_sysctl, plist_version
from .info import CpuInfo
from .levels import x86_64_level

__all__ = ["CpuProvider", "cpu_section"]

_SYSTEM_VERSION = "/System/Library/CoreServices/SystemVersion.plist"


def cpu_section(info: CpuInfo | None, arch: str | None = None) -> dict[str, Any]:
    """The report's ``cpu`` dict before archspec has named the microarchitecture."""
    if info is None:
        return {
            "arch": arch,
            "vendor": None,
            "model": None,
            "microarchitecture": None,
            "x86_64_level": None,
            "features": [],
        }
    return {
        "arch": info.arch,
        "vendor": None if info.vendor == "generic" else info.vendor,
        "model": info.model,
        "microarchitecture": None,
        "x86_64_level": x86_64_level(info.features) if info.arch == "x86_64" else None,
        "features": sorted(info.features),
    }


@dataclass
class _Found:
    info: CpuInfo | None = None
    accelerators: list[dict[str, Any]] | None = None


class CpuProvider:
    name = "cpu"

    def probe(self, system: System) -> ProviderResult:
        log = ProbeLog(self.name)
        found = _Found()
        tables: dict[str, Any] = {}
        with log.probe("archspec-data") as p:
            from .uarch import archspec_tables

            tables = archspec_tables()
            p.detail = "conversion and CPUID tables loaded"
        osname = system.os_name
        if osname == "Darwin":
            self._darwin(system, log, found, tables)
        elif osname == "Windows":
            self._windows(system, log, found, tables)
        else:
            self._linux(system, log, found, tables)
        cpu = cpu_section(found.info, arch=_fallback_arch(system))
        if found.info is not None:
            with log.probe("archspec") as p:
                from .uarch import resolve

                resolved = resolve(found.info)
                cpu["microarchitecture"] = resolved.name
                if cpu["vendor"] is None and resolved.vendor != "generic":
                    cpu["vendor"] = resolved.vendor
                p.detail = f"{resolved.name} (generic {resolved.generic})"
        return ProviderResult(cpu=cpu, accelerators=found.accelerators or [], probes=log.records)

    # -- Linux ----------------------------------------------------------------------

    def _linux(self, system: System, log: ProbeLog, found: _Found, tables: dict[str, Any]) -> None:
        with log.probe("proc-cpuinfo") as p:
            text = system.read_text("/proc/cpuinfo", limit=16 << 20)
            if text is None:
                p.error = "/proc/cpuinfo does not exist"
                p.hint = "mount /proc (inside a chroot or container) so the CPU can be identified"
                return
            try:
                info = info_from_cpuinfo(text, _linux_arch(system), tables.get("arm_vendors", {}))
            except CpuinfoError as exc:
                p.error = str(exc)
                p.hint = "CPU features are unknown: check that /proc is the kernel's procfs in this container or chroot"
                return
            found.info = info
            p.detail = _summary(info)

    # -- macOS ----------------------------------------------------------------------

    def _darwin(self, system: System, log: ProbeLog, found: _Found, tables: dict[str, Any]) -> None:
        data: dict[str, str] = {}
        with log.probe("sysctl") as p:
            out = system.run("sysctl", *SYSCTL_ARGS, timeout=min(system.command_timeout, 10.0))
            data = parse_sysctl(out.stdout)
            if "machdep.cpu.brand_string" not in data:
                p.error = f"sysctl printed no machdep.cpu.brand_string (exit {out.returncode}): {out.first_line()}"
                return
            found.info = info_from_sysctl(data, tables.get("darwin_flags", {}))
            rosetta = data.get("sysctl.proc_translated") == "1"
            p.detail = _summary(found.info) + (" [x86_64 Python under Rosetta]" if rosetta else "")
            if rosetta:
                p.hint = "install a native arm64 Python: an x86_64 one under Rosetta cannot use MPS"
        self._apple_gpu(system, log, found, data)

    def _apple_gpu(self, system: System, log: ProbeLog, found: _Found, data: dict[str, str]) -> None:
        info = found.info
        if info is None or info.arch != "aarch64":
            return  # Intel Macs: no Apple GPU entry (no current MPS wheels there)
        with log.probe("macos-mps") as p:
            version = _macos_version(system, data)
            entry, why = apple_gpu(info.model, version, data.get("sysctl.proc_translated") == "1")
            found.accelerators = [entry]
            p.detail = f"{entry['name']}, macOS {version}, mps {entry['mps']}"
            if why:
                p.detail += f": {why}"

    # -- Windows --------------------------------------------------------------------

    def _windows(self, system: System, log: ProbeLog, found: _Found, tables: dict[str, Any]) -> None:
        """Best effort: archspec's CPUID path, executed in a child interpreter on the real machine only."""
        if not system.native:
            log.skipped("cpuid", "executing CPUID needs the real machine, not a sysroot")
            return
        machine = normalize_arch(_platform.machine())
        if machine != "x86_64":
            found.info = CpuInfo(arch=machine, os="Windows")
            log.skipped("cpuid", f"CPUID applies to x86_64 only (this is {machine})")
            return
        with log.probe("cpuid") as p:
            decoded = read_cpuid(system, tables["cpuid"])
            found.info = CpuInfo(
                arch="x86_64", os="Windows", vendor=decoded.vendor, model=decoded.brand, features=decoded.features
            )
            p.detail = _summary(found.info)


def _summary(info: CpuInfo) -> str:
    return f"{info.arch} {info.vendor} {info.model or '(no model name)'}, {len(info.features)} features"


def _linux_arch(system: System) -> str | None:
    """Python's machine on the real host; ``proc/sys/kernel/arch`` or the cpuinfo fields in a sysroot."""
    if system.native:
        return normalize_arch(_platform.machine()) or None
    try:
        text = system.read_text("/proc/sys/kernel/arch")
    except ProbeError:
        text = None
    return normalize_arch(text) if text and text.strip() else None


def _fallback_arch(system: System) -> str | None:
    """The architecture to report when the CPU source failed."""
    if system.native:
        return normalize_arch(_platform.machine()) or None
    return _linux_arch(system)


def _macos_version(system: System, data: dict[str, str]) -> str | None:
    """``platform.mac_ver()`` (or the sysroot's SystemVersion.plist); sysctl when it says the frozen 10.16."""
    if system.native and sys.platform == "darwin":
        version: str | None = _platform.mac_ver()[0] or None
    else:
        text = system.read_text(_SYSTEM_VERSION)
        version = plist_version(text) if text else None
    if version is None or version.startswith("10.16"):
        # Pythons built against an old SDK see Big Sur+ as 10.16 (munkireport-php#1386, pyinstaller#6329).
        version = data.get("kern.osproductversion") or version
    return version
