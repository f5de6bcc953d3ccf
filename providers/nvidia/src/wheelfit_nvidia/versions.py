"""Driver version strings: validation, ordering, and the driver -> highest-CUDA table.

The table (``data/cuda_drivers.json``) is NVIDIA's toolkit -> minimum-driver list;
it is only used when no NVML/libcuda answer gives the CUDA driver version directly.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["cuda_from_int", "cuda_major_minor", "is_driver_version", "max_cuda_for_driver", "version_key"]

_DRIVER_RE = re.compile(r"^\d{2,4}(?:\.\d{1,4}){1,2}$")
_CUDA_RE = re.compile(r"^\s*v?(\d+)(?:\.(\d+))?(?:\.\d+)*\s*$")


def is_driver_version(text: str) -> bool:
    """``580.95.05`` / ``581.42`` / ``540.4.0``: two or three dotted numbers, nothing else."""
    return bool(_DRIVER_RE.match(text))


def cuda_major_minor(text: str) -> tuple[int, int] | None:
    """``12.8`` / ``12`` / ``12.8.1`` -> (major, minor), as ``packaging.Version`` reads the release (and as the
    reference NVIDIA provider reads ``NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION``)."""
    match = _CUDA_RE.match(text)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


def version_key(text: str) -> tuple[int, ...]:
    """``580.95.05`` -> ``(580, 95, 5)`` for ordering; ``580`` -> ``(580,)``."""
    return tuple(int(part) for part in text.split("."))


def cuda_from_int(value: int) -> str | None:
    """NVML/libcuda encoding ``1000*major + 10*minor`` (12040 -> ``12.4``); ``None`` when implausible."""
    if value < 1000:
        return None
    return f"{value // 1000}.{(value % 1000) // 10}"


@cache
def _table() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("data/cuda_drivers.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def max_cuda_for_driver(driver: str, windows_numbering: bool = False) -> str | None:
    """The highest CUDA whose minimum driver is <= ``driver``; ``None`` below the oldest row or for garbage.

    ``windows_numbering`` selects the Windows column: WSL2 reports the Windows
    driver's version (e.g. 581.42), which does not follow the Linux numbering.
    Never pass Jetson/L4T numbers (540.x): they are not desktop driver versions.
    """
    if not is_driver_version(driver):
        return None
    have = version_key(driver)
    rows = _table()["windows" if windows_numbering else "linux"]
    best: tuple[int, ...] | None = None
    answer: str | None = None
    for row in rows:
        if version_key(row["min_driver"]) <= have:
            cuda_key = version_key(row["cuda"])
            if best is None or cuda_key > best:
                best, answer = cuda_key, row["cuda"]
    return answer
