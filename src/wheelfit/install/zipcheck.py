"""A raw zip reader for wheels: the central directory and every local header parsed with ``struct`` (APPNOTE.TXT).

``zipfile`` trusts the archive: it cuts names at a NUL byte, never compares a local header with its central entry,
accepts prepended junk and overlapping members, and believes declared sizes. Installers (pip's ``zipfile``, uv's
own reader) may read the same bytes differently, so a wheel must read the same every way or it is refused.
The member data is then streamed from the offsets checked here (:func:`stream_member`), never from zipfile's.
"""

from __future__ import annotations

import stat
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from .errors import UnsafeWheelError

__all__ = ["CHUNK", "Member", "read_member", "scan", "stream_member"]

#: Bytes read (and at most inflated) at a time: large enough for zlib and hashlib to release the GIL.
CHUNK = 1024**2

_EOCD = struct.Struct("<4s4H2LH")
_EOCD_SIG = b"PK\x05\x06"
_LOCATOR = struct.Struct("<4sLQL")
_LOCATOR_SIG = b"PK\x06\x07"
_EOCD64 = struct.Struct("<4sQ2H2L4Q")
_EOCD64_SIG = b"PK\x06\x06"
_CENTRAL = struct.Struct("<4s6H3L5H2L")
_CENTRAL_SIG = b"PK\x01\x02"
_LOCAL = struct.Struct("<4s5H3L2H")
_LOCAL_SIG = b"PK\x03\x04"
_STORED, _DEFLATED = 0, 8
_ENCRYPTED, _DESCRIPTOR, _UTF8 = 0x1, 0x8, 0x800
_MAX_COMMENT = 0xFFFF


@dataclass(frozen=True)
class Member:
    """One archive member as both of its headers agree it is."""

    name: str
    method: int
    compress_size: int
    file_size: int
    #: Where the member's local header starts, and where its compressed data starts.
    header_offset: int
    data_offset: int
    is_dir: bool


def _refuse(filename: str, what: str) -> UnsafeWheelError:
    return UnsafeWheelError(f"{filename}: {what}; refusing to install it")


def scan(f: BinaryIO, size: int, filename: str) -> list[Member]:
    """Every member of the zip in ``f`` (``size`` bytes), checked header against header; raise UnsafeWheelError."""
    cd_offset, cd_size, count, cd_end = _directory(f, size, filename)
    f.seek(cd_offset)
    directory = f.read(cd_size)
    if len(directory) != cd_size:
        raise _refuse(filename, "its central directory is cut short")
    members: list[Member] = []
    names: set[str] = set()
    pos = 0
    for _ in range(count):
        member = _central_entry(f, size, directory, pos, filename)
        pos = member[1]
        entry = member[0]
        if entry.name in names:
            raise _refuse(filename, f"member {entry.name!r} appears twice")
        names.add(entry.name)
        members.append(entry)
    if pos != cd_size:
        raise _refuse(filename, "its central directory holds more than its entry count says")
    _check_layout(members, cd_offset, filename)
    del cd_end
    return members


def _directory(f: BinaryIO, size: int, filename: str) -> tuple[int, int, int, int]:
    """(central directory offset, size, entry count, where it must end) from the end records."""
    tail_start = max(0, size - _EOCD.size - _MAX_COMMENT)
    f.seek(tail_start)
    tail = f.read(size - tail_start)
    found = -1
    at = len(tail)
    while True:
        at = tail.rfind(_EOCD_SIG, 0, at)
        if at < 0:
            break
        if at + _EOCD.size <= len(tail):
            comment = struct.unpack_from("<H", tail, at + 20)[0]
            if at + _EOCD.size + comment == len(tail):
                found = at
                break
    if found < 0:
        raise _refuse(filename, "is not a zip archive (no end of central directory record)")
    eocd_pos = tail_start + found
    _sig, disk, cd_disk, n_disk, n_total, cd_size, cd_offset, _comment = _EOCD.unpack_from(tail, found)
    end = eocd_pos
    if 0xFFFF in (disk, cd_disk, n_disk, n_total) or 0xFFFFFFFF in (cd_size, cd_offset):
        if eocd_pos < _LOCATOR.size:
            raise _refuse(filename, "has a ZIP64 end record without its locator")
        f.seek(eocd_pos - _LOCATOR.size)
        sig, disk64, eocd64_offset, disks = _LOCATOR.unpack(f.read(_LOCATOR.size))
        if sig != _LOCATOR_SIG or disk64 != 0 or disks != 1:
            raise _refuse(filename, "has a bad ZIP64 end of central directory locator")
        if eocd64_offset + _EOCD64.size > eocd_pos - _LOCATOR.size:
            raise _refuse(filename, "has a ZIP64 end record out of place")
        f.seek(eocd64_offset)
        record = f.read(_EOCD64.size)
        sig, rec_size, _made, _need, disk, cd_disk, n_disk, n_total, cd_size, cd_offset = _EOCD64.unpack(record)
        if sig != _EOCD64_SIG or eocd64_offset + 12 + rec_size != eocd_pos - _LOCATOR.size:
            raise _refuse(filename, "has a bad ZIP64 end of central directory record")
        end = eocd64_offset
    if disk != 0 or cd_disk != 0 or n_disk != n_total:
        raise _refuse(filename, "is a multi-disk zip archive")
    if cd_offset + cd_size != end:
        raise _refuse(filename, "has data before the archive or between its directory and end record")
    return cd_offset, cd_size, n_total, end


