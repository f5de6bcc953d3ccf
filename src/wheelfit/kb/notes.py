"""Short, sourced explanations of what a device means for PyTorch (``device_notes.json``).

The file's shape is ``data/device_notes.schema.json``; :func:`load_device_notes` checks it without the
``jsonschema`` package, so a typo is one line naming file and key, not a ``KeyError`` in ``wheelfit detect``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from ..report import Accelerator
from .jsonfile import Fields, load_json

__all__ = [
    "DeviceNotes",
    "device_note",
    "known_compute_capabilities",
    "known_gfx_targets",
    "known_intel_families",
    "load_device_notes",
    "nvidia_family",
]

_PACKAGED = "wheelfit/kb/data/device_notes.json"
_CC = re.compile(r"\d+\.\d+")
_GFX = re.compile(r"gfx[0-9a-f]{3,4}")
_FAMILY = re.compile(r"[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True)
class DeviceNotes:
    """The file, read: per vendor, (the keys a row covers, its text), first match wins."""

    nvidia: tuple[tuple[tuple[str, ...], str, str], ...]  # (compute capabilities, family, note)
    amd: tuple[tuple[tuple[str, ...], str], ...]  # (gfx targets, note)
    amd_default: str
    intel: tuple[tuple[tuple[str, ...], str], ...]  # (families, note)
    apple_mps: str
    apple_no_mps: str


def load_device_notes(text: str | bytes | None = None, name: str = _PACKAGED) -> DeviceNotes:
    """Read and check the packaged file, or ``text`` (a test's edited copy); ``DataFileError`` if malformed."""
    if text is None:
        text = files(__package__).joinpath("data/device_notes.json").read_bytes()
    f = Fields(name)
    top = f.obj(
        load_json(text, name),
        "",
        ("schema_version", "sources", "nvidia", "amd", "amd_default", "intel", "apple"),
        ("about",),
    )
    f.schema_version(top["schema_version"], 1)
    f.opt_text(top.get("about"), "about")
    sources = f.sources(top["sources"])
    nvidia = tuple(
        (keys, f.text(row["family"], f.at(where, "family")), note)
        for keys, note, row, where in _rows(f, top, "nvidia", "cc", _CC, sources, ("family",))
    )
    amd = tuple((keys, note) for keys, note, _, _ in _rows(f, top, "amd", "gfx", _GFX, sources))
    intel = tuple((keys, note) for keys, note, _, _ in _rows(f, top, "intel", "family", _FAMILY, sources))
    apple = f.obj(top["apple"], "apple", ("mps", "no_mps", "source"))
    f.source(apple["source"], "apple.source", sources)
    return DeviceNotes(
        nvidia=nvidia,
        amd=amd,
        amd_default=f.text(top["amd_default"], "amd_default"),
        intel=intel,
        apple_mps=f.text(apple["mps"], "apple.mps"),
        apple_no_mps=f.text(apple["no_mps"], "apple.no_mps"),
    )


def _rows(
    f: Fields,
    top: dict[str, Any],
    vendor: str,
    key: str,
    pattern: re.Pattern[str],
    sources: dict[str, Any],
    extra: tuple[str, ...] = (),
) -> list[tuple[tuple[str, ...], str, dict[str, Any], str]]:
    """``[{key: [...], "note": ..., "source": ...}]``; a key in two rows would hide the second, so it is refused."""
    out: list[tuple[tuple[str, ...], str, dict[str, Any], str]] = []
    seen: set[str] = set()
    for i, raw in enumerate(f.items(top[vendor], vendor)):
        where = f.at(vendor, i)
        row = f.obj(raw, where, (key, "note", "source", *extra))
        keys = f.texts(row[key], f.at(where, key), pattern)
        for j, k in enumerate(keys):
            if k in seen:
                raise f.fail(f.at(f.at(where, key), j), f"{k} is in an earlier row too")
            seen.add(k)
        f.source(row["source"], f.at(where, "source"), sources)
        out.append((keys, f.text(row["note"], f.at(where, "note")), row, where))
    return out


@cache
def _data() -> DeviceNotes:
    return load_device_notes()


def nvidia_family(cc: str) -> tuple[str, str] | None:
    for ccs, family, note in _data().nvidia:
        if cc in ccs:
            return family, note
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
        note = next((n for targets, n in data.amd if gfx in targets), data.amd_default)
        if accel.effective_gfx and accel.gfx and accel.effective_gfx != accel.gfx:
            return f"{accel.gfx} overridden to {accel.effective_gfx} (HSA_OVERRIDE_GFX_VERSION): {note}"
        return f"{gfx}: {note}"
    if accel.vendor == "intel":
        note = next((n for families, n in data.intel if accel.family in families), "unknown Intel GPU family")
        return f"{accel.family or 'unknown'}: {note}"
    if accel.vendor == "apple":
        return data.apple_mps if accel.mps else data.apple_no_mps
    return ""


def known_compute_capabilities() -> tuple[str, ...]:
    """Every compute capability the device notes name (``--target cuda=`` accepts these)."""
    return tuple(cc for ccs, _, _ in _data().nvidia for cc in ccs)


def known_gfx_targets() -> tuple[str, ...]:
    """Every gfx target the device notes name (``--target rocm=`` accepts these and the build matrix's)."""
    return tuple(gfx for targets, _ in _data().amd for gfx in targets)


def known_intel_families() -> tuple[str, ...]:
    """Every Intel GPU family the device notes name, ``legacy`` (pre-Xe) included."""
    return tuple(family for families, _ in _data().intel for family in families)
