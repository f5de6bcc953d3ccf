"""Downloads against the loopback index: hashes, resume, retries, TLS, truncation, atomicity, concurrency."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, hermetic_env
from tests.support import StartServer
from tests.support.index_server import Faults, IndexServer
from tests.support.wheels import make_wheel
from wheelfit.fetch import (
    Cache,
    Downloader,
    DownloadRequest,
    HashMismatchError,
    MissingHashError,
    NetworkError,
    Progress,
    RetryPolicy,
    Timeouts,
    TLSError,
    TruncatedDownloadError,
    make_client,
    trust_context,
)
from wheelfit.fetch.cache import boot_id
from wheelfit.index import FileLink
from wheelfit.index.client import IndexClient

NO_WAIT = RetryPolicy(retries=3, sleep=lambda _s: None)
SIZE = 200_000  # random payload: the wheel does not compress, so byte offsets below are inside the body


def _wheel(directory: Path, name: str = "demo", version: str = "1.0") -> Path:
    return make_wheel(directory, name, version, files={f"{name}/blob.bin": os.urandom(SIZE)})


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _link(server: IndexServer, project: str = "demo") -> FileLink:
    with make_client() as http:
        return IndexClient(http).project_page(server.index_url("simple"), project).links[0]


def _request(link: FileLink, **kwargs: object) -> DownloadRequest:
    return DownloadRequest(link.url, link.filename, link.hashes, **kwargs)  # type: ignore[arg-type]


def _cache_files(cache: Cache) -> list[str]:
    """Every file in the wheel cache except lock files: what a failed download must not leave behind."""
    wheels = cache.root / "wheels"
    return sorted(p.name for p in wheels.rglob("*") if p.is_file() and p.name != ".lock") if wheels.exists() else []


def test_verified_download_is_cached_and_reused(tmp_path: Path, index_server: StartServer) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx")
    link = _link(server)
    events: list[Progress] = []
    cache = Cache(tmp_path / "cache")
    with make_client() as http:
        first = Downloader(http, cache, progress=events.append, progress_interval=0).fetch(_request(link))
        second = Downloader(http, cache).fetch(_request(link))
    assert first.sha256 == _sha256(wheel) and first.path.read_bytes() == wheel.read_bytes()
    assert (first.from_cache, second.from_cache, second.path) == (False, True, first.path)
    assert first.warnings == () and len(server.requests_for(wheel.name)) == 1
    assert server.requests_for(wheel.name)[0].headers["accept-encoding"] == "identity"
    assert [events[0].state, events[-1].state] == ["start", "done"]
    received = [e.received for e in events if e.state == "downloading"]
    assert received == sorted(received) and received[-1] == wheel.stat().st_size
    assert all(e.total == wheel.stat().st_size for e in events if e.state == "downloading")


def test_missing_index_hash_is_reported_or_refused(tmp_path: Path, index_server: StartServer) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx", json=False, faults=Faults(missing_hash={wheel.name}))
    link = _link(server)
    assert link.hashes == {}
    with make_client() as http:
        with pytest.raises(MissingHashError, match=f"--hash=sha256:{_sha256(wheel)}"):
            Downloader(http, Cache(tmp_path / "strict")).fetch(_request(link, require_hash=True))
        result = Downloader(http, Cache(tmp_path / "cache")).fetch(_request(link))
    assert _cache_files(Cache(tmp_path / "strict")) == []
    (warning,) = result.warnings
    assert wheel.name in warning and _sha256(wheel) in warning and "not verified" in warning


def test_wrong_index_hash_aborts_once_and_keeps_nothing(tmp_path: Path, index_server: StartServer) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx", json=False, faults=Faults(wrong_hash={wheel.name}))
    link = _link(server)
    cache = Cache(tmp_path / "cache")
    with make_client() as http, pytest.raises(HashMismatchError) as info:
        Downloader(http, cache, retry=NO_WAIT).fetch(_request(link))
    message = str(info.value)
    assert wheel.name in message and link.hashes["sha256"] in message and _sha256(wheel) in message
    assert "\n" not in message
    assert len(server.requests_for(wheel.name)) == 1  # a wrong hash is never retried
    assert _cache_files(cache) == []


def test_dropped_connection_resumes_with_range_and_if_range(tmp_path: Path, index_server: StartServer) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx", faults=Faults(drop={wheel.name: 70_000}))
    link = _link(server)
    events: list[Progress] = []
    with make_client() as http:
        result = Downloader(http, Cache(tmp_path / "cache"), retry=NO_WAIT, progress=events.append).fetch(
            _request(link)
        )
    first, second = server.requests_for(wheel.name)
    assert "range" not in first.headers and first.status == 200
    assert second.headers["range"] == "bytes=70000-" and second.status == 206
    assert second.headers["if-range"].startswith('"')  # the strong ETag of the first response
    assert result.sha256 == _sha256(wheel)
    assert [e.received for e in events if e.state == "retrying"] == [70_000]


def test_server_ignoring_range_restarts_from_zero(tmp_path: Path, index_server: StartServer) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    faults = Faults(drop={wheel.name: 50_000}, ignore_range={wheel.name})
    server = index_server(tmp_path / "idx", faults=faults)
    with make_client() as http:
        result = Downloader(http, Cache(tmp_path / "cache"), retry=NO_WAIT).fetch(_request(_link(server)))
    assert [r.status for r in server.requests_for(wheel.name)] == [200, 200]
    assert result.sha256 == _sha256(wheel) and result.path.stat().st_size == wheel.stat().st_size


def test_truncated_body_is_detected_and_nothing_is_kept(tmp_path: Path, index_server: StartServer) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx", faults=Faults(truncate={wheel.name: 90_000}))
    cache = Cache(tmp_path / "cache")
    with make_client() as http, pytest.raises(TruncatedDownloadError) as info:
        Downloader(http, cache, retry=RetryPolicy(retries=2, sleep=lambda _s: None)).fetch(_request(_link(server)))
    assert wheel.name in str(info.value) and "after 3 attempts" in str(info.value) and "\n" not in str(info.value)
    assert [r.headers.get("range") for r in server.requests_for(wheel.name)] == [None, "bytes=90000-", "bytes=90000-"]
    assert _cache_files(cache) == []


def test_index_size_disagreeing_with_content_length_fails(tmp_path: Path, index_server: StartServer) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx")
    link = _link(server)
    assert link.size == wheel.stat().st_size  # PEP 700 size from the JSON page
    with make_client() as http, pytest.raises(TruncatedDownloadError, match="index says 1234"):
        Downloader(http, Cache(tmp_path / "cache"), retry=NO_WAIT).fetch(_request(link, size=1234))
    assert len(server.requests_for(wheel.name)) == 1


def test_503_is_retried_with_bounded_backoff(tmp_path: Path, index_server: StartServer) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    other = _wheel(tmp_path / "idx" / "simple", "other")
    server = index_server(tmp_path / "idx", faults=Faults(unavailable={wheel.name: 2, other.name: 99}))
    delays: list[float] = []
    policy = RetryPolicy(retries=3, backoff=0.2, max_backoff=0.5, sleep=delays.append)
    with make_client() as http:
        ok = Downloader(http, Cache(tmp_path / "cache"), retry=policy).fetch(_request(_link(server)))
        assert ok.sha256 == _sha256(wheel)
        assert [r.status for r in server.requests_for(wheel.name)] == [503, 503, 200]
        assert 0.1 <= delays[0] <= 0.2 and 0.2 <= delays[1] <= 0.4  # exponential, half jitter
        delays.clear()
        with pytest.raises(NetworkError, match=r"HTTP 503.*after 4 attempts"):
            Downloader(http, Cache(tmp_path / "cache"), retry=policy).fetch(_request(_link(server, "other")))
    assert len(server.requests_for(other.name)) == 4
    assert len(delays) == 3 and max(delays) <= 0.5  # capped


def test_real_backoff_sleeps(tmp_path: Path, index_server: StartServer) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx", faults=Faults(unavailable={wheel.name: 2}))
    started = time.monotonic()
    with make_client() as http:
        Downloader(http, Cache(tmp_path / "cache"), retry=RetryPolicy(backoff=0.1)).fetch(_request(_link(server)))
    assert time.monotonic() - started >= 0.05 + 0.1  # at least half of 0.1 and of 0.2


def test_tls_failure_is_not_retried(tmp_path: Path, index_server: StartServer) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx")
    https = server.url.replace("http://", "https://") + f"/simple/{wheel.name}"  # TLS to a plain-HTTP port
    with make_client() as http, pytest.raises(TLSError) as info:
        Downloader(http, Cache(tmp_path / "cache"), retry=NO_WAIT).fetch(DownloadRequest(https, wheel.name))
    assert "TLS failed" in str(info.value) and "not retried" in str(info.value) and "\n" not in str(info.value)
    assert server.connections == 1


def test_read_timeout_is_retried_then_reported(tmp_path: Path, index_server: StartServer) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx", faults=Faults(slow={wheel.name: 1.0}))
    link = _link(server)
    policy = RetryPolicy(retries=1, sleep=lambda _s: None)
    with make_client(timeouts=Timeouts(connect=1, read=0.2)) as http, pytest.raises(NetworkError, match="timed out"):
        Downloader(http, Cache(tmp_path / "cache"), retry=policy).fetch(_request(link))
    assert len(server.requests_for(wheel.name)) == 2


def test_corrupted_cache_entry_is_fetched_again(tmp_path: Path, index_server: StartServer) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx")
    link = _link(server)
    cache = Cache(tmp_path / "cache")
    with make_client() as http:
        first = Downloader(http, cache).fetch(_request(link))
        first.path.write_bytes(b"bit rot")
        again = Downloader(http, cache).fetch(DownloadRequest(link.url, link.filename))  # even with no index hash
    assert not again.from_cache and again.path.read_bytes() == wheel.read_bytes()
    assert len(server.requests_for(wheel.name)) == 2


def test_cached_file_unchanged_since_verified_is_not_hashed_again(tmp_path: Path, index_server: StartServer) -> None:
    """The record's fingerprint (size, mtime, inode) stands for the hash; any write that moves it forces a re-hash."""
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx")
    link = _link(server)
    cache = Cache(tmp_path / "cache")
    with make_client() as http:
        first = Downloader(http, cache).fetch(_request(link))
        st = first.path.stat()
        with first.path.open("r+b") as f:  # same size, timestamps put back: the fingerprint still matches
            f.write(b"\0" * st.st_size)
        os.utime(first.path, ns=(st.st_atime_ns, st.st_mtime_ns))
        trusted = Downloader(http, cache).fetch(_request(link))
        assert trusted.from_cache and trusted.sha256 == _sha256(wheel)
        assert len(server.requests_for(wheel.name)) == 1
        os.utime(first.path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # touched: hashed again, refetched
        again = Downloader(http, cache).fetch(_request(link))
    assert not again.from_cache and again.path.read_bytes() == wheel.read_bytes()
    assert len(server.requests_for(wheel.name)) == 2


@pytest.mark.skipif(boot_id() is None, reason="this kernel has no boot id: downloads are fsync-ed instead")
def test_a_download_not_synced_is_trusted_only_in_the_boot_that_wrote_it(
    tmp_path: Path, index_server: StartServer
) -> None:
    """The download is not fsync-ed: its record names this boot. A crash can lose the data while size, mtime and
    inode survive (simulated: zeros written in place, timestamps put back); only then is the boot another, and the
    record's fingerprint no longer stands for the hash: the file is hashed again and fetched again."""
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx")
    link = _link(server)
    cache = Cache(tmp_path / "cache")
    with make_client() as http:
        first = Downloader(http, cache).fetch(_request(link))
        info = cache.entry_dir(link.url) / "info.json"
        assert json.loads(info.read_bytes())["boot"] == boot_id()
        st = first.path.stat()
        with first.path.open("r+b") as f:
            f.write(b"\0" * st.st_size)
        os.utime(first.path, ns=(st.st_atime_ns, st.st_mtime_ns))
        for memo in (info, cache.content_memo(first.sha256)):  # all that was written before the crash
            memo.write_text(json.dumps({**json.loads(memo.read_bytes()), "boot": "the-boot-before-the-crash"}))
        again = Downloader(http, cache).fetch(_request(link))
    assert not again.from_cache and again.path.read_bytes() == wheel.read_bytes()
    assert len(server.requests_for(wheel.name)) == 2
    assert json.loads(info.read_bytes())["boot"] == boot_id()


def test_two_threads_fetching_one_file_download_it_once(tmp_path: Path, index_server: StartServer) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx", faults=Faults(slow={wheel.name: 0.4}))
    link = _link(server)
    cache = Cache(tmp_path / "cache")
    events: list[Progress] = []
    results = []
    with make_client() as http:
        downloader = Downloader(http, cache, progress=events.append)
        threads = [threading.Thread(target=lambda: results.append(downloader.fetch(_request(link)))) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(r.from_cache for r in results) == [False, True]
    assert {r.sha256 for r in results} == {_sha256(wheel)}
    assert len(server.requests_for(wheel.name)) == 1
    assert any(e.state == "waiting" for e in events)


def test_two_processes_share_the_cache_safely(tmp_path: Path, index_server: StartServer) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx", faults=Faults(slow={wheel.name: 0.5}))
    link = _link(server)
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from wheelfit.fetch import Cache, Downloader, DownloadRequest, make_client\n"
        "with make_client() as http:\n"
        "    r = Downloader(http, Cache(Path(sys.argv[1]))).fetch(DownloadRequest(sys.argv[2], sys.argv[3]))\n"
        "print(r.from_cache, r.sha256)\n"
    )
    env = hermetic_env(PYTHONPATH=str(ROOT / "src"))
    args = [sys.executable, "-c", script, str(tmp_path / "cache"), link.url, link.filename]
    procs = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = sorted(p.communicate(timeout=30)[0].split() for p in procs)
    assert [p.returncode for p in procs] == [0, 0]
    assert outputs == [["False", _sha256(wheel)], ["True", _sha256(wheel)]]
    assert len(server.requests_for(wheel.name)) == 1


def test_parallel_downloads_overlap_and_reuse_connections(tmp_path: Path, index_server: StartServer) -> None:
    wheels = [_wheel(tmp_path / "idx" / "simple", f"pkg{i}") for i in range(4)]
    server = index_server(tmp_path / "idx", faults=Faults(slow={w.name: 0.4 for w in wheels}))
    links = [_link(server, f"pkg{i}") for i in range(4)]
    connections_before = server.connections
    with make_client() as http:
        downloader = Downloader(http, Cache(tmp_path / "cache"))
        started = time.monotonic()
        results = downloader.fetch_all([_request(link) for link in links], max_workers=4)
        elapsed = time.monotonic() - started
        again = downloader.fetch_all([_request(link) for link in links], max_workers=1)
    assert [r.sha256 for r in results] == [_sha256(w) for w in wheels]
    assert elapsed < 4 * 0.4 * 0.6  # serial would take at least 1.6 s
    assert all(r.from_cache for r in again)
    assert server.connections - connections_before <= 4  # one pooled client, at most one connection per worker


def test_sequential_downloads_reuse_one_connection(tmp_path: Path, index_server: StartServer) -> None:
    wheels = [_wheel(tmp_path / "idx" / "simple", f"pkg{i}") for i in range(3)]
    server = index_server(tmp_path / "idx")
    links = [_link(server, f"pkg{i}") for i in range(3)]
    before = server.connections
    with make_client() as http:
        for link in links:
            Downloader(http, Cache(tmp_path / "cache")).fetch(_request(link))
    assert server.connections - before == 1
    assert len(wheels) == 3


def test_one_failure_in_a_batch_stops_the_batch_and_leaves_no_partial_files(
    tmp_path: Path, index_server: StartServer
) -> None:
    good = _wheel(tmp_path / "idx" / "simple", "good")
    bad = _wheel(tmp_path / "idx" / "simple", "bad")
    server = index_server(tmp_path / "idx", faults=Faults(wrong_hash={bad.name}, slow={good.name: 0.3}))
    cache = Cache(tmp_path / "cache")
    requests = [_request(_link(server, "good")), _request(_link(server, "bad"))]
    with make_client() as http, pytest.raises(HashMismatchError, match=bad.name):
        Downloader(http, cache).fetch_all(requests)
    leftovers = [name for name in _cache_files(cache) if name.endswith(".part") or name == bad.name]
    assert leftovers == []


@pytest.fixture
def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a self-signed certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, env=hermetic_env(),
    )  # fmt: skip
    return cert, key