def _zip64(extra: bytes, values: list[int], filename: str) -> list[int]:
    """Replace the 0xFFFFFFFF fields of (file size, compressed size, offset) from the ZIP64 extra field."""
    wanted = [i for i, v in enumerate(values) if v == 0xFFFFFFFF]
    pos = 0
    while pos + 4 <= len(extra):
        tag, length = struct.unpack_from("<HH", extra, pos)
        body = extra[pos + 4 : pos + 4 + length]
        if len(body) != length:
            raise _refuse(filename, "has a cut-short extra field")
        if tag == 0x0001:
            if len(body) < 8 * len(wanted):
                raise _refuse(filename, "has a ZIP64 extra field too short for its sizes")
            out = list(values)
            for n, i in enumerate(wanted):
                out[i] = struct.unpack_from("<Q", body, 8 * n)[0]
            return out
        pos += 4 + length
    if pos != len(extra):
        raise _refuse(filename, "has a malformed extra field")
    if wanted:
        raise _refuse(filename, "has ZIP64 sizes without a ZIP64 extra field")
    return values


def _decode(raw: bytes, flags: int, filename: str) -> str:
    if any(b < 0x20 or b == 0x7F for b in raw):
        raise _refuse(filename, f"member name {raw!r} has a NUL or control byte")
    try:
        return raw.decode("utf-8") if flags & _UTF8 else raw.decode("cp437")
    except UnicodeDecodeError:
        raise _refuse(filename, f"member name {raw!r} is not valid UTF-8") from None


def _central_entry(f: BinaryIO, size: int, directory: bytes, pos: int, filename: str) -> tuple[Member, int]:
    if pos + _CENTRAL.size > len(directory):
        raise _refuse(filename, "its central directory is cut short")
    (sig, _made, _need, flags, method, _time, _date, crc, csize, usize, name_len, extra_len, comment_len, disk,
     _internal, external, offset) = _CENTRAL.unpack_from(directory, pos)  # fmt: skip
    if sig != _CENTRAL_SIG:
        raise _refuse(filename, "has a bad central directory entry")
    start = pos + _CENTRAL.size
    end = start + name_len + extra_len + comment_len
    if end > len(directory):
        raise _refuse(filename, "its central directory is cut short")
    raw_name = directory[start : start + name_len]
    name = _decode(raw_name, flags, filename)
    extra = directory[start + name_len : start + name_len + extra_len]
    usize, csize, offset = _zip64(extra, [usize, csize, offset], filename)
    if disk not in (0, 0xFFFF):
        raise _refuse(filename, f"member {name!r} is on another disk")
    if flags & _ENCRYPTED:
        raise _refuse(filename, f"member {name!r} is encrypted")
    if method not in (_STORED, _DEFLATED):
        raise _refuse(filename, f"member {name!r} uses compression method {method}, not stored or deflate")
    if stat.S_ISLNK(external >> 16):
        raise _refuse(filename, f"member {name!r} is a symbolic link")
    if method == _STORED and csize != usize:
        raise _refuse(filename, f"member {name!r} is stored but its two sizes differ")
    data_offset = _local_header(f, size, offset, raw_name, (flags, method, crc, csize, usize), name, filename)
    if data_offset + csize > size:
        raise _refuse(filename, f"member {name!r} runs past the end of the file")
    is_dir = name.endswith("/")
    if is_dir and usize:
        raise _refuse(filename, f"directory member {name!r} has contents")
    return Member(name, method, csize, usize, offset, data_offset, is_dir), end


