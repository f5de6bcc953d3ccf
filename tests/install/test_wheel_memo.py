"""The remembered archive check: it saves re-reading a 12,000-member torch wheel on every warm install, and it
never vouches for a file that changed since it was checked."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from tests.support.wheels import make_wheel
from wheelfit.install.errors import UnsafeWheelError
from wheelfit.install.wheelfile import checked_wheel


def _memo(wheel: Path) -> Path:
    return wheel.with_name(f".{wheel.name}.checked.json")


def test_check_is_remembered_and_answers_without_opening_the_archive(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "torchdemo", "1.0", requires=["triton==3.1.0", "numpy"])
    first = checked_wheel(wheel)
    assert _memo(wheel).is_file()
    # Same bytes count and timestamps, different content: only the memo can answer now.
    st = wheel.stat()
    with wheel.open("r+b") as f:
        f.write(b"\0" * st.st_size)
    os.utime(wheel, ns=(st.st_atime_ns, st.st_mtime_ns))
    again = checked_wheel(wheel)
    assert again == first
    assert [str(r) for r in again.requires] == ["triton==3.1.0", "numpy"]


def test_a_changed_wheel_is_checked_again_and_refused(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "torchdemo", "1.0")
    checked_wheel(wheel)
    with zipfile.ZipFile(wheel, "a") as zf:
        zf.writestr("../../evil.py", "print('owned')\n")
    with pytest.raises(UnsafeWheelError, match="climbs out"):
        checked_wheel(wheel)


def test_a_garbage_memo_is_ignored(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "torchdemo", "1.0", requires=["triton==3.1.0"])
    _memo(wheel).write_text("{not json")
    info = checked_wheel(wheel)
    assert info.name == "torchdemo" and [str(r) for r in info.requires] == ["triton==3.1.0"]
