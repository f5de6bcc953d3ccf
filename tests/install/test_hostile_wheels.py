"""Hostile wheel archives: the tricks that ``zipfile`` reads one way and an installer may read another (issue 15).

The table tests write each archive byte by byte (tests/support/hostile_zip.py) from a real wheel's files with one
field falsified; the end-to-end tests run ``wheelfit install`` with uv and with pip against the loopback index
and prove the environment is untouched.
"""

from __future__ import annotations

import os
import struct
import zipfile
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from tests.support.hostile_zip import Entry, build, central, end, entries_for, local, record, wheel_files
from tests.support.wheels import make_torch_like, make_wheel
from wheelfit.install.errors import UnsafeWheelError
from wheelfit.install.wheelfile import MAX_UNPACKED, read_wheel

from .conftest import Index, error_line, installed, make_venv, run_wheelfit, tree

DIST = "demo-1.0.dist-info"
NAME = "demo-1.0-py3-none-any.whl"
Entries = list[Entry]


def _files(tmp_path: Path, extra: dict[str, bytes] | None = None) -> dict[str, bytes]:
    wheel = make_wheel(tmp_path / "made", "demo", "1.0", files={"demo/core.py": "x = 1\n", **(extra or {})})
    return wheel_files(wheel)


def _falsify(entries: Entries, member: str, **fields: object) -> Entries:
    return [replace(e, **fields) if e.name == member.encode() else e for e in entries]  # type: ignore[arg-type]


def _with_record(files: dict[str, bytes]) -> dict[str, bytes]:
    return {**files, f"{DIST}/RECORD": record(files, DIST)}


def _nul_name(entries: Entries) -> bytes:
    # zipfile cuts the name at the NUL and sees demo/core.py twice; another reader sees "demo/core.py\0.pth".
    return build([*entries, Entry(b"demo/core.py\x00.pth", b"import os\n")])


def _local_name(entries: Entries) -> bytes:
    return build(_falsify(entries, "demo/core.py", local_name=b"../../core.py"))


def _local_crc(entries: Entries) -> bytes:
    return build(_falsify(entries, "demo/core.py", local_crc=0xDEADBEEF))


def _symlink(entries: Entries) -> bytes:
    return build(_falsify(entries, "demo/core.py", external_attr=0o120777 << 16))


def _duplicate(entries: Entries) -> bytes:
    return build([*entries, Entry(b"demo/core.py", b"x = 2\n")])


def _encrypted(entries: Entries) -> bytes:
    return build(_falsify(entries, "demo/core.py", flags=0x801))


def _bzip2(entries: Entries) -> bytes:
    return build(_falsify(entries, "demo/core.py", method=zipfile.ZIP_BZIP2))


def _too_small_declared(entries: Entries) -> bytes:
    return build(_falsify(entries, "demo/core.py", file_size=2))


def _too_large_declared(entries: Entries) -> bytes:
    return build(_falsify(entries, "demo/core.py", file_size=4096))


def _overlap(entries: Entries) -> bytes:
    """The 'better zip bomb': a stored member whose data is another member's local header and data."""
    inner = next(e for e in entries if e.name == b"demo/core.py")
    outer = Entry(b"demo/outer.bin", local(inner), method=zipfile.ZIP_STORED)
    rest = [e for e in entries if e.name != b"demo/core.py"]
    body, directory = b"", b""
    for entry in rest:
        directory += central(entry, len(body))
        body += local(entry)
    outer_at = len(body)
    directory += central(outer, outer_at) + central(inner, outer_at + 30 + len(outer.name))
    body += local(outer)
    return body + directory + end(len(rest) + 2, len(body), len(directory))


def _prepended(entries: Entries) -> bytes:
    return build(entries, prefix=b"#!/bin/sh\necho owned\n")


def _prepended_shifted(entries: Entries) -> bytes:
    return build(entries, prefix=b"#!/bin/sh\necho owned\n", shift=True)


def _truncated(entries: Entries) -> bytes:
    return build(entries)[:-30]