def test_untrusted_certificate_fails_once_and_a_trusted_ca_works(
    tmp_path: Path, index_server: StartServer, self_signed: tuple[Path, Path]
) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx", tls=self_signed)
    url = f"{server.url}/simple/{wheel.name}"
    assert url.startswith("https://")
    with make_client() as http, pytest.raises(TLSError, match="CERTIFICATE_VERIFY_FAILED"):
        Downloader(http, Cache(tmp_path / "cache"), retry=NO_WAIT).fetch(DownloadRequest(url, wheel.name))
    assert server.connections == 1 and server.requests == []
    trusted = ssl.create_default_context(cafile=str(self_signed[0]))
    with make_client(verify=trusted) as http:
        result = Downloader(http, Cache(tmp_path / "cache")).fetch(DownloadRequest(url, wheel.name))
    assert result.sha256 == _sha256(wheel)


def test_the_trust_store_follows_ssl_cert_file_as_httpx_does(
    tmp_path: Path, index_server: StartServer, self_signed: tuple[Path, Path]
) -> None:
    wheel = _wheel(tmp_path / "idx" / "simple")
    server = index_server(tmp_path / "idx", tls=self_signed)
    url = f"{server.url}/simple/{wheel.name}"
    hashed = tmp_path / "certs"  # an OpenSSL CA directory: certificates under their subject hashes
    hashed.mkdir()
    shutil.copy(self_signed[0], hashed / "ca.pem")
    subprocess.run(["openssl", "rehash", str(hashed)], check=True, capture_output=True, env=hermetic_env())
    for environ in (
        {"SSL_CERT_FILE": str(self_signed[0])},
        {"SSL_CERT_DIR": str(hashed)},
        {"SSL_CERT_FILE": str(self_signed[0]), "SSL_CERT_DIR": str(tmp_path / "none")},  # the file wins
    ):
        with make_client(verify=trust_context(environ)) as http:
            result = Downloader(http, Cache(tmp_path / "cache")).fetch(DownloadRequest(url, wheel.name))
        assert result.sha256 == _sha256(wheel)
    with make_client(verify=trust_context({})) as http, pytest.raises(TLSError, match="CERTIFICATE_VERIFY_FAILED"):
        Downloader(http, Cache(tmp_path / "other"), retry=NO_WAIT).fetch(DownloadRequest(url, wheel.name))


@pytest.mark.parametrize("contents", [None, b"not a certificate\n", b"-----BEGIN CERTIFICATE-----\nAAAA\n"])
def test_a_trust_store_that_cannot_be_loaded_is_one_line_naming_the_variable(
    tmp_path: Path, contents: bytes | None
) -> None:
    bundle = tmp_path / "ca.pem"
    if contents is not None:
        bundle.write_bytes(contents)
    with pytest.raises(TLSError) as info:
        trust_context({"SSL_CERT_FILE": str(bundle)})
    message = str(info.value)
    assert message.startswith(f"cannot load the TLS trust store from SSL_CERT_FILE={bundle} (")
    assert "\n" not in message and message.endswith("or unset it")
