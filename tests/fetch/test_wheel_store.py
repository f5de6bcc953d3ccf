"""The few wheels wheelfit reads itself (:class:`~wheelfit.fetch.wheels.WheelStore`): a body is kept only when it
is whole and has the index's sha256; a kept one is served again without a request, offline too; and offline, a
wheel not kept is one line saying so."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.support.raw_http import Conn, RawRequest, raw_server, reply
from tests.support.static import serve_directory
from wheelfit.fetch import DownloadError, HashMismatchError, Progress, TruncatedDownloadError, make_client
from wheelfit.fetch.wheels import WheelStore
from wheelfit.simple.links import FileLink

WHEEL = "demo-1.0-py3-none-any.whl"
BODY = b"wheel bytes " * 1000
SHA = hashlib.sha256(BODY).hexdigest()


def serve_body(content_length: int = len(BODY)) -> Callable[[RawRequest, Conn], None]:
    def script(_request: RawRequest, conn: Conn) -> None:
        conn.send(reply("200 OK", BODY, Content_Length=str(content_length)))

    return script


def stored(root: Path) -> list[Path]:
    """Every file under the store, temporaries included."""
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def no_http() -> httpx.Client:
    raise AssertionError("no request was expected")


def test_a_body_whose_sha256_differs_is_refused_and_nothing_is_kept(tmp_path: Path) -> None:
    wrong = hashlib.sha256(b"another wheel").hexdigest()
    with raw_server(serve_body()) as server, make_client(environ={}) as http:
        link = FileLink(WHEEL, f"{server.url}/{WHEEL}", {"sha256": wrong}, size=len(BODY))
        with pytest.raises(HashMismatchError) as info:
            WheelStore(tmp_path / "store", http=lambda: http).fetch(link)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{WHEEL}: sha256 mismatch: expected {wrong}, got {SHA} (")
    assert link.url in message and len(server.requests) == 1
    assert stored(tmp_path / "store") == []


@pytest.mark.parametrize(
    ("content_length", "size", "error", "detail"),
    [
        (len(BODY) + 500, None, DownloadError, f"received {len(BODY)} bytes, expected {len(BODY) + 500}"),
        (len(BODY), len(BODY) + 500, TruncatedDownloadError, f"{len(BODY)} bytes received, the index says"),
    ],
    ids=["content-length", "index-size"],
)
def test_a_short_body_is_refused_and_nothing_is_kept(
    tmp_path: Path, content_length: int, size: int | None, error: type[Exception], detail: str
) -> None:
    """Shorter than its own Content-Length (the connection closes early), or than the size the index gives."""
    with raw_server(serve_body(content_length)) as server, make_client(environ={}) as http:
        link = FileLink(WHEEL, f"{server.url}/{WHEEL}", {"sha256": SHA}, size=size)
        with pytest.raises(error) as info:
            WheelStore(tmp_path / "store", http=lambda: http).fetch(link)
    message = str(info.value)
    assert "\n" not in message and detail in message and "nothing was installed" in message, message
    assert stored(tmp_path / "store") == []


def test_a_stored_wheel_is_served_without_a_request_and_offline_a_missing_one_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / WHEEL).write_bytes(BODY)
    root = tmp_path / "store"
    log: list[tuple[str, dict[str, str]]] = []
    events: list[Progress] = []
    with serve_directory(tmp_path / "files", request_log=log) as url, make_client(environ={}) as http:
        link = FileLink(WHEEL, f"{url}/{WHEEL}", {"sha256": SHA}, size=len(BODY))
        store = WheelStore(root, http=lambda: http, progress=events.append)
        first = store.fetch(link)
        again = store.fetch(link)
    assert first == again == (root / SHA[:2] / SHA / WHEEL, SHA) and first[0].read_bytes() == BODY
    assert len(log) == 1 and events[-1] == Progress(WHEEL, "cached", len(BODY), len(BODY))
    assert WheelStore(root, http=no_http, offline=True).fetch(link) == first  # offline: the stored copy
    assert stored(root) == [first[0]]

    other = FileLink("other-1.0-py3-none-any.whl", f"{url}/other-1.0-py3-none-any.whl", {"sha256": "ab" * 32})
    with pytest.raises(DownloadError) as info:
        WheelStore(root, http=no_http, offline=True).fetch(other)
    assert str(info.value) == (
        "offline: other-1.0-py3-none-any.whl is not in wheelfit's cache; run once without --offline"
    )
