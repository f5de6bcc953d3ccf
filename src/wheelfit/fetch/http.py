"""The HTTP edge: one pooled httpx client, timeouts, and the retry policy shared by pages and downloads.

httpx's own ``retries=`` covers only connection setup, so status and read
retries live here: bounded, exponential backoff with jitter, ``Retry-After``
honoured up to the cap. TLS failures are never retried (a bad certificate
does not get better; retrying only hides an attack or a misconfiguration).
"""

from __future__ import annotations

import os
import random
import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import httpx

from .. import __version__
from .errors import HTTPStatusError, NetworkError, TLSError
from .trust import trust_context

__all__ = [
    "RETRY_STATUSES",
    "RetryPolicy",
    "Timeouts",
    "describe",
    "get",
    "is_retryable",
    "is_tls_error",
    "make_client",
    "status_error",
    "tls_failure",
]

#: Statuses worth another try (pip: 500, 502, 503, 520, 527; plus 429 and 504).
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 520, 527})


@dataclass(frozen=True)
class Timeouts:
    connect: float = 10.0
    #: Longest wait for the next bytes of a response (per socket read, as httpx applies it).
    read: float = 30.0


@dataclass(frozen=True)
class RetryPolicy:
    #: Extra attempts after the first; 3 means at most 4 requests.
    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    jitter: Callable[[], float] = field(default=random.random, compare=False)

    @property
    def attempts(self) -> int:
        return self.retries + 1

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait after failed ``attempt`` (1-based): half fixed, half random, capped."""
        if retry_after and retry_after.strip().isdigit():
            return min(float(retry_after.strip()), self.max_backoff)
        base: float = min(self.backoff * 2.0 ** (attempt - 1), self.max_backoff)
        return float(base / 2 + base / 2 * self.jitter())


def make_client(
    *,
    timeouts: Timeouts | None = None,
    verify: ssl.SSLContext | bool = True,
    max_connections: int = 8,
    trust_env: bool = True,
    environ: Mapping[str, str] | None = None,
) -> httpx.Client:
    """A client reused for every request of a run (keep-alive, one pool); callers close it.

    ``verify=True`` is the trust store of :func:`~.trust.trust_context` (with ``trust_env``, that of ``environ``,
    default the process environment: ``SSL_CERT_FILE``, ``SSL_CERT_DIR``).
    """
    t = timeouts or Timeouts()
    if verify is True:
        verify = trust_context((os.environ if environ is None else environ) if trust_env else {})
    return httpx.Client(
        timeout=httpx.Timeout(t.read, connect=t.connect),
        limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        verify=verify,
        trust_env=trust_env,
        follow_redirects=True,
        headers={"User-Agent": f"wheelfit/{__version__}"},
    )


def is_tls_error(exc: BaseException) -> bool:
    """True if an ``ssl.SSLError`` is anywhere in the exception's cause chain."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ssl.SSLError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def is_retryable(exc: BaseException) -> bool:
    """Connection, timeout and protocol errors are transient; TLS errors never are."""
    return isinstance(exc, httpx.TransportError) and not is_tls_error(exc)


def describe(exc: BaseException) -> str:
    text = str(exc).strip() or exc.__class__.__name__
    return text.splitlines()[0]


def tls_failure(url: str, exc: BaseException) -> TLSError:
    return TLSError(
        f"{url}: TLS failed ({describe(exc)}); not retried. Check the URL's scheme and certificates "
        "(SSL_CERT_FILE for a private CA)"
    )


def get(client: httpx.Client, url: str, headers: Mapping[str, str], policy: RetryPolicy) -> httpx.Response:
    """GET with bounded retries on transient failures; returns a read response (any final status)."""
    for attempt in range(1, policy.attempts + 1):
        try:
            response = client.get(url, headers=dict(headers))
        except httpx.TransportError as exc:
            if is_tls_error(exc):
                raise tls_failure(url, exc) from exc
            if attempt == policy.attempts:
                raise NetworkError(
                    f"{url}: {describe(exc)} (after {attempt} attempts); check the network or the index URL"
                ) from exc
            policy.sleep(policy.delay(attempt))
            continue
        if response.status_code in RETRY_STATUSES and attempt < policy.attempts:
            policy.sleep(policy.delay(attempt, response.headers.get("retry-after")))
            continue
        return response
    raise AssertionError("unreachable")  # pragma: no cover


def status_error(url: str, response: httpx.Response, attempts: int = 1) -> HTTPStatusError:
    after = f" after {attempts} attempts" if attempts > 1 else ""
    return HTTPStatusError(
        f"{url}: HTTP {response.status_code} {response.reason_phrase}{after}; check the URL or try again later",
        response.status_code,
    )
