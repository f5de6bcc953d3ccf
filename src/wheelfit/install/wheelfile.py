"""Reading a downloaded wheel before any installer sees it: archive safety checks and its dependencies.

The checks follow pip (``utils/unpacking.py::is_within_directory``), pypa/installer #317 and uv's member-name
validation): a member that could land outside the install directories rejects the whole wheel, so nothing of it
is ever installed.
"""

from __future__ import annotations

import contextlib
import posixpath
import re
import zipfile
from dataclasses import dataclass
from email.parser import BytesHeaderParser
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from ..errors import first_line
from ..fetch.cache import memo_read, memo_write
from .errors import UnsafeWheelError

__all__ = ["WheelInfo", "checked_wheel", "member_problem", "read_wheel"]

#: Above this ratio of declared uncompressed to compressed size a member is treated as a zip bomb.
MAX_RATIO = 200
#: Real torch CUDA wheels unpack to ~6 GB; anything larger than this is refused.
MAX_UNPACKED = 32 * 1024**3


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class WheelInfo:
    name: str
    version: Version
    requires: tuple[Requirement, ...]


def member_problem(name: str) -> str | None:
    """Why an archive member name is unsafe, or None. Pure; the table test drives it."""
    if not name:
        return "an empty member name"
    if _CONTROL.search(name):
        return f"member {name!r} has a control character"
    if "\\" in name:
        return f"member {name!r} has a backslash"
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return f"member {name!r} is an absolute path"
    parts = name.split("/")
    if ".." in parts:
        return f"member {name!r} climbs out of the install directory"
    normal = posixpath.normpath(name)
    if normal.startswith(("..", "/")):
        return f"member {name!r} climbs out of the install directory"
    return None


def checked_wheel(path: Path) -> WheelInfo:
    """:func:`read_wheel`, remembered beside ``path`` while the file is unchanged (its cache fingerprint).

    A torch wheel has ~12,000 members; checking them again on every warm install costs a third of a second.
    """
    memo = path.with_name(f".{path.name}.checked.json")
    data = memo_read(memo, path)
    if data is not None:
        with contextlib.suppress(KeyError, TypeError, ValueError, InvalidRequirement):  # unreadable: check again
            return WheelInfo(data["name"], Version(data["version"]), tuple(Requirement(r) for r in data["requires"]))
    info = read_wheel(path)
    record = {"name": info.name, "version": str(info.version), "requires": [str(r) for r in info.requires]}
    memo_write(memo, path, record)
    return info


def read_wheel(path: Path) -> WheelInfo:
    """Check ``path``'s archive and return its name, version and dependencies; raise UnsafeWheelError if unsafe."""
    try:
        name, version, _build, _tags = parse_wheel_filename(path.name)
    except InvalidWheelFilename as exc:
        raise UnsafeWheelError(f"{path.name} is not a valid wheel file name: {exc}") from exc
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            metadata = _check_members(path.name, name, version, infos)
            raw = archive.read(metadata)
    except zipfile.BadZipFile as exc:
        raise UnsafeWheelError(
            f"{path.name} is not a readable zip archive ({exc}); delete it and download again"
        ) from exc
    headers = BytesHeaderParser().parsebytes(raw)
    meta_name = headers.get("Name", "")
    if canonicalize_name(meta_name) != name or Version(headers.get("Version", "0")) != version:
        raise UnsafeWheelError(
            f"{path.name}: METADATA says {meta_name} {headers.get('Version')}, not what the file name says"
        )
    requires: list[Requirement] = []
    for line in headers.get_all("Requires-Dist") or ():
        try:
            requires.append(Requirement(line))
        except InvalidRequirement as exc:
            raise UnsafeWheelError(f"{path.name}: cannot read Requires-Dist {line!r}: {first_line(exc)}") from exc
    return WheelInfo(name, version, tuple(requires))


def _check_members(filename: str, name: str, version: Version, infos: list[zipfile.ZipInfo]) -> str:
    seen: set[str] = set()
    dist_infos: set[str] = set()
    total = 0
    for info in infos:
        problem = member_problem(info.filename)
        if problem:
            raise UnsafeWheelError(f"{filename}: {problem}; refusing to install it")
        if info.filename in seen:
            raise UnsafeWheelError(f"{filename}: member {info.filename!r} appears twice; refusing to install it")
        seen.add(info.filename)
        total += info.file_size
        if info.compress_size and info.file_size > MAX_RATIO * info.compress_size and info.file_size > 1024**2:
            raise UnsafeWheelError(f"{filename}: member {info.filename!r} expands {MAX_RATIO}x or more (zip bomb?)")
        top = info.filename.split("/", 1)[0]
        if top.endswith(".dist-info"):
            dist_infos.add(top)
    if total > MAX_UNPACKED:
        raise UnsafeWheelError(f"{filename}: unpacks to {total} bytes, more than any real wheel; refusing it")
    if len(dist_infos) != 1:
        raise UnsafeWheelError(f"{filename}: has {len(dist_infos)} .dist-info directories, a wheel has exactly one")
    dist_info = dist_infos.pop()
    stem = dist_info[: -len(".dist-info")]
    dist_name, _, dist_version = stem.rpartition("-")
    if canonicalize_name(dist_name) != name or Version(dist_version) != version:
        raise UnsafeWheelError(f"{filename}: its {dist_info} does not match the file name")
    metadata = f"{dist_info}/METADATA"
    if metadata not in seen:
        raise UnsafeWheelError(f"{filename}: has no {metadata}")
    return metadata
