"""Proxies from the environment the run is given: HTTP_PROXY carries plain-http requests (absolute-form),
HTTPS_PROXY https ones (a CONNECT tunnel, TLS still checked end to end), NO_PROXY bypasses them. As in httpx
and curl, loopback is not exempt unless NO_PROXY names it. The installer backends get the same variables."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.conftest import hermetic_env
from tests.install.conftest import make_venv
from tests.install.loopback import serve
from tests.support.certs import make_certs
from tests.support.index_server import IndexServer
from tests.support.inprocess import wheelfit_in_process
from tests.support.proxy import counting_proxy
from tests.support.wheels import make_wheel
from wheelfit.fetch import NetworkError, make_client
from wheelfit.fetch.proxies import environment_proxies
from wheelfit.fetch.wheels import WheelStore
from wheelfit.index.client import IndexClient


def _index(tmp_path: Path) -> Path:
    return make_wheel(tmp_path / "idx" / "simple", "demo", "1.0")


def _download(http: httpx.Client, server: IndexServer, store: Path) -> bytes:
    """The project page (:class:`IndexClient`), then its wheel (:class:`WheelStore`): both through ``http``."""
    link = IndexClient(http).project_page(server.index_url("simple"), "demo").links[0]
    path, _sha = WheelStore(store, http=lambda: http).fetch(link)
    return path.read_bytes()


def test_http_proxy_carries_plain_http_requests(tmp_path: Path) -> None:
    wheel = _index(tmp_path)
    with (
        IndexServer(tmp_path / "idx") as server,
        counting_proxy() as proxy,
        make_client(environ={"HTTP_PROXY": proxy.url}) as http,
    ):
        assert _download(http, server, tmp_path / "cache") == wheel.read_bytes()
    port = server.url.rsplit(":", 1)[1]
    assert proxy.requests == [
        f"GET http://127.0.0.1:{port}/simple/demo/ HTTP/1.1",
        f"GET http://127.0.0.1:{port}/simple/{wheel.name} HTTP/1.1",
    ]
    assert len(server.requests) == 2


def test_https_proxy_tunnels_and_the_certificate_is_still_checked(tmp_path: Path) -> None:
    wheel = _index(tmp_path)
    certs = make_certs(tmp_path / "certs")
    with IndexServer(tmp_path / "idx", tls=certs.good) as server, counting_proxy() as proxy:
        port = server.url.rsplit(":", 1)[1]
        with make_client(environ={"HTTPS_PROXY": proxy.url}, cert=str(certs.ca_pem)) as http:
            assert _download(http, server, tmp_path / "cache") == wheel.read_bytes()
        assert proxy.requests and set(proxy.requests) == {f"CONNECT 127.0.0.1:{port} HTTP/1.1"}
        with (
            make_client(environ={"https_proxy": proxy.url}, cert=str(certs.other_ca_pem)) as http,
            pytest.raises(NetworkError, match="TLS failed"),
        ):
            _download(http, server, tmp_path / "other")


@pytest.mark.parametrize("no_proxy", ["127.0.0.1", "localhost,127.0.0.1", "*"])
def test_no_proxy_bypasses_the_proxy(tmp_path: Path, no_proxy: str) -> None:
    wheel = _index(tmp_path)
    with IndexServer(tmp_path / "idx") as server, counting_proxy() as proxy:
        environ = {"HTTP_PROXY": proxy.url, "HTTPS_PROXY": proxy.url, "NO_PROXY": no_proxy}
        with make_client(environ=environ) as http:
            assert _download(http, server, tmp_path / "cache") == wheel.read_bytes()
    assert proxy.requests == [] and len(server.requests) == 2


def test_the_process_environment_is_not_read_when_another_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's ``environ`` decides; httpx's own reading of os.environ is off."""
    wheel = _index(tmp_path)
    with IndexServer(tmp_path / "idx") as server, counting_proxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        with make_client(environ={}) as http:
            assert _download(http, server, tmp_path / "cache") == wheel.read_bytes()
    assert proxy.requests == []


def test_the_variables_are_read_as_urllib_and_httpx_read_them() -> None:
    assert environment_proxies({"HTTPS_PROXY": "proxy:3128", "https_proxy": "http://lower:8080"}) == {
        "https://": ("https_proxy", "http://lower:8080")  # lower case wins; no scheme means http://
    }
    assert environment_proxies({"HTTP_PROXY": "http://p:1", "REQUEST_METHOD": "GET"}) == {}  # httpoxy
    assert environment_proxies({"ALL_PROXY": "http://p:1", "NO_PROXY": "*"}) == {}
    assert environment_proxies({"all_proxy": "http://p:1", "no_proxy": "::1, example.org,localhost"}) == {
        "all://": ("all_proxy", "http://p:1"),
        "all://[::1]": None,
        "all://*example.org": None,
        "all://localhost": None,
    }


def test_a_proxy_url_wheelfit_cannot_use_is_one_line_naming_the_variable() -> None:
    with pytest.raises(NetworkError) as info:
        make_client(environ={"HTTPS_PROXY": "ftp://proxy.example:21"})
    message = str(info.value)
    assert (
        message.startswith("HTTPS_PROXY=ftp://proxy.example:21: not a proxy wheelfit can use (") and "\n" not in message
    )


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_the_installer_backend_goes_through_the_same_proxy(tmp_path: Path, installer: str) -> None:
    """`wheelfit install` hands uv and pip its environment: their index requests reach the proxy too (a
    non-torch package: wheelfit itself reads no index for it, so every request the proxy sees is the backend's)."""
    make_wheel(tmp_path / "idx" / "simple" / "demo", "demo", "1.0")
    python = make_venv(tmp_path / "venv", with_pip=installer == "pip")
    with serve(tmp_path / "idx") as url, counting_proxy() as proxy:
        env = hermetic_env(
            HTTP_PROXY=proxy.url, UV_CACHE_DIR=str(tmp_path / "uv"), WHEELFIT_CACHE_DIR=str(tmp_path / "wf")
        )
        args = ["install", "demo", "--index-url", f"{url}/simple", "--python", str(python), "--installer", installer]
        done = wheelfit_in_process([*args, "--no-verify"], env)
    assert done.returncode == 0, done.stderr
    assert any(line.startswith(f"GET {url}/simple/demo/") for line in proxy.requests), proxy.requests
