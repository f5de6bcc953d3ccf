"""Write the plain copy of a downloaded variant wheel (:mod:`wheelfit.variants.plain`) beside it.

A CUDA torch wheel is 2-3 GB in ~12,000 members, so only METADATA and RECORD are written anew: every other
member's bytes (local header, compressed data) are copied as they are, never decompressed. The copy sits beside
the download under a key of the source's sha256 and the new METADATA, so a warm install finds it, and a
different machine (other narrowed properties, other dependencies) gets its own.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import shutil
import zipfile
from collections.abc import Mapping
from pathlib import Path

from ..errors import first_line
from ..fetch.cache import atomic_file, memo_read, memo_write
from ..fetch.hashes import hash_file
from ..variants.errors import VariantError
from ..variants.filename import parse_wheel_name
from ..variants.markers import VariantEnvironment
from ..variants.plain import plain_filename, plain_metadata
from .errors import UnsafeWheelError

__all__ = ["plain_wheel", "record_with", "rewrite_wheel"]

#: METADATA of a real wheel is a few kB; a torch wheel's under 100 kB.
_MAX_METADATA = 8 * 1024 * 1024
_CHUNK = 1024 * 1024


def plain_wheel(path: Path, filename: str, sha256: str, variant: VariantEnvironment) -> tuple[Path, str]:
    """The plain copy of the variant wheel at ``path`` (named ``filename`` on the index, content ``sha256``), and
    the copy's own sha256, which the backend checks when it installs it.

    Remembered beside ``path`` per variant while the file is unchanged (its fingerprint): opening a torch
    wheel's directory of ~12,000 members again costs ~0.1 s on every warm install."""
    env_key = hashlib.sha256("\0".join([variant.label, *sorted(variant.properties)]).encode()).hexdigest()[:16]
    memo = path.with_name(f".{path.name}.plain-{env_key}.json")
    data = memo_read(memo, path)
    if data is not None and data.get("sha256") == sha256 and isinstance(data.get("plain_sha256"), str):
        known = path.parent / str(data.get("plain"))
        if known.is_file():
            return known, str(data["plain_sha256"])
    dest = _plain_copy(path, filename, sha256, variant)
    plain_sha = sha256 if os.path.samefile(dest, path) else hash_file(dest)
    memo_write(memo, path, {"sha256": sha256, "plain": str(dest.relative_to(path.parent)), "plain_sha256": plain_sha})
    return dest, plain_sha


def _plain_copy(path: Path, filename: str, sha256: str, variant: VariantEnvironment) -> Path:
    try:
        wheel = parse_wheel_name(filename)
    except VariantError as exc:
        raise UnsafeWheelError(f"{filename}: {first_line(exc)}") from None
    try:
        with zipfile.ZipFile(path) as archive:
            metadata, record = _dist_info_files(archive, filename)
            info = archive.getinfo(metadata)
            if info.file_size > _MAX_METADATA:
                raise UnsafeWheelError(f"{filename}: its METADATA is {info.file_size} bytes, not a wheel's")
            old = archive.read(metadata)
            try:
                new = plain_metadata(old, variant)
            except VariantError as exc:
                raise UnsafeWheelError(f"{filename}: {first_line(exc)}") from None
            key = hashlib.sha256(sha256.encode() + b"\0" + new).hexdigest()[:16]
            dest = path.parent / f"plain-{key}" / plain_filename(wheel)
            if dest.is_file():
                return dest
            if new == old:  # nothing to evaluate: the same bytes under the plain name
                _link(path, dest)
                return dest
            new_record = record_with(archive.read(record) if record in archive.NameToInfo else b"", metadata, new)
            _write(path, archive, dest, {metadata: new, record: new_record})
    except zipfile.BadZipFile as exc:
        raise UnsafeWheelError(
            f"{filename} is not a readable zip archive ({exc}); delete it and download again"
        ) from None
    return dest


def _link(source: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.link(source, tmp)
    except OSError:
        shutil.copyfile(source, tmp)
    os.replace(tmp, dest)


def _dist_info_files(archive: zipfile.ZipFile, filename: str) -> tuple[str, str]:
    tops = {n.split("/", 1)[0] for n in archive.NameToInfo if n.count("/") == 1 and n.endswith(".dist-info/METADATA")}
    if len(tops) != 1:
        raise UnsafeWheelError(f"{filename}: has {len(tops)} .dist-info/METADATA files, a wheel has exactly one")
    top = tops.pop()
    return f"{top}/METADATA", f"{top}/RECORD"


def record_with(old: bytes, member: str, new: bytes) -> bytes:
    """RECORD with ``member``'s hash and size brought up to date (PEP 376 / the wheel spec's urlsafe-base64)."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(new).digest()).rstrip(b"=").decode()
    entry = [member, f"sha256={digest}", str(len(new))]
    rows = [row for row in csv.reader(io.StringIO(old.decode("utf-8", "replace"))) if row]
    rows = [entry if row[0] == member else row for row in rows]
    if entry not in rows:
        rows.insert(max(len(rows) - 1, 0), entry)  # before RECORD's own row, which comes last
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def rewrite_wheel(source: Path, dest: Path, replace: Mapping[str, bytes]) -> None:
    """Write ``dest``: ``source`` with the members in ``replace`` given new content, every other one copied raw."""
    with zipfile.ZipFile(source) as archive:
        _write(source, archive, dest, replace)


def _write(source: Path, archive: zipfile.ZipFile, dest: Path, replace: Mapping[str, bytes]) -> None:
    """Copy ``source``'s members raw, except ``replace``'s, which are written (deflated) after them."""
    infos = sorted(archive.infolist(), key=lambda i: i.header_offset)
    ends = [i.header_offset for i in infos[1:]] + [archive.start_dir]
    with atomic_file(dest) as out, source.open("rb") as src:
        writer = zipfile.ZipFile(out, "w")
        for info, end in zip(infos, ends, strict=True):
            if info.filename in replace:
                continue
            if end < info.header_offset + 30 + info.compress_size:
                raise UnsafeWheelError(f"{source.name}: member {info.filename!r} overlaps the next; refusing it")
            moved = zipfile.ZipInfo(info.filename, info.date_time)
            for attr in ("compress_type", "comment", "extra", "create_system", "create_version", "extract_version",
                         "flag_bits", "volume", "internal_attr", "external_attr", "CRC", "compress_size",
                         "file_size"):  # fmt: skip
                setattr(moved, attr, getattr(info, attr))
            moved.header_offset = out.tell()
            _copy_range(src, out, info.header_offset, end - info.header_offset)
            writer.filelist.append(moved)
            writer.NameToInfo[moved.filename] = moved
        writer.start_dir = out.tell()
        for name, data in replace.items():
            old = archive.NameToInfo.get(name)
            member = zipfile.ZipInfo(name, old.date_time if old else (1980, 1, 1, 0, 0, 0))
            member.compress_type = zipfile.ZIP_DEFLATED
            member.external_attr = old.external_attr if old else 0o644 << 16
            writer.writestr(member, data)
        writer.close()


def _copy_range(src: io.BufferedReader, out: io.BufferedWriter, start: int, length: int) -> None:
    src.seek(start)
    while length > 0:
        chunk = src.read(min(_CHUNK, length))
        if not chunk:
            raise UnsafeWheelError(f"{src.name}: ends inside a member; delete it and download again")
        out.write(chunk)
        length -= len(chunk)
