"""The trust store (the OS store and certifi's, or a file the user named) is loaded by the first request that needs
TLS, once; a named file that cannot be read is said when the client is made (issue 29: the client made cheaply)."""

from __future__ import annotations

import re
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


def test_a_named_file_that_cannot_be_read_is_said_at_once(tmp_path: Path, loads: list[int]) -> None:
    missing = tmp_path / "corporate-ca.pem"
    with pytest.raises(TLSError, match=f"SSL_CERT_FILE={missing}"):
        make_client(environ={"SSL_CERT_FILE": str(missing)})
    with pytest.raises(TLSError, match=f"--cert {missing}"):
        make_client(environ={}, cert=str(missing))
    assert loads == []


def test_a_named_file_is_loaded_by_the_first_tls_request(tmp_path: Path, loads: list[int]) -> None:
    """Plain http never reads its certificates; the first https request does, and a file that holds none is said
    then, in the same words, before anything is sent."""
    garbage = tmp_path / "not-a-bundle.pem"
    garbage.write_text("not a certificate\n")
    (tmp_path / "page.html").write_text("hello")
    with serve_directory(tmp_path) as url, make_client(environ={"SSL_CERT_FILE": str(garbage)}, timeout=2) as http:
        assert http.get(f"{url}/page.html").text == "hello"
        with pytest.raises(TLSError, match=re.escape(f"cannot load the TLS trust store from SSL_CERT_FILE={garbage} ")):
            http.get("https://127.0.0.1:9/")
    with pytest.raises(TLSError, match=r"SSL_CERT_DIR=.*point it at a PEM file"):
        make_client(environ={"SSL_CERT_DIR": str(garbage)})  # a file where a directory is named
    assert loads == []
