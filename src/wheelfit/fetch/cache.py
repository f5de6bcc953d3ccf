"""The download cache: where it lives, how entries are laid out, atomic writes and its entries' locks.

Layout under the root (platform cache dir, or ``WHEELFIT_CACHE_DIR``)::

    wheels/<ab>/<sha256(url)>/<filename>      verified files, shared by every environment
    wheels/<ab>/<sha256(url)>/info.json       url, size, sha256 recorded when the file was verified
    wheels/<ab>/<sha256(url)>/.lock           flock held while the entry is checked or written
    wheels/<ab>/<sha256(url)>/<filename>.part an interrupted download, with partial.json to resume it
    content/<ab>/<sha256 of the file>         a hard link to every verified file, by content: the same bytes
                                              from another URL (a mirror) are linked, not downloaded again
    content/<ab>/<sha256 of the file>.json    its digests, trusted while the file's fingerprint is unchanged
    pages/<ab>/<sha256(url)>.json             index pages and PEP 658 metadata with their validators

A file appears under its final name only through ``os.replace`` from a
temporary file in the same directory, so a reader never sees half a wheel.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..locking import file_lock as _file_lock
from .errors import CacheLockError

__all__ = [
    "CACHE_ENV",
    "Cache",
    "CachedPage",
    "atomic_write",
    "boot_id",
    "default_cache_dir",
    "durable",
    "file_lock",
    "fingerprint",
]

CACHE_ENV = "WHEELFIT_CACHE_DIR"


def default_cache_dir(env: Mapping[str, str], platform: str, home: Path) -> Path:
    """``WHEELFIT_CACHE_DIR``, else the platform's user cache dir (XDG, ``~/Library/Caches``, ``%LOCALAPPDATA%``)."""
    if env.get(CACHE_ENV):
        return Path(env[CACHE_ENV]).expanduser()
    if platform == "win32":
        base = env.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(base) / "wheelfit" / "Cache"
    if platform == "darwin":
        return home / "Library" / "Caches" / "wheelfit"
    xdg = env.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".cache") / "wheelfit"


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old content or the new, never a mix."""
    with atomic_file(path) as f:
        f.write(data)


@contextlib.contextmanager
def atomic_file(path: Path) -> Iterator[io.BufferedWriter]:
    """A file to write that appears at ``path`` whole when the block ends, and not at all if it raises."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def file_lock(
    path: Path,
    *,
    timeout: float,
    on_wait: Callable[[], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> contextlib.AbstractContextManager[None]:
    """Hold an exclusive lock on ``path`` (created if needed); works between threads and processes.

    The one lock implementation (:func:`wheelfit.locking.file_lock`, also the environment's), timing out as
    :class:`CacheLockError`. ``on_wait`` is called once if the lock is busy, so the caller can tell the user why
    it pauses; while it waits, ``cancelled()`` turning true (Ctrl-C) raises :class:`~.watch.Interrupted`.
    """
    return _file_lock(
        path,
        timeout=timeout,
        what="a download cache entry's lock",
        on_wait=on_wait,
        cancelled=cancelled,
        error=CacheLockError,
    )


def fingerprint(path: Path) -> list[int]:
    """Size, modification time (ns) and inode: any write to the file, or a new file in its place, changes it.

    Re-hashing a cached 2 GB CUDA wheel on every install costs seconds; like pip's and uv's caches, a file whose
    fingerprint is unchanged since it was verified is trusted (the cache is the user's own directory).
    """
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]


@functools.cache
def boot_id() -> str | None:
    """This boot of the kernel (Linux's ``/proc/sys/kernel/random/boot_id``), or ``None`` where there is none.

    A file written and not ``fsync``-ed reads back as written for as long as the kernel that holds its pages runs:
    only a crash (a new boot) can lose them. So a verified download may skip the ``fsync`` (on a loaded disk,
    seconds for a CUDA wheel, waited for while the installer needs the disk) when its record names the boot it was
    written in; a record from another boot is hashed again before it is trusted (:func:`durable`). Read once:
    a process lives in one boot.
    """
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb") as f:
            text = f.read(64).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


def durable(record: Mapping[str, Any]) -> bool:
    """Whether a record's file may be trusted without hashing it again: it was synced to disk when written (no
    ``boot``), or written in this boot (its pages are still the kernel's truth)."""
    boot = record.get("boot")
    return boot is None or boot == boot_id()


def memo_read(memo: Path, path: Path) -> dict[str, Any] | None:
    """What was remembered at ``memo`` about ``path``, while ``path`` is unchanged since (its :func:`fingerprint`);
    ``None`` when there is no memo, an unreadable one, or the file changed."""
    try:
        data = json.loads(memo.read_bytes())
        current = fingerprint(path)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("fingerprint") == current else None


