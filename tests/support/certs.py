"""Certificates for HTTPS on loopback, made with trustme (a test CA) and cryptography (a self-signed leaf): one
good leaf for 127.0.0.1 and localhost, one expired, one for another host name, one signed by nobody."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

import trustme
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["Certs", "make_certs", "server_context"]

LOOPBACK = ("127.0.0.1", "localhost")


@dataclass(frozen=True)
class Certs:
    #: The test CA's certificate (PEM): trusting it makes ``good`` valid.
    ca_pem: Path
    #: Another CA, trusted by nobody's server: a bundle that does not vouch for ``good``.
    other_ca_pem: Path
    #: ``(certfile, keyfile)`` of each server certificate.
    good: tuple[Path, Path]
    expired: tuple[Path, Path]
    wrong_host: tuple[Path, Path]
    self_signed: tuple[Path, Path]


def server_context(pair: tuple[Path, Path]) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*pair)
    return context


def _write(directory: Path, name: str, leaf: trustme.LeafCert) -> tuple[Path, Path]:
    cert, key = directory / f"{name}.pem", directory / f"{name}.key"
    leaf.cert_chain_pems[0].write_to_path(str(cert))
    leaf.private_key_pem.write_to_path(str(key))
    return cert, key


def _self_signed(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "self-signed.pem", directory / "self-signed.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def make_certs(directory: Path) -> Certs:
    directory.mkdir(parents=True, exist_ok=True)
    ca, other = trustme.CA(), trustme.CA()
    ca.cert_pem.write_to_path(str(directory / "ca.pem"))
    other.cert_pem.write_to_path(str(directory / "other-ca.pem"))
    now = datetime.datetime.now(datetime.timezone.utc)
    return Certs(
        ca_pem=directory / "ca.pem",
        other_ca_pem=directory / "other-ca.pem",
        good=_write(directory, "good", ca.issue_cert(*LOOPBACK)),
        expired=_write(
            directory,
            "expired",
            ca.issue_cert(
                *LOOPBACK, not_before=now - datetime.timedelta(days=30), not_after=now - datetime.timedelta(days=1)
            ),
        ),
        wrong_host=_write(directory, "wrong-host", ca.issue_cert("wheels.example.org")),
        self_signed=_self_signed(directory),
    )
