"""Files written for people (``wheelfit.userfiles``): never torn, the original's mode kept, several all or none, and
every failure one line naming the path with the originals as they were."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

from wheelfit.userfiles import UserFileError, Write, write_files


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _umask() -> int:
    """This process's umask, read in a child so that the test changes nothing process-wide."""
    out = subprocess.run(["sh", "-c", "umask"], capture_output=True, text=True, check=True)
    return int(out.stdout.strip(), 8)


def test_an_existing_file_keeps_its_mode_and_a_new_one_gets_what_open_gives(tmp_path: Path) -> None:
    kept = tmp_path / "pylock.toml"
    kept.write_text("old\n")
    kept.chmod(0o640)
    new = tmp_path / "sub" / "requirements.txt"
    write_files([Write(kept, b"new\r\n"), Write(new, b"x\n")])
    assert kept.read_bytes() == b"new\r\n" and _mode(kept) == 0o640  # bytes as given: CRLF stays CRLF
    assert new.read_bytes() == b"x\n" and _mode(new) == 0o666 & ~_umask()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pylock.toml", "sub"]  # no temporary file left


def test_several_files_are_all_or_none(tmp_path: Path) -> None:
    first = tmp_path / "pylock.cu126.toml"
    first.write_text("the user's lock\n")
    second = tmp_path / "pylock.cu130.toml"
    second.mkdir()  # cannot be written: the first file must not be replaced either
    with pytest.raises(UserFileError) as info:
        write_files([Write(first, b"new\n"), Write(second, b"new\n")])
    assert str(info.value) == f"{second} is a directory; give a file name"
    assert first.read_text() == "the user's lock\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pylock.cu126.toml", "pylock.cu130.toml"]


def test_a_read_only_volume_is_one_line_and_nothing_changes(tmp_path: Path) -> None:
    """A read-only file system (root writes into a read-only directory, so a real read-only mount)."""
    from tests.install.mounts import remount, tmpfs

    disk = tmp_path / "disk"
    disk.mkdir()
    with tmpfs(disk, "1m"):
        (disk / "pyproject.toml").write_text("[project]\n")
        remount(disk, "ro")
        try:
            with pytest.raises(UserFileError) as info:
                write_files([Write(disk / "pyproject.toml", b"changed\n")])
        finally:
            remount(disk, "rw")
        assert str(info.value) == (
            f"cannot write {disk / 'pyproject.toml'} (Read-only file system): the file system is read-only; "
            "write the file elsewhere; nothing was changed"
        )
        assert (disk / "pyproject.toml").read_text() == "[project]\n"


def test_a_full_disk_leaves_the_original_and_no_temporary_file(tmp_path: Path) -> None:
    from tests.install.mounts import tmpfs

    disk = tmp_path / "disk"
    disk.mkdir()
    with tmpfs(disk, "64k"):
        original = disk / "pyproject.toml"
        original.write_text("[project]\nname = 'x'\n")
        with pytest.raises(UserFileError) as info:
            write_files([Write(original, b"#" * 200_000)])
        assert "No space left on device" in str(info.value) and "free some space" in str(info.value)
        assert "\n" not in str(info.value)
        assert original.read_text() == "[project]\nname = 'x'\n"
        assert [p.name for p in disk.iterdir()] == ["pyproject.toml"]


def test_a_name_too_long_is_one_clipped_line(tmp_path: Path) -> None:
    long = tmp_path / ("x" * 5000)
    with pytest.raises(UserFileError) as info:
        write_files([Write(long, b"x")])
    message = str(info.value)
    assert "give a shorter file name" in message and len(message) < 500
