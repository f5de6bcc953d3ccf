"""Driver version strings, and the one table of NVIDIA driver floors (``data/cuda_drivers.json``).

The table holds NVIDIA's Table 3 (a floor per toolkit release and update, per OS) and Table 2 (the
minor-version-compatibility floor per CUDA major). The provider reads it for driver -> highest CUDA, used only
when no NVML/libcuda answer gives the CUDA driver version directly; the planner reads it through
``toolkit_floor`` / ``minor_compat_floor``, so both say the same number and name the release it belongs to.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

__all__ = [
    "DriverFloor",
    "DriverTable",
    "DriverTableError",
    "cuda_from_int",
    "cuda_major_minor",
    "is_driver_version",
    "max_cuda_for_driver",
    "minor_compat_floor",
    "newest_update_floor",
    "parse_driver_table",
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
_COLUMNS = ("linux", "windows")
_CONFIDENCES = ("P", "M", "S", "U")
_ROW_KEYS = frozenset({"cuda", "release", "min_driver", "source", "confidence", "note"})
_TOOLKIT_RE = re.compile(r"^\d+\.\d+$")
_MAJOR_RE = re.compile(r"^\d+$")


class DriverTableError(ValueError):
    """A malformed ``cuda_drivers.json``, in one line naming the file and the row: a bad edit fails at load with
    that line, not as a KeyError in the middle of a plan."""


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


def parse_driver_table(text: str, name: str = _TABLE_FILE) -> DriverTable:
    """Check and parse the table's JSON text; a malformed table raises ``DriverTableError`` naming the row."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DriverTableError(f"{name}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise DriverTableError(f"{name}: the top level must be an object")
    sources = data.get("sources")
    if not isinstance(sources, dict) or not all(isinstance(v, str) for v in sources.values()):
        raise DriverTableError(f"{name}: 'sources' must map source keys to their text")
    compat = data.get("minor_compat")
    if not isinstance(compat, dict):
        raise DriverTableError(f"{name}: 'minor_compat' must be an object with 'linux' and 'windows' rows")
    toolkits: dict[str, tuple[DriverFloor, ...]] = {}
    majors: dict[str, Mapping[int, DriverFloor]] = {}
    for column in _COLUMNS:
        toolkits[column] = _toolkit_rows(data.get(column), column, sources, name)
        where_compat = f"minor_compat.{column}"
        rows = _rows(compat.get(column), where_compat, sources, name, _MAJOR_RE, "a CUDA major such as '12'")
        by_major: dict[int, DriverFloor] = {}
        for where, row in rows:
            if int(row.cuda) in by_major:
                raise DriverTableError(f"{name}: {where}: a second row for CUDA {row.cuda}")
            by_major[int(row.cuda)] = row
        majors[column] = by_major
    return DriverTable(toolkits, majors)


def _toolkit_rows(value: object, column: str, sources: dict[str, str], name: str) -> tuple[DriverFloor, ...]:
    """One OS column, checked to run newest first and never to rise within a minor, as Table 3 does: the GA and
    newest-update lookups rely on that order, and a mistyped number usually breaks it."""
    rows = _rows(value, column, sources, name, _TOOLKIT_RE, "a CUDA minor such as '12.6'")
    seen: set[str] = set()
    newest_known: dict[str, DriverFloor] = {}  # per minor, the oldest row read so far that has a number
    previous: DriverFloor | None = None
    for where, row in rows:
        if row.release in seen:
            raise DriverTableError(f"{name}: {where}: release {row.release!r} appears twice")
        seen.add(row.release)
        if previous is not None and version_key(row.cuda) > version_key(previous.cuda):
            raise DriverTableError(f"{name}: {where}: rows run newest first, but {row.cuda} follows {previous.cuda}")
        newer = newest_known.get(row.cuda)
        if row.min_driver is not None:
            if newer is not None and _driver_key(row) > _driver_key(newer):
                raise DriverTableError(
                    f"{name}: {where}: {row.min_driver} is above {newer.min_driver}, the floor of {newer.release}"
                )
            newest_known[row.cuda] = row
        previous = row
    return tuple(row for _, row in rows)


def _rows(
    value: object, column: str, sources: dict[str, str], name: str, cuda_re: re.Pattern[str], cuda_kind: str
) -> list[tuple[str, DriverFloor]]:
    if not isinstance(value, list) or not value:
        raise DriverTableError(f"{name}: '{column}' must be a non-empty list of rows")
    return [_row(item, f"{column}[{i}]", sources, name, cuda_re, cuda_kind) for i, item in enumerate(value)]


def _row(
    item: object, where: str, sources: dict[str, str], name: str, cuda_re: re.Pattern[str], cuda_kind: str
) -> tuple[str, DriverFloor]:
    if not isinstance(item, dict):
        raise DriverTableError(f"{name}: {where}: a row must be an object")
    label = item.get("release", item.get("cuda"))
    if isinstance(label, str):
        where = f"{where} ({label})"

    def bad(problem: str) -> DriverTableError:
        return DriverTableError(f"{name}: {where}: {problem}")

    unknown = sorted(set(item) - _ROW_KEYS)
    if unknown:
        raise bad(f"unknown field {unknown[0]!r}")
    missing = [key for key in ("cuda", "release", "min_driver", "source", "confidence") if key not in item]
    if missing:
        hint = " (null where no number is known)" if missing[0] == "min_driver" else ""
        raise bad(f"missing {missing[0]!r}{hint}")
    cuda, release, driver = item["cuda"], item["release"], item["min_driver"]
    source, confidence, note = item["source"], item["confidence"], item.get("note")
    if not isinstance(cuda, str) or not cuda_re.match(cuda):
        raise bad(f"'cuda' must be {cuda_kind}, got {cuda!r}")
    if not isinstance(release, str) or not release.strip():
        raise bad("'release' must name the release, such as '12.6 GA'")
    if driver is not None and not (isinstance(driver, str) and is_driver_version(driver)):
        raise bad(f"'min_driver' must be a driver version such as '560.28.03', or null, got {driver!r}")
    if not isinstance(source, str) or source not in sources:
        raise bad(f"'source' must be a key of 'sources', got {source!r}")
    if not isinstance(confidence, str) or confidence not in _CONFIDENCES:
        raise bad(f"'confidence' must be one of {', '.join(_CONFIDENCES)}, got {confidence!r}")
    if note is not None and not isinstance(note, str):
        raise bad("'note' must be text")
    return where, DriverFloor(cuda, release, driver, sources[source], confidence, note)


@cache
def _table() -> DriverTable:
    text = resources.files(__package__).joinpath(f"data/{_TABLE_FILE}").read_text(encoding="utf-8")
    return parse_driver_table(text)


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
