"""Downloading wheels into the shared cache: verified, resumable, retried, atomic, locked, interruptible.

For each file: take the cache entry's lock; reuse a cached copy whose hash
still checks out, or the same bytes (same sha256) cached from another URL;
otherwise stream into ``<entry>/<filename>.part`` while hashing, resume after a
dropped connection with ``Range`` + ``If-Range``, retry transient failures a
bounded number of times, check the length and the hashes, and only then
``os.replace`` it into place (on Linux without ``fsync``: the record names the boot
it was written in, and a record from an earlier boot is hashed again before it
is trusted, :func:`~.cache.durable`). A failure removes the ``.part``; an interrupt
(Ctrl-C) keeps it with ``partial.json`` (its validator and length) when the
server gave a strong validator, and the next fetch of that URL resumes it. A
``.part`` is only ever written under its entry's lock, so one found by a run
that holds the lock belongs to nobody; any left untouched for a day (a URL never
asked for again) is deleted. Progress is reported as events; the CLI decides
how to draw them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO, Literal

import httpx

from .cache import Cache, atomic_write, boot_id, durable, fingerprint, memo_read
from .errors import (
    CacheLockError,
    DownloadError,
    HashMismatchError,
    MissingHashError,
    NetworkError,
    TruncatedDownloadError,
)
from .hashes import Hasher, first_mismatch, has_strong_hash, hash_file
from .http import (
    NOT_RETRIED,
    RETRY_STATUSES,
    RetryPolicy,
    describe,
    is_tls_error,
    not_retried,
    pause,
    status_error,
    tls_failure,
)
from .watch import Interrupted, Watch

__all__ = ["STALE_PART_SECONDS", "DownloadRequest", "DownloadResult", "Downloader", "Progress", "ProgressCallback"]

_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")
#: A ``.part`` nobody has touched for this long is deleted by the next run's sweep (its URL was not asked for again).
STALE_PART_SECONDS = 24 * 3600.0
_PARTIAL = "partial.json"


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
    #: ``stalled``: the server ``detail`` (host:port) has not answered ``filename`` (a URL) for ``waited`` seconds.
    state: Literal["waiting", "start", "downloading", "retrying", "done", "cached", "stalled"]
    received: int = 0
    total: int | None = None
    speed: float = 0.0
    #: Seconds left at the current speed, when the total is known.
    eta: float | None = None
    attempt: int = 1
    #: Why a retry happens (``state == "retrying"``); the server's host:port (``"stalled"``).
    detail: str = ""
    waited: float = 0.0


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
    #: Where the validator and length are noted once the body starts, so an interrupted ``.part`` can resume.
    partial: Path | None = None


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
        watch: Watch | None = None,
    ) -> None:
        """``watch`` (default: the client's, see :func:`~.http.make_client`) is what Ctrl-C cancels."""
        self._client = client
        self._cache = cache
        self._retry = retry or RetryPolicy()
        self._progress = progress
        self._interval = progress_interval
        self._clock = clock
        self._cancel = threading.Event()
        self._watch: Watch | None = watch if watch is not None else getattr(client, "watch", None)
        self._swept = False

    # -- public --------------------------------------------------------------------------------

    def fetch(self, request: DownloadRequest) -> DownloadResult:
        """Return the verified file in the cache, downloading it unless a good copy is there already."""
        _check_name(request)
        self._sweep()
        entry = self._cache.entry_dir(request.url)
        final = entry / request.filename
        with self._cache.lock(
            request.url,
            on_wait=lambda: self._emit(Progress(request.filename, "waiting")),
            cancelled=self._interrupted,
        ):
            cached = self._reuse(request, final) or self._same_content(request, final)
            if cached is not None:
                return cached
            part, partial = entry / f"{request.filename}.part", entry / _PARTIAL
            state = _resumable(request, part, partial)
            boot = boot_id()  # None: no boot id to tie the record to, so the file is synced before it is recorded
            try:
                with part.open("r+b" if state.received else "w+b") as out:
                    out.seek(state.received)
                    digests = self._download(request, out, state)
                    out.flush()
                    if boot is None:
                        os.fsync(out.fileno())
                warnings = _check_hashes(request, digests)
                os.replace(part, final)
                partial.unlink(missing_ok=True)
            except BaseException as exc:
                interrupted = isinstance(exc, KeyboardInterrupt) or self._interrupted()
                if not (interrupted and state.validator and state.total is not None and partial.is_file()):
                    part.unlink(missing_ok=True)  # not resumable: nothing is kept
                    partial.unlink(missing_ok=True)
                raise
            self._cache.record(request.url, final, digests, boot)
            self._cache.remember_content(final, digests, boot)
        return DownloadResult(request, final, digests, from_cache=False, warnings=warnings)

    def has_copy(self, request: DownloadRequest) -> bool:
        """Whether the cache holds a copy of ``request``'s file, under its URL or (with a sha256) by content. A
        hint for what to overlap with the download, read without the entry's lock and without hashing:
        :meth:`fetch` still verifies the copy."""
        if (self._cache.entry_dir(request.url) / request.filename).is_file():
            return True
        sha256 = request.hashes.get("sha256", "").lower()
        return bool(sha256) and self._cache.content_path(sha256).is_file()

    def fetch_all(self, requests: Sequence[DownloadRequest], *, max_workers: int = 4) -> list[DownloadResult]:
        """Fetch several files in parallel; on the first failure the others stop and that error is raised.

        On Ctrl-C the workers stop within a fraction of a second (their reads are :class:`~.watch.Watch`-ed),
        each keeping a resumable ``.part``, before ``KeyboardInterrupt`` goes on."""
        if not requests:
            return []
        self._cancel.clear()
        with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(requests)))) as pool:
            futures: list[Future[DownloadResult]] = [pool.submit(self.fetch, r) for r in requests]
            try:
                wait(futures, return_when=FIRST_EXCEPTION)
            except BaseException:
                self._cancel.set()
                for f in futures:
                    f.cancel()
                raise
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

    def _interrupted(self) -> bool:
        return self._watch is not None and self._watch.cancelled.is_set()

    def _sweep(self) -> None:
        """Once per downloader: delete ``.part`` files untouched for :data:`STALE_PART_SECONDS` whose entry's lock
        is free (a run killed while downloading a URL that was never asked for again)."""
        if self._swept:
            return
        self._swept = True
        now = time.time()
        for part in self._cache.root.glob("wheels/*/*/*.part"):
            with contextlib.suppress(OSError):
                if now - part.stat().st_mtime < STALE_PART_SECONDS:
                    continue
                with contextlib.suppress(CacheLockError), self._cache.entry_lock(part.parent, timeout=0):
                    part.unlink(missing_ok=True)
                    (part.parent / _PARTIAL).unlink(missing_ok=True)

    def _same_content(self, request: DownloadRequest, final: Path) -> DownloadResult | None:
        """The file cached from another URL (another mirror) with the sha256 the index gives, linked into this
        URL's entry: the same bytes are never downloaded twice."""
        sha256 = request.hashes.get("sha256", "").lower()
        if not sha256:
            return None
        source = self._cache.content_path(sha256)
        if not source.is_file():
            return None
        memo = memo_read(self._cache.content_memo(sha256), source) or {}
        known = memo.get("hashes") if durable(memo) else None
        digests = known if isinstance(known, dict) and set(request.hashes) <= set(known) else None
        if digests is None:
            digests = hash_file(source, request.hashes)
        if digests.get("sha256") != sha256 or first_mismatch(request.hashes, digests) is not None:
            source.unlink(missing_ok=True)  # changed since it was stored: not the bytes it is named for
            return None
        try:
            _link_or_copy(source, final)
        except OSError:
            return None
        self._cache.record(request.url, final, digests, boot_id())  # verified now; synced: not known
        warnings = _check_hashes(request, digests)
        size = final.stat().st_size
        self._emit(Progress(request.filename, "cached", received=size, total=size))
        return DownloadResult(request, final, digests, from_cache=True, warnings=warnings)

    def _reuse(self, request: DownloadRequest, final: Path) -> DownloadResult | None:
        """A cached copy counts only if it still hashes to what the index (or our record) says."""
        if not final.is_file():
            return None
        recorded = self._cache.recorded(request.url) or {}
        known = recorded.get("hashes") if isinstance(recorded.get("hashes"), dict) else None
        trusted = recorded.get("fingerprint") == fingerprint(final) and durable(recorded)
        # Unchanged since it was verified (and not lost in a crash since): no need to read it again.
        digests = known if known and trusted and set(request.hashes) <= set(known) else hash_file(final, request.hashes)
        expected = dict(request.hashes) or dict(known or {})
        if not expected or first_mismatch(expected, digests) is not None:
            final.unlink(missing_ok=True)  # unverifiable or corrupt: fetch it again
            return None
        if digests is not known:
            self._cache.record(request.url, final, digests, boot_id())  # re-verified: trusted in this boot
        warnings = _check_hashes(request, digests)  # may refuse a good file under require_hash; it stays cached
        self._emit(Progress(request.filename, "cached", received=final.stat().st_size, total=final.stat().st_size))
        return DownloadResult(request, final, digests, from_cache=True, warnings=warnings)

    def _download(self, request: DownloadRequest, out: BinaryIO, state: _Attempt) -> dict[str, str]:
        self._emit(Progress(request.filename, "start", state.received, state.total or request.size))
        for attempt in range(1, self._retry.attempts + 1):
            try:
                self._attempt(request, out, state, attempt)
            except _RetryError as why:
                if attempt == self._retry.attempts:
                    error = TruncatedDownloadError if why.truncated else NetworkError
                    raise error(
                        f"{request.url}: {why} (after {attempt} attempts); try again later or use a mirror"
                    ) from None
                event = Progress(request.filename, "retrying", state.received, state.total, attempt=attempt)
                self._emit(replace(event, detail=str(why)))
                pause(self._retry, self._retry.delay(attempt, why.retry_after), self._watch)
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
        except NOT_RETRIED as exc:
            raise not_retried(request.url, exc, self._client) from exc
        except httpx.TransportError as exc:
            if is_tls_error(exc):
                raise tls_failure(request.url, exc) from exc
            raise _RetryError(describe(exc, self._client), truncated=state.received > 0) from exc
        if state.total is not None and state.received != state.total:
            raise _RetryError(f"connection closed after {state.received} of {state.total} bytes", truncated=True)

    def _start_body(
        self, request: DownloadRequest, response: httpx.Response, out: BinaryIO, state: _Attempt, resuming: bool
    ) -> None:
        status = response.status_code
        if status in RETRY_STATUSES:
            raise _RetryError(f"HTTP {status} {response.reason_phrase}", response.headers.get("retry-after"))
        if resuming and status == 206:
            problem = _resume_problem(response, state)
            if problem is None:
                return
            # Never spliced: the bytes held are of another version, or the server sent another range.
            out.seek(0)
            out.truncate()
            state.received, state.total, state.validator = 0, None, None
            state.hasher = Hasher(request.hashes)
            if state.partial is not None:
                state.partial.unlink(missing_ok=True)
            raise _RetryError(f"{problem}; the partial file was discarded, the next attempt starts from byte 0")
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
        if state.partial is not None:
            if state.validator and state.total is not None:
                note = {"url": request.url, "filename": request.filename, "validator": state.validator}
                atomic_write(state.partial, json.dumps({**note, "total": state.total}).encode())
            else:
                state.partial.unlink(missing_ok=True)  # no way to resume this body: an interrupt deletes it

    def _read_body(
        self, request: DownloadRequest, response: httpx.Response, out: BinaryIO, state: _Attempt, attempt: int
    ) -> None:
        started = self._clock()
        at_start = state.received
        last = 0.0
        for chunk in response.iter_raw():  # no re-chunking: bytes before a drop must reach the file
            if self._interrupted():
                raise Interrupted
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


