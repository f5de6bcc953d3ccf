"""AMD PCI device id -> gfx, display name, integrated (data/devices.json: torchruntime's
``gpu_db.py``, pci.ids names and ``rocm_agent_enumerator``'s ``ISA_TO_ID`` table, each entry naming its source).

Only needed when neither KFD nor the ROCm runtime answered, and for names
and the APU flag, which KFD does not give.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Any

__all__ = ["DeviceInfo", "fallback_name", "lookup"]


@dataclass(frozen=True)
class DeviceInfo:
    device_id: int
    name: str
    gfx: str
    integrated: bool | None
    source: str


@lru_cache(maxsize=1)
def _table() -> dict[int, DeviceInfo]:
    data: dict[str, Any] = json.loads(files(__package__).joinpath("data/devices.json").read_text("utf-8"))
    sources: dict[str, str] = data["sources"]
    table: dict[int, DeviceInfo] = {}
    for entry in data["devices"]:
        if "ids" in entry:
            ids = [int(i, 16) for i in entry["ids"]]
        else:
            ids = list(range(int(entry["first"], 16), int(entry["last"], 16) + 1))
        for dev in ids:
            table.setdefault(
                dev, DeviceInfo(dev, entry["name"], entry["gfx"], entry["integrated"], sources[entry["source"]])
            )
    return table


def lookup(device_id: int) -> DeviceInfo | None:
    """The table entry for a PCI device id of vendor 0x1002."""
    return _table().get(device_id)


def fallback_name(device_id: int) -> str:
    return f"AMD GPU 1002:{device_id:04x}"
