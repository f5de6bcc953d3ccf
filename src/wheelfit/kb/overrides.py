"""Near-miss AMD targets and the HSA_OVERRIDE_GFX_VERSION that makes them run (``rocm_overrides.json``)."""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

__all__ = ["rocm_known_broken", "rocm_overrides"]


@cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(files(__package__).joinpath("data/rocm_overrides.json").read_text("utf-8"))
    return data


@cache
def rocm_known_broken() -> dict[str, tuple[str, str]]:
    """``{"gfx906": ("6.4", why)}``: listed targets whose kernels are missing from that ROCm version on."""
    return {row["gfx"]: (row["from_rocm"], row["why"]) for row in _data().get("known_broken", [])}


@cache
def rocm_overrides() -> dict[str, tuple[str, str, str | None]]:
    """``{"gfx1031": ("gfx1030", "10.3.0", None), ...}``: physical gfx -> (listed gfx, override value, risk)."""
    out: dict[str, tuple[str, str, str | None]] = {}
    for row in _data()["overrides"]:
        for gfx in row["gfx"]:
            out[gfx] = (row["as"], row["value"], row.get("risk"))
    return out