def _resume_problem(response: httpx.Response, state: _Attempt) -> str | None:
    """Why a 206 answer to our ``Range`` + ``If-Range`` cannot continue the bytes held, or ``None`` if it can.

    A server that honours ``If-Range`` (RFC 9110 section 13.1.5) answers 200 with the whole file once it
    changed; one that does not may send 206 with a range of the new file. Its ``Content-Range`` (offset and
    total) and its validator must both be those of the bytes held."""
    header = response.headers.get("content-range", "").strip()
    match = _CONTENT_RANGE.fullmatch(header)
    whole = match[3] if match else None
    if not match or int(match[1]) != state.received or (whole != "*" and int(whole or 0) != state.total):
        return (
            f"the server resumed with the wrong range ({header!r}, expected bytes {state.received}-"
            f"{(state.total or 0) - 1}/{state.total})"
        )
    held = state.validator or ""
    etag, modified = response.headers.get("etag"), response.headers.get("last-modified")
    if held.startswith('"') and etag is not None and etag.strip() != held:
        return f"the file changed on the server (ETag {etag.strip()}, the partial file's is {held})"
    if held and not held.startswith(('"', "W/")) and modified is not None and modified.strip() != held:
        return f"the file changed on the server (Last-Modified {modified.strip()}, the partial file's is {held})"
    return None


