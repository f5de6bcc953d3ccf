"""Cancelling downloads (what Ctrl-C does through ``wheelfit.fetch.watch``): a worker thread stops within a
fraction of a second wherever it is, even blocked in a read; the partial file is kept when it can be resumed
(and the next fetch resumes it with Range/If-Range), deleted when it cannot; stale ones are swept."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from tests.install.loopback import serve
from tests.support.hung import hung_server
from wheelfit.fetch import Cache, Downloader, DownloadRequest, make_client
from wheelfit.fetch.download import STALE_PART_SECONDS
from wheelfit.fetch.hashes import hash_file
from wheelfit.fetch.watch import Interrupted, Watch, sigint_cancels

SIZE = 600_000


def _in_thread(fn: object) -> tuple[threading.Thread, list[BaseException], list[object]]:
    errors: list[BaseException] = []
    results: list[object] = []

    def run() -> None:
        try:
            results.append(fn())  # type: ignore[operator]
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, errors, results


def _parts(cache: Cache) -> list[Path]:
    return sorted(cache.root.glob("wheels/*/*/*.part"))


def _wait(condition: object, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_cancel_mid_body_keeps_a_resumable_part_and_the_next_fetch_resumes(tmp_path: Path) -> None:
    blob = tmp_path / "files" / "demo-1.0-py3-none-any.whl"
    blob.parent.mkdir()
    blob.write_bytes(os.urandom(SIZE))
    digests = hash_file(blob)
    log: list[tuple[str, dict[str, str]]] = []
    cache = Cache(tmp_path / "cache")
    with serve(tmp_path / "files", throttle=200_000, request_log=log) as url:
        request = DownloadRequest(f"{url}/{blob.name}", blob.name, {"sha256": digests["sha256"]}, size=SIZE)
        watch = Watch()
        with make_client(watch=watch) as http:
            thread, errors, _ = _in_thread(lambda: Downloader(http, cache).fetch_all([request]))
            _wait(lambda: any(p.stat().st_size > 100_000 for p in _parts(cache)))
            cancelled = time.monotonic()
            watch.cancelled.set()
            thread.join(5)
            took = time.monotonic() - cancelled
        assert not thread.is_alive() and took < 0.5, took
        assert len(errors) == 1 and isinstance(errors[0], Interrupted)
        (part,) = _parts(cache)
        kept = part.stat().st_size
        note = json.loads((part.parent / "partial.json").read_bytes())
        assert note["total"] == SIZE and note["validator"] and note["url"] == request.url
        assert part.read_bytes() == blob.read_bytes()[:kept]

        with make_client(watch=Watch()) as http:
            result = Downloader(http, cache).fetch(request)
    assert result.path.read_bytes() == blob.read_bytes() and not result.from_cache
    assert [h.get("range") for _p, h in log] == [None, f"bytes={kept}-"]
    assert _parts(cache) == [] and not (part.parent / "partial.json").exists()


def test_a_read_blocked_on_a_stalled_server_is_reported_and_stops_on_cancel(tmp_path: Path) -> None:
    headers = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nLast-Modified: Tue, 01 Dec 2026 00:00:00 GMT\r\n\r\n"
    stalls: list[tuple[str, str, float]] = []
    with hung_server(headers + b"x" * 5000) as hung:
        watch = Watch(on_stall=lambda host, url, s: stalls.append((host, url, s)), stall_after=0.3, stall_every=0.3)
        cache = Cache(tmp_path / "cache")
        request = DownloadRequest(f"{hung.url}/demo-1.0-py3-none-any.whl", "demo-1.0-py3-none-any.whl")
        with make_client(watch=watch) as http:
            thread, errors, _ = _in_thread(lambda: Downloader(http, cache).fetch(request))
            _wait(lambda: len(stalls) >= 2)
            cancelled = time.monotonic()
            watch.cancelled.set()
            thread.join(5)
            took = time.monotonic() - cancelled
    assert not thread.is_alive() and took < 0.5, took
    assert len(errors) == 1 and isinstance(errors[0], Interrupted)
    host, url, seconds = stalls[0]
    assert host == f"127.0.0.1:{hung.port}" and url == request.url and seconds >= 0.3
    (part,) = _parts(cache)
    assert part.read_bytes() == b"x" * 5000  # what arrived is kept, to be resumed from byte 5000


def test_a_part_that_cannot_be_resumed_is_deleted_on_cancel(tmp_path: Path) -> None:
    """No ETag and no Last-Modified: nothing If-Range could check, so the bytes are not kept."""
    with hung_server(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 5000) as hung:
        watch = Watch(stall_after=0.2)
        cache = Cache(tmp_path / "cache")
        request = DownloadRequest(f"{hung.url}/demo-1.0-py3-none-any.whl", "demo-1.0-py3-none-any.whl")
        with make_client(watch=watch) as http:
            thread, errors, _ = _in_thread(lambda: Downloader(http, cache).fetch(request))
            _wait(lambda: bool(hung.requests))
            time.sleep(0.3)
            watch.cancelled.set()
            thread.join(5)
    assert len(errors) == 1 and isinstance(errors[0], Interrupted)
    assert _parts(cache) == [] and not list(cache.root.glob("wheels/*/*/partial.json"))


def test_a_page_request_waiting_for_headers_stops_on_cancel() -> None:
    from wheelfit.fetch.http import RetryPolicy, get

    with hung_server() as hung:
        watch = Watch()
        with make_client(watch=watch) as http:
            thread, errors, _ = _in_thread(lambda: get(http, f"{hung.url}/simple/torch/", {}, RetryPolicy()))
            hung.connected.wait(5)
            cancelled = time.monotonic()
            watch.cancelled.set()
            thread.join(5)
            took = time.monotonic() - cancelled
    assert not thread.is_alive() and took < 0.5, took
    assert len(errors) == 1 and isinstance(errors[0], Interrupted)


def test_stale_parts_are_swept_and_fresh_ones_kept(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache")
    old = cache.entry_dir("http://mirror.invalid/old.whl") / "old.whl.part"
    fresh = cache.entry_dir("http://mirror.invalid/fresh.whl") / "fresh.whl.part"
    for part in (old, fresh):
        part.parent.mkdir(parents=True)
        part.write_bytes(b"partial")
        (part.parent / "partial.json").write_text("{}")
    stale = time.time() - STALE_PART_SECONDS - 60
    os.utime(old, (stale, stale))
    blob = tmp_path / "files" / "demo-1.0-py3-none-any.whl"
    blob.parent.mkdir()
    blob.write_bytes(b"wheel bytes")
    with serve(tmp_path / "files") as url, make_client() as http:
        Downloader(http, cache).fetch(DownloadRequest(f"{url}/{blob.name}", blob.name, hash_file(blob)))
    assert not old.exists() and not (old.parent / "partial.json").exists()
    assert fresh.exists()


def test_sigint_cancels_the_watch_and_interrupts_the_main_thread() -> None:
    watch = Watch()
    with pytest.raises(KeyboardInterrupt), sigint_cancels(watch):
        signal.raise_signal(signal.SIGINT)
        time.sleep(1)
    assert watch.cancelled.is_set()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
