"""Intel GPU device-ID table: PCI ID -> family, AOT target and marketing name.

The facts live in ``data/devices.json`` (each group cites its source) so they can
be reviewed and updated without touching code. Anything from Intel that the
table does not list is an older integrated GPU: family ``legacy``, not an XPU.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

__all__ = ["INTEL_VENDOR", "DeviceInfo", "lookup"]

INTEL_VENDOR = 0x8086
LEGACY = "legacy"


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


@lru_cache(maxsize=1)
def _table() -> _Table:
    raw = json.loads(resources.files(__package__).joinpath("data/devices.json").read_text(encoding="utf-8"))
    families: dict[str, dict[str, Any]] = raw["families"]
    by_id: dict[int, dict[str, Any]] = {}
    names: dict[int, str] = {}
    for group in raw["groups"]:
        if group["family"] not in families:
            raise ValueError(f"devices.json: group uses unknown family {group['family']!r}")
        for text in group["ids"]:
            dev = int(text, 16)
            if dev in by_id:
                raise ValueError(f"devices.json: device {text} is listed twice")
            by_id[dev] = group
        for text, name in group.get("names", {}).items():
            dev = int(text, 16)
            if by_id.get(dev) is not group:
                raise ValueError(f"devices.json: name for {text} outside its group's ids")
            names[dev] = name
    return _Table(families, by_id, names)


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
