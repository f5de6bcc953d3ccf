"""PCI device ID -> chip, compute capability and marketing name (``data/pci_devices.json``).

The only way to know a GPU's architecture when no driver answers (driver absent,
nvidia-smi too old for ``compute_cap``). Exact IDs come first; an unknown ID that
falls inside a chip family's ID span is a guess and says so. The file's shape is ``data/pci_devices.schema.json``,
to which the tests hold it; :func:`load_table` only checks what a schema cannot say (probekit's shared table loader).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from wheelfit_probekit.datafile import DataFileError, Table
from wheelfit_probekit.datafile import load_table as load_data_table

__all__ = ["DataFileError", "DeviceInfo", "DeviceTable", "load_table", "lookup_device"]

_PACKAGED = "wheelfit_nvidia/data/pci_devices.json"


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
    """The packaged table, or ``text`` (a test's edited copy); :class:`DataFileError` if malformed."""
    return load_data_table("wheelfit_nvidia", "pci_devices.json", _build, text, name)


def _build(t: Table) -> DeviceTable:
    devices = {int(key, 16): (row["chip"], row["cc"], row["name"]) for key, row in t.doc["devices"].items()}
    spans: list[tuple[int, int, str, str | None]] = []
    for i, row in enumerate(t.doc["spans"]):
        ids = t.ids(row, f"spans[{i}]")
        spans.append((ids[0], ids[-1], row["family"], row["cc"]))
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
