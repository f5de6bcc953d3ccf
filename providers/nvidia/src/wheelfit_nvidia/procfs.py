"""``/proc/driver/nvidia/gpus/<bus>/information`` and PCI bus-id spelling.

Bus ids come in several spellings (sysfs ``0000:01:00.0``, nvidia-smi
``00000000:01:00.0`` in upper case); every source is normalised to one so the
sources can be matched device by device.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wheelfit_probekit import split_kv

__all__ = ["GpuInformation", "normalize_bus_id", "parse_information"]

#: ``/dev/nvidiaN``: a Linux minor number has 20 bits (``MINORBITS``, include/linux/kdev_t.h).
_MINOR_RE = re.compile(r"[0-9]{1,7}")
_BUS_RE = re.compile(r"^([0-9a-fA-F]{1,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")


def normalize_bus_id(text: str) -> str | None:
    """``00000000:3B:00.0`` -> ``0000:3b:00.0``; ``None`` for anything that is not a bus id."""
    m = _BUS_RE.match(text.strip())
    if m is None:
        return None
    domain, bus, dev, fn = m.groups()
    return f"{int(domain, 16):04x}:{bus.lower()}:{dev.lower()}.{fn}"


@dataclass(frozen=True)
class GpuInformation:
    model: str | None
    uuid: str | None
    bus_id: str | None
    #: ``Device Minor``: the N of ``/dev/nvidiaN``.
    minor: int | None


def parse_information(text: str) -> GpuInformation:
    """Parse the ``key:\\t\\t value`` lines; missing or malformed keys are ``None``."""
    kv = split_kv(text)
    minor_text = kv.get("Device Minor", "")
    uuid = kv.get("GPU UUID") or None
    return GpuInformation(
        model=kv.get("Model") or None,
        uuid=uuid if uuid and uuid.startswith("GPU-") else None,
        bus_id=normalize_bus_id(kv.get("Bus Location", "")),
        minor=int(minor_text) if _MINOR_RE.fullmatch(minor_text) and int(minor_text) < 1 << 20 else None,
    )
