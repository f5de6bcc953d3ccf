"""Near-miss AMD targets and the HSA_OVERRIDE_GFX_VERSION that makes them run (``rocm_overrides.json``).

The file's shape is ``data/rocm_overrides.schema.json`` (the tests hold the packaged file to it; a test's edited copy
is held to it here); :func:`load_rocm_overrides` checks what the schema cannot say, in one line naming file and key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from types import MappingProxyType
from typing import Any

from .jsonfile import DataFileError, conform, load_json

__all__ = ["RocmOverrides", "load_rocm_overrides", "rocm_known_broken", "rocm_overrides"]

_PACKAGED = "wheelfit/kb/data/rocm_overrides.json"


@dataclass(frozen=True)
class RocmOverrides:
    """The file, read: physical gfx -> (listed gfx, override value, risk); listed gfx -> (first bad ROCm, why)."""

    overrides: Mapping[str, tuple[str, str, str | None]]
    known_broken: Mapping[str, tuple[str, str]]


def load_rocm_overrides(text: str | bytes | None = None, name: str = _PACKAGED) -> RocmOverrides:
    """The packaged file, or ``text`` (a test's edited copy, held to the schema); ``DataFileError`` if malformed."""
    if text is None:
        doc: Any = load_json(files(__package__).joinpath("data/rocm_overrides.json").read_bytes(), name)
    else:
        doc = conform(load_json(text, name), "kb/data/rocm_overrides.schema.json", name, reads="1")
    sources = doc["sources"]

    def fail(where: str, what: str) -> DataFileError:
        return DataFileError(f"{name}: {where}: {what}")

    def cited(row: dict[str, Any], where: str) -> None:
        if row["source"] not in sources:
            raise fail(f"{where}.source", f"source {row['source']!r} is not a key of 'sources'")

    overrides: dict[str, tuple[str, str, str | None]] = {}
    for i, row in enumerate(doc["overrides"]):
        where = f"overrides[{i}]"
        listed, value = row["as"], row["value"]
        if value != _hsa_value(listed):
            raise fail(f"{where}.value", f"{value!r} is not {listed}'s version ({_hsa_value(listed)!r})")
        cited(row, where)
        for j, gfx in enumerate(row["gfx"]):
            if gfx == listed or gfx in overrides:
                what = "is the target it is overridden to" if gfx == listed else "has an override in an earlier row"
                raise fail(f"{where}.gfx[{j}]", f"{gfx} {what}")
            overrides[gfx] = (listed, value, row.get("risk"))
    broken: dict[str, tuple[str, str]] = {}
    for i, row in enumerate(doc.get("known_broken", [])):
        where = f"known_broken[{i}]"
        if row["gfx"] in broken:
            raise fail(f"{where}.gfx", f"{row['gfx']} is listed twice")
        cited(row, where)
        broken[row["gfx"]] = (row["from_rocm"], row["why"])
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
