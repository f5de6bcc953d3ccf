"""Installed files checked against their distribution's RECORD (``wheelfit verify --record``).

RECORD is the CSV of the packaging spec "Recording installed projects": one row per installed file,
``path,algorithm=urlsafe-b64-nopad-digest,size``, the path relative to the directory that holds the
``.dist-info`` (``torch/lib/libc10.so``, ``../../../bin/torchrun``) or absolute. A row without a hash is not
checked (RECORD itself, and what pip and uv write unhashed: ``__pycache__/*.pyc``, sometimes ``INSTALLER`` and
``REQUESTED``), as the installers do. A row that is malformed, or whose path leads outside the environment
(after following symbolic links), is reported and its file never opened.

Pure but for reading the files: nothing here prints. Every problem is reported, not only the first; files of 4 MiB
or more are hashed on worker threads (hashlib lets go of the GIL) while the small ones are checked in turn.
"""

from __future__ import annotations

import base64
import binascii
import csv
import email.parser
import enum
import hashlib
import os
import stat
from collections.abc import Collection, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

__all__ = [
    "DistributionRecord",
    "ProblemKind",
    "RecordCheck",
    "RecordProblem",
    "check_installed_records",
]

#: sha256 or better (the wheel spec's floor; the installers write sha256). A weaker hash is a malformed row.
_STRONG = frozenset({"sha256", "sha384", "sha512", "sha3_256", "sha3_384", "sha3_512", "blake2b", "blake2s"})
_CHUNK = 1024 * 1024
#: Files at least this large are hashed on worker threads (hashlib lets go of the GIL), the rest in turn.
_PARALLEL = 4 * _CHUNK


class ProblemKind(enum.Enum):
    #: The file's size or hash is not RECORD's.
    MISMATCH = "mismatch"
    #: RECORD lists it, it is not there.
    MISSING = "missing"
    #: The path leads outside the environment (never opened).
    OUTSIDE = "outside"
    #: The row (or the whole RECORD) cannot be read as the spec says.
    MALFORMED = "malformed"
    #: The file is there but cannot be opened (permissions): not checked.
    UNREADABLE = "unreadable"


@dataclass(frozen=True)
class RecordProblem:
    kind: ProblemKind
    #: As RECORD spells it (relative to the directory holding the ``.dist-info``); for a RECORD that cannot be
    #: read at all, RECORD's own path.
    path: str
    #: What was found (``size 12, RECORD says 10``, ``line 3: 2 fields, not 3``).
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind.value, "path": self.path, "detail": self.detail}


@dataclass(frozen=True)
class DistributionRecord:
    name: str
    version: str
    #: The ``.dist-info`` directory.
    dist_info: Path
    #: Files whose hash (and size) were compared with RECORD's.
    checked: int
    #: Rows without a hash, not checked.
    skipped: int
    problems: tuple[RecordProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "dist_info": str(self.dist_info),
            "ok": self.ok,
            "files_checked": self.checked,
            "unhashed": self.skipped,
            "problems": [p.to_dict() for p in self.problems],
        }


@dataclass(frozen=True)
class RecordCheck:
    distributions: tuple[DistributionRecord, ...]
    #: ``.dist-info`` directories with no RECORD (nothing to check them against; not a problem).
    without_record: tuple[Path, ...] = ()
    #: Names asked for (``names``) that no ``.dist-info`` has.
    not_found: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(d.ok for d in self.distributions)

    @property
    def checked(self) -> int:
        return sum(d.checked for d in self.distributions)

    @property
    def problems(self) -> tuple[RecordProblem, ...]:
        return tuple(p for d in self.distributions for p in d.problems)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "distributions_checked": len(self.distributions),
            "files_checked": self.checked,
            "problems": len(self.problems),
            "distributions": [d.to_dict() for d in self.distributions],
            "without_record": [str(p) for p in self.without_record],
            "not_found": list(self.not_found),
        }


def check_installed_records(
    site_dirs: Sequence[Path], prefix: Path, names: Collection[str] | None = None
) -> RecordCheck:
    """Check every distribution installed in ``site_dirs`` (an environment's site-packages; other directories,
    such as its scripts directory, are allowed as places RECORD may point to), or only those called ``names``.
    A path is inside the environment when, its links followed, it is under ``prefix`` or one of ``site_dirs``."""
    roots = _roots([prefix, *site_dirs])
    pool = ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1), thread_name_prefix="record")
    try:
        return _check_all(site_dirs, roots, names, pool)
    finally:  # interrupted: the hashes not started are dropped, not waited for
        pool.shutdown(cancel_futures=True)


