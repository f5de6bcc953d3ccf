"""Short, sourced explanations of what a device means for PyTorch (``device_notes.json``).

The file's shape is ``data/device_notes.schema.json`` (the tests hold the packaged file to it; a test's edited copy
is held to it here); :func:`load_device_notes` checks what the schema cannot say, in one line naming file and key.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from ..report import Accelerator
from .jsonfile import DataFileError, conform, load_json

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
    """The packaged file, or ``text`` (a test's edited copy, held to the schema); ``DataFileError`` if malformed."""
    if text is None:
        doc: Any = load_json(files(__package__).joinpath("data/device_notes.json").read_bytes(), name)
    else:
        doc = conform(load_json(text, name), "kb/data/device_notes.schema.json", name, reads="1")
    for where, row in [*_rows(doc, "nvidia"), *_rows(doc, "amd"), *_rows(doc, "intel"), ("apple", doc["apple"])]:
        if row["source"] not in doc["sources"]:
            raise DataFileError(f"{name}: {where}.source: source {row['source']!r} is not a key of 'sources'")
    for vendor, key in (("nvidia", "cc"), ("amd", "gfx"), ("intel", "family")):  # a key in two rows hides the second
        seen: set[str] = set()
        for where, row in _rows(doc, vendor):
            for j, k in enumerate(row[key]):
                if k in seen:
                    raise DataFileError(f"{name}: {where}.{key}[{j}]: {k} is in an earlier row too")
                seen.add(k)
    return DeviceNotes(
        nvidia=tuple((tuple(row["cc"]), row["family"], row["note"]) for row in doc["nvidia"]),
        amd=tuple((tuple(row["gfx"]), row["note"]) for row in doc["amd"]),
        amd_default=doc["amd_default"],
        intel=tuple((tuple(row["family"]), row["note"]) for row in doc["intel"]),
        apple_mps=doc["apple"]["mps"],
        apple_no_mps=doc["apple"]["no_mps"],
    )


def _rows(doc: dict[str, Any], vendor: str) -> list[tuple[str, dict[str, Any]]]:
    return [(f"{vendor}[{i}]", row) for i, row in enumerate(doc[vendor])]


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
