"""Fuzz targets: wheel file names, METADATA, RECORD, entry_points.txt and the raw zip reader (issue 15).

Contract (wheelfit.install.wheelfile, .record, .zipcheck): given any bytes, each either returns or raises
UnsafeWheelError, never anything else. Arbitrary bytes rarely get past a zip's end record, so most examples
mutate a real wheel (a few bytes overwritten, cut short, or a field replaced) to reach the later checks.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.support.hostile_zip import build, entries_for, record, wheel_files
from tests.support.wheels import make_wheel
from wheelfit.install.errors import UnsafeWheelError
from wheelfit.install.record import check_entry_points, parse_record
from wheelfit.install.wheelfile import read_wheel
from wheelfit.install.zipcheck import scan

DIST = "demo-1.0.dist-info"
NAME = "demo-1.0-py3-none-any.whl"

_work = Path(tempfile.mkdtemp(prefix="wheelfit-fuzz-wheel-"))
FILES = wheel_files(make_wheel(_work / "made", "demo", "1.0", requires=["numpy>=1"], files={"demo/a.py": "x = 1\n"}))
VALID = build(entries_for(FILES))


@pytest.fixture(scope="module", autouse=True)
def _cleanup() -> Iterator[None]:
    yield
    for path in sorted(_work.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    _work.rmdir()


def _read(data: bytes, name: str = NAME) -> None:
    path = _work / name
    path.write_bytes(data)
    try:
        read_wheel(path, workers=2)
    except UnsafeWheelError:
        pass
    finally:
        path.unlink()


def _with(member: str, data: bytes, *, fresh_record: bool = True) -> bytes:
    files = {**FILES, member: data}
    if fresh_record and member != f"{DIST}/RECORD":
        files[f"{DIST}/RECORD"] = record(files, DIST)
    return build(entries_for(files))


@given(st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.integers(0, 255)), min_size=1, max_size=6))
def test_a_mutated_wheel_is_read_or_refused(changes: list[tuple[int, int]]) -> None:
    data = bytearray(VALID)
    for at, value in changes:
        data[at] = value
    _read(bytes(data))


@given(st.integers(0, len(VALID)), st.binary(max_size=64))
def test_a_cut_or_padded_wheel_is_read_or_refused(cut: int, tail: bytes) -> None:
    _read(VALID[:cut] + tail)
    _read(tail + VALID)


@given(st.binary(max_size=600))
@example(b"PK\x05\x06" + b"\0" * 18)
@example(b"PK\x05\x06" + b"\xff" * 18)
def test_arbitrary_bytes_as_a_zip_are_refused(data: bytes) -> None:
    with contextlib.suppress(UnsafeWheelError):
        scan(io.BytesIO(data), len(data), NAME)


@given(st.text(max_size=80))
@example("demo-1.0-py3-none-any.whl\x00")
@example("demo-1.0-py3-none-any.whl/")
@example("demo-1.0-zz-py3-none-any.whl")
@example("demo-1..0-py3-none-any.whl")
@example("demo-1.0-" + "9" * 5000 + "-py3-none-any.whl")
@example("demo-" + "9" * 5000 + "-py3-none-any.whl")
def test_any_wheel_file_name_is_read_or_refused(name: str) -> None:
    """A name that parses is looked for in a directory that does not exist: refused as unreadable."""
    with contextlib.suppress(UnsafeWheelError):
        read_wheel(_work / "absent" / name)


@given(st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
@example(b"Name: demo\nVersion: 1.0\nRequires-Dist: numpy>=\n\n")
@example(b"Name: demo\nVersion: 1.0.0.0.0.0.x\n\n")
@example(b"Name: \xff\nVersion: \xfe\n\n")
@example(b"Name: demo\nVersion: " + b"9" * 5000 + b"\n\n")
def test_any_metadata_is_read_or_refused(metadata: bytes) -> None:
    _read(_with(f"{DIST}/METADATA", metadata))


@given(st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
@example(b'"unterminated,sha256=,1\n')
@example(b"a,sha256=" + b"A" * 43 + b",99999999999999999999999\n")
@example(b"a,blake2b=,\n")
def test_any_record_is_read_or_refused(data: bytes) -> None:
    with contextlib.suppress(UnsafeWheelError):
        parse_record(data, DIST, NAME)
    _read(_with(f"{DIST}/RECORD", data))


@given(st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
@example(b"[console_scripts]\n")
@example(b"[console_scripts]\nx = \n")
@example(b"[console_scripts]\n%(x)s = a:b\n")
@example(b"\xef\xbb\xbf[gui_scripts]\n a = b\n")
def test_any_entry_points_are_read_or_refused(data: bytes) -> None:
    with contextlib.suppress(UnsafeWheelError):
        check_entry_points(data, NAME)
    _read(_with(f"{DIST}/entry_points.txt", data))
