"""One overall deadline per request with its retries (``get(..., deadline=)``): no attempt is started and no pause
slept past it, each attempt's timeouts are clipped to the time left, a body is not read past it, and what it stopped
is one line naming the URL and the deadline. The unit tests run on an injected clock; the loopback ones assert what
the server saw and what was said, never how long it took."""

from __future__ import annotations

import math

import httpx
import pytest

from tests.support.hung import hung_server
from tests.support.raw_http import Conn, RawRequest, raw_server
from wheelfit.errors import UsageError
from wheelfit.fetch.deadline import INDEX_DEADLINE_SOURCE, Deadline, Phase, index_deadline
from wheelfit.fetch.errors import HTTPStatusError, NetworkError
from wheelfit.fetch.http import RetryPolicy, get, make_client
from wheelfit.fetch.pace import DEADLINE_EXTENSION, DeadlineError, MaxTimeError, Pace, SpeedRule
from wheelfit.fetch.watch import Watch

URL = "https://index.example/whl/cu128/torch/"


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _client(handler: httpx.MockTransport) -> httpx.Client:
    return httpx.Client(transport=handler, timeout=httpx.Timeout(30.0, connect=10.0))


# -- the value --------------------------------------------------------------------------------------------------


def test_a_deadline_counts_down_on_its_clock() -> None:
    clock = FakeClock()
    deadline = Deadline(20, clock, source=INDEX_DEADLINE_SOURCE)
    expired = [deadline.expired]
    assert deadline.remaining() == 20
    clock.now += 19.5
    expired.append(deadline.expired)
    assert deadline.remaining() == 0.5
    clock.now += 0.5
    expired.append(deadline.expired)
    assert deadline.remaining() == 0 and expired == [False, False, True]
    clock.now += 10
    assert deadline.remaining() == 0  # never below 0
    assert str(deadline) == "20 s (the index deadline; WHEELFIT_INDEX_DEADLINE sets it)"
    assert Deadline(1.5, clock).describe() == "1.5 s"
    assert Deadline(0, clock).expired


@pytest.mark.parametrize("seconds", [-1.0, math.nan, math.inf])
def test_a_deadline_is_a_finite_number_of_seconds(seconds: float) -> None:
    with pytest.raises(ValueError):
        Deadline(seconds)


def test_index_deadline_defaults_per_phase_and_one_variable_overrides_both() -> None:
    assert index_deadline({}, "plan") == 20.0 and index_deadline({}, "install") == 30.0
    assert index_deadline({"WHEELFIT_PLAN_INDEX_DEADLINE": "5"}, "plan") == 5.0
    assert index_deadline({"WHEELFIT_PLAN_INDEX_DEADLINE": "5"}, "install") == 30.0
    assert index_deadline({"WHEELFIT_INSTALL_INDEX_DEADLINE": " 45 "}, "install") == 45.0
    both = {
        "WHEELFIT_INDEX_DEADLINE": "2.5",
        "WHEELFIT_PLAN_INDEX_DEADLINE": "5",
        "WHEELFIT_INSTALL_INDEX_DEADLINE": "9",
    }
    assert index_deadline(both, "plan") == 2.5 and index_deadline(both, "install") == 2.5
    assert index_deadline({"WHEELFIT_INDEX_DEADLINE": "0"}, "plan") == 0.0
    assert index_deadline({"WHEELFIT_INDEX_DEADLINE": ""}, "plan") == 20.0  # empty: unset


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf", "-inf", "20s"])
@pytest.mark.parametrize(
    "name", ["WHEELFIT_INDEX_DEADLINE", "WHEELFIT_PLAN_INDEX_DEADLINE", "WHEELFIT_INSTALL_INDEX_DEADLINE"]
)
def test_index_deadline_refuses_what_is_not_seconds_naming_the_variable(name: str, value: str) -> None:
    phase: Phase = "install" if "INSTALL" in name else "plan"
    with pytest.raises(UsageError) as info:
        index_deadline({name: value}, phase)
    message = str(info.value)
    assert message.startswith(f"{name}={value!r}: not a number of seconds") and "\n" not in message