def _local_header(
    f: BinaryIO, size: int, offset: int, raw_name: bytes, central: tuple[int, int, int, int, int], name: str,
    filename: str,
) -> int:  # fmt: skip
    """Check the local header at ``offset`` against the central entry; return where the member's data starts."""
    if offset + _LOCAL.size > size:
        raise _refuse(filename, f"member {name!r} points past the end of the file")
    f.seek(offset)
    header = f.read(_LOCAL.size)
    sig, _need, flags, method, _time, _date, crc, csize, usize, name_len, extra_len = _LOCAL.unpack(header)
    if sig != _LOCAL_SIG:
        raise _refuse(filename, f"member {name!r} has no local header where the directory says")
    local_raw = f.read(name_len)
    extra = f.read(extra_len)
    if len(local_raw) != name_len or len(extra) != extra_len:
        raise _refuse(filename, f"member {name!r} has a cut-short local header")
    if local_raw != raw_name:
        raise _refuse(filename, f"member {name!r} is named {local_raw!r} in its local header")
    c_flags, c_method, c_crc, c_csize, c_usize = central
    if flags != c_flags or method != c_method:
        raise _refuse(filename, f"member {name!r} has local and central headers that disagree")
    if not flags & _DESCRIPTOR:
        usize, csize = _zip64(extra, [usize, csize], filename) if 0xFFFFFFFF in (usize, csize) else (usize, csize)
        if (crc, csize, usize) != (c_crc, c_csize, c_usize):
            raise _refuse(filename, f"member {name!r} has local and central sizes or CRC that disagree")
    return offset + _LOCAL.size + int(name_len) + int(extra_len)


def _check_layout(members: list[Member], cd_offset: int, filename: str) -> None:
    """Members must tile the file from byte 0 without sharing bytes (the overlapping 'better zip bomb')."""
    previous_end = 0
    previous = ""
    for member in sorted(members, key=lambda m: m.header_offset):
        if member.header_offset < previous_end:
            raise _refuse(filename, f"members {previous!r} and {member.name!r} overlap")
        if not previous and member.header_offset != 0:
            raise _refuse(filename, "has data before its first member")
        previous_end = member.data_offset + member.compress_size
        previous = member.name
    if previous_end > cd_offset:
        raise _refuse(filename, f"member {previous!r} runs into the central directory")
    if not members and cd_offset != 0:
        raise _refuse(filename, "has data before the archive")


def stream_member(f: BinaryIO, member: Member, filename: str) -> Iterator[bytes]:
    """The member's real bytes in chunks of at most :data:`CHUNK`; never more than its declared size."""
    f.seek(member.data_offset)
    left = member.compress_size
    produced = 0
    inflate = zlib.decompressobj(-15) if member.method == _DEFLATED else None
    while left:
        chunk = f.read(min(CHUNK, left))
        if not chunk:
            raise _refuse(filename, f"member {member.name!r} is cut short")
        left -= len(chunk)
        if inflate is None:
            produced += len(chunk)
            yield chunk
            continue
        while chunk:
            try:
                out = inflate.decompress(chunk, CHUNK)
            except zlib.error as exc:
                raise _refuse(filename, f"member {member.name!r} is not valid deflate data ({exc})") from None
            produced += len(out)
            if produced > member.file_size:
                raise _refuse(
                    filename, f"member {member.name!r} unpacks to more than its declared {member.file_size} bytes"
                )
            if out:
                yield out
            chunk = inflate.unconsumed_tail
            if inflate.eof:
                if chunk or inflate.unused_data or left:
                    raise _refuse(filename, f"member {member.name!r} has data after its deflate stream")
                break
    if inflate is not None and not inflate.eof:
        raise _refuse(filename, f"member {member.name!r} has a cut-short deflate stream")
    if produced != member.file_size:
        raise _refuse(
            filename, f"member {member.name!r} unpacks to {produced} bytes, not its declared {member.file_size}"
        )


def read_member(f: BinaryIO, member: Member, filename: str, limit: int) -> bytes:
    """A small member's whole contents (METADATA, RECORD, entry_points.txt), refused past ``limit`` bytes."""
    if member.file_size > limit:
        raise _refuse(filename, f"member {member.name!r} is larger than {limit} bytes")
    return b"".join(stream_member(f, member, filename))
