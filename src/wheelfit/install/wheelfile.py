"""Reading a downloaded wheel before any installer sees it: archive safety checks and its dependencies.

The checks follow pip (``utils/unpacking.py::is_within_directory``), pypa/installer #317 and uv's member-name
validation): a member that could land outside the install directories rejects the whole wheel, so nothing of it
is ever installed. The archive is read raw (:mod:`.zipcheck`) so that every installer sees the same members, and
every member's real bytes are checked against RECORD (:mod:`.record`) in one parallel streaming pass.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from email.parser import BytesHeaderParser
from pathlib import Path
from typing import BinaryIO

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from ..errors import first_line
from ..fetch.cache import memo_read, memo_write
from .errors import UnsafeWheelError
from .record import RecordEntry, check_entry_points, parse_record, script_problem, unrecorded_ok
from .zipcheck import Member, read_member, scan, stream_member

__all__ = ["WheelArchive", "WheelInfo", "checked_wheel", "member_problem", "open_wheel", "read_wheel"]

#: Above this ratio of declared uncompressed to compressed size a member is treated as a zip bomb.
MAX_RATIO = 200
#: Real torch CUDA wheels unpack to ~6 GB; anything larger than this is refused.
MAX_UNPACKED = 32 * 1024**3
#: METADATA, RECORD and entry_points.txt are read whole; a torch RECORD is ~1.5 MB.
MAX_SMALL = 64 * 1024**2
#: What the memo says it checked: memos written by an older, weaker check are not trusted.
MEMO_FORMAT = 3
#: The ``<name>-<version>.data/<scheme>/`` directories a wheel may have (the binary distribution format spec:
#: the install scheme's keys); another would be placed where each installer guesses, or not at all.
DATA_SCHEMES = ("purelib", "platlib", "headers", "scripts", "data")

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


def checked_wheel(path: Path, opened: Callable[[], None] | None = None) -> WheelInfo:
    """:func:`read_wheel`, remembered beside ``path`` while the file is unchanged (its cache fingerprint).

    A torch wheel has ~12,000 members and 6 GB to hash; checking them again on every warm install would cost
    seconds. ``opened`` is called when the archive has passed every check but the member hashes (the long part:
    inflating libtorch alone takes a second), so that the caller can overlap work with them.
    """
    memo = path.with_name(f".{path.name}.checked.json")
    data = memo_read(memo, path)
    if data is not None and data.get("format") == MEMO_FORMAT:
        with contextlib.suppress(KeyError, TypeError, ValueError, InvalidRequirement):  # unreadable: check again
            return WheelInfo(data["name"], Version(data["version"]), tuple(Requirement(r) for r in data["requires"]))
    archive = open_wheel(path)
    if opened is not None:
        opened()
    archive.verify()
    info = archive.info
    record = {
        "format": MEMO_FORMAT,
        "name": info.name,
        "version": str(info.version),
        "requires": [str(r) for r in info.requires],
    }
    memo_write(memo, path, record)
    return info


@dataclass(frozen=True)
class WheelArchive:
    """A wheel whose archive, names, sizes, layout, WHEEL, METADATA and RECORD listing have been checked; what is
    left is :meth:`verify`: every member's bytes against its RECORD hash."""

    path: Path
    info: WheelInfo
    files: tuple[Member, ...]
    record: dict[str, RecordEntry | None]

    def verify(self, workers: int | None = None) -> None:
        """Stream and hash every member (raise UnsafeWheelError on the first that does not match RECORD)."""
        _hash_all(self.path, self.files, self.record, workers)


def read_wheel(path: Path, workers: int | None = None) -> WheelInfo:
    """Check ``path``'s archive and RECORD; return its name, version and dependencies, or raise UnsafeWheelError."""
    archive = open_wheel(path)
    archive.verify(workers)
    return archive.info