def _resumable(request: DownloadRequest, part: Path, partial: Path) -> _Attempt:
    """The state to resume an interrupted ``.part`` from (its bytes hashed again), or a fresh one."""
    state = _Attempt(hasher=Hasher(request.hashes), partial=partial)
    try:
        note = json.loads(partial.read_bytes())
        size = part.stat().st_size
    except (OSError, ValueError):
        note, size = None, 0
    total = note.get("total") if isinstance(note, dict) else None
    validator = note.get("validator") if isinstance(note, dict) else None
    if (
        not isinstance(note, dict)
        or note.get("url") != request.url
        or not isinstance(validator, str)
        or not validator
        or not isinstance(total, int)
        or not 0 < size < total
        or (request.size is not None and request.size != total)
    ):
        part.unlink(missing_ok=True)
        partial.unlink(missing_ok=True)
        return state
    with part.open("rb") as f:
        while chunk := f.read(1 << 20):
            state.hasher.update(chunk)
    state.received, state.total, state.validator = size, total, validator
    return state


def _link_or_copy(source: Path, dest: Path) -> None:
    """``dest`` becomes ``source``'s bytes at once: a hard link (no copy), else a copy, renamed into place."""
    tmp = dest.with_name(f".{dest.name}.link")
    tmp.unlink(missing_ok=True)
    try:
        os.link(source, tmp)
    except OSError:
        shutil.copyfile(source, tmp)
    try:
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


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
