"""RECORD is checked, not trusted, and script names are wheelfit's to validate (issue 15, tasks 1 and 2).

Each case starts from a real, valid wheel and breaks one thing; the archive is written by tests/support/hostile_zip
so that nothing else about it changes.
"""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.hostile_zip import build, entries_for, record, record_hash, wheel_files
from tests.support.wheels import make_wheel
from wheelfit.install.errors import UnsafeWheelError
from wheelfit.install.wheelfile import read_wheel

DIST = "demo-1.0.dist-info"
RECORD = f"{DIST}/RECORD"
BIG = os.urandom(3 * 1024**2 + 17)  # more than one 1 MiB chunk, incompressible


def _files(tmp_path: Path, extra: dict[str, bytes] | None = None) -> dict[str, bytes]:
    wheel = make_wheel(tmp_path / "made", "demo", "1.0", files={"demo/big.bin": BIG, **(extra or {})})
    return wheel_files(wheel)


def _write(tmp_path: Path, files: dict[str, bytes], *, true_record: bool = True) -> Path:
    if true_record:
        files = {**files, RECORD: record(files, DIST)}
    path = tmp_path / "demo-1.0-py3-none-any.whl"
    path.write_bytes(build(entries_for(files)))
    return path


def _record_lines(files: dict[str, bytes]) -> list[str]:
    return files[RECORD].decode().splitlines()


def _set_record(files: dict[str, bytes], lines: list[str]) -> dict[str, bytes]:
    return {**files, RECORD: ("\n".join(lines) + "\n").encode()}


def _tamper_big(files: dict[str, bytes]) -> dict[str, bytes]:
    return {**files, "demo/big.bin": BIG[:-1] + bytes([BIG[-1] ^ 1])}  # same size, RECORD left as it was


def _unrecorded(files: dict[str, bytes]) -> dict[str, bytes]:
    return {**files, "demo/sneaked_in.py": b"import os\n"}


def _drop_line(files: dict[str, bytes]) -> dict[str, bytes]:
    return _set_record(files, [ln for ln in _record_lines(files) if not ln.startswith("demo/__init__.py,")])


def _ghost_line(files: dict[str, bytes]) -> dict[str, bytes]:
    return _set_record(files, [*_record_lines(files), f"demo/ghost.py,{record_hash(b'')},0"])


def _wrong_size(files: dict[str, bytes]) -> dict[str, bytes]:
    lines = [f"demo/big.bin,{record_hash(BIG)},{len(BIG) + 1}" if ln.startswith("demo/big.bin,") else ln
             for ln in _record_lines(files)]  # fmt: skip
    return _set_record(files, lines)


def _algorithm(name: str) -> Callable[[dict[str, bytes]], dict[str, bytes]]:
    def change(files: dict[str, bytes]) -> dict[str, bytes]:
        lines = [f"demo/big.bin,{record_hash(BIG, name)},{len(BIG)}" if ln.startswith("demo/big.bin,") else ln
                 for ln in _record_lines(files)]  # fmt: skip
        return _set_record(files, lines)

    return change


def _line(text: str) -> Callable[[dict[str, bytes]], dict[str, bytes]]:
    return lambda files: _set_record(files, [*_record_lines(files), text])


def _raw_record(data: bytes) -> Callable[[dict[str, bytes]], dict[str, bytes]]:
    return lambda files: {**files, RECORD: data}


def _no_record(files: dict[str, bytes]) -> dict[str, bytes]:
    return {name: data for name, data in files.items() if name != RECORD}


BROKEN = [
    ("content-differs-from-record", _tamper_big, "'demo/big.bin' does not match its RECORD sha256 hash"),
    ("member-not-in-record", _unrecorded, "'demo/sneaked_in.py' is not in its RECORD"),
    ("record-line-dropped", _drop_line, "'demo/__init__.py' is not in its RECORD"),
    ("record-names-a-missing-member", _ghost_line, "RECORD lists 'demo/ghost.py', which the wheel lacks"),
    ("size-mismatch", _wrong_size, "RECORD says"),
    ("md5", _algorithm("md5"), "with 'md5', not sha256 or stronger"),
    ("sha1", _algorithm("sha1"), "with 'sha1', not sha256 or stronger"),
    ("sha224", _algorithm("sha224"), "with 'sha224', not sha256 or stronger"),
    ("no-hash", _line("demo/extra.py,,"), "RECORD gives no hash for 'demo/extra.py'"),
    ("duplicate-line", _line(f"demo/__init__.py,{record_hash(b'')},0"), "RECORD lists 'demo/__init__.py' twice"),
    ("two-fields", _line("demo/x.py,sha256=abc"), "has 2 fields, not 3"),
    ("unterminated-quote", _line('"demo/x.py,sha256=abc,1'), "not valid CSV"),
    ("not-utf8", _raw_record(b"demo/\xff,,\n"), "RECORD is not UTF-8"),
    ("bad-base64", _line("demo/x.py,sha256=!!!,1"), "unreadable hash"),
    ("short-digest", _line(f"demo/x.py,sha256={record_hash(b'')[7:19]},1"), "hash of the wrong length"),
    ("size-not-a-number", _line(f"demo/x.py,{record_hash(b'')},zero"), "RECORD has no size"),
    ("no-record", _no_record, f"has no {RECORD}"),
]


