"""A server that drips its answer (one byte every 0.2 s) never trips the per-read timeout; the minimum-speed rule
(curl's --speed-limit/--speed-time: WHEELFIT_SPEED_LIMIT, WHEELFIT_SPEED_TIME) and the longest time one request
may take (WHEELFIT_MAX_TIME) stop it in bounded time with one line naming the URL and the setting to change, for
index pages and the wheels wheelfit fetches itself (:class:`~wheelfit.fetch.wheels.WheelStore`) alike. A server
that is slow to start but then quick is not what they stop."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import hermetic_env
from tests.install.conftest import error_line
from tests.support.hung import hung_server
from tests.support.inprocess import wheelfit_in_process
from tests.support.raw_http import Conn, RawRequest, raw_server, reply
from wheelfit.errors import WheelfitError
from wheelfit.fetch import NetworkError, RetryPolicy, SpeedRule, Timeouts, make_client
from wheelfit.fetch.http import get
from wheelfit.fetch.watch import Watch
from wheelfit.fetch.wheels import WheelStore
from wheelfit.simple.links import FileLink

WHEEL = "demo-1.0-py3-none-any.whl"
RTX_3090 = "cuda=8.6,driver=580.95.05"
#: 100 bytes/s over 1 s: the dripping server (5 bytes/s) breaks it within about a second of its headers.
STRICT = SpeedRule(speed_limit=100, speed_time=1.0)


def drip(_request: RawRequest, conn: Conn) -> None:
    """Headers at once, then a 100 kB body one byte every 0.2 s (for 10 s at most, then the connection closes)."""
    conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n")
    conn.drip(b"x" * 100_000, 0.2)


def late_but_quick(_request: RawRequest, conn: Conn) -> None:
    """Thinks for 1.5 s before answering, then sends 200 kB at once."""
    time.sleep(1.5)
    conn.send(reply("200 OK", b"y" * 200_000, ETag='"v1"'))


def steady(_request: RawRequest, conn: Conn) -> None:
    """Quick enough for the speed rule (about 500 bytes/s), but it goes on for 10 s."""
    conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n")
    conn.drip(b"z" * 5000, 0.002)


def _no_wait(retries: int = 1) -> RetryPolicy:
    return RetryPolicy(retries=retries, sleep=lambda _s: None)


def _fetch(http: httpx.Client, root: Path, url: str) -> Path:
    """``url``'s body through a :class:`WheelStore` at ``root`` (no hash given: stored under the one it has)."""
    path, _sha = WheelStore(root, http=lambda: http).fetch(FileLink(WHEEL, url), require_hash=False)
    return path


