"""A broken or hostile server is a one-line error naming the URL, for index pages and the few wheels wheelfit
fetches itself (:class:`~wheelfit.fetch.wheels.WheelStore`) alike, never an internal error (issue 15): a malformed
chunked body, a Content-Length the body never reaches, a redirect from https to plain http (refused as a
downgrade; http to https is followed), a redirect to another scheme, and 429/503 that last (page reads follow
Retry-After up to the cap, then stop naming the URL, the status and the attempts; a wheel body is one request)."""

from __future__ import annotations

import email.utils
import hashlib
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import hermetic_env
from tests.install.conftest import error_line
from tests.support.certs import Certs, make_certs, server_context
from tests.support.inprocess import wheelfit_in_process
from tests.support.raw_http import Conn, RawRequest, RawServer, raw_server, reply
from wheelfit.errors import WheelfitError
from wheelfit.fetch import DownloadError, HTTPStatusError, NetworkError, RedirectError, RetryPolicy, make_client
from wheelfit.fetch.http import get
from wheelfit.fetch.wheels import WheelStore
from wheelfit.index.client import IndexClient
from wheelfit.simple.links import FileLink

WHEEL = "demo-1.0-py3-none-any.whl"
RTX_3090 = "cuda=8.6,driver=580.95.05"


def no_wait() -> RetryPolicy:
    return RetryPolicy(retries=2, sleep=lambda _s: None)


def store_of(root: Path, http: httpx.Client) -> WheelStore:
    return WheelStore(root, http=lambda: http)


def link_to(url: str, body: bytes = b"wheel bytes") -> FileLink:
    return FileLink(url.rsplit("/", 1)[1], url, {"sha256": hashlib.sha256(body).hexdigest()})


def stored_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def bad_chunking(_request: RawRequest, conn: Conn) -> None:
    conn.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    conn.send(b"5\r\nhello\r\nnot-hex\r\nxx\r\n0\r\n\r\n")


def short_body(_request: RawRequest, conn: Conn) -> None:
    conn.send(reply("200 OK", b"x" * 100, Content_Length="100000"))  # then the connection closes


FAULTS = {"bad chunking": (bad_chunking, "illegal chunk header"), "short body": (short_body, "received 100 bytes")}


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


def _one_line(exc: BaseException) -> str:
    message = str(exc)
    assert "\n" not in message, message
    return message


@pytest.mark.parametrize("fault", FAULTS)
def test_a_broken_page_response_is_one_line_naming_the_url(fault: str) -> None:
    script, detail = FAULTS[fault]
    with raw_server(script) as server, make_client() as http:
        page = f"{server.url}/simple/demo/"
        with pytest.raises(NetworkError) as info:
            IndexClient(http, retry=no_wait()).project_page(f"{server.url}/simple", "demo")
    message = _one_line(info.value)
    assert message.startswith(f"{page}: ") and detail in message and "after 3 attempts" in message
    assert len(server.requests) == 3  # a connection problem: retried, then given up on


@pytest.mark.parametrize("fault", FAULTS)
def test_a_broken_wheel_body_is_one_line_naming_the_url_and_keeps_nothing(tmp_path: Path, fault: str) -> None:
    script, detail = FAULTS[fault]
    with raw_server(script) as server, make_client() as http:
        url = f"{server.url}/{WHEEL}"
        with pytest.raises(WheelfitError) as info:
            store_of(tmp_path / "store", http).fetch(link_to(url))
    message = _one_line(info.value)
    assert message.startswith(f"{url}: ") and detail in message and "nothing was installed" in message
    assert len(server.requests) == 1  # the store makes one request; uv and pip retry their own downloads
    assert stored_files(tmp_path / "store") == []


