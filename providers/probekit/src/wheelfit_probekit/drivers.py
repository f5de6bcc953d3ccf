"""Driver version strings, and the one table of NVIDIA driver floors (``data/cuda_drivers.json``).

The table holds NVIDIA's Table 3 (a floor per toolkit release and update, per OS) and Table 2 (the
minor-version-compatibility floor per CUDA major). It lives in the shared toolkit, not in a detector, because two
readers need it: the NVIDIA detector for driver -> highest CUDA, used only when no NVML/libcuda answer gives the
CUDA driver version directly, and the planner through ``toolkit_floor`` / ``minor_compat_floor``, so both say the
same number and name the release it belongs to, and the planner reads it without loading a detector plugin.

The file's shape is ``data/cuda_drivers.schema.json``, to which the tests hold it; :func:`load_driver_table` only
checks what a schema cannot say (probekit's shared table loader).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from .datafile import DataFileError, Table, load_table

__all__ = [
    "DataFileError",
    "DriverFloor",
    "DriverTable",
    "cuda_from_int",
    "cuda_major_minor",
    "is_driver_version",
    "load_driver_table",
    "max_cuda_for_driver",
    "minor_compat_floor",
    "newest_update_floor",
    "toolkit_floor",
    "version_key",
]

_DRIVER_RE = re.compile(r"^\d{2,4}(?:\.\d{1,4}){1,2}$", re.ASCII)
#: Major and minor bounded: ``int`` refuses more than 4300 digits with a bare ValueError.
_CUDA_RE = re.compile(r"^\s*v?(\d{1,9})(?:\.(\d{1,9}))?(?:\.\d+)*\s*$", re.ASCII)


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


_TABLE_FILE = "cuda_drivers.json"
_PACKAGED = f"wheelfit_probekit/data/{_TABLE_FILE}"
_COLUMNS = ("linux", "windows")


@dataclass(frozen=True)
class DriverFloor:
    """The minimum driver of one NVIDIA release (Table 3 row) or of a CUDA major's minor-version compatibility
    (Table 2 row), with the release it belongs to, so a message can say which floor it quotes.

    ``min_driver`` is written as NVIDIA writes it (``560.28.03``), or None where no number exists: confidence P
    when NVIDIA prints N/A (Windows 13.x), S/U when the sources read give none. ``confidence`` is P primary,
    M measured, S secondary or U uncertain, as in the knowledge base; ``source`` is the source's text.
    """

    cuda: str
    release: str
    min_driver: str | None
    source: str
    confidence: str
    note: str | None = None

    def met_by(self, driver: str) -> bool | None:
        """Whether ``driver`` is at or above the floor, compared numerically (``570.124.06`` > ``570.26``); None
        when the floor is unknown or ``driver`` is not a driver version."""
        if self.min_driver is None or not is_driver_version(driver):
            return None
        return version_key(driver) >= version_key(self.min_driver)


@dataclass(frozen=True)
class DriverTable:
    """The parsed table: per OS (``linux``, ``windows``), toolkit rows newest first and Table 2 rows by major."""

    toolkits: Mapping[str, tuple[DriverFloor, ...]]
    minor_compat: Mapping[str, Mapping[int, DriverFloor]]

    def releases(self, cuda: str, windows: bool) -> tuple[DriverFloor, ...]:
        """The rows of one CUDA minor (``12.6``, ``12.6.3``), newest release first; empty if none or garbage."""
        wanted = cuda_major_minor(cuda)
        if wanted is None:
            return ()
        return tuple(r for r in self.toolkits[_column(windows)] if cuda_major_minor(r.cuda) == wanted)


def _column(windows: bool) -> str:
    return "windows" if windows else "linux"


def _driver_key(row: DriverFloor) -> tuple[int, ...]:
    return version_key(row.min_driver) if row.min_driver is not None else ()


def load_driver_table(text: str | bytes | None = None, name: str = _PACKAGED) -> DriverTable:
    """The packaged table, or ``text`` (a test's edited copy); :class:`DataFileError` naming the row if malformed."""
    return load_table("wheelfit_probekit", _TABLE_FILE, _build, text, name)


def _build(t: Table) -> DriverTable:
    toolkits: dict[str, tuple[DriverFloor, ...]] = {}
    majors: dict[str, Mapping[int, DriverFloor]] = {}
    for column in _COLUMNS:
        toolkits[column] = _toolkit_rows(t, column)
        by_major: dict[int, DriverFloor] = {}
        for where, row in _rows(t, t.doc["minor_compat"][column], f"minor_compat.{column}"):
            if int(row.cuda) in by_major:
                raise t.fail(where, f"a second row for CUDA {row.cuda}")
            by_major[int(row.cuda)] = row
        majors[column] = by_major
    return DriverTable(toolkits, majors)


def _toolkit_rows(t: Table, column: str) -> tuple[DriverFloor, ...]:
    """One OS column, checked to run newest first and never to rise within a minor, as Table 3 does: the GA and
    newest-update lookups rely on that order, and a mistyped number usually breaks it."""
    rows = _rows(t, t.doc[column], column)
    seen: set[str] = set()
    newest_known: dict[str, DriverFloor] = {}  # per minor, the oldest row read so far that has a number
    previous: DriverFloor | None = None
    for where, row in rows:
        if row.release in seen:
            raise t.fail(where, f"release {row.release!r} appears twice")
        seen.add(row.release)
        if previous is not None and version_key(row.cuda) > version_key(previous.cuda):
            raise t.fail(where, f"rows run newest first, but {row.cuda} follows {previous.cuda}")
        newer = newest_known.get(row.cuda)
        if row.min_driver is not None:
            if newer is not None and _driver_key(row) > _driver_key(newer):
                raise t.fail(where, f"{row.min_driver} is above {newer.min_driver}, the floor of {newer.release}")
            newest_known[row.cuda] = row
        previous = row
    return tuple(row for _, row in rows)


def _rows(t: Table, items: list[dict[str, Any]], column: str) -> list[tuple[str, DriverFloor]]:
    """Each row with where it is (``linux[20] (12.6 GA)``), its source key replaced by the source's text."""
    out: list[tuple[str, DriverFloor]] = []
    for i, item in enumerate(items):
        where = f"{column}[{i}] ({item['release']})"
        source = t.cited(item, where)
        row = DriverFloor(
            item["cuda"], item["release"], item["min_driver"], source, item["confidence"], item.get("note")
        )
        out.append((where, row))
    return out


@cache
def _table() -> DriverTable:
    return load_driver_table()


def max_cuda_for_driver(driver: str, windows_numbering: bool = False) -> str | None:
    """The highest CUDA whose minimum driver is <= ``driver``; ``None`` below the oldest row or for garbage.

    ``windows_numbering`` selects the Windows column: WSL2 reports the Windows
    driver's version (e.g. 581.42), which does not follow the Linux numbering.
    Never pass Jetson/L4T numbers (540.x): they are not desktop driver versions.
    Rows without a number (Windows 13.1+, 13.4) never count, so a Windows R580+ driver reads as 13.0.
    """
    if not is_driver_version(driver):
        return None
    have = version_key(driver)
    best: tuple[int, ...] | None = None
    answer: str | None = None
    for row in _table().toolkits[_column(windows_numbering)]:
        if row.min_driver is not None and version_key(row.min_driver) <= have:
            cuda_key = version_key(row.cuda)
            if best is None or cuda_key > best:
                best, answer = cuda_key, row.cuda
    return answer


def toolkit_floor(cuda: str, windows: bool) -> DriverFloor | None:
    """The floor that decides whether a build of CUDA ``cuda`` (``12.6``) runs natively: the lowest row of that
    minor, its GA (12.6 -> 560.28.03 "12.6 GA" on Linux, 560.76 on Windows). Every update of a minor reports the
    same CUDA version to the runtime, so the GA's driver already runs a build made with a later update.

    ``min_driver`` is None where no number is known (Windows 13.1+: NVIDIA prints N/A; ``minor_compat_floor``
    gives the R580+ floor); the result is None for a CUDA the table does not list."""
    rows = _table().releases(cuda, windows)
    if not rows:
        return None
    known = [r for r in reversed(rows) if r.min_driver is not None]  # oldest first: a tie goes to the GA
    return min(known, key=_driver_key) if known else rows[-1]


def newest_update_floor(cuda: str, windows: bool) -> DriverFloor | None:
    """The floor of the newest release of CUDA ``cuda`` the table lists (12.6 -> 560.35.05 "12.6 Update 3"), for
    messages that name what the newest toolkit of that minor asks; None for a CUDA the table does not list."""
    rows = _table().releases(cuda, windows)
    return rows[0] if rows else None


def minor_compat_floor(cuda_major: int, windows: bool) -> DriverFloor | None:
    """The lowest driver that runs builds of any minor of ``cuda_major`` through minor-version compatibility
    (NVIDIA Table 2; 13 -> 580.65.06 on Linux, R580+ on Windows); None for a major the table does not list."""
    return _table().minor_compat[_column(windows)].get(cuda_major)
