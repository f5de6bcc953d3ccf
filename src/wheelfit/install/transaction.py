"""All or nothing: a hard-link snapshot of the target's install directories, restored if the install fails.

Why not trust the backends: pip rolls back only the distribution that failed (the ones before it stay
installed), and uv has no multi-package rollback (style-and-security-anchors §2.5). Both replace a file by
writing a new one, never by rewriting it in place, so hard links keep the old contents intact at no copy cost.
Files an install writes outside these directories (``.data/data`` into the prefix) are not covered.
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from .errors import InstallError

__all__ = ["Snapshot", "env_lock"]


def _why(exc: OSError) -> str:
    return f"{exc.strerror or type(exc).__name__}: {exc.filename}" if exc.filename else str(exc)


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
        shutil.copy2(src, dst, follow_symlinks=False)


class Snapshot:
    """The state of ``dirs`` when taken; ``restore()`` puts it back, ``discard()`` drops it."""

    def __init__(self, dirs: Sequence[Path], workdir: Path) -> None:
        self.workdir = workdir
        self.saved: list[tuple[Path, Path | None]] = []
        try:
            workdir.mkdir(parents=True)
            for i, d in enumerate(dirs):
                if d.is_dir():
                    copy = workdir / str(i)
                    shutil.copytree(d, copy, symlinks=True, copy_function=_link_or_copy)
                    self.saved.append((d, copy))
                else:
                    self.saved.append((d, None))
        except OSError as exc:
            self.discard()
            raise InstallError(
                f"cannot take the rollback snapshot in {workdir.parent} ({_why(exc)}); nothing was installed. "
                "Is the environment writable by you? A virtual environment of your own always is"
            ) from exc

    def restore(self) -> None:
        for i, (d, copy) in enumerate(self.saved):
            if d.exists():
                trash = self.workdir / f"failed-{i}"
                os.replace(d, trash)
            if copy is not None:
                os.replace(copy, d)
        self.discard()

    def discard(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)


@contextmanager
def env_lock(prefix: Path, timeout: float = 300.0) -> Iterator[None]:
    """One wheelfit install per environment at a time (``<prefix>/.wheelfit.lock``; uv itself locks
    ``<prefix>/.lock``, so the name must differ)."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory lock, as pip
        yield
        return
    path = prefix / ".wheelfit.lock"
    try:
        handle = open(path, "a")  # noqa: SIM115 - closed by the with below; opening is what may fail
    except OSError as exc:
        raise InstallError(
            f"cannot create the lock file {path} ({_why(exc)}); nothing was installed. "
            "Is the environment writable by you? A virtual environment of your own always is"
        ) from exc
    with handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise InstallError(
                        f"another wheelfit install holds {path} after {timeout:.0f} s; wait for it or remove the lock"
                    ) from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
