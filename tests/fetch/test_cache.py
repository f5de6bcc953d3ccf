"""The cache: where it lives, atomic writes, stored pages; and the one cross-process lock (``wheelfit.locking``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import hermetic_env
from wheelfit.fetch import default_cache_dir
from wheelfit.fetch.cache import Cache, CachedPage, atomic_write
from wheelfit.locking import LockTimeoutError, file_lock

HOME = Path("/home/u")


@pytest.mark.parametrize(
    ("env", "platform", "expected"),
    [
        ({"WHEELFIT_CACHE_DIR": "/srv/cache"}, "linux", "/srv/cache"),
        ({"WHEELFIT_CACHE_DIR": "/srv/cache", "XDG_CACHE_HOME": "/x"}, "darwin", "/srv/cache"),
        ({"XDG_CACHE_HOME": "/x"}, "linux", "/x/wheelfit"),
        ({"XDG_CACHE_HOME": "relative"}, "linux", "/home/u/.cache/wheelfit"),  # XDG: relative paths are ignored
        ({}, "linux", "/home/u/.cache/wheelfit"),
        ({}, "darwin", "/home/u/Library/Caches/wheelfit"),
        ({"LOCALAPPDATA": "C:/Users/u/AppData/Local"}, "win32", "C:/Users/u/AppData/Local/wheelfit/Cache"),
    ],
)
def test_cache_dir(env: dict[str, str], platform: str, expected: str) -> None:
    assert default_cache_dir(env, platform, HOME) == Path(expected)


def test_atomic_write_replaces_whole_files_and_cleans_up_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "a" / "file"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    blocked = tmp_path / "a" / "dir"
    (blocked / "child").mkdir(parents=True)  # os.replace cannot put a file over a non-empty directory
    with pytest.raises(OSError):
        atomic_write(blocked, b"x")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["dir", "file"]  # no temporary left over


HOLD = """
import sys, time
from pathlib import Path
from wheelfit.locking import file_lock
with file_lock(Path(sys.argv[1]), timeout=5):
    print("locked", flush=True)
    sys.stdin.readline()
"""


def test_lock_held_by_another_process_times_out_clearly_then_is_acquired(tmp_path: Path) -> None:
    lock = tmp_path / "entry" / ".lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=hermetic_env(PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src")),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        waits: list[bool] = []
        with pytest.raises(LockTimeoutError) as info, file_lock(lock, timeout=0.2, on_wait=lambda: waits.append(True)):
            pass
        assert waits == [True] and str(lock) in str(info.value) and "\n" not in str(info.value)
    finally:
        holder.communicate("\n", timeout=10)  # releases the lock and closes the pipes
    with file_lock(lock, timeout=1):
        pass


def test_pages_round_trip_with_validators_and_any_bytes(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    page = CachedPage("https://i.example/x/", b"<a>\xff\xfe</a>", "text/html", '"e1"', "Mon, 01 Jan 2024 00:00:00 GMT")
    cache.store_page(page)
    assert cache.load_page(page.url) == page
    assert cache.load_page("https://i.example/simple/y/") is None
    next(tmp_path.rglob("*.json")).write_text("{broken")
    assert cache.load_page(page.url) is None  # unreadable entries are refetched, never fatal
