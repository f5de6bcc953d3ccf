"""Short, sourced explanations of what a device means for PyTorch (``device_notes.json``)."""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

from ..report import Accelerator

__all__ = ["device_note", "nvidia_family"]


@cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(files(__package__).joinpath("data/device_notes.json").read_text("utf-8"))
    return data


def nvidia_family(cc: str) -> tuple[str, str] | None:
    for row in _data()["nvidia"]:
        if cc in row["cc"]:
            return row["family"], row["note"]
    return None


def device_note(accel: Accelerator) -> str:
    """One line: architecture family and which builds have kernels for it."""
    data = _data()
    if accel.vendor == "nvidia":
        if not accel.compute_capability:
            return "compute capability unknown: wheelfit cannot tell which CUDA builds have kernels for it"
        found = nvidia_family(accel.compute_capability)
        if found is None:
            return f"{accel.arch}: not in wheelfit's tables; newer than this wheelfit knows"
        family, note = found
        return f"{accel.arch}, {family}: {note}"
    if accel.vendor == "amd":
        gfx = accel.effective_gfx or accel.gfx
        note = next((r["note"] for r in data["amd"] if gfx in r["gfx"]), data["amd_default"])
        if accel.effective_gfx and accel.gfx and accel.effective_gfx != accel.gfx:
            return f"{accel.gfx} overridden to {accel.effective_gfx} (HSA_OVERRIDE_GFX_VERSION): {note}"
        return f"{gfx}: {note}"
    if accel.vendor == "intel":
        note = next((r["note"] for r in data["intel"] if accel.family in r["family"]), "unknown Intel GPU family")
        return f"{accel.family or 'unknown'}: {note}"
    if accel.vendor == "apple":
        return str(data["apple"]["mps" if accel.mps else "no_mps"])
    return ""