# -- get(): attempts, pauses and timeouts within it (injected clock) ------------------------------------------


def test_each_attempt_is_clipped_to_the_time_left_and_none_starts_past_it() -> None:
    clock = FakeClock()
    seen: list[httpx.Timeout] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        seen.append(httpx.Timeout(**request.extensions["timeout"]))
        assert request.extensions[DEADLINE_EXTENSION] is deadline
        clock.now += 3.0  # each attempt takes 3 s to fail
        raise httpx.ConnectError("connection refused", request=request)

    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.sleep(seconds)

    policy = RetryPolicy(retries=3, sleep=sleep, jitter=lambda: 1.0)  # waits 0.5 s, then 1 s
    deadline = Deadline(8, clock, source=INDEX_DEADLINE_SOURCE)
    with _client(httpx.MockTransport(refuse)) as client, pytest.raises(NetworkError) as info:
        get(client, URL, {}, policy, deadline)
    # 8 s left, then 8 - 3.5, then 8 - 7.5; the fourth attempt would start past the deadline.
    assert [t.connect for t in seen] == [8.0, 4.5, 0.5]
    assert [t.read for t in seen] == [8.0, 4.5, 0.5] and [t.pool for t in seen] == [8.0, 4.5, 0.5]
    assert sleeps == [0.5, 1.0]
    assert str(info.value) == f"{URL}: no answer within 8 s (the index deadline; WHEELFIT_INDEX_DEADLINE sets it)"
    assert type(info.value) is NetworkError


def test_a_timeout_shorter_than_the_time_left_is_kept() -> None:
    clock = FakeClock()
    seen: list[dict[str, float]] = []

    def ok(request: httpx.Request) -> httpx.Response:
        seen.append(request.extensions["timeout"])
        return httpx.Response(200, text="page")

    with _client(httpx.MockTransport(ok)) as client:
        response = get(client, URL, {}, RetryPolicy(), Deadline(20, clock))
    assert response.text == "page"
    assert seen == [{"connect": 10.0, "read": 20.0, "write": 20.0, "pool": 20.0}]


