"""A wheel's own claims, checked: RECORD (every member's hash and size) and its entry points' script names.

RECORD follows the wheel spec (binary-distribution-format, recording-installed-packages): one CSV row per
file, ``path,algorithm=urlsafe-b64-digest,size``; only RECORD itself (and its signatures RECORD.jws/RECORD.p7s)
may go without a hash. Script names become files in the environment's ``bin/``: pip renames ``../../x`` rather
than refusing it, so wheelfit refuses it itself.
"""

from __future__ import annotations

import base64
import binascii
import configparser
import csv
import hashlib
import re
from dataclasses import dataclass

from .errors import UnsafeWheelError

__all__ = ["RecordEntry", "check_entry_points", "parse_record", "script_problem", "unrecorded_ok"]

#: sha256 or better (the spec's floor); md5, sha1 and sha224 are refused.
STRONG = frozenset({"sha256", "sha384", "sha512", "sha3_256", "sha3_384", "sha3_512", "blake2b", "blake2s"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_OBJECT_REF = re.compile(r"[\w.]+\s*(:\s*[\w.]+\s*)?(\[[\w.,\s-]*\]\s*)?", re.ASCII)


@dataclass(frozen=True)
class RecordEntry:
    algorithm: str
    digest: bytes
    size: int


def _refuse(filename: str, what: str) -> UnsafeWheelError:
    return UnsafeWheelError(f"{filename}: {what}; refusing to install it")


def unrecorded_ok(member: str, dist_info: str) -> bool:
    """RECORD cannot hash itself, and its signatures are written after it."""
    return member in {f"{dist_info}/RECORD", f"{dist_info}/RECORD.jws", f"{dist_info}/RECORD.p7s"}


def parse_record(data: bytes, dist_info: str, filename: str) -> dict[str, RecordEntry | None]:
    """RECORD's rows by path (None: no hash, allowed only where :func:`unrecorded_ok`); raise if malformed."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _refuse(filename, "its RECORD is not UTF-8") from None
    entries: dict[str, RecordEntry | None] = {}
    try:
        rows = list(csv.reader(text.splitlines(), strict=True))
    except csv.Error as exc:
        raise _refuse(filename, f"its RECORD is not valid CSV ({exc})") from None
    for number, row in enumerate(rows, 1):
        if not row:
            continue
        if len(row) != 3:
            raise _refuse(filename, f"RECORD line {number} has {len(row)} fields, not 3")
        path, hash_field, size_field = row
        if path in entries:
            raise _refuse(filename, f"RECORD lists {path!r} twice")
        entries[path] = _entry(path, hash_field, size_field, dist_info, filename)
    return entries


def _entry(path: str, hash_field: str, size_field: str, dist_info: str, filename: str) -> RecordEntry | None:
    if not hash_field:
        if not unrecorded_ok(path, dist_info):
            raise _refuse(filename, f"RECORD gives no hash for {path!r}")
        return None
    algorithm, sep, encoded = hash_field.partition("=")
    if not sep or algorithm not in STRONG:
        raise _refuse(filename, f"RECORD hashes {path!r} with {algorithm!r}, not sha256 or stronger")
    try:
        digest = base64.b64decode(encoded + "=" * (-len(encoded) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise _refuse(filename, f"RECORD has an unreadable hash for {path!r}") from None
    if len(digest) != hashlib.new(algorithm).digest_size:
        raise _refuse(filename, f"RECORD has a {algorithm} hash of the wrong length for {path!r}")
    if not size_field.isascii() or not size_field.isdigit():
        raise _refuse(filename, f"RECORD has no size for {path!r}")
    return RecordEntry(algorithm, digest, int(size_field))


def script_problem(name: str) -> str | None:
    """Why ``name`` cannot be a file in ``bin/``, or None: only a plain file name can."""
    if not name:
        return "an empty script name"
    if "/" in name or "\\" in name or _CONTROL.search(name):
        return f"script name {name!r} is not a plain file name"
    if name.startswith((".", "-")):
        return f"script name {name!r} starts with {name[0]!r}"
    return None


def check_entry_points(data: bytes, filename: str) -> None:
    """Refuse a malformed entry_points.txt, or a console/gui script whose name is not a plain file name."""
    parser = configparser.ConfigParser(delimiters=("=",), comment_prefixes=("#", ";"), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # script names are case-sensitive
    try:
        parser.read_string(data.decode("utf-8"))
    except (UnicodeDecodeError, configparser.Error) as exc:
        what = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise _refuse(filename, f"its entry_points.txt is malformed ({what})") from None
    for group in ("console_scripts", "gui_scripts"):
        if not parser.has_section(group):
            continue
        for name, value in parser.items(group, raw=True):
            problem = script_problem(name)
            if problem:
                raise _refuse(filename, f"{group} {problem}")
            if not _OBJECT_REF.fullmatch(value or ""):
                raise _refuse(filename, f"{group} script {name!r} points at {value!r}, not module:attribute")
