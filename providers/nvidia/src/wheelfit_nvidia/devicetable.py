"""PCI device ID -> chip, compute capability and marketing name (``data/pci_devices.json``).

The only way to know a GPU's architecture when no driver answers (driver absent,
nvidia-smi too old for ``compute_cap``). Exact IDs come first; an unknown ID that
falls inside a chip family's ID span is a guess and says so. The file's shape is
``data/pci_devices.schema.json``; :func:`load_table` checks it with the standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from wheelfit_probekit.datafile import DataFields, DataFileError

__all__ = ["DataFileError", "DeviceInfo", "DeviceTable", "load_table", "lookup_device"]

_PACKAGED = "wheelfit_nvidia/data/pci_devices.json"
_ID = re.compile(r"[0-9a-f]{4}")
_CC = re.compile(r"\d+\.\d+")


@dataclass(frozen=True)
class DeviceInfo:
    device_id: int
    chip: str | None
    compute_capability: str | None
    #: Marketing name without the vendor (``GeForce RTX 4090``); ``None`` for a span guess.
    name: str | None
    #: True when the ID is not in the table and only its family span matched.
    guess: bool

    def describe(self) -> str:
        cc = self.compute_capability or "unknown"
        if self.guess:
            return f"10de:{self.device_id:04x} not in the ID table; guessed {self.chip} (cc {cc}) from its ID span"
        return f"10de:{self.device_id:04x} is {self.chip} {self.name} (cc {cc}, ID table)"


@dataclass(frozen=True)
class DeviceTable:
    """The file, read: exact IDs, and family spans as ``(first, last, family, cc)``, narrowest first."""

    devices: dict[int, tuple[str, str, str]]  # id -> (chip, cc, name)
    spans: tuple[tuple[int, int, str, str | None], ...]


def load_table(text: str | bytes | None = None, name: str = _PACKAGED) -> DeviceTable:
    """Read and check the packaged table, or ``text`` (a test's edited copy); :class:`DataFileError` if malformed."""
    if text is None:
        text = resources.files(__package__).joinpath("data/pci_devices.json").read_bytes()
    f = DataFields(name)
    top = f.obj(f.decode(text), "", ("sources", "devices", "spans"), ("about",))
    for key, value in f.obj(top["sources"], "sources").items():
        f.text(value, f"sources.{key}")
    devices: dict[int, tuple[str, str, str]] = {}
    for key, raw in f.obj(top["devices"], "devices").items():
        where = f"devices.{key}"
        if not _ID.fullmatch(key):
            raise f.fail(where, "device IDs are four lowercase hex digits, such as 2684")
        row = f.obj(raw, where, ("chip", "cc", "name", "source"))
        f.text(row["source"], f"{where}.source")
        devices[int(key, 16)] = (
            f.text(row["chip"], f"{where}.chip"),
            f.text(row["cc"], f"{where}.cc", _CC),
            f.text(row["name"], f"{where}.name"),
        )
    spans: list[tuple[int, int, str, str | None]] = []
    if not isinstance(top["spans"], list):
        raise f.fail("spans", f"expected a list, got {type(top['spans']).__name__}")
    for i, raw in enumerate(top["spans"]):
        where = f"spans[{i}]"
        row = f.obj(raw, where, ("family", "first", "last", "cc", "source"), ("note",))
        first = int(f.text(row["first"], f"{where}.first", _ID), 16)
        last = int(f.text(row["last"], f"{where}.last", _ID), 16)
        if first > last:
            raise f.fail(where, f"'first' {row['first']} is above 'last' {row['last']}")
        cc = None if row["cc"] is None else f.text(row["cc"], f"{where}.cc", _CC)
        f.text(row["source"], f"{where}.source")
        if "note" in row:
            f.text(row["note"], f"{where}.note")
        spans.append((first, last, f.text(row["family"], f"{where}.family"), cc))
    spans.sort(key=lambda s: s[1] - s[0])  # stable: of two equally wide spans the earlier row still wins
    return DeviceTable(devices, tuple(spans))


@cache
def _table() -> DeviceTable:
    return load_table()


def lookup_device(device_id: int) -> DeviceInfo | None:
    """Exact ID first, then the narrowest family span containing the ID (spans overlap); ``None`` if neither."""
    table = _table()
    exact = table.devices.get(device_id)
    if exact is not None:
        chip, cc, name = exact
        return DeviceInfo(device_id, chip, cc, name, guess=False)
    best = next((s for s in table.spans if s[0] <= device_id <= s[1]), None)
    if best is None:
        return None
    return DeviceInfo(device_id, best[2], best[3], None, guess=True)