def _junk_between(entries: Entries) -> bytes:
    whole = build(entries)
    eocd = whole.rindex(b"PK\x05\x06")
    return whole[:eocd] + b"junk" + whole[eocd:]


def _bad_deflate(entries: Entries) -> bytes:
    core = next(e for e in entries if e.name == b"demo/core.py")
    return build(_falsify(entries, "demo/core.py", payload=b"\xff" * len(core.compressed)))


def _stored_sizes_differ(entries: Entries) -> bytes:
    core = next(e for e in entries if e.name == b"demo/core.py")
    stored = replace(core, method=zipfile.ZIP_STORED, file_size=len(core.data) + 5)
    return build([stored if e.name == b"demo/core.py" else e for e in entries])


HOSTILE: list[tuple[str, Callable[[Entries], bytes], str]] = [
    ("nul-in-name", _nul_name, "has a NUL or control byte"),
    ("local-name-differs", _local_name, "is named b'../../core.py' in its local header"),
    ("local-crc-differs", _local_crc, "local and central sizes or CRC that disagree"),
    ("symlink", _symlink, "'demo/core.py' is a symbolic link"),
    ("duplicate-name", _duplicate, "'demo/core.py' appears twice"),
    ("encrypted", _encrypted, "is encrypted"),
    ("bzip2", _bzip2, "compression method 12"),
    ("declared-size-too-small", _too_small_declared, "unpacks to more than its declared 2 bytes"),
    ("declared-size-too-large", _too_large_declared, "not its declared 4096"),
    ("overlapping-members", _overlap, "overlap"),
    ("prepended-data", _prepended, "data before the archive"),
    ("prepended-data-offsets-shifted", _prepended_shifted, "has data before its first member"),
    ("truncated", _truncated, "is not a zip archive"),
    ("junk-before-end-record", _junk_between, "data before the archive or between its directory"),
    ("bad-deflate", _bad_deflate, "is not valid deflate data"),
    ("stored-sizes-differ", _stored_sizes_differ, "is stored but its two sizes differ"),
]


