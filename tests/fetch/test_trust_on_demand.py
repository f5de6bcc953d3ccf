"""The default trust store (OS store and certifi's) is loaded by the first request that needs TLS, once; a file the
user named is loaded, and a mistake in it said, when the client is made (issue 29: the client made cheaply)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

import wheelfit.fetch.trust
from tests.support.static import serve_directory
from wheelfit.fetch import TLSError, make_client


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the loads of the default trust store."""
    counted: list[int] = []
    real = wheelfit.fetch.trust.os_trust_context

    def counting() -> object:
        counted.append(1)
        return real()

    monkeypatch.setattr(wheelfit.fetch.trust, "os_trust_context", counting)
    return counted


def test_plain_http_never_loads_the_trust_store(tmp_path: Path, loads: list[int]) -> None:
    (tmp_path / "page.html").write_text("hello")
    with serve_directory(tmp_path) as url, make_client(environ={}) as http:
        assert http.get(f"{url}/page.html").text == "hello"
        assert http.get(f"{url}/page.html").text == "hello"
    assert loads == []


def test_the_first_https_request_loads_it_once(loads: list[int]) -> None:
    with make_client(environ={}, timeout=2) as http:
        for _ in range(2):
            with pytest.raises(httpx.ConnectError):  # the discard port: nothing listens, after the store is loaded
                http.get("https://127.0.0.1:9/")
    assert loads == [1]


def test_a_named_file_is_loaded_at_once_and_a_mistake_said_at_once(tmp_path: Path, loads: list[int]) -> None:
    missing = tmp_path / "corporate-ca.pem"
    with pytest.raises(TLSError, match=f"SSL_CERT_FILE={missing}"):
        make_client(environ={"SSL_CERT_FILE": str(missing)})
    with pytest.raises(TLSError, match=f"--cert {missing}"):
        make_client(environ={}, cert=str(missing))
    assert loads == []
