"""A file that changed on the server between two attempts is never spliced: the resume sends ``If-Range`` with
the validator of the bytes held; a server that honours it answers 200 with the whole new file (the download
starts again from byte 0); one that wrongly answers 206 from the new file (another total in Content-Range, or
another ETag or Last-Modified) has the partial file discarded and the next attempt starts from byte 0."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.raw_http import Conn, RawRequest, raw_server, reply
from wheelfit.fetch import (
    Cache,
    Downloader,
    DownloadRequest,
    DownloadResult,
    HashMismatchError,
    Progress,
    RetryPolicy,
    make_client,
)

WHEEL = "demo-1.0-py3-none-any.whl"
CUT = 40_000
OLD = os.urandom(100_000)
NEW_SAME_SIZE = os.urandom(100_000)
NEW_LONGER = os.urandom(120_000)
OLD_DATE, NEW_DATE = "Tue, 01 Dec 2026 00:00:00 GMT", "Wed, 02 Dec 2026 00:00:00 GMT"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _changing(new: bytes, resume: str, validator: str = "etag") -> Callable[[RawRequest, Conn], None]:
    """First request: the old file, cut off after ``CUT`` bytes. Then the file is ``new``. A request with
    ``Range`` is answered as ``resume`` says: ``"honest"`` (If-Range compared: 200 with the new file) or
    ``"wrong-206"`` (206 with the new file's bytes from the offset, whatever If-Range says)."""
    calls = [0]

    def tag(data: bytes) -> dict[str, str]:
        if validator == "etag":
            return {"ETag": f'"{_sha(data)[:12]}"'}
        if validator == "same-etag":  # a mirror whose ETag does not follow the content: only the total tells
            return {"ETag": '"demo-1.0"'}
        return {"Last_Modified": OLD_DATE if data is OLD else NEW_DATE}

    def script(request: RawRequest, conn: Conn) -> None:
        calls[0] += 1
        if calls[0] == 1:
            conn.send(reply("200 OK", OLD, **tag(OLD))[: -len(OLD) + CUT])  # headers say 100000, then it drops
            return
        wanted = request.headers.get("range", "")
        current = next(iter(tag(new).values()))
        if wanted and (resume == "wrong-206" or request.headers.get("if-range") == current):
            start = int(wanted.removeprefix("bytes=").rstrip("-"))
            span = f"bytes {start}-{len(new) - 1}/{len(new)}"
            conn.send(reply("206 Partial Content", new[start:], Content_Range=span, **tag(new)))
        else:
            conn.send(reply("200 OK", new, **tag(new)))

    return script


def _fetch(
    tmp_path: Path, script: Callable[[RawRequest, Conn], None], **request: object
) -> tuple[DownloadResult | Exception, list[RawRequest], list[str]]:
    """The result (or the error), the requests the server saw, and why each retry happened."""
    events: list[Progress] = []
    with raw_server(script) as server, make_client() as http:
        policy = RetryPolicy(retries=3, sleep=lambda _s: None)
        downloader = Downloader(http, Cache(tmp_path / "cache"), retry=policy, progress=events.append)
        result: DownloadResult | Exception
        try:
            result = downloader.fetch(DownloadRequest(f"{server.url}/{WHEEL}", WHEEL, **request))  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - the test looks at it
            result = exc
    return result, server.requests, [e.detail for e in events if e.state == "retrying"]


def test_a_changed_file_answered_200_to_if_range_restarts_from_zero(tmp_path: Path) -> None:
    result, requests, _ = _fetch(tmp_path, _changing(NEW_SAME_SIZE, "honest"))
    assert isinstance(result, DownloadResult), result
    assert result.path.read_bytes() == NEW_SAME_SIZE
    assert requests[1].headers["range"] == f"bytes={CUT}-"
    assert requests[1].headers["if-range"] == f'"{_sha(OLD)[:12]}"'
    assert len(requests) == 2


def test_the_old_files_hash_then_fails_closed_instead_of_splicing(tmp_path: Path) -> None:
    result, _, _ = _fetch(tmp_path, _changing(NEW_SAME_SIZE, "honest"), hashes={"sha256": _sha(OLD)})
    assert isinstance(result, HashMismatchError) and _sha(NEW_SAME_SIZE) in str(result)


@pytest.mark.parametrize(
    ("new", "validator", "why"),
    [
        (NEW_SAME_SIZE, "etag", "the file changed on the server (ETag "),
        (NEW_SAME_SIZE, "last-modified", f"the file changed on the server (Last-Modified {NEW_DATE}"),
        (NEW_LONGER, "same-etag", "the server resumed with the wrong range ('bytes 40000-119999/120000'"),
    ],
    ids=["same-size-new-etag", "same-size-new-date", "another-total"],
)
def test_a_wrong_206_for_a_changed_file_is_discarded_and_restarted(
    tmp_path: Path, new: bytes, validator: str, why: str
) -> None:
    result, requests, retries = _fetch(tmp_path, _changing(new, "wrong-206", validator))
    assert isinstance(result, DownloadResult), result
    data = result.path.read_bytes()
    assert data == new and _sha(data) == _sha(new)  # never OLD[:CUT] + new[CUT:]
    assert [r.headers.get("range") for r in requests] == [None, f"bytes={CUT}-", None]
    assert retries[1].startswith(why) and retries[1].endswith("the next attempt starts from byte 0"), retries


def test_the_reason_is_in_the_error_when_the_attempts_run_out(tmp_path: Path) -> None:
    with raw_server(_changing(NEW_SAME_SIZE, "wrong-206")) as server, make_client() as http:
        url = f"{server.url}/{WHEEL}"
        downloader = Downloader(http, Cache(tmp_path / "cache"), retry=RetryPolicy(retries=1, sleep=lambda _s: None))
        with pytest.raises(Exception) as info:
            downloader.fetch(DownloadRequest(url, WHEEL))
    message = str(info.value)
    assert message.startswith(f"{url}: the file changed on the server (ETag ") and "(after 2 attempts)" in message
    assert "the partial file was discarded" in message and "\n" not in message