@pytest.mark.parametrize(("case", "change", "message"), BROKEN, ids=[c[0] for c in BROKEN])
def test_a_wheel_that_breaks_its_record_is_refused(
    tmp_path: Path, case: str, change: Callable[[dict[str, bytes]], dict[str, bytes]], message: str
) -> None:
    wheel = _write(tmp_path, change(_files(tmp_path)), true_record=False)
    with pytest.raises(UnsafeWheelError) as info:
        read_wheel(wheel)
    assert message in str(info.value)
    assert str(info.value).startswith(f"{wheel.name}: ") and "\n" not in str(info.value)


def test_the_untampered_wheel_and_the_allowed_exceptions_are_accepted(tmp_path: Path) -> None:
    """RECORD.jws/RECORD.p7s may be unrecorded, directory members need no line, sha512 is strong enough."""
    files = _files(tmp_path)
    files = {**_algorithm("sha512")(files), f"{DIST}/RECORD.jws": b"{}", f"{DIST}/RECORD.p7s": b"sig"}
    path = _write(tmp_path, {"demo/": b"", **files}, true_record=False)
    assert read_wheel(path).name == "demo"
    assert read_wheel(_write(tmp_path, _files(tmp_path)), workers=1).name == "demo"


def test_the_hash_check_runs_in_parallel_and_any_worker_refuses(tmp_path: Path) -> None:
    extra = {f"demo/part{i}.bin": os.urandom(300_000) for i in range(24)}
    files = _files(tmp_path, extra)
    files = {**files, "demo/part17.bin": b"x" * 300_000}  # RECORD still has the original hash
    wheel = _write(tmp_path, files, true_record=False)
    for workers in (1, 4):
        with pytest.raises(UnsafeWheelError, match=r"'demo/part17\.bin' does not match its RECORD"):
            read_wheel(wheel, workers=workers)


def test_members_are_hashed_streaming_never_whole_in_memory(tmp_path: Path) -> None:
    """A 48 MiB stored member is checked with a few MiB of memory: chunks, not the member."""
    big = os.urandom(48 * 1024**2)
    files = {**_files(tmp_path), "demo/huge.bin": big}
    files = {**files, RECORD: record(files, DIST)}
    path = tmp_path / "demo-1.0-py3-none-any.whl"
    path.write_bytes(build([replace(e, method=0) if e.name == b"demo/huge.bin" else e for e in entries_for(files)]))
    del big, files
    tracemalloc.start()
    try:
        read_wheel(path, workers=2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 12 * 1024**2, peak


SCRIPTS = [
    ("climbs", "[console_scripts]\n../../x = demo:main\n", "console_scripts script name '../../x' is not a plain"),
    ("backslash", "[gui_scripts]\n..\\x = demo:main\n", "gui_scripts script name '..\\\\x' is not a plain"),
    ("dotfile", "[console_scripts]\n.bashrc = demo:main\n", "script name '.bashrc' starts with '.'"),
    ("dash", "[console_scripts]\n-rf = demo:main\n", "script name '-rf' starts with '-'"),
    ("control", "[console_scripts]\nx\x1by = demo:main\n", "is not a plain file name"),
    ("empty", "[console_scripts]\n = demo:main\n", "entry_points.txt is malformed"),
    ("no-section", "x = demo:main\n", "entry_points.txt is malformed"),
    ("duplicate", "[console_scripts]\nx = demo:a\nx = demo:b\n", "entry_points.txt is malformed"),
    ("bad-target", "[console_scripts]\nx = demo:main; rm -rf /\n", "points at 'demo:main; rm -rf /'"),
]


@pytest.mark.parametrize(("case", "text", "message"), SCRIPTS, ids=[s[0] for s in SCRIPTS])
def test_a_script_that_is_not_a_plain_file_name_is_refused(tmp_path: Path, case: str, text: str, message: str) -> None:
    wheel = _write(tmp_path, {**_files(tmp_path), f"{DIST}/entry_points.txt": text.encode()})
    with pytest.raises(UnsafeWheelError) as info:
        read_wheel(wheel)
    assert message in str(info.value)
    assert "refusing to install it" in str(info.value)


def test_ordinary_entry_points_are_accepted(tmp_path: Path) -> None:
    text = (
        "[console_scripts]\ntorchrun = torch.distributed.run:main\nx-y.z_1 = demo\n"
        "[gui_scripts]\ndemo-gui = demo.gui:App.run [gui]\n[torch.backends]\n../odd = demo:plugin\n"
    )
    wheel = _write(tmp_path, {**_files(tmp_path), f"{DIST}/entry_points.txt": text.encode()})
    assert read_wheel(wheel).name == "demo"


@pytest.mark.parametrize(
    ("member", "message"),
    [
        ("demo-1.0.data/scripts/.profile", "scripts/ has script name '.profile' starts with '.'"),
        ("demo-1.0.data/scripts/sub/run", "scripts/ has script name 'sub/run' is not a plain file name"),
        ("demo-1.0.data/scripts/-x", "starts with '-'"),
    ],
)
def test_a_data_script_with_an_unsafe_name_is_refused(tmp_path: Path, member: str, message: str) -> None:
    wheel = _write(tmp_path, {**_files(tmp_path), member: b"#!/bin/sh\n"})
    with pytest.raises(UnsafeWheelError, match="refusing to install it") as info:
        read_wheel(wheel)
    assert message in str(info.value)


def test_a_plain_data_script_is_accepted(tmp_path: Path) -> None:
    wheel = _write(tmp_path, {**_files(tmp_path), "demo-1.0.data/scripts/demo-run": b"#!/bin/sh\n"})
    assert read_wheel(wheel).name == "demo"
