"""The HTTP edge: one pooled httpx client, timeouts, and the retry policy shared by pages and downloads.

httpx's own ``retries=`` covers only connection setup, so status and read
retries live here: bounded, exponential backoff with jitter, ``Retry-After``
(seconds or an HTTP date) honoured up to the cap. TLS failures are never
retried (a bad certificate does not get better; retrying only hides an attack
or a misconfiguration). Every response, redirects included, is held to the
:mod:`~.pace` rule (a minimum speed, an optional longest time). Redirects are
followed as pip and uv follow them, except from https to plain http (a
downgrade: anyone on the path could then change the bytes) or to any other
scheme: those are refused. Proxies come from the environment the run is given
(:mod:`~.proxies`). A caller's :class:`~.deadline.Deadline` bounds all of one :func:`get`, retries included.
"""

from __future__ import annotations

import contextlib
import email.utils
import os
import queue
import random
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from .. import __version__
from ..errors import clip
from .deadline import Deadline
from .errors import HTTPStatusError, NetworkError, RedirectError, TLSError
from .pace import DEADLINE_EXTENSION, DeadlineError, MaxTimeError, Pace, SpeedRule
from .proxies import environment_proxies
from .trust import check_named_trust, named_trust, trust_context
from .watch import Watch, host_of

__all__ = [
    "NOT_RETRIED",
    "RETRY_STATUSES",
    "PacedTransport",
    "RetryPolicy",
    "Timeouts",
    "WatchedClient",
    "describe",
    "get",
    "is_retryable",
    "is_tls_error",
    "make_client",
    "not_retried",
    "past_deadline",
    "pause",
    "refuse_downgrade",
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

    @classmethod
    def of(cls, seconds: float | None) -> Timeouts:
        """``--timeout SECONDS``: that bound for connecting and for each read (pip's ``--timeout`` is one socket
        timeout too); ``None``: the defaults."""
        return cls() if seconds is None else cls(connect=seconds, read=seconds)


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

    def delay(self, attempt: int, retry_after: str | None = None, now: float | None = None) -> float:
        """Seconds to wait after failed ``attempt`` (1-based): half fixed, half random, capped. A ``Retry-After``
        (RFC 9110 section 10.2.3: seconds, or an HTTP date; ``now`` is the wall clock to measure a date from) is
        followed, up to the cap."""
        wait = _retry_after_seconds(retry_after, time.time() if now is None else now)
        if wait is not None:
            return min(wait, self.max_backoff)
        base: float = min(self.backoff * 2.0 ** (attempt - 1), self.max_backoff)
        return float(base / 2 + base / 2 * self.jitter())


def _retry_after_seconds(value: str | None, now: float) -> float | None:
    text = (value or "").strip()
    if text.isdigit():
        return float(text)
    if not text:
        return None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None  # unreadable: the usual backoff
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


def make_client(
    *,
    timeout: Timeouts | float | None = None,
    verify: ssl.SSLContext | bool = True,
    max_connections: int = 8,
    trust_env: bool = True,
    environ: Mapping[str, str] | None = None,
    watch: Watch | None = None,
    cert: str | None = None,
    speed: SpeedRule | None = None,
) -> httpx.Client:
    """A client reused for every request of a run (keep-alive, one pool); callers close it.

    ``timeout``: :class:`Timeouts`, or seconds for connecting and each read (``--timeout``); ``None``: 10 s to
    connect, 30 s per read. ``verify=True`` is the trust store of :func:`~.trust.trust_context`: ``cert``
    (``--cert``), else with ``trust_env`` that of ``environ`` (default the process environment: ``SSL_CERT_FILE``,
    ``SSL_CERT_DIR``: one that cannot be read is said now); else the OS store. Either is loaded by the first request
    that needs TLS, so a run reading only plain-http indexes never loads one. With
    ``trust_env``, ``environ``'s proxy variables are followed and its ``WHEELFIT_SPEED_*``/``WHEELFIT_MAX_TIME``
    set the :class:`~.pace.SpeedRule` unless ``speed`` is given.
    With ``watch``, every request can be interrupted and reports stalls (a :class:`WatchedClient`); a
    ``max_time`` needs one, so it gets one.
    """
    env: Mapping[str, str] = (os.environ if environ is None else environ) if trust_env else {}
    t = timeout if isinstance(timeout, Timeouts) else Timeouts.of(timeout)
    rule = speed if speed is not None else SpeedRule.from_environ(env)
    if verify is True and named_trust(env, cert):  # a file the user named: a mistake said now, loaded when needed
        check_named_trust(env, cert)
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)

    def transport(proxy: httpx.Proxy | None = None) -> httpx.BaseTransport:
        def inner(context: ssl.SSLContext | bool) -> httpx.BaseTransport:
            return httpx.HTTPTransport(verify=context, limits=limits, trust_env=False, proxy=proxy)

        if verify is not True:
            return PacedTransport(inner(verify), rule)
        tls_proxy = proxy is not None and proxy.url.scheme == "https"
        return PacedTransport(_TrustOnDemand(inner, lambda: trust_context(env, cert), tls_proxy), rule)

    mounts: dict[str, httpx.BaseTransport | None] = {}
    for pattern, proxy in environment_proxies(env).items():
        if proxy is None:
            mounts[pattern] = None
            continue
        name, url = proxy
        try:
            mounts[pattern] = transport(httpx.Proxy(url))
        except (ValueError, ImportError, httpx.InvalidURL) as exc:
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise NetworkError(
                f"{name}={url}: not a proxy wheelfit can use ({detail}); give http://HOST:PORT or unset it"
            ) from None
    if watch is None and rule.max_time is not None:
        watch = Watch()
    return (WatchedClient if watch is not None else _PlainClient)(
        watch,
        rule,
        timeout=httpx.Timeout(t.read, connect=t.connect),
        transport=transport(),
        mounts=mounts,
        trust_env=False,  # the environment was read above, from ``environ``
        follow_redirects=True,
        event_hooks={"response": [refuse_downgrade]},
        headers={"User-Agent": f"wheelfit/{__version__}"},
    )


