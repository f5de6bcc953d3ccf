"""Cancelling fetches (what Ctrl-C does through ``wheelfit.fetch.watch``): a worker thread stops within a
fraction of a second wherever it is, even blocked in a read, and a wheel body cut off that way leaves nothing
in the store (:class:`~wheelfit.fetch.wheels.WheelStore` keeps only whole, checked files); the next fetch
downloads it whole."""

from __future__ import annotations

import hashlib
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from tests.support.hung import hung_server
from tests.support.static import serve_directory
from wheelfit.errors import Interrupted
from wheelfit.fetch import Progress, make_client
from wheelfit.fetch.watch import Watch, sigint_cancels
from wheelfit.fetch.wheels import WheelStore
from wheelfit.simple.links import FileLink

#: Over the store's 1 MiB read size, trickled at a MiB a second: cancelled after its first MiB, well before its end.
SIZE = 3 << 20
THROTTLE = 1 << 20
WHEEL = "demo-1.0-py3-none-any.whl"


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


def _files(root: Path) -> list[Path]:
    """Everything in the store, temporaries included."""
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def _wait(condition: object, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_cancel_mid_body_stops_at_once_keeps_nothing_and_the_next_fetch_downloads_it_whole(tmp_path: Path) -> None:
    blob = tmp_path / "files" / WHEEL
    blob.parent.mkdir()
    blob.write_bytes(os.urandom(SIZE))
    sha = hashlib.sha256(blob.read_bytes()).hexdigest()

    def link_at(url: str) -> FileLink:
        return FileLink(WHEEL, f"{url}/{WHEEL}", {"sha256": sha}, size=SIZE)

    events: list[Progress] = []
    root = tmp_path / "store"
    with serve_directory(tmp_path / "files", throttle=THROTTLE) as url:
        watch = Watch()
        with make_client(watch=watch) as http:
            store = WheelStore(root, http=lambda: http, progress=events.append)
            thread, errors, _ = _in_thread(lambda: store.fetch(link_at(url)))
            _wait(lambda: any(e.state == "downloading" for e in events))  # the first MiB is in: mid-body
            cancelled = time.monotonic()
            watch.cancelled.set()
            thread.join(5)
            took = time.monotonic() - cancelled
    assert not thread.is_alive() and took < 0.5, took
    assert len(errors) == 1 and isinstance(errors[0], Interrupted)
    assert events[-1].received < SIZE and _files(root) == []  # the temporary is gone: a store file is whole or absent

    log: list[tuple[str, dict[str, str]]] = []
    with serve_directory(tmp_path / "files", request_log=log) as url, make_client(watch=Watch()) as http:
        path, got = WheelStore(root, http=lambda: http).fetch(link_at(url))
    assert path.read_bytes() == blob.read_bytes() and got == sha
    assert [h.get("range") for _p, h in log] == [None]  # nothing resumed: it starts again from byte 0
    assert _files(root) == [path]


def test_a_read_blocked_on_a_stalled_server_is_reported_and_stops_on_cancel(tmp_path: Path) -> None:
    headers = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nLast-Modified: Tue, 01 Dec 2026 00:00:00 GMT\r\n\r\n"
    stalls: list[tuple[str, str, float]] = []
    events: list[Progress] = []
    root = tmp_path / "store"
    with hung_server(headers + b"x" * 5000) as hung:
        watch = Watch(on_stall=lambda host, url, s: stalls.append((host, url, s)), stall_after=0.3, stall_every=0.3)
        link = FileLink(WHEEL, f"{hung.url}/{WHEEL}")
        with make_client(watch=watch) as http:
            store = WheelStore(root, http=lambda: http, progress=events.append)
            thread, errors, _ = _in_thread(lambda: store.fetch(link, require_hash=False))
            _wait(lambda: len(stalls) >= 2)
            cancelled = time.monotonic()
            watch.cancelled.set()
            thread.join(5)
            took = time.monotonic() - cancelled
    assert not thread.is_alive() and took < 0.5, took
    assert len(errors) == 1 and isinstance(errors[0], Interrupted)
    host, url, seconds = stalls[0]
    assert host == f"127.0.0.1:{hung.port}" and url == link.url and seconds >= 0.3
    assert events[0] == Progress(WHEEL, "start", 0, 100_000) and "done" not in {e.state for e in events}
    assert _files(root) == []  # what arrived is not kept: there is no resuming


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


def test_sigint_cancels_the_watch_and_interrupts_the_main_thread() -> None:
    watch = Watch()
    with pytest.raises(KeyboardInterrupt), sigint_cancels(watch):
        signal.raise_signal(signal.SIGINT)
        time.sleep(1)
    assert watch.cancelled.is_set()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
