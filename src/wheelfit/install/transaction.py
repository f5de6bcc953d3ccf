"""All or nothing: a hard-link snapshot of the target's install directories, restored if the install fails.

Why not trust the backends: pip rolls back only the distribution that failed (the ones before it stay
installed: pip ``req/__init__.py::install_given_reqs``), and uv has no multi-package rollback (astral-sh/uv
``crates/uv-installer``). Both replace a file by
writing a new one, never by rewriting it in place, so hard links keep the old contents intact at no copy cost.
Files an install writes outside these directories (``.data/data`` into the prefix) are not covered.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..fetch.cache import atomic_write
from .errors import InstallError

__all__ = ["SNAPSHOT_PREFIX", "Snapshot", "env_lock", "interrupted", "recover_interrupted"]

#: ``<prefix>/.wheelfit-rollback-<pid>``: where a running install keeps the environment's previous state.
SNAPSHOT_PREFIX = ".wheelfit-rollback-"
_MANIFEST = "snapshot.json"


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
            # Written last: a snapshot without it was cut short before the installer ran, and is only deleted.
            saved = [[str(d), None if c is None else c.name] for d, c in self.saved]
            atomic_write(workdir / _MANIFEST, json.dumps({"saved": saved}).encode())
        except KeyboardInterrupt:
            self.discard()  # Ctrl-C while linking: the installer has not run, the environment is as it was
            raise
        except OSError as exc:
            self.discard()
            raise InstallError(
                f"cannot take the rollback snapshot in {workdir.parent} ({_why(exc)}); nothing was installed. "
                "Is the environment writable by you? A virtual environment of your own always is"
            ) from exc

    @classmethod
    def load(cls, workdir: Path) -> Snapshot | None:
        """A snapshot a run left behind, or None if it was cut short (no manifest) or is unreadable."""
        try:
            data = json.loads((workdir / _MANIFEST).read_bytes())
            saved = [(Path(d), None if c is None else workdir / str(c)) for d, c in data["saved"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        snapshot = cls.__new__(cls)
        snapshot.workdir, snapshot.saved = workdir, saved
        return snapshot

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


def interrupted(prefix: Path) -> list[Path]:
    """Snapshots left in ``prefix`` by a run that died mid-install (meaningful only under :func:`env_lock`)."""
    return sorted(prefix.glob(f"{SNAPSHOT_PREFIX}*"))


def recover_interrupted(prefix: Path, install_dirs: Sequence[Path]) -> list[str]:
    """Put the environment back as it was before an install that was killed midway; call with the lock held.

    Only a complete snapshot of exactly these install directories is restored; one cut short while it was
    being taken (the installer had not started) is deleted.
    """
    notes: list[str] = []
    for workdir in interrupted(prefix):
        snapshot = Snapshot.load(workdir)
        if snapshot is None:
            shutil.rmtree(workdir, ignore_errors=True)
            continue
        if [d for d, _copy in snapshot.saved] != list(install_dirs):
            raise InstallError(
                f"{workdir} is a rollback snapshot of other directories than this environment's; "
                "move it away and check the environment before installing into it"
            )
        snapshot.restore()
        notes.append(
            f"an earlier wheelfit install into {prefix} was interrupted; the environment was first put back as it "
            f"was before it ({workdir.name})"
        )
    return notes


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
