"""Linux ``/proc/cpuinfo``: the first processor block, the architecture it implies, a :class:`CpuInfo`."""

from __future__ import annotations

import re
from collections.abc import Mapping

from .info import CpuInfo

__all__ = ["CpuinfoError", "first_block", "guess_arch", "info_from_cpuinfo"]

#: Keys that make a block recognisably ``/proc/cpuinfo`` on some architecture.
_KNOWN_KEYS = ("flags", "vendor_id", "Features", "CPU implementer", "cpu", "isa", "uarch", "model name")


class CpuinfoError(ValueError):
    """The text is not a ``/proc/cpuinfo`` this module understands (empty, binary, truncated)."""


def first_block(text: str) -> dict[str, str]:
    """``key<tabs> : value`` pairs of the first processor, as archspec reads them.

    A line without a colon after some data ends the block (archspec: "we are on a
    blank line separating two cpus"); keys and values are stripped, so a single tab
    or aligned spaces before the colon both work.
    """
    data: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            if data:
                break
            continue
        data[key.strip()] = value.strip()
    return data


def guess_arch(block: Mapping[str, str]) -> str | None:
    """The machine architecture a cpuinfo block implies (used under a sysroot without ``kernel/arch``)."""
    if "vendor_id" in block and "flags" in block:
        return "x86_64" if "lm" in block["flags"].split() else "i686"
    if "CPU implementer" in block or "Features" in block:
        return "aarch64"
    if block.get("isa", "").startswith("rv64"):
        return "riscv64"
    if "POWER" in block.get("cpu", ""):
        return "ppc64le"
    return None


def info_from_cpuinfo(text: str, arch: str | None, arm_vendors: Mapping[str, str]) -> CpuInfo:
    """The partial CPU description of ``text`` for a machine of ``arch`` (guessed when ``None``).

    ``arm_vendors`` maps ``CPU implementer`` codes to archspec's vendor names.
    Raises :class:`CpuinfoError` when the text has none of the fields any architecture prints.
    """
    if "\x00" in text:
        raise CpuinfoError("/proc/cpuinfo contains binary data")
    block = first_block(text)
    if not any(k in block for k in _KNOWN_KEYS):
        what = "is empty" if not text.strip() else "has no processor fields (vendor_id/flags, Features, cpu, isa)"
        raise CpuinfoError(f"/proc/cpuinfo {what}")
    arch = arch or guess_arch(block)
    if arch is None:
        raise CpuinfoError("cannot tell the CPU architecture from /proc/cpuinfo")
    model = block.get("model name") or None
    if arch in ("x86_64", "i686", "i386"):
        return CpuInfo(
            arch=arch,
            os="Linux",
            vendor=block.get("vendor_id", "generic"),
            model=model,
            features=frozenset(block.get("flags", "").split()),
        )
    if arch == "aarch64":
        code = block.get("CPU implementer")
        return CpuInfo(
            arch=arch,
            os="Linux",
            vendor="generic" if code is None else arm_vendors.get(code, code),
            model=model,
            features=frozenset(block.get("Features", "").split()),
            cpu_part=block.get("CPU part", ""),
        )
    if arch in ("ppc64le", "ppc64"):
        # Emulated POWER (QEMU) may print no generation: archspec then keeps the generic target.
        match = re.search(r"POWER(\d+)", block.get("cpu", ""))
        return CpuInfo(
            arch=arch, os="Linux", model=block.get("cpu") or model, generation=int(match.group(1)) if match else 0
        )
    if arch == "riscv64":
        return CpuInfo(arch=arch, os="Linux", model=model, name=_riscv_uarch(block))
    return CpuInfo(arch=arch, os="Linux", model=model)


def _riscv_uarch(block: Mapping[str, str]) -> str:
    # Same normalisation as archspec's proc_cpuinfo(): the kernel prints vendor,name.
    uarch = block.get("uarch", "riscv64")
    if uarch == "sifive,u74-mc":
        return "u74mc"
    if uarch == "spacemit,x60" or block.get("model name") == "Spacemit(R) X60":
        return "x60"
    return uarch
