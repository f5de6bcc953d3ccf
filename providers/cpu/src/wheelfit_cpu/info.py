"""What a platform's CPU source says, before archspec names the microarchitecture."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from wheelfit_probekit.datafile import DataFileError, load_table

__all__ = ["CpuInfo", "DataFileError", "load_data", "read_data"]


@dataclass(frozen=True)
class CpuInfo:
    """The partial description archspec's ``detected_info()`` would build, for any machine.

    ``vendor`` uses archspec's names (``GenuineIntel``, ``ARM``, ``Apple``); ``name``
    is a microarchitecture the source names directly (RISC-V ``uarch``, Apple ``mN``);
    ``os`` matters because archspec trusts the Apple brand string on Darwin only.
    """

    arch: str
    os: str
    vendor: str = "generic"
    model: str | None = None
    features: frozenset[str] = field(default_factory=frozenset)
    cpu_part: str = ""
    generation: int = 0
    name: str = ""


@cache
def load_data(name: str) -> dict[str, Any]:
    """A JSON table shipped in ``wheelfit_cpu/data`` (each cites its source), checked by :func:`read_data`."""
    return read_data(name)


def read_data(name: str, text: str | bytes | None = None) -> dict[str, Any]:
    """A packaged table, or ``text`` (a test's edited copy); :class:`DataFileError` if it is not JSON.

    Each table's shape is ``data/<name>.schema.json``, to which the tests hold it; nothing else is checked here.
    """
    if name not in _TABLES:
        raise DataFileError(f"wheelfit_cpu/data/{name}: not a data file of wheelfit_cpu")
    return load_table("wheelfit_cpu", name, lambda t: t.doc, text)


_TABLES = frozenset({"x86_64_levels.json", "darwin_arm_features.json"})
