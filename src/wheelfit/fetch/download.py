"""Downloading wheels into the shared cache: verified, resumable, retried, atomic, locked.

For each file: take the cache entry's lock; reuse a cached copy whose hash
still checks out; otherwise stream into a temporary file beside the final
name while hashing, resume after a dropped connection with ``Range`` +
``If-Range``, retry transient failures a bounded number of times, check the
length and the hashes, and only then ``os.replace`` it into place. Any
failure removes the temporary file. Progress is reported as events; the CLI
decides how to draw them.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO, Literal

import httpx

from .cache import Cache, fingerprint
from .errors import (
    DownloadError,
    HashMismatchError,
    MissingHashError,
    NetworkError,
    TruncatedDownloadError,
)
from .hashes import Hasher, first_mismatch, has_strong_hash, hash_file
from .http import RETRY_STATUSES, RetryPolicy, describe, is_tls_error, status_error, tls_failure

__all__ = ["DownloadRequest", "DownloadResult", "Downloader", "Progress", "ProgressCallback"]

_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")


@dataclass(frozen=True)
class DownloadRequest:
    url: str
    filename: str
    #: Expected digests (index fragment, PEP 691 ``hashes`` or ``--hash``); empty when none are known.
    hashes: Mapping[str, str] = field(default_factory=dict)
    #: PEP 700 size from the index, checked against the body when given.
    size: int | None = None
    #: ``--require-hashes``: refuse a file without a strong expected hash (the error shows the computed one).
    require_hash: bool = False


@dataclass(frozen=True)
class DownloadResult:
    request: DownloadRequest
    path: Path
    #: Digests of the file as stored (always includes sha256).
    hashes: Mapping[str, str]
    from_cache: bool
    #: E.g. the index gave no hash: the file was checked against nothing, here is its sha256.
    warnings: tuple[str, ...] = ()

    @property
    def sha256(self) -> str:
        return self.hashes["sha256"]


@dataclass(frozen=True)
class Progress:
    """One progress report for one file; ``speed`` in bytes/s over the current attempt."""

    filename: str
    state: Literal["waiting", "start", "downloading", "retrying", "done", "cached"]
    received: int = 0
    total: int | None = None
    speed: float = 0.0
    #: Seconds left at the current speed, when the total is known.
    eta: float | None = None
    attempt: int = 1
    #: Why a retry happens (``state == "retrying"``).
    detail: str = ""


ProgressCallback = Callable[[Progress], None]


class _RetryError(Exception):
    """A transient failure inside one attempt; carries the text for the final error."""

    def __init__(self, reason: str, retry_after: str | None = None, truncated: bool = False) -> None:
        super().__init__(reason)
        self.retry_after = retry_after
        self.truncated = truncated


class _CancelledError(DownloadError):
    """Another download of the same batch failed, so this one stopped."""


@dataclass
class _Attempt:
    """What survives between attempts of one download: the bytes so far and how to resume them."""

    received: int = 0
    total: int | None = None
    validator: str | None = None
    hasher: Hasher = field(default_factory=Hasher)


class Downloader:
    """Fetches files into ``cache``; thread-safe, so :meth:`fetch_all` runs several at once over one pool."""

    def __init__(
        self,
        client: httpx.Client,
        cache: Cache,
        *,
        retry: RetryPolicy | None = None,
        progress: ProgressCallback | None = None,
        progress_interval: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._cache = cache
        self._retry = retry or RetryPolicy()
        self._progress = progress
        self._interval = progress_interval
        self._clock = clock
        self._cancel = threading.Event()

    # -- public --------------------------------------------------------------------------------

    def fetch(self, request: DownloadRequest) -> DownloadResult:
        """Return the verified file in the cache, downloading it unless a good copy is there already."""
        _check_name(request)
        entry = self._cache.entry_dir(request.url)
        final = entry / request.filename
        with self._cache.lock(request.url, on_wait=lambda: self._emit(Progress(request.filename, "waiting"))):
            cached = self._reuse(request, final)
            if cached is not None:
                return cached
            fd, tmp = tempfile.mkstemp(dir=entry, prefix=f".{request.filename}.", suffix=".part")
            try:
                with os.fdopen(fd, "w+b") as out:
                    digests = self._download(request, out)
                    out.flush()
                    os.fsync(out.fileno())
                warnings = _check_hashes(request, digests)
                os.replace(tmp, final)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            self._cache.record(request.url, final, digests)
        return DownloadResult(request, final, digests, from_cache=False, warnings=warnings)

    def fetch_all(self, requests: Sequence[DownloadRequest], *, max_workers: int = 4) -> list[DownloadResult]:
        """Fetch several files in parallel; on the first failure the others stop and that error is raised."""
        if not requests:
            return []
        self._cancel.clear()
        with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(requests)))) as pool:
            futures: list[Future[DownloadResult]] = [pool.submit(self.fetch, r) for r in requests]
            wait(futures, return_when=FIRST_EXCEPTION)
            errors = [e for f in futures if f.done() and (e := f.exception()) is not None]
            if errors:
                self._cancel.set()
                for f in futures:
                    f.cancel()
                wait(futures)
                self._cancel.clear()
                raise errors[0]
        return [f.result() for f in futures]

    # -- internals -----------------------------------------------------------------------------

    def _emit(self, event: Progress) -> None:
        if self._progress is not None:
            self._progress(event)

    def _reuse(self, request: DownloadRequest, final: Path) -> DownloadResult | None:
        """A cached copy counts only if it still hashes to what the index (or our record) says."""
        if not final.is_file():
            return None
        recorded = self._cache.recorded(request.url) or {}
        known = recorded.get("hashes") if isinstance(recorded.get("hashes"), dict) else None
        if known and recorded.get("fingerprint") == fingerprint(final) and set(request.hashes) <= set(known):
            digests = known  # unchanged since it was verified: no need to read it again
        else:
            digests = hash_file(final, request.hashes)
        expected = dict(request.hashes) or dict(known or {})
        if not expected or first_mismatch(expected, digests) is not None:
            final.unlink(missing_ok=True)  # unverifiable or corrupt: fetch it again
            return None
        if digests is not known:
            self._cache.record(request.url, final, digests)  # re-verified: trust the new fingerprint
        warnings = _check_hashes(request, digests)  # may refuse a good file under require_hash; it stays cached
        self._emit(Progress(request.filename, "cached", received=final.stat().st_size, total=final.stat().st_size))
        return DownloadResult(request, final, digests, from_cache=True, warnings=warnings)

    def _download(self, request: DownloadRequest, out: BinaryIO) -> dict[str, str]:
        state = _Attempt(hasher=Hasher(request.hashes))
        self._emit(Progress(request.filename, "start", total=request.size))
        for attempt in range(1, self._retry.attempts + 1):
            try:
                self._attempt(request, out, state, attempt)
            except _RetryError as why:
                if attempt == self._retry.attempts:
                    error = TruncatedDownloadError if why.truncated else NetworkError
                    raise error(
                        f"{request.filename}: {why} (after {attempt} attempts); try again later or use a mirror"
                    ) from None
                event = Progress(request.filename, "retrying", state.received, state.total, attempt=attempt)
                self._emit(replace(event, detail=str(why)))
                self._retry.sleep(self._retry.delay(attempt, why.retry_after))
                continue
            break
        self._emit(Progress(request.filename, "done", state.received, state.total, attempt=attempt))
        return state.hasher.hexdigests()

    def _attempt(self, request: DownloadRequest, out: BinaryIO, state: _Attempt, attempt: int) -> None:
        headers = {"Accept-Encoding": "identity"}
        resuming = state.received > 0 and state.validator is not None and state.total is not None
        if resuming:
            headers["Range"] = f"bytes={state.received}-"
            headers["If-Range"] = state.validator or ""
        try:
            with self._client.stream("GET", request.url, headers=headers) as response:
                self._start_body(request, response, out, state, resuming)
                self._read_body(request, response, out, state, attempt)
        except httpx.TransportError as exc:
            if is_tls_error(exc):
                raise tls_failure(request.url, exc) from exc
            raise _RetryError(describe(exc), truncated=state.received > 0) from exc
        if state.total is not None and state.received != state.total:
            raise _RetryError(f"connection closed after {state.received} of {state.total} bytes", truncated=True)

    def _start_body(
        self, request: DownloadRequest, response: httpx.Response, out: BinaryIO, state: _Attempt, resuming: bool
    ) -> None:
        status = response.status_code
        if status in RETRY_STATUSES:
            raise _RetryError(f"HTTP {status} {response.reason_phrase}", response.headers.get("retry-after"))
        if resuming and status == 206:
            match = _CONTENT_RANGE.fullmatch(response.headers.get("content-range", "").strip())
            whole = match[3] if match else None
            if not match or int(match[1]) != state.received or (whole != "*" and int(whole or 0) != state.total):
                raise DownloadError(
                    f"{request.filename}: server resumed at the wrong offset "
                    f"({response.headers.get('content-range')!r}, expected byte {state.received}); "
                    "nothing was kept, try again"
                )
            return
        if status != 200:
            raise status_error(request.url, response)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise DownloadError(
                f"{request.filename}: server sent it {encoding}-encoded although identity was asked for; "
                "the bytes cannot be hash-checked, use another mirror"
            )
        # A fresh (or restarted) body: forget anything from an earlier attempt.
        out.seek(0)
        out.truncate()
        state.received = 0
        state.hasher = Hasher(request.hashes)
        length = response.headers.get("content-length")
        state.total = int(length) if length and length.isdigit() else None
        etag = response.headers.get("etag")
        # If-Range needs a strong validator: a weak ETag cannot guarantee the same bytes.
        state.validator = etag if etag and not etag.startswith("W/") else response.headers.get("last-modified")
        if request.size is not None and state.total is not None and state.total != request.size:
            raise TruncatedDownloadError(
                f"{request.filename}: server says {state.total} bytes but the index says {request.size}; "
                "the index and the file disagree, nothing was kept"
            )

    def _read_body(
        self, request: DownloadRequest, response: httpx.Response, out: BinaryIO, state: _Attempt, attempt: int
    ) -> None:
        started = self._clock()
        at_start = state.received
        last = 0.0
        for chunk in response.iter_raw():  # no re-chunking: bytes before a drop must reach the file
            if self._cancel.is_set():
                raise _CancelledError(f"{request.filename}: cancelled because another download failed")
            out.write(chunk)
            state.hasher.update(chunk)
            state.received += len(chunk)
            limit = state.total if state.total is not None else request.size
            if limit is not None and state.received > limit:
                raise TruncatedDownloadError(
                    f"{request.filename}: body is longer than {limit} bytes; nothing was kept, use another mirror"
                )
            now = self._clock()
            if now - last >= self._interval:
                last = now
                elapsed = max(now - started, 1e-6)
                speed = (state.received - at_start) / elapsed
                eta = (state.total - state.received) / speed if state.total is not None and speed > 0 else None
                self._emit(Progress(request.filename, "downloading", state.received, state.total, speed, eta, attempt))


def _check_name(request: DownloadRequest) -> None:
    name = request.filename
    if not name or name in (".", "..") or any(c in name for c in "/\\") or any(ord(c) < 32 for c in name):
        raise DownloadError(f"{name!r}: not a safe file name for the cache; the index link is malformed")


def _check_hashes(request: DownloadRequest, digests: Mapping[str, str]) -> tuple[str, ...]:
    """Fail closed on a wrong hash; report (or, with ``require_hash``, refuse) a missing one."""
    mismatch = first_mismatch(request.hashes, digests)
    if mismatch is not None:
        name, expected, got = mismatch
        raise HashMismatchError(
            f"{request.filename}: {name} mismatch: expected {expected}, got {got}; "
            "the file was discarded (corrupt download or a wrong index hash)"
        )
    if has_strong_hash(request.hashes):
        return ()
    if request.require_hash:
        raise MissingHashError(
            f"{request.filename}: the index gives no sha256 and hashes are required; "
            f"if you trust this file, pin --hash=sha256:{digests['sha256']}"
        )
    return (
        f"{request.filename}: the index gives no sha256, so the download was not verified; "
        f"its sha256 is {digests['sha256']}",
    )
