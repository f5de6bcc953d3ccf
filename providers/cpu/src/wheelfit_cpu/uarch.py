"""archspec's host selection applied to a described CPU instead of the running one.

``archspec.cpu.host()`` reads this machine (``platform.machine()``, ``/proc/cpuinfo``,
``sysctl``); under a sysroot or for a recorded dump that is the wrong machine. Here the
same candidate filter and ordering as ``archspec.cpu.detect`` 0.2.7 run on a
:class:`CpuInfo`, with the architecture and OS taken from it. archspec is imported on
first use only (its import reads a large JSON file, ~20 ms).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .info import CpuInfo

__all__ = ["Resolved", "apple_model", "archspec_tables", "resolve"]


@dataclass(frozen=True)
class Resolved:
    #: archspec target name (``skylake_avx512``, ``neoverse_v2``, ``x86_64_v3``, ``m4``).
    name: str
    #: Its vendor in archspec (``generic`` for the psABI levels and bare families).
    vendor: str
    #: Best generic ancestor (``x86_64_v4`` ...), the safe answer when a niche flag is hidden.
    generic: str


def archspec_tables() -> dict[str, Any]:
    """archspec's ``conversions`` (``arm_vendors``, ``darwin_flags``) and ``cpuid.json``."""
    from archspec.cpu.schema import CPUID_JSON, TARGETS_JSON

    return {
        "arm_vendors": dict(TARGETS_JSON["conversions"]["arm_vendors"]),
        "darwin_flags": dict(TARGETS_JSON["conversions"]["darwin_flags"]),
        "cpuid": CPUID_JSON.data,
    }


def apple_model(brand: str | None, known: set[str] | None = None) -> str:
    """``Apple M4 Max`` -> ``m4``, counting down to the newest ``mN`` archspec knows (as archspec does)."""
    if known is None:
        from archspec.cpu import TARGETS

        known = set(TARGETS)
    text = (brand or "").lower()
    match = re.search(r"apple\s+m(\d+)", text)
    if match is not None:
        for n in range(int(match.group(1)), 0, -1):
            if f"m{n}" in known:
                return f"m{n}"
        return "aarch64"
    # Very old macOS names the M1 "Apple processor" (archspec fixture darwin-bigsur-m1).
    return "m1" if text == "apple processor" else "aarch64"


def resolve(info: CpuInfo) -> Resolved:
    """The archspec microarchitecture ``info`` describes, selected as ``archspec.cpu.host()`` does."""
    from archspec.cpu import TARGETS, Microarchitecture, generic_microarchitecture

    if info.os == "Darwin" and info.arch == "aarch64" and not info.name:
        info = _with_name(info, apple_model(info.model, set(TARGETS)))
    partial = Microarchitecture(
        name=info.name,
        parents=[],
        vendor=info.vendor,
        features=set(info.features),  # a copy: the constructor adds sse3 when ssse3 is present
        compilers={},
        generation=info.generation,
        cpu_part=info.cpu_part,
    )
    root = TARGETS.get(info.arch)
    candidates = [t for t in TARGETS.values() if root is not None and _compatible(info, partial, t, root, TARGETS)]
    if not candidates:
        fallback = generic_microarchitecture(info.arch)
        return Resolved(fallback.name, "generic", fallback.name)

    def order(t: Any) -> tuple[int, int]:
        return len(t.ancestors), len(t.features)

    best_generic = max((c for c in candidates if c.vendor == "generic"), key=order)
    if info.cpu_part and any(c.cpu_part == info.cpu_part for c in candidates):
        candidates = [c for c in candidates if c.cpu_part == info.cpu_part]
    # Descendants of the best generic only: one niche flag hidden by a BIOS or hypervisor
    # must not drop the answer below the level the CPU clearly has.
    candidates = [c for c in candidates if c > best_generic]
    best = max(candidates, key=order) if candidates else best_generic
    return Resolved(best.name, best.vendor, best.generic.name)


def _compatible(info: CpuInfo, partial: Any, target: Any, root: Any, targets: Any) -> bool:
    """archspec's per-family ``compatibility_check_for_*`` with the family and OS from ``info``."""
    in_family = target == root or root in target.ancestors
    if info.arch == "x86_64":
        return bool(in_family and target.vendor in (partial.vendor, "generic") and target.features <= partial.features)
    if info.arch == "aarch64":
        if target.vendor == "generic" and target.name != "aarch64":
            return False
        same = root == target.family and target.vendor in (partial.vendor, "generic")
        if info.os == "Darwin":
            # sysctl cannot list every feature; the brand string names the exact model.
            model = targets.get(info.name)
            return bool(same and model is not None and (target == model or target in model.ancestors))
        return bool(same and target.features <= partial.features)
    if info.arch in ("ppc64le", "ppc64"):
        return bool(in_family and target.generation <= partial.generation)
    if info.arch == "riscv64":
        return bool(in_family and (target.name == partial.name or target.vendor == "generic"))
    return False


def _with_name(info: CpuInfo, name: str) -> CpuInfo:
    from dataclasses import replace

    return replace(info, name=name)
