"""The index client against the loopback index: validators and 304, offline mode, retries, metadata, config."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from tests.support import StartServer
from tests.support.index_server import Faults, IndexServer
from tests.support.wheels import make_torch_like, make_wheel
from wheelfit.fetch import Cache, NetworkError, RetryPolicy, make_client
from wheelfit.index.client import IndexClient
from wheelfit.index.config import DEFAULT_INDEX_URL, DEFAULT_PYTORCH_INDEX, IndexConfigError, resolve_index_config
from wheelfit.simple import IndexPageError, OfflineError, ProjectNotFoundError

NO_WAIT = RetryPolicy(retries=3, sleep=lambda _s: None)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make_torch_like(tmp_path / "idx" / "whl" / "cu126", "2.8.0", "cu126")
    make_torch_like(tmp_path / "idx" / "whl" / "cpu", "2.8.0", "cpu")
    make_wheel(tmp_path / "idx" / "simple", "demo", "1.0")
    return tmp_path / "idx"


@pytest.mark.parametrize("html", [True, False])
def test_unchanged_page_is_revalidated_with_304_and_read_from_the_cache(
    tmp_path: Path, root: Path, index_server: StartServer, html: bool
) -> None:
    server = index_server(root, json=not html)
    with make_client() as http:
        client = IndexClient(http, Cache(tmp_path / "cache"))
        first = client.project_page(server.index_url("whl/cu126"), "torch")
        second = client.project_page(server.index_url("whl/cu126"), "torch")
    initial, again = server.requests
    assert (initial.status, again.status) == (200, 304)
    assert "if-none-match" not in initial.headers
    assert again.headers["if-none-match"].startswith('"') and "if-modified-since" in again.headers
    assert second == first and len(second.links) == 1  # the 304 had no body: the links came from the cache


def test_changed_page_is_fetched_again(tmp_path: Path, root: Path, index_server: StartServer) -> None:
    server = index_server(root)
    with make_client() as http:
        client = IndexClient(http, Cache(tmp_path / "cache"))
        assert len(client.project_page(server.index_url("whl/cu126"), "torch").links) == 1
        make_torch_like(root / "whl" / "cu126", "2.9.0", "cu126")
        assert len(client.project_page(server.index_url("whl/cu126"), "torch").links) == 2
    assert [r.status for r in server.requests] == [200, 200]


def test_offline_reads_only_the_cache(tmp_path: Path, root: Path) -> None:
    cache = Cache(tmp_path / "cache")
    with make_client() as http:
        with IndexServer(root) as server:  # the server is gone after this block
            url = server.index_url("whl/cu126")
            online = IndexClient(http, cache).project_page(url, "torch")
            link = online.links[0]
            metadata = IndexClient(http, cache).core_metadata(link)
        offline = IndexClient(http, cache, offline=True)
        assert offline.project_page(url, "Torch") == online  # name normalized to the same URL
        assert offline.core_metadata(link) == metadata
        with pytest.raises(OfflineError) as info:
            offline.project_page(url, "torchvision")
    assert "torchvision" in str(info.value) and "--offline" in str(info.value) and "\n" not in str(info.value)


def test_offline_with_an_empty_cache_sends_no_request(tmp_path: Path, root: Path, index_server: StartServer) -> None:
    server = index_server(root)
    with make_client() as http, pytest.raises(OfflineError, match="no cached copy"):
        IndexClient(http, Cache(tmp_path / "cache"), offline=True).project_page(server.index_url("whl/cpu"), "torch")
    assert server.requests == [] and server.connections == 0


def test_unknown_project_is_a_clear_error(tmp_path: Path, root: Path, index_server: StartServer) -> None:
    server = index_server(root)
    with make_client() as http, pytest.raises(ProjectNotFoundError, match=r"not-there on .* 404"):
        IndexClient(http).project_page(server.index_url("simple"), "Not_There")
    assert server.requests[0].path == "/simple/not-there/"  # PEP 503: the normalized name


def test_page_requests_are_retried_on_503_then_give_up(tmp_path: Path, root: Path, index_server: StartServer) -> None:
    server = index_server(root, faults=Faults(unavailable={"torch/": 2, "demo/": 99}))
    delays: list[float] = []
    policy = RetryPolicy(retries=3, backoff=0.5, sleep=delays.append, jitter=lambda: 1.0)
    with make_client() as http:
        page = IndexClient(http, retry=policy).project_page(server.index_url("whl/cu126"), "torch")
        assert len(page.links) == 1 and delays == [0.5, 1.0]
        with pytest.raises(NetworkError, match="HTTP 503"):
            IndexClient(http, retry=NO_WAIT).project_page(server.index_url("simple"), "demo")
    assert [r.status for r in server.requests_for("demo/")] == [503] * 4  # 1 + 3 retries, bounded


def test_core_metadata_is_checked_against_the_page_hash(tmp_path: Path, root: Path, index_server: StartServer) -> None:
    server = index_server(root, json=False)
    with make_client() as http:
        client = IndexClient(http)
        link = client.project_page(server.index_url("whl/cu126"), "torch").links[0]
        metadata = client.core_metadata(link)
        wheel = root / "whl" / "cu126" / link.filename
        with zipfile.ZipFile(wheel) as zf:
            assert metadata == zf.read("torch-2.8.0+cu126.dist-info/METADATA")
        assert isinstance(link.core_metadata, dict)
        forged = type(link)(**{**link.__dict__, "core_metadata": {"sha256": hashlib.sha256(b"x").hexdigest()}})
        with pytest.raises(IndexPageError, match=r"\.metadata: sha256 mismatch"):
            client.core_metadata(forged)


def test_metadata_pinned_by_the_page_is_read_once_and_then_from_the_cache(
    tmp_path: Path, root: Path, index_server: StartServer
) -> None:
    """A PEP 658 file never changes under the hash its page gives: a later run (a new client, the same cache)
    takes it from the cache without a request, while the page itself is still revalidated."""
    server = index_server(root, json=False)
    cache = Cache(tmp_path / "cache")
    for _run in range(2):
        with make_client() as http:
            client = IndexClient(http, cache)
            link = client.project_page(server.index_url("whl/cu126"), "torch").links[0]
            assert client.core_metadata(link).startswith(b"Metadata-Version")
    assert len(server.requests_for(".metadata")) == 1
    assert len(server.requests_for("torch/")) == 2
    # A copy that no longer has the pinned hash is not trusted: asked for again
    forged = type(link)(**{**link.__dict__, "core_metadata": {"sha256": hashlib.sha256(b"x").hexdigest()}})
    with make_client() as http, pytest.raises(IndexPageError, match=r"\.metadata: sha256 mismatch"):
        IndexClient(http, cache).core_metadata(forged)
    assert len(server.requests_for(".metadata")) == 2


def test_pytorch_base_is_configurable_for_mirrors(tmp_path: Path, index_server: StartServer) -> None:
    make_torch_like(tmp_path / "mirror" / "pytorch" / "whl" / "cu126", "2.8.0", "cu126")
    server = index_server(tmp_path / "mirror", json=False)
    config = resolve_index_config({"WHEELFIT_PYTORCH_INDEX": server.url + "/pytorch/whl/"})
    with make_client() as http:
        page = IndexClient(http).project_page(config.pytorch_variant_index("cu126"), "torch")
    assert page.links[0].filename == "torch-2.8.0+cu126-py3-none-any.whl"


def test_index_configuration_precedence() -> None:
    assert resolve_index_config({}) == resolve_index_config({"UNRELATED": "x"})
    defaults = resolve_index_config({})
    assert (defaults.pytorch_base, defaults.default_index, defaults.offline) == (
        DEFAULT_PYTORCH_INDEX,
        DEFAULT_INDEX_URL,
        False,
    )
    env = {"PIP_INDEX_URL": "https://pip.example/simple", "UV_INDEX_URL": "https://uv.example/simple"}
    assert resolve_index_config(env).default_index == "https://uv.example/simple"
    assert resolve_index_config({"PIP_INDEX_URL": "https://pip.example/simple/"}).default_index == (
        "https://pip.example/simple"
    )
    assert resolve_index_config(env, index_url="https://cli.example/s").default_index == "https://cli.example/s"
    env["WHEELFIT_PYTORCH_INDEX"] = "https://env.example/whl"
    assert resolve_index_config(env).pytorch_base == "https://env.example/whl"
    assert resolve_index_config(env, pytorch_index="http://10.0.0.2/whl").pytorch_base == "http://10.0.0.2/whl"
    assert resolve_index_config({"WHEELFIT_OFFLINE": "1"}).offline
    with pytest.raises(IndexConfigError, match=r"WHEELFIT_PYTORCH_INDEX='download\.pytorch\.org/whl'"):
        resolve_index_config({"WHEELFIT_PYTORCH_INDEX": "download.pytorch.org/whl"})
