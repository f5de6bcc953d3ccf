"""Near-miss AMD targets and the HSA_OVERRIDE_GFX_VERSION that makes them run (``rocm_overrides.json``).

The file's shape is ``data/rocm_overrides.schema.json``; :func:`load_rocm_overrides` checks it without the
``jsonschema`` package, so a typo is one line naming file and key, not a ``KeyError`` in the planner.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from types import MappingProxyType

from .jsonfile import Fields, load_json

__all__ = ["RocmOverrides", "load_rocm_overrides", "rocm_known_broken", "rocm_overrides"]

_PACKAGED = "wheelfit/kb/data/rocm_overrides.json"
_GFX = re.compile(r"gfx(\d{1,2})([0-9a-f])([0-9a-f])")
_HSA_VALUE = re.compile(r"\d+\.\d+\.\d+")  # major.minor.stepping, decimal (ROCR-Runtime libhsakmt topology.c)
_ROCM = re.compile(r"\d+\.\d+(\.\d+)?")
_CONFIDENCE = frozenset({"P", "M", "S", "U"})


@dataclass(frozen=True)
class RocmOverrides:
    """The file, read: physical gfx -> (listed gfx, override value, risk); listed gfx -> (first bad ROCm, why)."""

    overrides: Mapping[str, tuple[str, str, str | None]]
    known_broken: Mapping[str, tuple[str, str]]


def load_rocm_overrides(text: str | bytes | None = None, name: str = _PACKAGED) -> RocmOverrides:
    """Read and check the packaged file, or ``text`` (a test's edited copy); ``DataFileError`` if malformed."""
    if text is None:
        text = files(__package__).joinpath("data/rocm_overrides.json").read_bytes()
    f = Fields(name)
    top = f.obj(load_json(text, name), "", ("schema_version", "sources", "overrides"), ("about", "known_broken"))
    f.schema_version(top["schema_version"], 1)
    f.opt_text(top.get("about"), "about")
    sources = f.sources(top["sources"])

    overrides: dict[str, tuple[str, str, str | None]] = {}
    for i, raw in enumerate(f.items(top["overrides"], "overrides")):
        where = f.at("overrides", i)
        row = f.obj(raw, where, ("gfx", "as", "value", "source"), ("risk",))
        listed = f.text(row["as"], f.at(where, "as"), _GFX)
        value = f.text(row["value"], f.at(where, "value"), _HSA_VALUE)
        if value != _hsa_value(listed):
            raise f.fail(f.at(where, "value"), f"{value!r} is not {listed}'s version ({_hsa_value(listed)!r})")
        f.source(row["source"], f.at(where, "source"), sources)
        risk = f.opt_text(row.get("risk"), f.at(where, "risk"))
        for j, gfx in enumerate(f.texts(row["gfx"], f.at(where, "gfx"), _GFX)):
            if gfx == listed or gfx in overrides:
                what = "is the target it is overridden to" if gfx == listed else "has an override in an earlier row"
                raise f.fail(f.at(f.at(where, "gfx"), j), f"{gfx} {what}")
            overrides[gfx] = (listed, value, risk)

    broken: dict[str, tuple[str, str]] = {}
    for i, raw in enumerate(f.items(top.get("known_broken", []), "known_broken")):
        where = f.at("known_broken", i)
        row = f.obj(raw, where, ("gfx", "from_rocm", "source", "why"), ("confidence",))
        gfx = f.text(row["gfx"], f.at(where, "gfx"), _GFX)
        if gfx in broken:
            raise f.fail(f.at(where, "gfx"), f"{gfx} is listed twice")
        f.source(row["source"], f.at(where, "source"), sources)
        if "confidence" in row and row["confidence"] not in _CONFIDENCE:
            raise f.fail(f.at(where, "confidence"), f"must be one of P, M, S, U, got {row['confidence']!r}")
        broken[gfx] = (
            f.text(row["from_rocm"], f.at(where, "from_rocm"), _ROCM),
            f.text(row["why"], f.at(where, "why")),
        )
    return RocmOverrides(MappingProxyType(overrides), MappingProxyType(broken))


def _hsa_value(gfx: str) -> str:
    """``gfx1030`` -> ``10.3.0``, ``gfx90a`` -> ``9.0.10``: the last two hex digits are minor and stepping."""
    return f"{int(gfx[3:-2])}.{int(gfx[-2], 16)}.{int(gfx[-1], 16)}"


@cache
def _packaged() -> RocmOverrides:
    return load_rocm_overrides()


def rocm_known_broken() -> dict[str, tuple[str, str]]:
    """``{"gfx906": ("6.4", why)}``: listed targets whose kernels are missing from that ROCm version on."""
    return dict(_packaged().known_broken)


def rocm_overrides() -> dict[str, tuple[str, str, str | None]]:
    """``{"gfx1031": ("gfx1030", "10.3.0", None), ...}``: physical gfx -> (listed gfx, override value, risk)."""
    return dict(_packaged().overrides)
