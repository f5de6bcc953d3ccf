"""The TLS trust store: the CA certificates that verify a server, chosen as httpx chooses them.

``SSL_CERT_FILE``, else ``SSL_CERT_DIR``, else certifi's bundle. Built here rather than by httpx so that a
file that cannot be loaded is one line saying which variable to fix, not an internal error.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping

from .errors import TLSError

__all__ = ["trust_context"]


def trust_context(environ: Mapping[str, str]) -> ssl.SSLContext:
    """A verifying client context for ``environ`` (its ``SSL_CERT_FILE``/``SSL_CERT_DIR``, as httpx reads them)."""
    cafile, capath = environ.get("SSL_CERT_FILE") or None, environ.get("SSL_CERT_DIR") or None
    try:
        if cafile:
            return ssl.create_default_context(cafile=cafile)
        if capath:
            return ssl.create_default_context(capath=capath)
        import certifi

        return ssl.create_default_context(cafile=certifi.where())
    except (OSError, ssl.SSLError, ValueError) as exc:
        where = f"SSL_CERT_FILE={cafile}" if cafile else f"SSL_CERT_DIR={capath}" if capath else "certifi's bundle"
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
        raise TLSError(
            f"cannot load the TLS trust store from {where} ({detail}); point it at a PEM file of CA certificates "
            "or unset it"
        ) from exc
