"""Real mounts for the rollback tests: a tmpfs as an environment's site-packages (its own volume, a mount point
that cannot be renamed, a disk that fills up), made read-only on demand. Needs root and Linux; elsewhere the
tests that use it are skipped, saying why."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["remount", "site_packages", "tmpfs"]


def site_packages(venv: Path) -> Path:
    (found,) = venv.glob("lib/python3*/site-packages")
    return found


@contextlib.contextmanager
def tmpfs(directory: Path, size: str) -> Iterator[Path]:
    """``directory`` becomes a tmpfs of ``size`` (``mount -t tmpfs -o size=...``) for the block."""
    if sys.platform != "linux" or shutil.which("mount") is None:
        pytest.skip("needs Linux's mount(8) to put site-packages on a volume of its own")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(directory)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"mount -t tmpfs is not permitted here ({done.stderr.strip()}): run as root, as CI does")
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], capture_output=True, check=False)


def remount(directory: Path, mode: str) -> None:
    """``mode`` ``ro`` or ``rw``: the mount at ``directory`` becomes read-only or writable again."""
    subprocess.run(["mount", "-o", f"remount,{mode}", str(directory)], check=True, capture_output=True)
