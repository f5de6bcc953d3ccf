"""Near-miss AMD targets and the HSA_OVERRIDE_GFX_VERSION that makes them run (``rocm_overrides.json``)."""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files

__all__ = ["rocm_overrides"]


@cache
def rocm_overrides() -> dict[str, tuple[str, str, str | None]]:
    """``{"gfx1031": ("gfx1030", "10.3.0", None), ...}``: physical gfx -> (listed gfx, override value, risk)."""
    data = json.loads(files(__package__).joinpath("data/rocm_overrides.json").read_text("utf-8"))
    out: dict[str, tuple[str, str, str | None]] = {}
    for row in data["overrides"]:
        for gfx in row["gfx"]:
            out[gfx] = (row["as"], row["value"], row.get("risk"))
    return out