def refuse_downgrade(response: httpx.Response) -> None:
    """A response hook: a redirect from https to plain http, or to a scheme that is not http(s), is refused.

    pip and uv follow redirects; neither should follow one that drops TLS, since after it anyone on the path
    can change what is downloaded (and the index's hashes would be checked against what they serve too, when
    the page itself came that way). http to https is an upgrade and is followed."""
    if not response.has_redirect_location:
        return
    source = response.request.url
    try:
        target = httpx.URL(response.headers["location"])
    except httpx.InvalidURL:
        return  # httpx reports a malformed Location itself
    if target.is_relative_url:
        target = source.join(target)
    if target.scheme not in ("http", "https"):
        raise RedirectError(
            f"{source}: redirected to {target}, which is not an http(s) URL; refused. Check the URL or the mirror"
        )
    if source.scheme == "https" and target.scheme == "http":
        raise RedirectError(
            f"{source}: redirected to plain http ({target}); refused, as a downgrade from https would let anyone "
            "on the path change the files. Fix the mirror, or give its http:// URL yourself if you trust the network"
        )


class PacedTransport(httpx.BaseTransport):
    """Every response from ``inner`` held to ``rule``: its body is checked as each chunk comes, and the
    response carries its :class:`~.pace.Pace` (``extensions["wheelfit.pace"]``) for a reader that waits between
    chunks (:class:`WatchedStream`) to check too."""

    def __init__(self, inner: httpx.BaseTransport, rule: SpeedRule) -> None:
        self.inner, self.rule = inner, rule

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        started = time.monotonic()
        response = self.inner.handle_request(request)
        pace = Pace(self.rule, started, request=request)
        try:
            pace.check()
        except BaseException:
            response.close()
            raise
        response.stream = _PacedStream(response.stream, pace)  # type: ignore[arg-type]
        response.extensions = {**response.extensions, "wheelfit.pace": pace}
        return response

    def close(self) -> None:
        self.inner.close()