def _check_all(
    site_dirs: Sequence[Path], roots: tuple[str, ...], names: Collection[str] | None, pool: Executor
) -> RecordCheck:
    wanted = {canonicalize_name(n): n for n in names} if names is not None else None
    found: set[str] = set()
    pending: list[_Pending] = []
    without: list[Path] = []
    for dist_info in _dist_infos(site_dirs):
        name, version = _name_version(dist_info)
        key = canonicalize_name(name)
        if wanted is not None and key not in wanted:
            continue
        found.add(key)
        if not (dist_info / "RECORD").is_file():
            without.append(dist_info)
            continue
        pending.append(_check(dist_info, name, version, roots, pool))
    not_found = tuple(n for key, n in (wanted or {}).items() if key not in found)
    return RecordCheck(tuple(p.result() for p in pending), tuple(without), not_found)


def _roots(dirs: Iterable[Path]) -> tuple[str, ...]:
    out: list[str] = []
    for d in dirs:
        real = os.path.realpath(d)
        if real not in out:
            out.append(real)
    return tuple(out)


def _dist_infos(site_dirs: Sequence[Path]) -> Iterator[Path]:
    """Each ``*.dist-info`` directory once (a venv's ``lib64`` is a link to ``lib``), by name within each dir."""
    seen: set[str] = set()
    for site in site_dirs:
        try:
            entries = sorted(os.scandir(site), key=lambda e: e.name.lower())
        except OSError:
            continue
        for entry in entries:
            if not entry.name.endswith(".dist-info") or not entry.is_dir():
                continue
            real = os.path.realpath(entry.path)
            if real not in seen:
                seen.add(real)
                yield Path(entry.path)


def _name_version(dist_info: Path) -> tuple[str, str]:
    """METADATA's Name and Version; the directory's name (``name-version.dist-info``) where they are missing."""
    stem_name, _, stem_version = dist_info.name[: -len(".dist-info")].partition("-")
    try:
        with (dist_info / "METADATA").open("rb") as fp:
            headers = email.parser.BytesHeaderParser().parse(fp)
    except (OSError, ValueError):
        return stem_name, stem_version
    return str(headers.get("Name") or stem_name).strip(), str(headers.get("Version") or stem_version).strip()


@dataclass
class _Pending:
    """A distribution's rows read and its small files checked; its large files' hashes may still be running."""

    dist: DistributionRecord
    problems: list[tuple[int, RecordProblem]]
    later: list[tuple[int, Future[RecordProblem | None]]]

    def result(self) -> DistributionRecord:
        found = self.problems + [(number, p) for number, future in self.later if (p := future.result())]
        found.sort(key=lambda item: item[0])  # in RECORD's order
        return replace(self.dist, problems=tuple(p for _, p in found))


def _check(dist_info: Path, name: str, version: str, roots: tuple[str, ...], pool: Executor) -> _Pending:
    record_path = f"{dist_info.name}/RECORD"
    base = dist_info.parent
    problems: list[tuple[int, RecordProblem]] = []
    later: list[tuple[int, Future[RecordProblem | None]]] = []
    checked = skipped = 0
    try:
        text = (dist_info / "RECORD").read_bytes().decode("utf-8")
    except FileNotFoundError:
        problems.append((0, RecordProblem(ProblemKind.MISSING, record_path, "no RECORD")))
        text = ""
    except OSError as exc:
        problems.append((0, RecordProblem(ProblemKind.UNREADABLE, record_path, exc.strerror or str(exc))))
        text = ""
    except UnicodeDecodeError:
        problems.append((0, RecordProblem(ProblemKind.MALFORMED, record_path, "RECORD is not UTF-8")))
        text = ""
    seen: dict[str, tuple[str, str]] = {}
    dirs: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        row, why = _row(line)
        if row is None:
            if why:
                where = line.split(",", 1)[0] or record_path
                problems.append((number, RecordProblem(ProblemKind.MALFORMED, where, f"RECORD line {number}: {why}")))
            continue
        path, hash_field, size_field = row
        if path in seen:
            if seen[path] != (hash_field, size_field):
                twice = RecordProblem(ProblemKind.MALFORMED, path, f"RECORD line {number}: listed twice")
                problems.append((number, twice))
            continue
        seen[path] = (hash_field, size_field)
        target = _inside(base, path, roots, dirs)
        if target is None:
            where = os.path.realpath(os.path.join(base, path))
            outside = RecordProblem(ProblemKind.OUTSIDE, path, f"leads to {where}, outside the environment")
            problems.append((number, outside))
            continue
        if not hash_field:
            skipped += 1
            continue
        expected, why = _expected(hash_field, size_field)
        if expected is None:
            problems.append((number, RecordProblem(ProblemKind.MALFORMED, path, f"RECORD line {number}: {why}")))
            continue
        checked += 1
        size = expected[2]
        if size is None or size >= _PARALLEL:  # a large file hashes on a worker while the rest go on
            later.append((number, pool.submit(_compare, target, path, *expected)))
        elif found := _compare(target, path, *expected):
            problems.append((number, found))
    return _Pending(DistributionRecord(name, version, dist_info, checked, skipped, ()), problems, later)