def open_wheel(path: Path) -> WheelArchive:
    """Every check of :func:`read_wheel` but the member hashes (a fraction of the time); raise UnsafeWheelError."""
    try:
        name, version, _build, _tags = parse_wheel_filename(path.name)
    except ValueError as exc:  # InvalidWheelFilename, InvalidVersion, or int()'s 4300-digit limit (nab#652)
        raise UnsafeWheelError(f"{path.name} is not a valid wheel file name: {exc}") from exc
    try:
        with path.open("rb") as f:
            members = scan(f, os.fstat(f.fileno()).st_size, path.name)
            by_name = {m.name: m for m in members}
            dist_info = _check_members(path.name, name, version, members)
            raw = read_member(f, by_name[f"{dist_info}/METADATA"], path.name, MAX_SMALL)
            wheel_member = by_name.get(f"{dist_info}/WHEEL")
            if wheel_member is None:
                raise UnsafeWheelError(f"{path.name}: has no {dist_info}/WHEEL; refusing to install it")
            _check_wheel_version(read_member(f, wheel_member, path.name, MAX_SMALL), path.name)
            record_member = by_name.get(f"{dist_info}/RECORD")
            if record_member is None:
                raise UnsafeWheelError(f"{path.name}: has no {dist_info}/RECORD; refusing to install it")
            record = parse_record(read_member(f, record_member, path.name, MAX_SMALL), dist_info, path.name)
            entry_points = by_name.get(f"{dist_info}/entry_points.txt")
            if entry_points is not None:
                check_entry_points(read_member(f, entry_points, path.name, MAX_SMALL), path.name)
    except OSError as exc:
        raise UnsafeWheelError(
            f"{path.name}: cannot be read ({first_line(exc)}); delete it and download again"
        ) from exc
    info = _metadata(path.name, name, version, raw)
    return WheelArchive(path, info, _check_listing(path.name, members, record, dist_info), record)


def _check_wheel_version(raw: bytes, filename: str) -> None:
    """The wheel format is 1.x: an installer "must fail if Wheel-Version has a greater major version than the
    version it supports" (PEP 427, the binary distribution format spec), since a 2.x layout may mean files land
    elsewhere."""
    value = str(BytesHeaderParser().parsebytes(raw).get("Wheel-Version", "")).strip()
    major, dot, _minor = value.partition(".")
    if not (dot and major.isascii() and major.isdigit() and _minor.isascii() and _minor.isdigit()):
        raise UnsafeWheelError(f"{filename}: its WHEEL file has no readable Wheel-Version; refusing to install it")
    if major.lstrip("0") != "1":  # compared as text: int() of thousands of digits raises
        raise UnsafeWheelError(
            f"{filename}: is wheel format {value}; wheelfit and its installers read format 1.x; refusing to install it"
        )


def _metadata(filename: str, name: str, version: Version, raw: bytes) -> WheelInfo:
    headers = BytesHeaderParser().parsebytes(raw)
    meta_name = str(headers.get("Name", ""))
    try:
        meta_version = Version(str(headers.get("Version", "0")))
    except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
        meta_version = None
    if canonicalize_name(meta_name) != name or meta_version != version:
        raise UnsafeWheelError(
            f"{filename}: METADATA says {meta_name} {headers.get('Version')}, not what the file name says"
        )
    requires: list[Requirement] = []
    for line in headers.get_all("Requires-Dist") or ():
        try:
            requires.append(Requirement(str(line)))
        except InvalidRequirement as exc:
            raise UnsafeWheelError(f"{filename}: cannot read Requires-Dist {line!r}: {first_line(exc)}") from exc
    return WheelInfo(name, version, tuple(requires))