def _stored(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


@pytest.mark.parametrize("watched", [False, True], ids=["plain", "watched"])
def test_a_dripping_wheel_body_stops_in_bounded_time_naming_url_and_setting(tmp_path: Path, watched: bool) -> None:
    with raw_server(drip) as server, make_client(speed=STRICT, watch=Watch() if watched else None) as http:
        url = f"{server.url}/{WHEEL}"
        started = time.monotonic()
        with pytest.raises(WheelfitError) as info:
            _fetch(http, tmp_path / "store", url)
        took = time.monotonic() - started
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{url}: too slow: ")
    assert "below 100 bytes/s" in message and "WHEELFIT_SPEED_LIMIT" in message and "WHEELFIT_SPEED_TIME" in message
    assert 1.0 <= took < 3.0, took  # one attempt of about a second (the drip alone would last 10 s)
    assert len(server.requests) == 1  # the store does not retry
    assert _stored(tmp_path / "store") == []  # nothing half-downloaded is left


def test_a_dripping_index_page_stops_in_bounded_time() -> None:
    with raw_server(drip) as server, make_client(speed=STRICT) as http:
        url = f"{server.url}/simple/torch/"
        started = time.monotonic()
        with pytest.raises(NetworkError) as info:
            get(http, url, {}, _no_wait())
        took = time.monotonic() - started
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{url}: too slow: ") and "WHEELFIT_SPEED_LIMIT" in message
    assert took < 4.0, took


def test_install_against_a_dripping_index_reads_the_variables_and_exits_1(
    tmp_path: Path, backoff: list[float]
) -> None:
    speed = {"WHEELFIT_SPEED_LIMIT": "100", "WHEELFIT_SPEED_TIME": "0.5"}
    env = hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cache"), **speed)
    with raw_server(drip) as server:
        args = ["install", "torch", "--target", RTX_3090, "--pytorch-index", server.url, "--dry-run"]
        started = time.monotonic()
        done = wheelfit_in_process([*args, "--python", sys.executable], env)
        took = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    line = error_line(done.stderr)
    assert f"{server.url}/" in line and "too slow" in line and "WHEELFIT_SPEED_LIMIT" in line, line
    # each attempt stopped after about half a second (the drip alone: 10 s), then retried after a pause (recorded)
    pages = len({request.target for request in server.requests})
    assert backoff and len(server.requests) == len(backoff) + pages, (server.requests, backoff)
    assert took < len(server.requests) + 5, took


def test_a_body_that_stops_coming_is_stopped_by_the_speed_rule_before_the_read_timeout() -> None:
    """Headers and 5 kB, then nothing: a watched client (the command line's) measures the speed while it waits,
    so the rule's 0.5 s ends the wait, not the 5 s read timeout."""
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"
    with hung_server(head + b"x" * 5000) as hung:
        rule = SpeedRule(speed_limit=100, speed_time=0.5)
        with make_client(timeout=Timeouts(connect=5, read=5), speed=rule, watch=Watch()) as http:
            started = time.monotonic()
            with pytest.raises(NetworkError, match=r"too slow: 0 bytes in the last 0\.5 s"):
                get(http, f"{hung.url}/simple/torch/", {}, _no_wait(0))
            took = time.monotonic() - started
    assert took < 2.0, took


def test_a_request_longer_than_max_time_stops_and_is_not_retried(tmp_path: Path) -> None:
    rule = SpeedRule(speed_limit=100, speed_time=1.0, max_time=1.5)
    with raw_server(steady) as server, make_client(speed=rule) as http:
        url = f"{server.url}/{WHEEL}"
        started = time.monotonic()
        with pytest.raises(WheelfitError) as info:
            _fetch(http, tmp_path / "store", url)
        took = time.monotonic() - started
        with pytest.raises(NetworkError) as page:
            get(http, f"{server.url}/simple/demo/", {}, _no_wait(3))
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{url}: took longer than 1.5 s (WHEELFIT_MAX_TIME sets")
    assert 1.5 <= took < 3.0, took
    assert str(page.value) == (
        f"{server.url}/simple/demo/: took longer than 1.5 s (WHEELFIT_MAX_TIME sets the limit); not retried"
    )
    assert len(server.requests) == 2  # once each
    assert _stored(tmp_path / "store") == []


def test_max_time_also_bounds_the_wait_for_an_answer() -> None:
    """A server that never answers: with a watched client (the command line's) the longest time ends the wait
    before the read timeout does."""
    with hung_server() as hung:
        rule = SpeedRule(max_time=0.5)
        with make_client(timeout=Timeouts(connect=5, read=5), speed=rule, watch=Watch()) as http:
            started = time.monotonic()
            with pytest.raises(NetworkError, match=r"took longer than 0\.5 s \(WHEELFIT_MAX_TIME"):
                get(http, f"{hung.url}/simple/torch/", {}, _no_wait(3))
            took = time.monotonic() - started
    assert took < 2.0, took
    assert len(hung.requests) == 1


def test_a_server_slow_to_answer_but_quick_to_send_is_not_stopped(tmp_path: Path) -> None:
    """The rule measures the body from its headers on; waiting for them is --timeout's business."""
    with raw_server(late_but_quick) as server, make_client(speed=SpeedRule(speed_limit=1000, speed_time=1.0)) as http:
        path = _fetch(http, tmp_path / "store", f"{server.url}/{WHEEL}")
    assert path.stat().st_size == 200_000


def test_the_rule_comes_from_the_environment_and_a_bad_value_is_one_line() -> None:
    rule = SpeedRule.from_environ({"WHEELFIT_SPEED_LIMIT": "0", "WHEELFIT_SPEED_TIME": "12", "WHEELFIT_MAX_TIME": "60"})
    assert rule == SpeedRule(speed_limit=0, speed_time=12, max_time=60)
    assert SpeedRule.from_environ({}) == SpeedRule(speed_limit=1024, speed_time=30, max_time=None)
    for name, value in [("WHEELFIT_SPEED_LIMIT", "fast"), ("WHEELFIT_SPEED_TIME", "0"), ("WHEELFIT_MAX_TIME", "-1")]:
        with pytest.raises(WheelfitError) as info:
            make_client(environ={name: value})
        message = str(info.value)
        assert message.startswith(f"{name}={value!r}: not a number of ") and "\n" not in message


def test_the_defaults_leave_a_normal_download_alone(tmp_path: Path) -> None:
    blob = os.urandom(300_000)

    def quick(_request: RawRequest, conn: Conn) -> None:
        conn.send(reply("200 OK", blob))

    with raw_server(quick) as server, make_client(environ={}) as http:
        path = _fetch(http, tmp_path / "store", f"{server.url}/{WHEEL}")
    assert path.read_bytes() == blob