class _TrustOnDemand(httpx.BaseTransport):
    """The default trust store (the OS store and certifi's bundle: 20-40 ms to load) loaded by the first request
    that needs TLS rather than when the client is made, so that a run reading only plain-http indexes (a mirror on
    the LAN, a loopback index) never loads it. Plain requests go through a transport of their own whose context
    holds no certificate (it could verify nothing, and is never asked to); through an https proxy every request
    needs TLS."""

    def __init__(
        self,
        inner: Callable[[ssl.SSLContext], httpx.BaseTransport],
        trust: Callable[[], ssl.SSLContext],
        tls_proxy: bool,
    ) -> None:
        self._inner, self._trust, self._tls_proxy = inner, trust, tls_proxy
        self._plain: httpx.BaseTransport | None = None
        self._tls: httpx.BaseTransport | None = None
        self._lock = threading.Lock()

    def _transport(self, tls: bool) -> httpx.BaseTransport:
        with self._lock:  # pages are read on several threads at once: one store, one pool
            if tls:
                if self._tls is None:
                    self._tls = self._inner(self._trust())
                return self._tls
            if self._plain is None:
                self._plain = self._inner(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
            return self._plain

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._transport(self._tls_proxy or request.url.scheme != "http").handle_request(request)

    def close(self) -> None:
        for transport in (self._plain, self._tls):
            if transport is not None:
                transport.close()


class _PacedStream(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, pace: Pace) -> None:
        self._inner, self._pace = inner, pace

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            self._pace.add(len(chunk))
            yield chunk

    def close(self) -> None:
        self._inner.close()


class _PlainClient(httpx.Client):
    def __init__(self, watch: Watch | None, speed: SpeedRule, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: The run's :class:`~.watch.Watch`, or ``None``: requests block as httpx makes them.
        self.watch = watch
        #: What every response is held to (:class:`PacedTransport`).
        self.speed = speed


class WatchedClient(_PlainClient):
    """An ``httpx.Client`` whose requests the run's :class:`~.watch.Watch` can stop at any point (connecting,
    waiting for headers, reading the body) and which reports a server that is slow to answer."""

    watch: Watch

    def send(self, request: httpx.Request, *, stream: bool = False, **kwargs: Any) -> httpx.Response:
        watch = self.watch
        watch.check()
        clock = Pace(self.speed, time.monotonic(), request=request)  # the longest time, while no answer came
        response = watch.call(
            lambda: super(WatchedClient, self).send(request, stream=True, **kwargs),
            request.url,
            on_abandon=lambda late: late.close(),
            check=clock.check_time,
        )
        pace = response.extensions.get("wheelfit.pace")
        response.stream = WatchedStream(
            response.stream,  # type: ignore[arg-type]
            watch,
            request.url,
            _socket_of(response),
            pace.check if isinstance(pace, Pace) else None,
        )
        if not stream:
            try:
                response.read()
            except BaseException:
                response.close()
                raise
        return response


def _socket_of(response: httpx.Response) -> socket.socket | None:
    """The response's socket (httpcore's ``network_stream`` extension), to wake a blocked read on close."""
    stream = response.extensions.get("network_stream")
    with contextlib.suppress(Exception):
        sock = stream.get_extra_info("socket") if stream is not None else None
        return sock if isinstance(sock, socket.socket) else None
    return None


class WatchedStream(httpx.SyncByteStream):
    """A response body read on a helper thread: each chunk is handed over through a small queue, so the reader
    waits in slices (cancel, stall reports) instead of inside ``recv``. An ``httpx.SyncByteStream``."""

    def __init__(
        self,
        inner: httpx.SyncByteStream,
        watch: Watch,
        url: httpx.URL,
        sock: socket.socket | None,
        check: Callable[[], None] | None = None,
    ) -> None:
        """``check`` is called while no bytes come (the :class:`~.pace.Pace` of the response)."""
        self._inner, self._watch, self._url, self._sock, self._check = inner, watch, url, sock, check
        self._stop = threading.Event()
        self._pump: threading.Thread | None = None
        self._closed = False

    def __iter__(self) -> Iterator[bytes]:
        chunks: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=32)
        self._pump = threading.Thread(target=self._run, args=(chunks,), name="wheelfit-http-body", daemon=True)
        self._pump.start()
        host, url = host_of(self._url), str(self._url)
        last = time.monotonic()
        report_at = last + self._watch.stall_after
        while True:
            try:
                kind, value = chunks.get(timeout=self._watch.poll)
            except queue.Empty:
                self._watch.check()
                if self._check is not None:
                    self._check()
                now = time.monotonic()
                if now >= report_at:
                    report_at = now + self._watch.stall_every
                    if self._watch.on_stall is not None:
                        self._watch.on_stall(host, url, now - last)
                continue
            if kind == "chunk":
                self._watch.check()
                last = time.monotonic()
                report_at = last + self._watch.stall_after
                yield value  # type: ignore[misc]
            elif kind == "end":
                return
            else:
                raise value  # type: ignore[misc]

    def _run(self, chunks: queue.Queue[tuple[str, object]]) -> None:
        def put(item: tuple[str, object]) -> bool:
            while not self._stop.is_set():
                try:
                    chunks.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        try:
            for chunk in self._inner:
                if not put(("chunk", chunk)):
                    return
            put(("end", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread
            put(("error", exc))

    def close(self) -> None:
        """Stop the helper (shutting the socket down wakes a blocked ``recv``), then close the body once."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        pump = self._pump
        if pump is not None and pump.is_alive():
            pump.join(0.05)
            if pump.is_alive() and self._sock is not None:
                with contextlib.suppress(OSError):
                    self._sock.shutdown(socket.SHUT_RDWR)
                pump.join(0.5)
            if pump.is_alive():
                return  # still inside the transport: closing it from here would race; it dies with the process
        with contextlib.suppress(Exception):
            self._inner.close()


def pause(policy: RetryPolicy, seconds: float, watch: Watch | None) -> None:
    """The backoff before a retry; with a watch and the default sleep, one that Ctrl-C ends."""
    if watch is not None and policy.sleep is time.sleep:
        watch.sleep(seconds)
    else:
        policy.sleep(seconds)


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


def describe(exc: BaseException, client: httpx.Client | None = None) -> str:
    """The first line of the error; a timeout says how long was waited (``--timeout`` sets it)."""
    if isinstance(exc, httpx.TimeoutException) and client is not None:
        connecting = isinstance(exc, httpx.ConnectTimeout)
        limit = client.timeout.connect if connecting else client.timeout.read
        if limit is not None:
            return f"timed out: {'no connection' if connecting else 'no answer'} within {limit:g} s (--timeout sets it)"
    text = str(exc).strip() or exc.__class__.__name__
    return text.splitlines()[0]


#: Failures that another try would meet again: a redirect loop, a body its own headers misdescribe, a URL
#: whose scheme no transport serves, a request that took longer than ``max_time``.
NOT_RETRIED: tuple[type[Exception], ...] = (
    httpx.TooManyRedirects,
    httpx.DecodingError,
    httpx.UnsupportedProtocol,
    httpx.InvalidURL,
    UnicodeError,  # a redirect to a host name the IDNA codec refuses (a label longer than DNS allows)
    MaxTimeError,
)


def not_retried(url: str, exc: Exception, client: httpx.Client) -> NetworkError:
    """The one-line error for one of :data:`NOT_RETRIED`."""
    if isinstance(exc, httpx.TooManyRedirects):
        return NetworkError(
            f"{url}: redirected more than {client.max_redirects} times (a redirect loop?); check the URL"
        )
    if isinstance(exc, httpx.DecodingError):
        return NetworkError(f"{url}: the response body cannot be decoded ({describe(exc)}); not retried")
    if isinstance(exc, (UnicodeError, httpx.InvalidURL)):
        why = clip(str(exc))
        return NetworkError(f"{url}: the server sent an address that is not a valid URL ({why}); not retried")
    return NetworkError(f"{url}: {describe(exc)}; not retried")


#: What to do about a certificate OpenSSL refused, by its verify code (OpenSSL's include/openssl/x509_vfy.h).
_TLS_ADVICE = {
    9: "the server's certificate is not valid yet: check this machine's clock",
    10: "the server's certificate has expired: tell the server's operator, or check this machine's clock",
    62: "the certificate is for another host name: check the URL's host",
    64: "the certificate is for another IP address: check the URL's host",
}
_TRUST_ADVICE = (
    "if the server's CA is a private one, trust it with --cert FILE or SSL_CERT_FILE=FILE (a PEM bundle); "
    "check the URL's scheme and host"
)


def tls_failure(url: str, exc: BaseException) -> TLSError:
    """One line: what TLS refused and what to do about it."""
    code = _verify_code(exc)
    advice = _TLS_ADVICE.get(code, _TRUST_ADVICE) if code is not None else _TRUST_ADVICE
    return TLSError(f"{url}: TLS failed ({describe(exc)}); not retried. {advice[0].upper()}{advice[1:]}")


def _verify_code(exc: BaseException) -> int | None:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ssl.SSLCertVerificationError):
            return int(current.verify_code)
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def get(
    client: httpx.Client,
    url: str,
    headers: Mapping[str, str],
    policy: RetryPolicy,
    deadline: Deadline | None = None,
) -> httpx.Response:
    """GET with bounded retries on transient failures; returns a read response. A status worth retrying that
    lasts through every attempt (429, 5xx) is raised as :class:`~.errors.HTTPStatusError`, counting them.

    With ``deadline``, the whole of it (every attempt, every pause, every body) ends by then: no attempt starts
    and no pause is slept past it, each attempt's timeouts are clipped to the time left, and the response
    carries it (:data:`~.pace.DEADLINE_EXTENSION`) to be checked as :mod:`~.pace`'s ``max_time`` is: between
    body chunks, and with a watched client (:class:`WatchedClient`) also while no bytes come, headers included.
    Stopped by it: a :class:`~.errors.NetworkError` naming ``url`` and the deadline."""
    watch: Watch | None = getattr(client, "watch", None)
    for attempt in range(1, policy.attempts + 1):
        try:
            response = _attempt(client, url, headers, deadline)
        except DeadlineError as exc:
            raise past_deadline(url, deadline) from exc
        except NOT_RETRIED as exc:
            raise not_retried(url, exc, client) from exc
        except httpx.TransportError as exc:
            if is_tls_error(exc):
                raise tls_failure(url, exc) from exc
            if deadline is not None and deadline.expired:
                raise past_deadline(url, deadline) from exc
            if attempt == policy.attempts:
                raise NetworkError(
                    f"{url}: {describe(exc, client)} (after {attempt} attempts); check the network or the index URL"
                ) from exc
            wait = policy.delay(attempt)
            if deadline is not None and wait >= deadline.remaining():
                tries = f"{attempt} attempts" if attempt > 1 else "1 attempt"
                raise NetworkError(
                    f"{url}: {describe(exc, client)} (after {tries}), and no time for another within {deadline}; "
                    "check the network or the index URL"
                ) from exc
            pause(policy, wait, watch)
            continue
        if response.status_code in RETRY_STATUSES:
            if attempt == policy.attempts:
                raise status_error(url, response, attempt)
            wait = policy.delay(attempt, response.headers.get("retry-after"))
            if deadline is not None and wait >= deadline.remaining():
                raise status_error(url, response, attempt, deadline)
            pause(policy, wait, watch)
            continue
        return response
    raise AssertionError("unreachable")  # pragma: no cover


def _attempt(client: httpx.Client, url: str, headers: Mapping[str, str], deadline: Deadline | None) -> httpx.Response:
    """One request; with ``deadline``, none is started past it and its timeouts are clipped to the time left."""
    if deadline is None:
        return client.get(url, headers=dict(headers))
    if deadline.expired:
        raise DeadlineError(f"no answer within {deadline}")
    left = deadline.remaining()

    def clip(limit: float | None) -> float:
        return left if limit is None else min(limit, left)

    t = client.timeout
    timeout = httpx.Timeout(connect=clip(t.connect), read=clip(t.read), write=clip(t.write), pool=clip(t.pool))
    return client.get(url, headers=dict(headers), timeout=timeout, extensions={DEADLINE_EXTENSION: deadline})


def past_deadline(url: str, deadline: Deadline | None) -> NetworkError:
    """The one line for a request that ``deadline`` stopped: ``URL: no answer within 20 s (...)``."""
    return NetworkError(f"{url}: no answer within {deadline}")


def status_error(
    url: str, response: httpx.Response, attempts: int = 1, deadline: Deadline | None = None
) -> HTTPStatusError:
    """``deadline``: the one that left no time for another attempt, named in the message."""
    after = f" after {attempts} attempts" if attempts > 1 else ""
    if deadline is not None:
        after += f", and no time for another within {deadline}"
    return HTTPStatusError(
        f"{url}: HTTP {response.status_code} {response.reason_phrase}{after}; check the URL or try again later",
        response.status_code,
    )