def _check_members(filename: str, name: str, version: Version, members: Sequence[Member]) -> str:
    """Names, sizes and layout of the members; return the one ``.dist-info`` directory."""
    dist_infos: set[str] = set()
    total = 0
    for member in members:
        problem = member_problem(member.name)
        if problem:
            raise UnsafeWheelError(f"{filename}: {problem}; refusing to install it")
        total += member.file_size
        if member.file_size > 1024**2 and member.file_size > MAX_RATIO * member.compress_size:
            raise UnsafeWheelError(f"{filename}: member {member.name!r} expands {MAX_RATIO}x or more (zip bomb?)")
        top, _, rest = member.name.partition("/")
        if top.endswith(".dist-info"):
            dist_infos.add(top)
        if top.endswith(".data") and rest and not member.is_dir and rest.partition("/")[0] not in DATA_SCHEMES:
            raise UnsafeWheelError(
                f"{filename}: {top}/{rest.partition('/')[0]}/ is not an install scheme ({', '.join(DATA_SCHEMES)}); "
                "refusing to install it"
            )
        if top.endswith(".data") and rest.startswith("scripts/") and not member.is_dir:
            script = rest[len("scripts/") :]
            problem = script_problem(script)
            if problem:
                raise UnsafeWheelError(f"{filename}: {top}/scripts/ has {problem}; refusing to install it")
    if total > MAX_UNPACKED:
        raise UnsafeWheelError(f"{filename}: unpacks to {total} bytes, more than any real wheel; refusing it")
    if len(dist_infos) != 1:
        raise UnsafeWheelError(f"{filename}: has {len(dist_infos)} .dist-info directories, a wheel has exactly one")
    dist_info = dist_infos.pop()
    dist_name, _, dist_version = dist_info[: -len(".dist-info")].rpartition("-")
    try:
        matches = canonicalize_name(dist_name) == name and Version(dist_version) == version
    except ValueError:  # InvalidVersion, or a release number past int()'s 4300-digit limit
        matches = False
    if not matches:
        raise UnsafeWheelError(f"{filename}: its {dist_info} does not match the file name")
    if f"{dist_info}/METADATA" not in {m.name for m in members}:
        raise UnsafeWheelError(f"{filename}: has no {dist_info}/METADATA")
    return dist_info


def _check_listing(
    filename: str, members: Sequence[Member], record: dict[str, RecordEntry | None], dist_info: str
) -> tuple[Member, ...]:
    """Every file member is in RECORD with its declared size, and RECORD names nothing else; the file members."""
    files = [m for m in members if not m.is_dir]
    for member in files:
        if member.name not in record:
            if unrecorded_ok(member.name, dist_info):
                continue
            raise UnsafeWheelError(f"{filename}: member {member.name!r} is not in its RECORD; refusing to install it")
        entry = record[member.name]
        if entry is not None and entry.size != member.file_size:
            raise UnsafeWheelError(
                f"{filename}: member {member.name!r} is {member.file_size} bytes, RECORD says {entry.size}; "
                "refusing to install it"
            )
    present = {m.name for m in files}
    for recorded in record:
        if recorded not in present:
            raise UnsafeWheelError(
                f"{filename}: RECORD lists {recorded!r}, which the wheel lacks; refusing to install it"
            )
    return tuple(files)


def _hash_all(path: Path, files: Sequence[Member], record: dict[str, RecordEntry | None], workers: int | None) -> None:
    """Stream and hash every member on a thread pool (zlib and hashlib release the GIL on 1 MiB chunks)."""
    count = workers or min(8, (os.cpu_count() or 1) + 1)
    ordered = sorted(files, key=lambda m: m.compress_size, reverse=True)
    batches = [ordered[i :: count * 4] for i in range(count * 4)]
    stop = threading.Event()

    def run(batch: list[Member]) -> None:
        with path.open("rb") as f:
            for member in batch:
                if stop.is_set():
                    return
                try:
                    _hash_one(f, member, record.get(member.name), path.name)
                except BaseException:
                    stop.set()
                    raise

    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = [pool.submit(run, batch) for batch in batches if batch]
    try:
        for future in futures:
            future.result()
    except OSError as exc:
        raise UnsafeWheelError(
            f"{path.name}: cannot be read ({first_line(exc)}); delete it and download again"
        ) from exc


def _hash_one(f: BinaryIO, member: Member, entry: RecordEntry | None, filename: str) -> None:
    hasher = hashlib.new(entry.algorithm) if entry is not None else None
    for chunk in stream_member(f, member, filename):
        if hasher is not None:
            hasher.update(chunk)
    if hasher is not None and entry is not None and hasher.digest() != entry.digest:
        raise UnsafeWheelError(
            f"{filename}: member {member.name!r} does not match its RECORD {entry.algorithm} hash; "
            "refusing to install it"
        )
