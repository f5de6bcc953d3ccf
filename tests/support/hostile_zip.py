"""Zip archives written byte by byte (APPNOTE.TXT), so tests can make the lies ``zipfile`` will not write.

:class:`Entry` is one member with every header field a test may falsify; :func:`build` lays entries out as a
normal archive would; :func:`local` / :func:`central` / :func:`end` are the pieces, for layouts :func:`build`
cannot express (overlapping members, prepended data). :func:`wheel_files` and :func:`record` help start from a
real, valid wheel and break exactly one thing.
"""

from __future__ import annotations

import base64
import hashlib
import struct
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Entry", "build", "central", "end", "entries_for", "local", "record", "record_hash", "wheel_files"]

_MAX32 = 0xFFFFFFFF


@dataclass(frozen=True)
class Entry:
    name: bytes
    data: bytes
    method: int = zipfile.ZIP_DEFLATED
    flags: int = 0x800
    external_attr: int = 0o644 << 16
    #: Falsifications: ``None`` means the true value.
    local_name: bytes | None = None
    file_size: int | None = None
    crc: int | None = None
    local_crc: int | None = None
    #: Write sizes and offset as ZIP64 extra fields, as a >4 GiB torch wheel must.
    zip64: bool = False
    payload: bytes | None = field(default=None, repr=False)

    @property
    def compressed(self) -> bytes:
        if self.payload is not None:
            return self.payload
        if self.method == zipfile.ZIP_STORED:
            return self.data
        squeeze = zlib.compressobj(6, zlib.DEFLATED, -15)
        return squeeze.compress(self.data) + squeeze.flush()

    @property
    def size(self) -> int:
        return len(self.data) if self.file_size is None else self.file_size


def _sizes(entry: Entry, offset: int | None) -> tuple[int, int, int, bytes]:
    """(file size, compressed size, offset) as the 32-bit fields say them, and the ZIP64 extra field."""
    csize = len(entry.compressed)
    if not entry.zip64:
        return entry.size, csize, offset or 0, b""
    values = [entry.size, csize] + ([] if offset is None else [offset])
    body = b"".join(struct.pack("<Q", v) for v in values)
    return _MAX32, _MAX32, _MAX32 if offset is not None else 0, struct.pack("<HH", 1, len(body)) + body


def local(entry: Entry) -> bytes:
    """The member's local header followed by its (compressed) data."""
    usize, csize, _off, extra = _sizes(entry, None)
    crc = (
        entry.local_crc
        if entry.local_crc is not None
        else (entry.crc if entry.crc is not None else zlib.crc32(entry.data))
    )
    name = entry.local_name if entry.local_name is not None else entry.name
    header = struct.pack(
        "<4s5H3L2H", b"PK\x03\x04", 45 if entry.zip64 else 20, entry.flags, entry.method, 0, 0x5021, crc, csize, usize,
        len(name), len(extra),
    )  # fmt: skip
    return header + name + extra + entry.compressed


def central(entry: Entry, offset: int) -> bytes:
    """The member's central directory entry, its local header at ``offset``."""
    usize, csize, off, extra = _sizes(entry, offset)
    crc = entry.crc if entry.crc is not None else zlib.crc32(entry.data)
    return struct.pack(
        "<4s6H3L5H2L", b"PK\x01\x02", 0x031E, 45 if entry.zip64 else 20, entry.flags, entry.method, 0, 0x5021, crc,
        csize, usize, len(entry.name), len(extra), 0, 0, 0, entry.external_attr, off,
    ) + entry.name + extra  # fmt: skip


def end(count: int, cd_offset: int, cd_size: int, *, zip64: bool = False, comment: bytes = b"") -> bytes:
    """The end of central directory record (with the ZIP64 record and locator before it if ``zip64``)."""
    if not zip64:
        return struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, cd_size, cd_offset, len(comment)) + comment
    record64 = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, cd_size, cd_offset)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, cd_offset + cd_size, 1)
    eocd = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, _MAX32, _MAX32, len(comment)) + comment
    return record64 + locator + eocd


def build(entries: Sequence[Entry], *, prefix: bytes = b"", zip64: bool = False, shift: bool = False) -> bytes:
    """A normal layout: local headers and data, the central directory, the end record.

    ``prefix`` is junk before the archive; ``shift`` makes the offsets count it (as ``zip -A`` would).
    """
    body = b""
    directory = b""
    base = len(prefix) if shift else 0
    for entry in entries:
        directory += central(entry, base + len(body))
        body += local(entry)
    return prefix + body + directory + end(len(entries), base + len(body), len(directory), zip64=zip64)


def record_hash(data: bytes, algorithm: str = "sha256") -> str:
    digest = hashlib.new(algorithm, data).digest()
    return f"{algorithm}=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def record(files: Mapping[str, bytes], dist_info: str) -> bytes:
    """A true RECORD for ``files`` (RECORD itself last, without a hash)."""
    lines = [f"{name},{record_hash(data)},{len(data)}" for name, data in files.items() if name != f"{dist_info}/RECORD"]
    return ("\n".join([*lines, f"{dist_info}/RECORD,,"]) + "\n").encode()


def wheel_files(wheel: Path) -> dict[str, bytes]:
    """Every member of a real wheel, by name, in archive order."""
    with zipfile.ZipFile(wheel) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def entries_for(files: Mapping[str, bytes]) -> list[Entry]:
    """One true :class:`Entry` per file, in order; tests ``dataclasses.replace`` the one they falsify."""
    return [Entry(name.encode(), data) for name, data in files.items()]
