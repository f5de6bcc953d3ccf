"""TLS on loopback with real certificates (a trustme CA): a self-signed, unknown-CA, expired or wrong-host
certificate is refused once (never retried) with one line saying what to do; ``--cert FILE`` and
``SSL_CERT_FILE`` make a private CA trusted (``--cert`` first); and with neither, the operating system's store
is used (truststore, as pip since 24.2), so a CA installed there works, while ``SSL_CERT_FILE`` still wins."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import certifi
import httpx
import pytest

from tests.conftest import ROOT, hermetic_env
from tests.install.conftest import make_venv
from tests.support.certs import Certs, make_certs, server_context
from tests.support.index_server import IndexServer
from tests.support.raw_http import Conn, RawRequest, raw_server, reply
from tests.support.wheels import make_wheel
from wheelfit.errors import WheelfitError
from wheelfit.fetch import RetryPolicy, TLSError, make_client, trust_context
from wheelfit.fetch.http import get
from wheelfit.fetch.wheels import WheelStore
from wheelfit.simple.links import FileLink

WHEEL = "demo-1.0-py3-none-any.whl"
RTX_3090 = "cuda=8.6,driver=580.95.05"
NO_WAIT = RetryPolicy(retries=3, sleep=lambda _s: None)
TRUST_ADVICE = "trust it with --cert FILE or SSL_CERT_FILE=FILE (a PEM bundle)"

#: certificate -> (trust the test CA?, what OpenSSL says, what the line tells the user to do)
BAD = {
    "self_signed": (False, "self-signed certificate", TRUST_ADVICE),
    "unknown_ca": (False, "unable to get local issuer certificate", TRUST_ADVICE),
    "expired": (True, "certificate has expired", "The server's certificate has expired: tell the server's operator"),
    "wrong_host": (True, "IP address mismatch", "The certificate is for another IP address: check the URL's host"),
}


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


def serve_wheel(_request: RawRequest, conn: Conn) -> None:
    conn.send(reply("200 OK", b"wheel bytes"))


def fetch_wheel(http: httpx.Client, root: Path, url: str) -> Path:
    """``url``'s body through a :class:`WheelStore` (the few wheels wheelfit reads itself)."""
    path, _sha = WheelStore(root, http=lambda: http).fetch(FileLink(WHEEL, url), require_hash=False)
    return path


def _no_tls_variables(**extra: str) -> dict[str, str]:
    """A child's environment without this machine's SSL_CERT_FILE/SSL_CERT_DIR (or anything pip and uv read)."""
    env = {k: v for k, v in hermetic_env(**extra).items() if not k.startswith("SSL_CERT_")}
    env.update({k: v for k, v in extra.items() if k.startswith("SSL_CERT_")})
    return env


