"""Intel GPU device-ID table: PCI ID -> family, AOT target and marketing name.

The facts live in ``data/devices.json`` (each group cites its source) so they can
be reviewed and updated without touching code. Anything from Intel that the
table does not list is an older integrated GPU: family ``legacy``, not an XPU.
The file's shape is ``data/devices.schema.json``, to which the tests hold it; :func:`load_table` only checks what a
schema cannot say (probekit's shared table loader).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from wheelfit_probekit.datafile import DataFileError, Table
from wheelfit_probekit.datafile import load_table as load_data_table

__all__ = ["INTEL_VENDOR", "DataFileError", "DeviceInfo", "load_table", "lookup"]

INTEL_VENDOR = 0x8086
LEGACY = "legacy"
_PACKAGED = "wheelfit_intel/data/devices.json"


@dataclass(frozen=True)
class DeviceInfo:
    """What the table knows about one PCI device ID."""

    device: int
    family: str
    xpu_capable: bool
    integrated: bool
    #: Marketing name, or ``Intel GPU 8086:xxxx`` when the table has none.
    name: str
    #: PyTorch/ocloc AOT target name covering this ID (``dg2``, ``mtl-h``); None when not an AOT target or unknown.
    aot_target: str | None
    #: Finer platform split (``dg2-g10``, ``arl-u``); None for legacy.
    subfamily: str | None
    #: Whether the ID is in the table (False: the ``legacy`` fallback).
    known: bool

    @property
    def pci_id(self) -> str:
        return f"{INTEL_VENDOR:04x}:{self.device:04x}"


@dataclass(frozen=True)
class _Table:
    families: dict[str, dict[str, Any]]
    by_id: dict[int, dict[str, Any]]
    names: dict[int, str]


def load_table(text: str | bytes | None = None, name: str = _PACKAGED) -> _Table:
    """The packaged table, or ``text`` (a test's edited copy); :class:`DataFileError` if malformed."""
    return load_data_table("wheelfit_intel", "devices.json", _build, text, name)


def _build(t: Table) -> _Table:
    families: dict[str, dict[str, Any]] = t.doc["families"]
    by_id: dict[int, dict[str, Any]] = {}
    names: dict[int, str] = {}
    for i, group in enumerate(t.doc["groups"]):
        where = f"groups[{i}]"
        if group["family"] not in families:
            raise t.fail(f"{where}.family", f"unknown family {group['family']!r} (not a key of 'families')")
        for j, dev in enumerate(t.ids(group, where)):
            if dev in by_id:
                raise t.fail(f"{where}.ids[{j}]", f"device {group['ids'][j]} is listed twice")
            by_id[dev] = group
        for text_id, device_name in group.get("names", {}).items():
            dev = int(text_id, 16)
            if by_id.get(dev) is not group:
                raise t.fail(f"{where}.names.{text_id}", "not one of the group's ids")
            names[dev] = device_name
    return _Table(families, by_id, names)


@lru_cache(maxsize=1)
def _table() -> _Table:
    return load_table()


def lookup(device: int) -> DeviceInfo:
    """Classify an Intel PCI device ID; unknown IDs fall back to ``legacy``."""
    table = _table()
    group = table.by_id.get(device)
    family = group["family"] if group else LEGACY
    fam = table.families[family]
    return DeviceInfo(
        device=device,
        family=family,
        xpu_capable=bool(fam["xpu_capable"]),
        integrated=bool(fam["integrated"]),
        name=table.names.get(device, f"Intel GPU {INTEL_VENDOR:04x}:{device:04x}"),
        aot_target=group["aot_target"] if group else None,
        subfamily=group["subfamily"] if group else None,
        known=group is not None,
    )
