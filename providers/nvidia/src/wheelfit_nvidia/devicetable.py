"""PCI device ID -> chip, compute capability and marketing name (``data/pci_devices.json``).

The only way to know a GPU's architecture when no driver answers (driver absent,
nvidia-smi too old for ``compute_cap``). Exact IDs come first; an unknown ID that
falls inside a chip family's ID span is a guess and says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["DeviceInfo", "lookup_device"]


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


@cache
def _table() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("data/pci_devices.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def lookup_device(device_id: int) -> DeviceInfo | None:
    """Exact ID first, then the narrowest family span containing the ID (spans overlap); ``None`` if neither."""
    table = _table()
    exact = table["devices"].get(f"{device_id:04x}")
    if exact is not None:
        return DeviceInfo(device_id, exact["chip"], exact["cc"], exact["name"], guess=False)
    spans = [s for s in table["spans"] if int(s["first"], 16) <= device_id <= int(s["last"], 16)]
    if not spans:
        return None
    best = min(spans, key=lambda s: int(s["last"], 16) - int(s["first"], 16))
    return DeviceInfo(device_id, best["family"], best["cc"], None, guess=True)
