"""The one way wheelfit writes a file a person owns (a lock, a ``pyproject.toml``, a pip requirements file).

Each file is written to a temporary file in its own directory, flushed to disk and renamed over the original: a
reader sees the old content or the new, never a torn file, and a full disk or a read-only directory leaves the
original as it was. The original's permission bits are kept; a new file gets what ``open()`` gives (0666 less the
umask, applied by the kernel: nothing process-wide is read or set here). Several files are all or none: every
temporary file is written before the first rename. A failure is one line naming the path and what to do, a
:class:`UserFileError`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import WheelfitError, clip

__all__ = ["UserFileError", "Write", "write_files"]


class UserFileError(WheelfitError):
    """A file the user asked for could not be written; every original is as it was."""


@dataclass(frozen=True)
class Write:
    path: Path
    #: The bytes to write (text is encoded by the caller, line endings and all: nothing is translated here).
    data: bytes


def write_files(writes: Sequence[Write]) -> None:
    """Replace (or create) every ``path`` with its ``data``, all or none."""
    staged: list[tuple[Path, Path]] = []
    try:
        for item in writes:
            staged.append((_stage(item), item.path))
        for tmp, path in staged:
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise UserFileError(_why(path, exc)) from None
    finally:
        for tmp, _path in staged:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)


def _stage(item: Write) -> Path:
    """``item.data`` in a temporary file beside ``item.path``, with the original's mode, flushed to disk."""
    path = item.path
    try:
        st = path.stat()
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise UserFileError(_why(path, exc)) from None
    else:
        if stat.S_ISDIR(st.st_mode):
            raise UserFileError(f"{clip(str(path), _SHOWN)} is a directory; give a file name")
        mode = stat.S_IMODE(st.st_mode)
    tmp = path.with_name(f".{path.name[:200]}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as exc:
        raise UserFileError(_why(path, exc)) from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(item.data)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise UserFileError(_why(path, exc)) from None
    return tmp


def _why(path: Path, exc: OSError) -> str:
    reason = exc.strerror or type(exc).__name__
    advice = {
        errno.ENOSPC: "free some space and run it again",
        errno.EDQUOT: "free some space and run it again",
        errno.EACCES: "check the permissions of the file and its directory",
        errno.EPERM: "check the permissions of the file and its directory",
        errno.EROFS: "the file system is read-only; write the file elsewhere",
        errno.ENAMETOOLONG: "give a shorter file name",
        errno.ENOTDIR: "a part of the path is a file, not a directory",
    }.get(exc.errno or 0, "check the path")
    return f"cannot write {clip(str(path), _SHOWN)} ({reason}): {advice}; nothing was changed"


#: How much of a path an error quotes: a 100 kB argument is not repeated in full.
_SHOWN = 300
