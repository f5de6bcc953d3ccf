"""AMD PCI device id -> gfx, display name, integrated (data/devices.json: torchruntime's
``gpu_db.py``, pci.ids names and ``rocm_agent_enumerator``'s ``ISA_TO_ID`` table, each entry naming its source).

Only needed when neither KFD nor the ROCm runtime answered, and for names
and the APU flag, which KFD does not give. The file's shape is ``data/devices.schema.json``, to which the tests hold
it; :func:`load_table` only checks what a schema cannot say (probekit's shared table loader).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from wheelfit_probekit.datafile import DataFileError, Table
from wheelfit_probekit.datafile import load_table as load_data_table

__all__ = ["DataFileError", "DeviceInfo", "fallback_name", "load_table", "lookup"]

_PACKAGED = "wheelfit_amd/data/devices.json"


@dataclass(frozen=True)
class DeviceInfo:
    device_id: int
    name: str
    gfx: str
    integrated: bool | None
    source: str


def load_table(text: str | bytes | None = None, name: str = _PACKAGED) -> dict[int, DeviceInfo]:
    """The packaged table, or ``text`` (a test's edited copy); :class:`DataFileError` if malformed.

    An id in two entries keeps the first, as the file is ordered exact ids before ranges.
    """
    return load_data_table("wheelfit_amd", "devices.json", _build, text, name)


def _build(t: Table) -> dict[int, DeviceInfo]:
    table: dict[int, DeviceInfo] = {}
    for i, entry in enumerate(t.doc["devices"]):
        where = f"devices[{i}]"
        source = t.cited(entry, where)
        for dev in t.ids(entry, where):
            table.setdefault(dev, DeviceInfo(dev, entry["name"], entry["gfx"], entry["integrated"], source))
    return table


@lru_cache(maxsize=1)
def _table() -> dict[int, DeviceInfo]:
    return load_table()


def lookup(device_id: int) -> DeviceInfo | None:
    """The table entry for a PCI device id of vendor 0x1002."""
    return _table().get(device_id)


def fallback_name(device_id: int) -> str:
    return f"AMD GPU 1002:{device_id:04x}"