def _row(line: str) -> tuple[tuple[str, str, str] | None, str | None]:
    """One CSV row of three fields, or None and why (None too for a blank line: nothing to say)."""
    if not line.strip():
        return None, None
    try:
        fields = next(csv.reader([line], strict=True))
    except csv.Error as exc:
        return None, f"not valid CSV ({exc})"
    if len(fields) != 3:
        return None, f"{len(fields)} fields, not 3"
    path, hash_field, size_field = fields
    if not path or "\x00" in path:
        return None, "no path" if not path else "a NUL in the path"
    return (path, hash_field, size_field), None


def _expected(hash_field: str, size_field: str) -> tuple[tuple[str, bytes, int | None] | None, str]:
    """(algorithm, digest, size or None) from RECORD's fields, or None and why they are malformed."""
    algorithm, sep, encoded = hash_field.partition("=")
    if not sep or algorithm not in _STRONG:
        return None, f"hash {algorithm!r} is not sha256 or stronger"
    try:
        digest = base64.b64decode(encoded + "=" * (-len(encoded) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        return None, "an unreadable hash"
    if len(digest) != hashlib.new(algorithm).digest_size:
        return None, f"a {algorithm} hash of the wrong length"
    if size_field and not (size_field.isascii() and size_field.isdigit()):
        return None, f"size {size_field!r} is not a number"
    return (algorithm, digest, int(size_field) if size_field else None), ""


def _inside(base: Path, path: str, roots: tuple[str, ...], dirs: dict[str, str]) -> str | None:
    """The file ``path`` names, its links followed, if that is under one of ``roots``; else None. ``dirs`` caches
    the real path of each directory (a RECORD's rows share a few hundred: one ``lstat`` a file, not one a
    component)."""
    joined = os.path.join(base, path)
    head, tail = os.path.split(joined)
    if tail in ("", ".", ".."):
        real = os.path.realpath(joined)
    else:
        real_dir = dirs.get(head)
        if real_dir is None:
            real_dir = dirs[head] = os.path.realpath(head)
        real = os.path.join(real_dir, tail)
        if os.path.islink(real):
            real = os.path.realpath(real)
    for root in roots:
        if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
            return real
    return None


def _compare(target: str, path: str, algorithm: str, digest: bytes, size: int | None) -> RecordProblem | None:
    try:
        st = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):
        return RecordProblem(ProblemKind.MISSING, path, "not there")
    except OSError as exc:
        return RecordProblem(ProblemKind.UNREADABLE, path, exc.strerror or str(exc))
    if not stat.S_ISREG(st.st_mode):
        return RecordProblem(ProblemKind.MISMATCH, path, "not a regular file")
    if size is not None and st.st_size != size:
        return RecordProblem(ProblemKind.MISMATCH, path, f"size {st.st_size}, RECORD says {size}")
    try:
        actual = _hash(target, algorithm)
    except FileNotFoundError:
        return RecordProblem(ProblemKind.MISSING, path, "not there")
    except OSError as exc:
        return RecordProblem(ProblemKind.UNREADABLE, path, exc.strerror or str(exc))
    if actual != digest:
        return RecordProblem(ProblemKind.MISMATCH, path, f"{algorithm} differs")
    return None


def _hash(target: str, algorithm: str) -> bytes:
    h = hashlib.new(algorithm)
    buffer = bytearray(_CHUNK)
    view = memoryview(buffer)
    # O_NONBLOCK: a file swapped for a FIFO after the stat must not hang the check.
    fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb", buffering=0) as fp:
        while n := fp.readinto(view):
            h.update(view[:n])
    return h.digest()
