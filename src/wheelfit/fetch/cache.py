"""wheelfit's cache: where it lives, how entries are laid out, atomic writes and locks.

Layout under the root (platform cache dir, or ``WHEELFIT_CACHE_DIR``)::

    pages/<ab>/<sha256(url)>.json             index pages and PEP 658 metadata with their validators
    by-sha256/<ab>/<sha256>/<filename>        the few wheels wheelfit reads itself (:mod:`.wheels`)

uv and pip keep the wheels they install in their own caches.

A file appears under its final name only through ``os.replace`` from a
temporary file in the same directory, so a reader never sees half a wheel.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CACHE_ENV",
    "Cache",
    "CachedPage",
    "atomic_write",
    "default_cache_dir",
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


def fingerprint(path: Path) -> list[int]:
    """Size, modification time (ns) and inode: any write to the file, or a new file in its place, changes it."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]


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
