"""The TLS trust store: the CA certificates that verify a server.

In order: ``--cert FILE`` (or ``WHEELFIT_CERT``); else ``SSL_CERT_FILE``; else ``SSL_CERT_DIR``; else the
operating system's store through ``truststore`` plus certifi's bundle, as pip does since 24.2
(pip/_internal/cli/index_command.py, ``_create_truststore_ssl_context``): a corporate CA installed in the OS
(Windows' and macOS' stores, or ``update-ca-certificates`` on Linux, whose store OpenSSL's default paths name)
works with no configuration, and certifi's copy of Mozilla's roots keeps public hosts working where the OS store
is missing or empty (a slim container without ``ca-certificates``). An explicit file or directory replaces
both, as pip's ``--cert`` does, so that a pinned bundle is exactly what is trusted. Built here rather than by
httpx so that a file that cannot be loaded is one line saying which setting to fix, not an internal error.
"""

from __future__ import annotations

import errno
import os
import ssl
from collections.abc import Mapping

from .errors import TLSError

__all__ = ["CERT_ENV", "check_named_trust", "named_trust", "os_trust_context", "trust_context"]

#: ``--cert``'s variable, read here too so that every command (and the library) follows it.
CERT_ENV = "WHEELFIT_CERT"


def trust_context(environ: Mapping[str, str], cert: str | None = None) -> ssl.SSLContext:
    """A verifying client context: ``cert`` (``--cert``, or ``environ``'s ``WHEELFIT_CERT``), else ``environ``'s
    ``SSL_CERT_FILE``/``SSL_CERT_DIR``, else the OS store and certifi's."""
    where, cafile, capath = _named(environ, cert)
    try:
        if cafile:
            return ssl.create_default_context(cafile=cafile)
        if capath:
            return ssl.create_default_context(capath=capath)
        return os_trust_context()
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise _unloadable(where, exc) from exc


def check_named_trust(environ: Mapping[str, str], cert: str | None = None) -> None:
    """Say now, in :func:`trust_context`'s words, that the file or directory the user named cannot be read; its
    certificates are loaded (20-40 ms) by the first request that needs TLS."""
    where, cafile, capath = _named(environ, cert)
    try:
        if cafile:
            with open(cafile, "rb"):
                pass
        elif capath and not os.path.isdir(capath):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), capath)
    except OSError as exc:
        raise _unloadable(where, exc) from exc


def _named(environ: Mapping[str, str], cert: str | None) -> tuple[str, str | None, str | None]:
    """How the user named the store (for messages), and the file or directory to load (neither: the OS store)."""
    cafile, capath = environ.get("SSL_CERT_FILE") or None, environ.get("SSL_CERT_DIR") or None
    if cert or environ.get(CERT_ENV):
        named = f"--cert {cert}" if cert else f"{CERT_ENV}={environ.get(CERT_ENV)}"
        return named, cert or environ.get(CERT_ENV), None
    if cafile:
        return f"SSL_CERT_FILE={cafile}", cafile, None
    if capath:
        return f"SSL_CERT_DIR={capath}", None, capath
    return "the system's and certifi's CA certificates", None, None


def _unloadable(where: str, exc: Exception) -> TLSError:
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
    return TLSError(
        f"cannot load the TLS trust store from {where} ({detail}); point it at a PEM file of CA certificates "
        "or unset it"
    )


def named_trust(environ: Mapping[str, str], cert: str | None = None) -> bool:
    """Whether :func:`trust_context` would load a file or directory the user named (``--cert``, ``WHEELFIT_CERT``,
    ``SSL_CERT_FILE``, ``SSL_CERT_DIR``) rather than the OS store and certifi's."""
    return bool(cert or environ.get(CERT_ENV) or environ.get("SSL_CERT_FILE") or environ.get("SSL_CERT_DIR"))


def os_trust_context() -> ssl.SSLContext:
    """The operating system's trust store (``truststore``) with certifi's bundle added, as pip builds it.

    Without ``truststore`` (a dependency, so only in an install that left it out) certifi's bundle alone: the
    behaviour before, never a context that trusts nothing."""
    import certifi

    try:
        import truststore
    except ImportError:  # pragma: no cover - truststore is a dependency
        return ssl.create_default_context(cafile=certifi.where())
    context = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(cafile=certifi.where())
    return context