def test_no_pause_is_slept_past_the_deadline_for_a_status() -> None:
    clock = FakeClock()
    requests: list[httpx.Request] = []

    def busy(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        clock.now += 1.0
        return httpx.Response(503, headers={"Retry-After": "8"})

    slept: list[float] = []
    policy = RetryPolicy(retries=3, sleep=slept.append)
    with _client(httpx.MockTransport(busy)) as client, pytest.raises(HTTPStatusError) as info:
        get(client, URL, {}, policy, Deadline(5, clock, source=INDEX_DEADLINE_SOURCE))
    assert len(requests) == 1 and slept == []  # 8 s of Retry-After does not fit in the 4 s left
    message = str(info.value)
    assert info.value.status == 503 and "\n" not in message
    assert message.startswith(f"{URL}: HTTP 503 Service Unavailable, and no time for another within 5 s (")
    assert "WHEELFIT_INDEX_DEADLINE" in message


def test_no_pause_is_slept_past_the_deadline_for_a_refused_connection() -> None:
    clock = FakeClock()
    count = 0

    def refuse(request: httpx.Request) -> httpx.Response:
        nonlocal count
        count += 1
        clock.now += 0.2
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    slept: list[float] = []
    policy = RetryPolicy(retries=3, backoff=2.0, sleep=slept.append, jitter=lambda: 1.0)  # the first pause: 2 s
    with _client(httpx.MockTransport(refuse)) as client, pytest.raises(NetworkError) as info:
        get(client, URL, {}, policy, Deadline(1, clock))
    assert count == 1 and slept == []
    assert str(info.value) == (
        f"{URL}: [Errno 111] Connection refused (after 1 attempt), and no time for another within 1 s; "
        "check the network or the index URL"
    )


def test_no_attempt_at_all_once_the_deadline_has_passed() -> None:
    def never(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no request may be made")

    with _client(httpx.MockTransport(never)) as client, pytest.raises(NetworkError) as info:
        get(client, URL, {}, RetryPolicy(), Deadline(0, FakeClock(), source=INDEX_DEADLINE_SOURCE))
    assert str(info.value) == f"{URL}: no answer within 0 s (the index deadline; WHEELFIT_INDEX_DEADLINE sets it)"


def test_without_a_deadline_the_client_timeouts_are_used_as_before() -> None:
    seen: list[object] = []

    def ok(request: httpx.Request) -> httpx.Response:
        seen.append((request.extensions["timeout"], DEADLINE_EXTENSION in request.extensions))
        return httpx.Response(200)

    with _client(httpx.MockTransport(ok)) as client:
        get(client, URL, {}, RetryPolicy())
    assert seen == [({"connect": 10.0, "read": 30.0, "write": 30.0, "pool": 30.0}, False)]


def test_pace_checks_the_requests_deadline_where_it_checks_max_time() -> None:
    clock = FakeClock()
    request = httpx.Request("GET", URL, extensions={DEADLINE_EXTENSION: Deadline(2, clock, source="a test")})
    pace = Pace(SpeedRule(speed_limit=0), clock(), clock, request=request)
    pace.add(10)
    clock.now += 1.9
    pace.check_time()
    clock.now += 0.1
    with pytest.raises(DeadlineError) as info:
        pace.add(10)  # a body chunk after the deadline
    assert isinstance(info.value, MaxTimeError)  # not retried, as max_time is not
    assert str(info.value) == "no answer within 2 s (a test)" and info.value.request is request
    Pace(SpeedRule(speed_limit=0), clock(), clock, request=httpx.Request("GET", URL)).check()  # none: no bound


# -- get(): real sockets on loopback --------------------------------------------------------------------------

WATCHED = pytest.mark.parametrize("watched", [False, True], ids=["plain", "watched"])


@WATCHED
def test_a_server_that_never_answers_gets_one_request_not_four(watched: bool) -> None:
    with hung_server() as hung, make_client(watch=Watch() if watched else None) as http:  # 30 s per read
        url = f"{hung.url}/whl/cu128/torch/"
        with pytest.raises(NetworkError) as info:
            get(http, url, {}, RetryPolicy(), Deadline(1, source=INDEX_DEADLINE_SOURCE))
        assert str(info.value) == f"{url}: no answer within 1 s (the index deadline; WHEELFIT_INDEX_DEADLINE sets it)"
        assert hung.requests == ["GET /whl/cu128/torch/ HTTP/1.1"]


def _drip_body(_request: RawRequest, conn: Conn) -> None:
    """Headers at once, then a 100 kB page one byte every 0.2 s (for 10 s at most): never a read timeout, and
    far above the default speed rule's window (30 s)."""
    conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n")
    conn.drip(b"x" * 100_000, 0.2)


def _drip_headers(_request: RawRequest, conn: Conn) -> None:
    """The status line and headers themselves one byte every 0.2 s."""
    conn.drip(b"HTTP/1.1 200 OK\r\nX-Padding: " + b"p" * 200 + b"\r\nContent-Length: 0\r\n\r\n", 0.2)


@WATCHED
def test_a_dripping_body_is_given_up_at_the_deadline(watched: bool) -> None:
    with raw_server(_drip_body) as server, make_client(watch=Watch() if watched else None) as http:
        url = f"{server.url}/whl/cu128/torch/"
        with pytest.raises(NetworkError) as info:
            get(http, url, {}, RetryPolicy(), Deadline(1.5, source=INDEX_DEADLINE_SOURCE))
    message = str(info.value)
    assert message == f"{url}: no answer within 1.5 s (the index deadline; WHEELFIT_INDEX_DEADLINE sets it)"
    assert len(server.requests) == 1


def test_dripping_headers_are_given_up_at_the_deadline_by_a_watched_client() -> None:
    with raw_server(_drip_headers) as server, make_client(watch=Watch()) as http:
        url = f"{server.url}/whl/cu128/torch/"
        with pytest.raises(NetworkError) as info:
            get(http, url, {}, RetryPolicy(), Deadline(1, source=INDEX_DEADLINE_SOURCE))
    assert str(info.value) == f"{url}: no answer within 1 s (the index deadline; WHEELFIT_INDEX_DEADLINE sets it)"
    assert len(server.requests) == 1
