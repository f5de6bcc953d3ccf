"""The one cross-process lock: for a download-cache entry and for an environment being installed into.

Why an OS lock on an open file and not the file's existence: the OS drops the lock when its process dies
(killed, out of memory, power cut), so a crashed run never leaves a lock that blocks every later one, and the
advice in a timeout is to wait for the holder, never to delete a file. POSIX: ``fcntl.flock``. Windows:
``msvcrt.locking`` of the file's first byte; the position is set to 0 first, since a file opened for appending
starts at its end and two processes would otherwise lock different bytes (and exclude nothing).

Each call opens the file anew, so two threads of one process contend as two processes do. The holder writes its
process id into the file, so a waiter that gives up can name it. Waiting polls without blocking, so Ctrl-C (a
``KeyboardInterrupt`` in the main thread, or ``cancelled()`` turning true for a worker thread) stops it at once.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from .errors import Interrupted, WheelfitError

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt
else:
    import fcntl

__all__ = ["LockTimeoutError", "file_lock"]


class LockTimeoutError(WheelfitError):
    """Another process held the lock for longer than the caller would wait."""


@contextlib.contextmanager
def file_lock(
    path: Path,
    *,
    timeout: float,
    what: str = "a lock",
    on_wait: Callable[[], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    error: Callable[[str], Exception] = LockTimeoutError,
    cannot_open: Callable[[OSError], Exception] | None = None,
    poll: float = 0.05,
) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created, with its directory, if needed) for the block.

    ``on_wait`` is called once if the lock is busy, so the caller can tell the user why it pauses; while it
    waits, ``cancelled()`` turning true raises :class:`~wheelfit.errors.Interrupted`. After ``timeout``
    seconds, ``error(message)`` is raised: one line naming the lock file, ``what`` it guards and its holder.
    A lock file that cannot be created raises ``cannot_open(exc)`` if given, else the ``OSError`` itself.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("a+b")
    except OSError as exc:
        if cannot_open is None:
            raise
        raise cannot_open(exc) from exc
    with handle:
        deadline = time.monotonic() + timeout
        waited = False
        while not _try_lock(handle):
            if not waited and on_wait is not None:
                on_wait()
            waited = True
            if cancelled is not None and cancelled():
                raise Interrupted
            if time.monotonic() >= deadline:
                holder = _holder(handle)
                by = f"process {holder}" if holder else "another process"
                raise error(
                    f"{path} ({what}) has been held by {by} (another wheelfit run) for {timeout:g} s; wait for "
                    "that run to finish and try again (its lock ends when it exits; the file need not be removed)"
                )
            time.sleep(poll)
        _mark(handle, str(os.getpid()))
        try:
            yield
        finally:
            _mark(handle, "")
            _unlock(handle)


def _try_lock(handle: IO[bytes]) -> bool:
    try:
        if sys.platform == "win32":  # pragma: no cover
            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _unlock(handle: IO[bytes]) -> None:
    if sys.platform == "win32":  # pragma: no cover
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
    else:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _mark(handle: IO[bytes], text: str) -> None:
    """Write who holds the lock; only a help for messages, so a read-only lock file costs nothing but that."""
    with contextlib.suppress(OSError):
        handle.seek(0)
        handle.truncate(0)
        handle.write(text.encode())
        handle.flush()


def _holder(handle: IO[bytes]) -> int | None:
    """The holder's process id, when it wrote one and the file can be read (Windows refuses a locked byte)."""
    try:
        handle.seek(0)
        text = handle.read(32).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
