"""x86 CPUID registers -> vendor, Linux-named features, brand string (archspec's ``CpuidInfoCollector``, pure).

The bit table is archspec's ``cpuid.json``; the registers come from a recorded dump
(``eax_in, ecx_in, eax, ebx, ecx, edx`` per line) or, on a real Windows machine, from a
child interpreter that executes CPUID (:data:`CHILD_CODE`).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wheelfit_probekit import ProbeError, System

__all__ = [
    "CHILD_CODE",
    "CpuidDecoded",
    "child_code",
    "decode_cpuid",
    "needed_leaves",
    "parse_cpuid_dump",
    "read_cpuid",
]

Registers = tuple[int, int, int, int]
_NAMES = ("eax", "ebx", "ecx", "edx")
_BRAND_LEAVES = (0x80000002, 0x80000003, 0x80000004)


@dataclass(frozen=True)
class CpuidDecoded:
    vendor: str
    features: frozenset[str]
    brand: str | None


def parse_cpuid_dump(text: str) -> dict[tuple[int, int], Registers]:
    """``eax_in, ecx_in, eax, ebx, ecx, edx`` lines -> ``{(eax_in, ecx_in): (eax, ebx, ecx, edx)}``."""
    out: dict[tuple[int, int], Registers] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 6:
            raise ValueError(f"CPUID dump line {n} has {len(parts)} fields, expected 6")
        a, c, eax, ebx, ecx, edx = (int(p, 0) for p in parts)
        if not all(0 <= v <= 0xFFFFFFFF for v in (a, c, eax, ebx, ecx, edx)):
            raise ValueError(f"CPUID dump line {n} has a value that is not a 32-bit register")
        out[(a, c)] = (eax, ebx, ecx, edx)
    return out


def needed_leaves(table: Mapping[str, Any]) -> list[tuple[int, int]]:
    """Every (eax, ecx) input the decoder reads, for the child that executes CPUID."""
    leaves = [_input(table["vendor"]), _input(table["highest_extension_support"])]
    leaves += [_input(c) for c in (*table["flags"], *table["extension-flags"])]
    leaves += [(leaf, 0) for leaf in _BRAND_LEAVES]
    return list(dict.fromkeys(leaves))


def decode_cpuid(regs: Mapping[tuple[int, int], Registers], table: Mapping[str, Any]) -> CpuidDecoded:
    """What archspec's collector computes, from registers instead of the instruction.

    Leaves above the highest supported basic/extended leaf are skipped, as archspec
    does; a leaf missing from ``regs`` reads as zeros (no feature bits).
    """

    def get(leaf: tuple[int, int]) -> Registers:
        return regs.get(leaf, (0, 0, 0, 0))

    eax, ebx, ecx, edx = get(_input(table["vendor"]))
    highest_basic = eax
    vendor = struct.pack("III", ebx, edx, ecx).decode("utf-8", errors="replace").strip("\x00")
    highest_ext = get(_input(table["highest_extension_support"]))[0]
    features: set[str] = set()
    for calls, highest in ((table["flags"], highest_basic), (table["extension-flags"], highest_ext)):
        for call in calls:
            if call["input"]["eax"] > highest:
                continue
            values = dict(zip(_NAMES, get(_input(call)), strict=True))
            features.update(b["name"] for b in call["bits"] if values[b["register"]] >> b["bit"] & 1)
    brand = None
    if highest_ext >= _BRAND_LEAVES[-1]:
        raw = b"".join(struct.pack("IIII", *get((leaf, 0))) for leaf in _BRAND_LEAVES)
        brand = raw.decode("utf-8", errors="replace").strip("\x00").strip() or None
    return CpuidDecoded(vendor=vendor or "generic", features=frozenset(features), brand=brand)


def _input(call: Mapping[str, Any]) -> tuple[int, int]:
    return int(call["input"]["eax"]), int(call["input"].get("ecx", 0))


def child_code(archspec_parent: str, leaves: Iterable[tuple[int, int]]) -> str:
    """Source for an isolated child that executes CPUID through archspec's vendored helper.

    Executing code from writable memory can crash a process; it runs in a child so
    only the child dies. ``-I -S`` hides site-packages, so archspec's directory is passed in.
    """
    return CHILD_CODE.format(path=archspec_parent, leaves=list(leaves))


CHILD_CODE = """
import json, sys
sys.path.insert(0, {path!r})
from archspec.vendor.cpuid.cpuid import CPUID
c = CPUID()
print(json.dumps([[a, b, *c(a, b)] for a, b in {leaves!r}]))
"""


def read_cpuid(system: System, table: Mapping[str, Any]) -> CpuidDecoded:
    """Execute CPUID for every leaf the decoder needs, in a child with a deadline, and decode.

    Only for a real x86 machine (``system.native``); raises :class:`ProbeError` otherwise
    or when the child fails.
    """
    if not system.native:
        raise ProbeError("CPUID can only run on the real machine")
    import archspec

    parent = str(Path(archspec.__file__).resolve().parent.parent)
    out = system.run_python(child_code(parent, needed_leaves(table)), timeout=10.0)
    if not out.ok:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise ProbeError(f"CPUID child failed (exit {out.returncode}): {last}")
    try:
        rows = json.loads(out.stdout)
        regs = {(int(r[0]), int(r[1])): (int(r[2]), int(r[3]), int(r[4]), int(r[5])) for r in rows}
    except (ValueError, TypeError, IndexError) as exc:
        raise ProbeError(f"CPUID child printed something unexpected: {out.first_line()[:80]}") from exc
    return decode_cpuid(regs, table)