def memo_write(memo: Path, path: Path, record: Mapping[str, Any]) -> None:
    """Remember ``record`` about ``path`` under its fingerprint; a read-only cache only costs the next run the work."""
    with contextlib.suppress(OSError):
        atomic_write(memo, json.dumps({**record, "fingerprint": fingerprint(path)}).encode())


def _key(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


@dataclass(frozen=True)
class CachedPage:
    url: str
    body: bytes
    content_type: str
    etag: str | None = None
    last_modified: str | None = None
    #: Where the body came from after redirects: the base for relative links (``url`` is the cache key).
    final_url: str | None = None


@dataclass(frozen=True)
class Cache:
    root: Path
    #: Seconds to wait for another run's lock on the same entry before giving up.
    lock_timeout: float = 600.0

    # -- wheels --------------------------------------------------------------------------------

    def entry_dir(self, url: str) -> Path:
        key = _key(url)
        return self.root / "wheels" / key[:2] / key

    def lock(
        self, url: str, on_wait: Callable[[], None] | None = None, cancelled: Callable[[], bool] | None = None
    ) -> contextlib.AbstractContextManager[None]:
        return file_lock(self.entry_dir(url) / ".lock", timeout=self.lock_timeout, on_wait=on_wait, cancelled=cancelled)

    def entry_lock(self, entry: Path, *, timeout: float) -> contextlib.AbstractContextManager[None]:
        """The lock of an entry directory found on disk (the stale ``.part`` sweep takes it without waiting)."""
        return file_lock(entry / ".lock", timeout=timeout)

    # -- by content ------------------------------------------------------------------------------

    def content_path(self, sha256: str) -> Path:
        return self.root / "content" / sha256[:2] / sha256

    def content_memo(self, sha256: str) -> Path:
        return self.root / "content" / sha256[:2] / f"{sha256}.json"

    def remember_content(self, path: Path, digests: Mapping[str, str], boot: str | None = None) -> None:
        """Link the verified ``path`` under its sha256; a cache without hard links only loses the shortcut.
        ``boot``: the file is not synced to disk, trust it without hashing only in this boot (:func:`boot_id`)."""
        sha256 = digests.get("sha256")
        if not sha256:
            return
        target = self.content_path(sha256)
        tmp = target.with_name(f".{sha256}.{os.getpid()}.{id(path)}.link")
        with contextlib.suppress(OSError):
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp.unlink(missing_ok=True)
            os.link(path, tmp)
            os.replace(tmp, target)
            memo_write(self.content_memo(sha256), target, {"hashes": dict(digests), **({"boot": boot} if boot else {})})
        tmp.unlink(missing_ok=True)

    def record(self, url: str, path: Path, digests: Mapping[str, str], boot: str | None = None) -> None:
        """Note what ``path`` hashed to, and its :func:`fingerprint` then: while that holds (and, with ``boot``, a
        file not synced to disk, in that boot: :func:`durable`), it is not re-read."""
        stamp = fingerprint(path)
        info = {"url": url, "filename": path.name, "size": stamp[0], "hashes": dict(digests), "fingerprint": stamp}
        if boot:
            info["boot"] = boot
        atomic_write(self.entry_dir(url) / "info.json", json.dumps(info, indent=1).encode())

    def recorded(self, url: str) -> dict[str, Any] | None:
        try:
            data = json.loads((self.entry_dir(url) / "info.json").read_bytes())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    # -- pages ---------------------------------------------------------------------------------

    def _page_path(self, url: str) -> Path:
        key = _key(url)
        return self.root / "pages" / key[:2] / f"{key}.json"

    def load_page(self, url: str) -> CachedPage | None:
        """The cached copy of ``url``, or ``None`` if absent or unreadable (then it is simply refetched)."""
        try:
            data = json.loads(self._page_path(url).read_bytes())
            return CachedPage(
                url=data["url"],
                body=data["body"].encode("utf-8", "surrogateescape"),
                content_type=data["content_type"],
                etag=data.get("etag"),
                last_modified=data.get("last_modified"),
                final_url=data.get("final_url"),
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def store_page(self, page: CachedPage) -> None:
        data = {
            "url": page.url,
            "content_type": page.content_type,
            "etag": page.etag,
            "last_modified": page.last_modified,
            "final_url": page.final_url,
            "body": page.body.decode("utf-8", "surrogateescape"),
        }
        atomic_write(self._page_path(page.url), json.dumps(data).encode("utf-8", "surrogateescape"))
