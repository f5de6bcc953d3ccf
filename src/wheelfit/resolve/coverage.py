"""Does a build have kernels for a device? Pure rules, one per vendor.

NVIDIA: SASS for sm_Xy runs on compute capability X.z with z >= y (same major);
PTX for sm_Xy runs on any capability at or above X.y; nothing else runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["cuda_runs", "describe_archs", "gfx_override_value", "intel_runs", "sm_tuple"]


def sm_tuple(sm: str) -> tuple[int, int]:
    """``"86"`` or ``"8.6"`` or ``"sm_86"`` -> (8, 6); ``"100"`` -> (10, 0)."""
    s = sm.removeprefix("sm_")
    if "." in s:
        major, minor = s.split(".", 1)
        return int(major), int(minor)
    return int(s[:-1]), int(s[-1])


def cuda_runs(cc: str, sass: Iterable[str], ptx: Iterable[str] = ()) -> bool:
    major, minor = sm_tuple(cc)
    if any(m == major and n <= minor for m, n in map(sm_tuple, sass)):
        return True
    return any((m, n) <= (major, minor) for m, n in map(sm_tuple, ptx))


def describe_archs(sass: Sequence[str], ptx: Sequence[str] = ()) -> str:
    """``sm_75-sm_120`` (or a list when short), plus PTX if any: for rejection reasons."""
    ordered = sorted(sass, key=sm_tuple)
    if not ordered:
        text = "no SASS"
    elif len(ordered) <= 2:
        text = ", ".join(f"sm_{s}" for s in ordered)
    else:
        text = f"sm_{ordered[0]}-sm_{ordered[-1]}"
    if ptx:
        text += " + PTX " + ", ".join(f"compute_{p}" for p in sorted(ptx, key=sm_tuple))
    return text


def intel_runs(family: str | None, subfamily: str | None, aot_target: str | None, aot: Sequence[str]) -> str:
    """``"aot"`` when kernels for the device are compiled in; ``"jit"`` otherwise: every XPU build
    also carries generic SPIR-V that other Xe GPUs compile at first launch (slower start, not
    validated by Intel; intel/torch-xpu-ops ``cmake/BuildFlags.cmake``, ``-fsycl-targets=spir64_gen,spir64`` on
    branches ``release/2.5`` to ``release/2.14``).

    The exact AOT target decides when known; a device whose split is unknown (Panther Lake: -H
    or -U is not in pciids.h) counts when every split of its family is compiled in.
    """
    if aot_target is not None:
        return "aot" if aot_target in aot else "jit"
    if subfamily is not None and subfamily in aot:
        return "aot"
    if family and subfamily == family and any(t.startswith(family + "-") for t in aot):
        return "aot"
    return "jit"


def gfx_override_value(gfx: str) -> str:
    """``gfx1030`` -> ``10.3.0``, ``gfx90a`` -> ``9.0.10``: the HSA_OVERRIDE_GFX_VERSION that pretends to be it
    (the name is ``gfx{major}{minor:x}{stepping:x}``, as ROCm/rocminfo ``rocm_agent_enumerator`` ``readFromKFD``
    @ c6f7a17 renders it)."""
    digits = gfx.removeprefix("gfx")
    return f"{int(digits[:-2])}.{int(digits[-2], 16)}.{int(digits[-1], 16)}"