@pytest.mark.parametrize("via", ["page", "wheel"])
@pytest.mark.parametrize("bad", BAD)
def test_a_bad_certificate_is_refused_once_with_one_line_saying_what_to_do(
    tmp_path: Path, certs: Certs, bad: str, via: str
) -> None:
    trusted, reason, advice = BAD[bad]
    pair = certs.good if bad == "unknown_ca" else getattr(certs, bad)
    cert = str(certs.ca_pem) if trusted else None
    with raw_server(serve_wheel, tls=server_context(pair)) as server, make_client(environ={}, cert=cert) as http:
        url = f"{server.url}/simple/demo/" if via == "page" else f"{server.url}/{WHEEL}"
        with pytest.raises(TLSError) as info:
            if via == "page":
                get(http, url, {}, NO_WAIT)
            else:
                fetch_wheel(http, tmp_path / "store", url)
        assert (server.connections, server.requests) == (1, [])  # refused at the handshake, not retried
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{url}: TLS failed (")
    assert reason in message and "not retried" in message and advice in message, message


@pytest.mark.parametrize("bad", BAD)
def test_a_bad_certificate_on_a_wheel_body_is_one_line_and_stores_nothing(
    tmp_path: Path, certs: Certs, bad: str
) -> None:
    trusted, reason, _advice = BAD[bad]
    pair = certs.good if bad == "unknown_ca" else getattr(certs, bad)
    cert = str(certs.ca_pem) if trusted else None
    with raw_server(serve_wheel, tls=server_context(pair)) as server, make_client(environ={}, cert=cert) as http:
        url = f"{server.url}/{WHEEL}"
        with pytest.raises(WheelfitError) as info:
            fetch_wheel(http, tmp_path / "store", url)
        assert (server.connections, server.requests) == (1, [])
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{url}: ") and reason in message, message
    assert not [p for p in (tmp_path / "store").rglob("*") if p.is_file()]


def test_cert_and_ssl_cert_file_make_a_private_ca_trusted_and_cert_comes_first(tmp_path: Path, certs: Certs) -> None:
    ca, other = str(certs.ca_pem), str(certs.other_ca_pem)
    with raw_server(serve_wheel, tls=server_context(certs.good)) as server:
        url = f"{server.url}/{WHEEL}"
        cases: list[tuple[dict[str, str], str | None]] = [
            ({}, ca),
            ({"SSL_CERT_FILE": ca}, None),
            ({"SSL_CERT_FILE": other}, ca),
            ({"SSL_CERT_FILE": other, "WHEELFIT_CERT": ca}, None),  # --cert's variable, for every command
        ]
        for n, (environ, cert) in enumerate(cases):
            with make_client(environ=environ, cert=cert) as http:
                assert fetch_wheel(http, tmp_path / f"store{n}", url).read_bytes() == b"wheel bytes"
        with make_client(environ={"SSL_CERT_FILE": ca}, cert=other) as http, pytest.raises(TLSError):
            get(http, url, {}, NO_WAIT)


def test_a_cert_file_that_cannot_be_loaded_is_one_line_naming_the_option(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.pem"
    with pytest.raises(TLSError) as info:
        trust_context({}, str(missing))
    assert str(info.value).startswith(f"cannot load the TLS trust store from --cert {missing} (")
    with pytest.raises(TLSError) as info:
        trust_context({"WHEELFIT_CERT": str(missing)})
    assert str(info.value).startswith(f"cannot load the TLS trust store from WHEELFIT_CERT={missing} (")


@pytest.mark.parametrize("how", ["--cert", "WHEELFIT_CERT", "SSL_CERT_FILE"])
def test_plan_reads_an_https_index_once_its_ca_is_given(tmp_path: Path, certs: Certs, how: str) -> None:
    """Without the CA: no request gets past the handshake, and the plan says TLS failed and how to fix it. With
    it (``--cert``, ``WHEELFIT_CERT`` or ``SSL_CERT_FILE``): the index is read (this one is empty: 404s)."""
    (tmp_path / "index").mkdir()
    with IndexServer(tmp_path / "index", tls=certs.good) as server:
        args = [sys.executable, "-m", "wheelfit", "plan", "torch", "--target", RTX_3090, "--pytorch-index", server.url]
        env = _no_tls_variables(WHEELFIT_CACHE_DIR=str(tmp_path / "cache"))
        refused = subprocess.run([*args, "--json"], capture_output=True, text=True, env=env, timeout=120, check=False)
        assert refused.returncode == 0, refused.stderr  # planned from the knowledge base alone, saying why
        (warning,) = (w for w in json.loads(refused.stdout)["warnings"] if "TLS failed" in w)
        assert "unable to get local issuer certificate" in warning and "--cert FILE or SSL_CERT_FILE" in warning
        assert server.requests == []
        extra = ["--cert", str(certs.ca_pem)] if how == "--cert" else []
        if how != "--cert":
            env[how] = str(certs.ca_pem)
        trusted = subprocess.run([*args, *extra], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert "TLS failed" not in trusted.stdout + trusted.stderr
    assert server.requests and {r.status for r in server.requests} == {404}


def test_the_os_trust_store_is_used_and_ssl_cert_file_beats_it(tmp_path: Path, certs: Certs) -> None:
    """On Linux truststore verifies with OpenSSL's default store: the file and directory OpenSSL was built with
    (where ``update-ca-certificates`` installs a corporate CA), which OpenSSL itself lets the process relocate
    (its SSL_CERT_DIR, read by OpenSSL at verification time). A child process gets a default directory holding
    the test CA; wheelfit is handed no variable of its own (``environ={}``), so only the OS store can vouch for
    the server. The same child with wheelfit's SSL_CERT_FILE naming another CA is refused: the explicit file
    wins over the store."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to hash the CA directory")
    store = tmp_path / "os-store"
    store.mkdir()
    shutil.copy(certs.ca_pem, store / "corporate-ca.pem")
    subprocess.run(["openssl", "rehash", str(store)], check=True, capture_output=True, env=hermetic_env())
    script = (
        "import sys\n"
        "from wheelfit.fetch import RetryPolicy, TLSError, make_client\n"
        "from wheelfit.fetch.http import get\n"
        "for label, environ in (('os-store', {}), ('ssl-cert-file', {'SSL_CERT_FILE': sys.argv[2]})):\n"
        "    try:\n"
        "        with make_client(environ=environ) as http:\n"
        "            print(label, get(http, sys.argv[1], {}, RetryPolicy(retries=0)).status_code)\n"
        "    except TLSError as exc:\n"
        "        print(label, 'refused:', exc)\n"
    )
    with raw_server(serve_wheel, tls=server_context(certs.good)) as server:
        done = subprocess.run(
            [sys.executable, "-c", script, f"{server.url}/{WHEEL}", str(certs.other_ca_pem)],
            capture_output=True, text=True, timeout=60, check=False,
            env=_no_tls_variables(PYTHONPATH=str(ROOT / "src"), SSL_CERT_DIR=str(store)),
        )  # fmt: skip
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and len(lines) == 2, done.stdout + done.stderr
    assert lines[0] == "os-store 200", lines
    assert lines[1].startswith("ssl-cert-file refused: ") and "unable to get local issuer certificate" in lines[1]


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_install_hands_cert_to_the_installer_backend(tmp_path: Path, certs: Certs, installer: str) -> None:
    """A non-torch package from an HTTPS index with a private CA: uv (SSL_CERT_FILE) and pip (PIP_CERT) are given
    the --cert file too, so the backend's own requests verify. Without it the backend is refused. The machine's
    REQUESTS_CA_BUNDLE (set on many CI images) must not win over it for pip."""
    make_wheel(tmp_path / "idx" / "simple", "demo", "1.0")
    python = make_venv(tmp_path / "venv", with_pip=installer == "pip")
    env = _no_tls_variables(UV_CACHE_DIR=str(tmp_path / "uv"), WHEELFIT_CACHE_DIR=str(tmp_path / "wf"))
    env["REQUESTS_CA_BUNDLE"] = certifi.where()
    env.update(PIP_RETRIES="0", UV_HTTP_RETRIES="0")  # a refused certificate is not retried for seconds
    with IndexServer(tmp_path / "idx", tls=certs.good) as server:
        args = [sys.executable, "-m", "wheelfit", "install", "demo", "--index-url", f"{server.url}/simple"]
        args += ["--python", str(python), "--installer", installer, "--no-verify"]
        refused = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, check=False)
        assert refused.returncode == 1, refused.stderr
        done = subprocess.run(
            [*args, "--cert", str(certs.ca_pem)], capture_output=True, text=True, env=env, timeout=300, check=False
        )
    assert done.returncode == 0, done.stderr
    assert any(r.path.endswith(".whl") for r in server.requests)
