"""AMD PCI device id -> gfx, display name, integrated (data/devices.json: torchruntime's
``gpu_db.py``, pci.ids names and ``rocm_agent_enumerator``'s ``ISA_TO_ID`` table, each entry naming its source).

Only needed when neither KFD nor the ROCm runtime answered, and for names
and the APU flag, which KFD does not give. The file's shape is ``data/devices.schema.json``;
:func:`load_table` checks it with the standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Any

from wheelfit_probekit.datafile import DataFields, DataFileError

__all__ = ["DataFileError", "DeviceInfo", "fallback_name", "load_table", "lookup"]

_PACKAGED = "wheelfit_amd/data/devices.json"
_ID = re.compile(r"0x[0-9a-f]{4}")
_GFX = re.compile(r"gfx[0-9a-f]{3,4}")


@dataclass(frozen=True)
class DeviceInfo:
    device_id: int
    name: str
    gfx: str
    integrated: bool | None
    source: str


def load_table(text: str | bytes | None = None, name: str = _PACKAGED) -> dict[int, DeviceInfo]:
    """Read and check the packaged table, or ``text`` (a test's edited copy); :class:`DataFileError` if malformed.

    An id in two entries keeps the first, as the file is ordered exact ids before ranges.
    """
    if text is None:
        text = files(__package__).joinpath("data/devices.json").read_bytes()
    f = DataFields(name)
    top = f.obj(f.decode(text), "", ("sources", "devices"), ("about",))
    sources: dict[str, Any] = f.obj(top["sources"], "sources")
    for key, value in sources.items():
        f.text(value, f"sources.{key}")
    if not isinstance(top["devices"], list):
        raise f.fail("devices", f"expected a list, got {type(top['devices']).__name__}")
    table: dict[int, DeviceInfo] = {}
    for i, raw in enumerate(top["devices"]):
        where = f"devices[{i}]"
        common = ("name", "gfx", "integrated", "source")
        if isinstance(raw, dict) and "ids" in raw:
            entry = f.obj(raw, where, ("ids", *common), ("note",))
            if not isinstance(entry["ids"], list) or not entry["ids"]:
                raise f.fail(f"{where}.ids", "expected a non-empty list of ids such as '0x744c'")
            ids = [int(f.text(v, f"{where}.ids[{j}]", _ID), 16) for j, v in enumerate(entry["ids"])]
        else:
            if isinstance(raw, dict) and "first" not in raw and "last" not in raw:
                raise f.fail(where, "needs 'ids', or 'first' and 'last'")
            entry = f.obj(raw, where, ("first", "last", *common), ("note",))
            first = int(f.text(entry["first"], f"{where}.first", _ID), 16)
            last = int(f.text(entry["last"], f"{where}.last", _ID), 16)
            if first > last:
                raise f.fail(where, f"'first' {entry['first']} is above 'last' {entry['last']}")
            ids = list(range(first, last + 1))
        integrated = entry["integrated"]
        if integrated is not None and not isinstance(integrated, bool):
            raise f.fail(f"{where}.integrated", f"expected true, false or null, got {integrated!r}")
        source = f.text(entry["source"], f"{where}.source")
        if source not in sources:
            raise f.fail(f"{where}.source", f"{source!r} is not a key of 'sources'")
        if "note" in entry:
            f.text(entry["note"], f"{where}.note")
        info = (f.text(entry["name"], f"{where}.name"), f.text(entry["gfx"], f"{where}.gfx", _GFX))
        for dev in ids:
            table.setdefault(dev, DeviceInfo(dev, *info, integrated, sources[source]))
    return table


@lru_cache(maxsize=1)
def _table() -> dict[int, DeviceInfo]:
    return load_table()


def lookup(device_id: int) -> DeviceInfo | None:
    """The table entry for a PCI device id of vendor 0x1002."""
    return _table().get(device_id)


def fallback_name(device_id: int) -> str:
    return f"AMD GPU 1002:{device_id:04x}"