@pytest.mark.parametrize("fault", FAULTS)
def test_install_against_a_broken_index_exits_1_with_one_line_naming_the_url(
    tmp_path: Path, fault: str, backoff: list[float]
) -> None:
    """Retried as a transient fault (the pauses between attempts recorded, not slept), then one line."""
    script, detail = FAULTS[fault]
    env = hermetic_env(WHEELFIT_CACHE_DIR=str(tmp_path / "cache"))
    with raw_server(script) as server:
        args = ["install", "torch", "--target", RTX_3090, "--pytorch-index", server.url, "--dry-run"]
        done = wheelfit_in_process([*args, "--python", sys.executable], env)
    assert done.returncode == 1, done.stderr
    line = error_line(done.stderr)
    assert "internal error" not in line and f"{server.url}/" in line and detail in line, line


# -- redirects ----------------------------------------------------------------------------------------------


def _redirect_to(location: Callable[[], str]) -> Callable[[RawRequest, Conn], None]:
    def script(request: RawRequest, conn: Conn) -> None:
        conn.send(reply("302 Found", Location=location() + request.target))

    return script


def _serve_file(body: bytes) -> Callable[[RawRequest, Conn], None]:
    def script(_request: RawRequest, conn: Conn) -> None:
        conn.send(reply("200 OK", body, Content_Type="application/octet-stream"))

    return script


@pytest.fixture
def plain_target() -> Iterator[RawServer]:
    """A plain-http server: where a downgrade would lead (it must never be asked)."""
    with raw_server(_serve_file(b"wheel bytes")) as server:
        yield server


def test_a_redirect_from_https_to_plain_http_is_refused(tmp_path: Path, certs: Certs, plain_target: RawServer) -> None:
    tls = server_context(certs.good)
    with (
        raw_server(_redirect_to(lambda: plain_target.url), tls=tls) as https,
        make_client(cert=str(certs.ca_pem)) as http,
    ):
        url = f"{https.url}/{WHEEL}"
        with pytest.raises(RedirectError) as info:
            store_of(tmp_path / "store", http).fetch(link_to(url))
        message = _one_line(info.value)
        assert message.startswith(f"{url}: redirected to plain http ({plain_target.url}/{WHEEL}); refused")
        with pytest.raises(RedirectError, match=r"refused, as a downgrade from https"):
            IndexClient(http, retry=no_wait()).project_page(f"{https.url}/simple", "demo")
    assert len(https.requests) == 2  # once each: not retried
    assert plain_target.requests == [] and stored_files(tmp_path / "store") == []


def test_a_redirect_from_http_to_https_is_followed(tmp_path: Path, certs: Certs) -> None:
    with (
        raw_server(_serve_file(b"wheel bytes"), tls=server_context(certs.good)) as https,
        raw_server(_redirect_to(lambda: https.url)) as plain,
        make_client(cert=str(certs.ca_pem)) as http,
    ):
        path, _sha = store_of(tmp_path / "store", http).fetch(link_to(f"{plain.url}/{WHEEL}"))
    assert path.read_bytes() == b"wheel bytes"
    assert [r.target for r in https.requests] == [f"/{WHEEL}"]


def test_a_redirect_to_another_scheme_is_refused_once(tmp_path: Path) -> None:
    with (
        raw_server(_redirect_to(lambda: "ftp://127.0.0.1:21")) as server,
        make_client() as http,
        pytest.raises(RedirectError) as info,
    ):
        get(http, f"{server.url}/simple/demo/", {}, no_wait())
    assert "not an http(s) URL; refused" in _one_line(info.value)
    assert len(server.requests) == 1


# -- 429 and 5xx --------------------------------------------------------------------------------------------


def _busy(status: str, retry_after: str | None, times: int, then: bytes = b"") -> Callable[[RawRequest, Conn], None]:
    count = [0]

    def script(_request: RawRequest, conn: Conn) -> None:
        count[0] += 1
        if count[0] <= times:
            headers = {"Retry_After": retry_after} if retry_after is not None else {}
            conn.send(reply(status, b"busy\n", **headers))
        else:
            conn.send(reply("200 OK", then, Content_Type="text/html"))

    return script


PAGE = b'<html><body><a href="/files/demo-1.0-py3-none-any.whl">demo-1.0-py3-none-any.whl</a></body></html>'


