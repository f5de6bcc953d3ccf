"""What a platform's CPU source says, before archspec names the microarchitecture."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from wheelfit_probekit.datafile import DataFields, DataFileError

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
    """Read and check a packaged table, or ``text`` (a test's edited copy); :class:`DataFileError` if malformed.

    Each table's shape is ``data/<name>.schema.json``; this checks it with the standard library only.
    """
    shown = f"wheelfit_cpu/data/{name}"
    check = _CHECKS.get(name)
    if check is None:
        raise DataFileError(f"{shown}: not a data file of wheelfit_cpu")
    if text is None:
        text = resources.files("wheelfit_cpu").joinpath("data", name).read_bytes()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFileError(f"{shown}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:  # not UTF-8, nested too deeply
        raise DataFileError(f"{shown}: not valid JSON: {exc}") from None
    return check(_Fields(shown), data)


def _check_levels(f: _Fields, data: object) -> dict[str, Any]:
    top = f.obj(data, "", ("source", "levels", "alternatives"))
    f.text(top["source"], "source")
    levels = f.obj(top["levels"], "levels", ("v2", "v3", "v4"))
    for name, flags in levels.items():
        f.flags(flags, f"levels.{name}")
    alternatives = f.obj(top["alternatives"], "alternatives")  # flag -> other spellings, and a "source"
    f.text(alternatives.get("source"), "alternatives.source")
    for flag, alts in alternatives.items():
        if flag != "source":
            f.text(flag, "alternatives", _FLAG)
            f.flags(alts, f"alternatives.{flag}")
    return top


def _check_darwin(f: _Fields, data: object) -> dict[str, Any]:
    top = f.obj(data, "", ("source", "features"))
    f.text(top["source"], "source")
    for key, flags in f.obj(top["features"], "features").items():
        f.text(key, "features", _SYSCTL)
        f.flags(flags, f"features.{key}")
    return top


_FLAG = re.compile(r"[a-z0-9_]+")  # a Linux /proc/cpuinfo flag
_SYSCTL = re.compile(r"hw\.optional\.[A-Za-z0-9_.]+")
_CHECKS: dict[str, Callable[[_Fields, object], dict[str, Any]]] = {
    "x86_64_levels.json": _check_levels,
    "darwin_arm_features.json": _check_darwin,
}


class _Fields(DataFields):
    """The shared checks, and one more for feature flag lists."""

    def flags(self, value: object, where: str) -> None:
        if not isinstance(value, list) or not value:
            raise self.fail(where, "expected a non-empty list of flag names")
        for i, flag in enumerate(value):
            self.text(flag, f"{where}[{i}]", _FLAG)