@pytest.mark.parametrize(("case", "make", "message"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_archive_is_refused(
    tmp_path: Path, case: str, make: Callable[[Entries], bytes], message: str
) -> None:
    files = _with_record(_files(tmp_path))
    entries = entries_for(files)
    if case.startswith("declared-size"):  # RECORD agrees with the lie, so only the real byte count can tell
        size = 2 if case.endswith("small") else 4096
        lines = [
            f"{ln.rsplit(',', 1)[0]},{size}" if ln.startswith("demo/core.py,") else ln
            for ln in files[f"{DIST}/RECORD"].decode().splitlines()
        ]
        entries = _falsify(entries, f"{DIST}/RECORD", data=("\n".join(lines) + "\n").encode())
    wheel = tmp_path / NAME
    wheel.write_bytes(make(entries))
    with pytest.raises(UnsafeWheelError) as info:
        read_wheel(wheel)
    assert message in str(info.value)
    assert str(info.value).startswith(f"{NAME}") and "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"WHEEL": b"Wheel-Version: 2.0\nGenerator: x\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
         "is wheel format 2.0; wheelfit and its installers read format 1.x"),
        ({"WHEEL": b"Generator: x\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}, "no readable Wheel-Version"),
        ({"WHEEL": None}, f"has no {DIST}/WHEEL"),
        ({"demo-1.0.data/etc/evil.conf": b"x\n"}, "demo-1.0.data/etc/ is not an install scheme"),
    ],
    ids=["wheel-version-2", "no-wheel-version", "no-wheel-file", "unknown-data-scheme"],
)  # fmt: skip
def test_a_wheel_format_or_layout_no_installer_agrees_on_is_refused(
    tmp_path: Path, change: dict[str, bytes | None], message: str
) -> None:
    """PEP 427: fail on a greater Wheel-Version major; a ``.data`` directory that is not an install scheme."""
    files = _files(tmp_path)
    for member, data in change.items():
        key = f"{DIST}/{member}" if member == "WHEEL" else member
        if data is None:
            del files[key]
        else:
            files[key] = data
    wheel = tmp_path / NAME
    wheel.write_bytes(build(entries_for(_with_record(files))))
    with pytest.raises(UnsafeWheelError) as info:
        read_wheel(wheel)
    assert message in str(info.value) and str(info.value).startswith(NAME)


@pytest.mark.parametrize(
    ("dist_info", "metadata_name", "second", "message"),
    [
        ("demo-2.0.dist-info", "demo", False, "its demo-2.0.dist-info does not match the file name"),
        ("other-1.0.dist-info", "demo", False, "its other-1.0.dist-info does not match the file name"),
        (DIST, "other", False, "METADATA says other 1.0, not what the file name says"),
        (DIST, "demo", True, "has 2 .dist-info directories, a wheel has exactly one"),
    ],
    ids=["dist-info-version", "dist-info-name", "metadata-name", "two-dist-infos"],
)
def test_a_wheel_whose_metadata_names_another_distribution_is_refused(
    tmp_path: Path, dist_info: str, metadata_name: str, second: bool, message: str
) -> None:
    """The installers find a wheel's metadata by its .dist-info name: one that disagrees with the file name (or two
    of them) would install under a name the plan never checked."""
    files = {k.replace(DIST, dist_info): v for k, v in _files(tmp_path).items()}
    meta = f"{dist_info}/METADATA"
    files[meta] = files[meta].replace(b"Name: demo", f"Name: {metadata_name}".encode())
    if second:
        files["twin-1.0.dist-info/METADATA"] = b"Metadata-Version: 2.1\nName: twin\nVersion: 1.0\n"
    files[f"{dist_info}/RECORD"] = record(files, dist_info)
    wheel = tmp_path / NAME
    wheel.write_bytes(build(entries_for(files)))
    with pytest.raises(UnsafeWheelError) as info:
        read_wheel(wheel)
    assert message in str(info.value) and str(info.value).startswith(NAME)


def test_the_true_rebuild_and_benign_variations_are_accepted(tmp_path: Path) -> None:
    """The same wheel rebuilt byte by byte, as ZIP64 (torch > 4 GiB), with a comment, and with a directory entry."""
    files = _with_record(_files(tmp_path))
    wheel = tmp_path / NAME
    for data in (
        build(entries_for(files)),
        build([replace(e, zip64=True) for e in entries_for(files)], zip64=True),
        build(entries_for(files))[:-2] + struct.pack("<H", 7) + b"comment",
        build([Entry(b"demo/", b""), *entries_for(files)]),
        build(entries_for(_with_record({**_files(tmp_path), "demo-1.0.data/purelib/demo_extra.py": b"y = 2\n"}))),
    ):
        wheel.write_bytes(data)
        assert read_wheel(wheel).name == "demo"


def test_a_member_that_expands_past_the_ratio_cap_is_refused(tmp_path: Path) -> None:
    files = _with_record(_files(tmp_path, {"demo/zeros.bin": b"\0" * (2 * 1024**2)}))
    wheel = tmp_path / NAME
    wheel.write_bytes(build(entries_for(files)))
    with pytest.raises(UnsafeWheelError, match=r"'demo/zeros\.bin' expands 200x or more"):
        read_wheel(wheel)


def test_a_wheel_declaring_more_than_the_absolute_cap_is_refused_before_reading_it(tmp_path: Path) -> None:
    """A stored ZIP64 member of MAX_UNPACKED + 1 bytes, in a sparse file: refused on its declared size alone."""
    files = _with_record(_files(tmp_path))
    head = b"".join(local(e) for e in entries_for(files))
    huge = Entry(b"demo/huge.bin", b"", zipfile.ZIP_STORED, 0x808, file_size=MAX_UNPACKED + 1, zip64=True)
    header = local(huge)
    wheel = tmp_path / NAME
    with wheel.open("wb") as f:
        f.write(head + header)
        f.seek(MAX_UNPACKED + 1, os.SEEK_CUR)  # the member's data: a hole, never written
        cd_offset = f.tell()
        offsets, at = [], 0
        for entry in entries_for(files):
            offsets.append(at)
            at += len(local(entry))
        directory = b"".join(central(e, o) for e, o in zip(entries_for(files), offsets, strict=True))
        directory += _stored_zip64_central(huge, len(head))
        f.write(directory + end(len(files) + 1, cd_offset, len(directory), zip64=True))
    with pytest.raises(UnsafeWheelError, match="more than any real wheel"):
        read_wheel(wheel)


def _stored_zip64_central(entry: Entry, offset: int) -> bytes:
    """Central entry for a stored member whose data is not in ``entry`` (compressed size = declared size)."""
    size = entry.size
    body = struct.pack("<QQQ", size, size, offset)
    extra = struct.pack("<HH", 1, len(body)) + body
    return struct.pack(
        "<4s6H3L5H2L", b"PK\x01\x02", 0x031E, 45, entry.flags, 0, 0, 0x5021, 0,
        0xFFFFFFFF, 0xFFFFFFFF, len(entry.name), len(extra), 0, 0, 0, entry.external_attr, 0xFFFFFFFF,
    ) + entry.name + extra  # fmt: skip


# End to end: wheelfit refuses before uv or pip sees the wheel, and the venv is as it was.


def _hostile_torch(directory: Path, case: str) -> Path:
    wheel = make_torch_like(directory, "2.15.0", "xpu", requires=["pytorch-triton-xpu==3.6.0"])
    files = wheel_files(wheel)
    dist = next(n.split("/")[0] for n in files if n.endswith(".dist-info/RECORD"))
    if case == "nul-in-name":
        files[f"{dist}/RECORD"] = record(files, dist)
        data = build([*entries_for(files), Entry(b"torch/__init__.py\x00.pth", b"import os\n")])
    elif case == "record-mismatch":
        # Same size, other bytes: only the hash can tell (RECORD keeps the old one).
        files["torch/version.py"] = files["torch/version.py"].replace(b"2.15.0", b"6.66.6", 1)
        data = build(entries_for(files))
    else:  # entry point: pip would rename '../../owned' and exit 0
        files[f"{dist}/entry_points.txt"] = b"[console_scripts]\n../../owned = torch:__init__\n"
        files[f"{dist}/RECORD"] = record(files, dist)
        data = build(entries_for(files))
    wheel.write_bytes(data)
    return wheel


E2E = [
    ("nul-in-name", "has a NUL or control byte"),
    ("record-mismatch", "'torch/version.py' does not match its RECORD sha256 hash"),
    ("entry-point", "console_scripts script name '../../owned' is not a plain file name"),
]


@pytest.mark.parametrize("installer", ["uv", "pip"])
@pytest.mark.parametrize(("case", "message"), E2E, ids=[e[0] for e in E2E])
def test_a_hostile_torch_wheel_is_refused_end_to_end_and_the_env_is_untouched(
    index: Index, env: dict[str, str], tmp_path: Path, installer: str, case: str, message: str
) -> None:
    where = f"hostile-{case}-{installer}"
    hostile = index.put(f"{where}/xpu", partial(_hostile_torch, case=case))
    index.put(f"{where}/xpu", partial(make_wheel, name="pytorch-triton-xpu", version="3.6.0"))
    python = make_venv(tmp_path / "venv")
    before_pkgs, before_tree = installed(python, env), tree(tmp_path / "venv")
    argv = ["install", "torch", "--target", "xpu=bmg", "--python", str(python), "--installer", installer]
    # With uv, a wheel that fails only its member hashes (record-mismatch) is being unpacked into uv's cache
    # meanwhile (install/prefetch.py): that is stopped and its throw-away target deleted.
    (tmp_path / "tmp").mkdir()
    env = {**env, "TMPDIR": str(tmp_path / "tmp")}
    done = run_wheelfit([*argv, "--pytorch-index", f"{index.url}/{where}", "--index-url", index.default], env)
    assert list((tmp_path / "tmp").iterdir()) == []
    assert done.returncode == 1, done.stderr
    line = error_line(done.stderr)
    assert message in line and hostile.name in line and "refusing to install it" in line
    assert installed(python, env) == before_pkgs
    assert tree(tmp_path / "venv") == before_tree
    assert not (tmp_path / "owned").exists()