def test_429_retry_after_seconds_is_followed_on_page_reads() -> None:
    delays: list[float] = []
    policy = RetryPolicy(retries=3, max_backoff=30, sleep=delays.append)
    with make_client() as http:
        with raw_server(_busy("429 Too Many Requests", "7", 2, PAGE)) as server:
            page = IndexClient(http, retry=policy).project_page(f"{server.url}/simple", "demo")
        assert page.links[0].filename == WHEEL and delays == [7.0, 7.0]
        delays.clear()
        with raw_server(_busy("429 Too Many Requests", "3", 1, b"metadata bytes")) as server:
            response = get(http, f"{server.url}/files/{WHEEL}.metadata", {}, policy)
        assert response.content == b"metadata bytes" and delays == [3.0] and len(server.requests) == 2


def test_retry_after_as_an_http_date_and_its_cap() -> None:
    policy = RetryPolicy(max_backoff=8)
    now = time.time()
    in_five = email.utils.formatdate(now + 5, usegmt=True)
    assert 3.5 <= policy.delay(1, in_five, now=now) <= 5.0
    assert policy.delay(1, email.utils.formatdate(now + 3600, usegmt=True), now=now) == 8.0  # capped
    assert policy.delay(1, "3600") == 8.0
    assert policy.delay(1, email.utils.formatdate(now - 60, usegmt=True), now=now) == 0.0  # already past


@pytest.mark.parametrize(("status", "retry_after"), [("429 Too Many Requests", "1"), ("503 Service Unavailable", None)])
def test_a_status_that_lasts_stops_naming_the_url_status_and_attempts(
    tmp_path: Path, status: str, retry_after: str | None
) -> None:
    delays: list[float] = []
    policy = RetryPolicy(retries=3, backoff=0.2, max_backoff=0.5, sleep=delays.append)
    code = status.split()[0]
    with raw_server(_busy(status, retry_after, 99)) as server, make_client() as http:
        with pytest.raises(HTTPStatusError) as page:
            IndexClient(http, retry=policy).project_page(f"{server.url}/simple", "demo")
        assert len(server.requests) == 4 and len(delays) == 3 and max(delays) <= 0.5  # capped, Retry-After too
        url = f"{server.url}/{WHEEL}"
        with pytest.raises(DownloadError) as wheel:
            store_of(tmp_path / "store", http).fetch(link_to(url))
    assert _one_line(page.value).startswith(f"{server.url}/simple/demo/: HTTP {status} after 4 attempts")
    assert page.value.status == int(code)
    assert _one_line(wheel.value).startswith(f"{url}: HTTP {status}")  # a wheel body: one request, not retried
    assert len(server.requests) == 5 and len(delays) == 3


def _closes_first(times: int) -> Callable[[RawRequest, Conn], None]:
    """Answers nothing on the first ``times`` connections (closes them, as a server or proxy drops a kept-alive
    connection the client is about to reuse), then the wheel."""
    seen: list[RawRequest] = []

    def script(request: RawRequest, conn: Conn) -> None:
        seen.append(request)
        if len(seen) > times:
            conn.send(reply("200 OK", b"wheel bytes"))

    return script


def test_a_connection_closed_before_any_answer_is_tried_once_more_on_a_fresh_one(tmp_path: Path) -> None:
    with raw_server(_closes_first(1)) as server, make_client() as http:
        url = f"{server.url}/{WHEEL}"
        path, _sha = store_of(tmp_path / "store", http).fetch(link_to(url))
    assert path.read_bytes() == b"wheel bytes" and len(server.requests) == 2


def test_a_second_close_is_the_callers_error(tmp_path: Path) -> None:
    with raw_server(_closes_first(2)) as server, make_client() as http:
        url = f"{server.url}/{WHEEL}"
        with pytest.raises(DownloadError, match="nothing was installed"):
            store_of(tmp_path / "store", http).fetch(link_to(url))
    assert len(server.requests) == 2 and stored_files(tmp_path / "store") == []
