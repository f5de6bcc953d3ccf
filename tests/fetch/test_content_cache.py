"""The download cache by content: the same wheel (same sha256) from another mirror's URL is linked from the
cache, not downloaded again; a copy that no longer has those bytes, or a request with no sha256, is not trusted."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support import StartServer
from tests.support.index_server import Faults, IndexServer
from tests.support.wheels import make_wheel
from wheelfit.fetch import Cache, Downloader, DownloadRequest, make_client
from wheelfit.index import FileLink
from wheelfit.index.client import IndexClient


def _link(server: IndexServer) -> FileLink:
    with make_client() as http:
        return IndexClient(http).project_page(server.index_url("simple"), "demo").links[0]


def _request(link: FileLink) -> DownloadRequest:
    return DownloadRequest(link.url, link.filename, link.hashes, size=link.size)


def _two_mirrors(tmp_path: Path, index_server: StartServer, **kwargs: object) -> tuple[Path, IndexServer, IndexServer]:
    wheel = make_wheel(tmp_path / "idx" / "simple", "demo", "1.0", files={"demo/blob.bin": os.urandom(100_000)})
    return wheel, index_server(tmp_path / "idx", **kwargs), index_server(tmp_path / "idx", **kwargs)


def test_the_same_file_from_another_mirror_is_not_downloaded_again(tmp_path: Path, index_server: StartServer) -> None:
    wheel, first, second = _two_mirrors(tmp_path, index_server)
    one, other = _link(first), _link(second)
    assert one.url != other.url and one.hashes["sha256"] == other.hashes["sha256"]
    cache = Cache(tmp_path / "cache")
    with make_client() as http:
        fetched = Downloader(http, cache).fetch(_request(one))
        linked = Downloader(http, cache).fetch(_request(other))
        again = Downloader(http, cache).fetch(_request(other))
    assert len(first.requests_for(wheel.name)) == 1
    assert second.requests_for(wheel.name) == []  # never asked: the bytes were in the cache already
    assert (fetched.from_cache, linked.from_cache, again.from_cache) == (False, True, True)
    assert linked.path != fetched.path and linked.path.read_bytes() == wheel.read_bytes()
    assert linked.path.stat().st_ino == fetched.path.stat().st_ino  # a hard link, not a second copy
    assert linked.sha256 == fetched.sha256


def test_only_an_expected_sha256_finds_a_file_by_content(tmp_path: Path, index_server: StartServer) -> None:
    """A third mirror that lists the file without a hash: nothing says it is the same bytes, so it is fetched."""
    wheel, first, second = _two_mirrors(tmp_path, index_server)
    third = index_server(tmp_path / "idx", json=False, faults=Faults(missing_hash={wheel.name}))
    cache = Cache(tmp_path / "cache")
    with make_client() as http:
        Downloader(http, cache).fetch(_request(_link(first)))
        assert Downloader(http, cache).fetch(_request(_link(second))).from_cache
        link = _link(third)
        assert link.hashes == {}
        result = Downloader(http, cache).fetch(_request(link))
    assert (len(second.requests_for(wheel.name)), len(third.requests_for(wheel.name))) == (0, 1)
    assert not result.from_cache and result.path.read_bytes() == wheel.read_bytes()


def test_a_changed_cached_copy_is_not_reused_by_content(tmp_path: Path, index_server: StartServer) -> None:
    wheel, first, second = _two_mirrors(tmp_path, index_server)
    cache = Cache(tmp_path / "cache")
    with make_client() as http:
        fetched = Downloader(http, cache).fetch(_request(_link(first)))
        by_content = cache.content_path(fetched.sha256)
        by_content.unlink()
        by_content.write_bytes(b"not the wheel")  # same name, other bytes
        result = Downloader(http, cache).fetch(_request(_link(second)))
    assert len(second.requests_for(wheel.name)) == 1 and not result.from_cache
    assert result.path.read_bytes() == wheel.read_bytes()
    assert cache.content_path(fetched.sha256).read_bytes() == wheel.read_bytes()
