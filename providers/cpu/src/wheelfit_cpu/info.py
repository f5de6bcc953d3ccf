"""What a platform's CPU source says, before archspec names the microarchitecture."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["CpuInfo", "load_data"]


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
    """A JSON table shipped in ``wheelfit_cpu/data`` (each cites its source)."""
    text = resources.files("wheelfit_cpu").joinpath("data", name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data
