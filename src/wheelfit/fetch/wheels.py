"""The few wheels wheelfit must open itself before its backend installs them, fetched once and kept by content.

uv and pip download every wheel of an install themselves, checking the index's sha256 pinned in the install set.
wheelfit downloads a wheel only when it must read it first: a variant wheel (PEP 817) whose plain copy it writes,
and a torch-family wheel whose dependencies an index without PEP 658 metadata cannot tell otherwise. That file
is then what the backend installs (``name @ file://...#sha256=...``, the hash checked again by the backend), so
nothing is downloaded twice. Files are stored under their sha256 and written by renaming a finished,
checked temporary file: a file in the store is whole; a store entry that was tampered with fails the backend's
hash check.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .errors import DownloadError, HashMismatchError, MissingHashError, TruncatedDownloadError

if TYPE_CHECKING:
    import httpx

    from ..simple.links import FileLink

__all__ = ["Progress", "ProgressCallback", "WheelStore"]

_CHUNK = 1 << 20


@dataclass(frozen=True)
class Progress:
    """One progress report for one file (``filename``), or a server slow to answer (``stalled``: ``filename`` is
    the URL, ``detail`` its host:port, ``waited`` seconds)."""

    filename: str
    state: Literal["start", "downloading", "done", "cached", "stalled"]
    received: int = 0
    total: int | None = None
    detail: str = ""
    waited: float = 0.0


ProgressCallback = Callable[[Progress], None]


@dataclass
class WheelStore:
    """``root/<sha256[:2]>/<sha256>/<filename>``: wheels fetched for reading, checked against the index's sha256."""

    root: Path
    http: Callable[[], httpx.Client]
    progress: ProgressCallback | None = None
    #: ``--offline``: only what is stored already.
    offline: bool = False

    def path_of(self, link: FileLink) -> Path | None:
        """Where ``link``'s file is kept, if the index gives its sha256 (else it cannot be looked up)."""
        sha = link.hashes.get("sha256")
        return None if not sha else self.root / sha[:2] / sha / link.filename

    def fetch(self, link: FileLink, *, require_hash: bool = True) -> tuple[Path, str]:
        """The file and its sha256: from the store when there, else downloaded, length- and hash-checked.
        ``require_hash=False`` (a URL the user gave without one) stores it under the sha256 it has."""
        known = self.path_of(link)
        if known is None and require_hash:
            raise MissingHashError(
                f"{link.filename}: the index gives no sha256 for it, and wheelfit installs no unpinned torch-family "
                "file; use an index (or mirror) that lists hashes"
            )
        if known is not None and known.is_file():
            self._emit(Progress(link.filename, "cached", known.stat().st_size, known.stat().st_size))
            return known, link.hashes["sha256"]
        if self.offline:
            raise DownloadError(f"offline: {link.filename} is not in wheelfit's cache; run once without --offline")
        self.root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{link.filename}.", suffix=".part", dir=self.root)
        try:
            with os.fdopen(fd, "wb") as out:
                sha = self._download(link, out)
            dest = self.root / sha[:2] / sha / link.filename
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, dest)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return dest, sha

    def _download(self, link: FileLink, out: object) -> str:
        import httpx

        from .http import describe, is_tls_error, tls_failure

        digest = hashlib.sha256()
        received = 0
        client = self.http()
        try:
            with _stream(client, link.url) as response:
                if response.status_code != 200:
                    status = f"HTTP {response.status_code} {response.reason_phrase}"
                    raise DownloadError(f"{link.url}: {status}; check the index or try again")
                total = link.size if link.size is not None else _length(response)
                self._emit(Progress(link.filename, "start", 0, total))
                for chunk in response.iter_bytes(_CHUNK):
                    out.write(chunk)  # type: ignore[attr-defined]
                    digest.update(chunk)
                    received += len(chunk)
                    self._emit(Progress(link.filename, "downloading", received, total))
        except httpx.HTTPError as exc:
            if is_tls_error(exc):
                raise tls_failure(link.url, exc) from exc
            raise DownloadError(f"{link.url}: {describe(exc, client)}; nothing was installed") from exc
        if link.size is not None and received != link.size:
            raise TruncatedDownloadError(
                f"{link.filename}: {received} bytes received, the index says {link.size}; nothing was installed"
            )
        got = digest.hexdigest()
        expected = link.hashes.get("sha256")
        if expected is not None and got != expected.lower():
            raise HashMismatchError(
                f"{link.filename}: sha256 mismatch: expected {expected}, got {got} ({link.url}); nothing was installed"
            )
        self._emit(Progress(link.filename, "done", received, received))
        return got

    def _emit(self, event: Progress) -> None:
        if self.progress is not None:
            self.progress(event)


def _length(response: httpx.Response) -> int | None:
    text = response.headers.get("content-length", "")
    return int(text) if text.isdigit() and len(text) < 19 else None


@contextlib.contextmanager
def _stream(client: httpx.Client, url: str) -> Iterator[httpx.Response]:
    """``client.stream("GET", url)``, tried once more on a fresh connection when the first was closed before any
    answer: a kept-alive connection that the server or a proxy had already dropped (the request met its FIN), which
    a GET may safely repeat. A second such close, or any other error, is the caller's."""
    import httpx

    with contextlib.ExitStack() as stack:
        try:
            response = stack.enter_context(client.stream("GET", url))
        except httpx.RemoteProtocolError:
            response = stack.enter_context(client.stream("GET", url))
        yield response
