"""Intel GPU device-ID table: PCI ID -> family, AOT target and marketing name.

The facts live in ``data/devices.json`` (each group cites its source) so they can
be reviewed and updated without touching code. Anything from Intel that the
table does not list is an older integrated GPU: family ``legacy``, not an XPU.
The file's shape is ``data/devices.schema.json``; :func:`load_table` checks it with the standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from wheelfit_probekit.datafile import DataFields, DataFileError

__all__ = ["INTEL_VENDOR", "DataFileError", "DeviceInfo", "load_table", "lookup"]

INTEL_VENDOR = 0x8086
LEGACY = "legacy"
_PACKAGED = "wheelfit_intel/data/devices.json"
_ID = re.compile(r"0x[0-9a-f]{4}")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9-]*")


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
    """Read and check the packaged table, or ``text`` (a test's edited copy); :class:`DataFileError` if malformed."""
    if text is None:
        text = resources.files(__package__).joinpath("data/devices.json").read_bytes()
    f = DataFields(name)
    raw = f.obj(f.decode(text), "", ("sources", "families", "groups"), ("about",))
    for key, value in f.obj(raw["sources"], "sources").items():
        f.text(value, f"sources.{key}")
    families: dict[str, dict[str, Any]] = f.obj(raw["families"], "families")
    for family, fam in families.items():
        where = f"families.{family}"
        f.obj(fam, where, ("xpu_capable", "integrated", "why"))
        for key in ("xpu_capable", "integrated"):
            if not isinstance(fam[key], bool):
                raise f.fail(f"{where}.{key}", f"expected true or false, got {fam[key]!r}")
        f.text(fam["why"], f"{where}.why")
    if LEGACY not in families:
        raise f.fail("families", f"missing {LEGACY!r}, the family of every unlisted ID")
    if not isinstance(raw["groups"], list):
        raise f.fail("groups", f"expected a list, got {type(raw['groups']).__name__}")
    by_id: dict[int, dict[str, Any]] = {}
    names: dict[int, str] = {}
    for i, group in enumerate(raw["groups"]):
        where = f"groups[{i}]"
        f.obj(group, where, ("family", "subfamily", "aot_target", "source", "ids"), ("names", "names_source"))
        if f.text(group["family"], f"{where}.family") not in families:
            raise f.fail(f"{where}.family", f"unknown family {group['family']!r} (not a key of 'families')")
        for key in ("subfamily", "aot_target"):
            if group[key] is not None:
                f.text(group[key], f"{where}.{key}", _TOKEN)
        f.text(group["source"], f"{where}.source")
        if not isinstance(group["ids"], list) or not group["ids"]:
            raise f.fail(f"{where}.ids", "expected a non-empty list of ids such as '0xe20b'")
        for j, text_id in enumerate(group["ids"]):
            dev = int(f.text(text_id, f"{where}.ids[{j}]", _ID), 16)
            if dev in by_id:
                raise f.fail(f"{where}.ids[{j}]", f"device {text_id} is listed twice")
            by_id[dev] = group
        for text_id, device_name in f.obj(group.get("names", {}), f"{where}.names").items():
            dev = int(f.text(text_id, f"{where}.names", _ID), 16)
            if by_id.get(dev) is not group:
                raise f.fail(f"{where}.names.{text_id}", "not one of the group's ids")
            names[dev] = f.text(device_name, f"{where}.names.{text_id}")
        if "names_source" in group:
            f.text(group["names_source"], f"{where}.names_source")
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
