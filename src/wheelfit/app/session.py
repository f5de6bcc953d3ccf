"""One run's network session: the HTTP client (made when first needed), the cache, and the run's limits, shared by
planning and installing."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import WheelfitError

if TYPE_CHECKING:
    import httpx

    from ..fetch.cache import Cache
    from ..fetch.watch import Watch
    from ..fetch.wheels import ProgressCallback, WheelStore
    from ..index.client import IndexClient

__all__ = ["Network", "network"]


@dataclass
class Network:
    """One run's HTTP client and cache, shared by planning and installing (one pool, one TLS trust store).

    ``client`` may be left out and ``connect`` given instead: the client is then made on the first request, so
    that a run that only reads the cache (``--offline``) never imports httpx or loads a trust store.
    """

    client: httpx.Client | None
    cache: Cache
    offline: bool = False
    progress: ProgressCallback | None = None
    connect: Callable[[], httpx.Client] | None = None
    #: ``--timeout``: seconds to connect and per read, for the installer backend too (``None``: the defaults).
    timeout: float | None = None
    #: ``--cert``: the CA bundle that verifies servers, for the installer backend too (``None``: the default store).
    cert: str | None = None
    #: Seconds each index read (page, metadata file; retries included) may take (``None``: no overall bound).
    deadline: float | None = None
    #: What watches this session's requests: Ctrl-C stops them all through it (:func:`~wheelfit.fetch.watch.
    #: sigint_cancels`, installed by the command line, never by the library).
    watch: Watch | None = None
    _making: threading.Thread | None = field(default=None, init=False, repr=False)

    @property
    def http(self) -> httpx.Client:
        if self._making is not None:
            self._making.join()
            self._making = None
        if self.client is None:
            if self.connect is None:
                raise WheelfitError("no HTTP client was given for this network session")
            self.client = self.connect()
        return self.client

    def prepare(self) -> None:
        """Make the client (importing httpx, loading the trust store: ~0.1 s) on a thread, while the caller waits
        on something that holds no GIL (a child process describing the target environment, hardware tools).
        A failure is left for the first real use of :attr:`http`, which tries again and raises it."""
        if self.offline or self.client is not None or self.connect is None or self._making is not None:
            return
        connect = self.connect

        def make() -> None:
            with contextlib.suppress(Exception):  # :attr:`http` makes it again and reports the error
                self.client = connect()

        self._making = threading.Thread(target=make, name="wheelfit-http", daemon=True)
        self._making.start()

    @cached_property
    def index(self) -> IndexClient:
        from ..index.client import IndexClient

        client = self.client if self.client is not None else (lambda: self.http)
        return IndexClient(client, self.cache, offline=self.offline, memo=True, deadline=self.deadline)

    @cached_property
    def store(self) -> WheelStore:
        """The wheels wheelfit must open itself (a variant wheel, a wheel whose index serves no PEP 658 file)."""
        from ..fetch.wheels import WheelStore

        return WheelStore(self.cache.root / "by-sha256", lambda: self.http, self.progress, offline=self.offline)


@contextlib.contextmanager
def network(
    environ: Mapping[str, str],
    *,
    offline: bool = False,
    progress: ProgressCallback | None = None,
    cache_dir: Path | None = None,
    timeout: float | None = None,
    cert: str | None = None,
    deadline: float | None = None,
) -> Iterator[Network]:
    """A :class:`Network` with this user's cache (``WHEELFIT_CACHE_DIR`` or the platform's cache directory);
    its client, made when first needed, is closed on exit. ``WHEELFIT_OFFLINE`` in ``environ`` turns
    ``offline`` on. ``timeout``: seconds to connect and per read (default 10 and 30). ``cert``: a PEM file of CA
    certificates trusted instead of the default store (``SSL_CERT_FILE``, else the OS store and certifi's).
    ``deadline``: seconds each index read may take, retries included (``wheelfit.fetch.deadline.index_deadline``
    gives a phase's from the environment); ``None``: only the timeouts and retries bound it.

    A server that does not answer for 2 s is reported to ``progress`` (``state="stalled"``) every few seconds.
    The caller that owns the process (the command line) may make Ctrl-C stop every request and download at once
    with ``sigint_cancels(session.watch)``; the library sets no signal handler."""
    from ..fetch.cache import Cache, default_cache_dir
    from ..fetch.watch import Watch

    watch = Watch(on_stall=_stall_reporter(progress))

    def connect() -> httpx.Client:
        from ..fetch.http import make_client

        return make_client(environ=environ, timeout=timeout, watch=watch, cert=cert)

    from ..index.config import offline_requested

    offline = offline or offline_requested(environ)
    cache = Cache(cache_dir or default_cache_dir(environ, sys.platform, Path.home()))
    session = Network(None, cache, offline, progress, connect, timeout, cert, deadline, watch)
    try:
        yield session
    finally:
        if session._making is not None:
            session._making.join()
        if session.client is not None:
            session.client.close()


def _stall_reporter(progress: ProgressCallback | None) -> Callable[[str, str, float], None] | None:
    """A slow server as a progress event: ``filename`` the URL, ``detail`` its host:port."""
    if progress is None:
        return None

    def report(host: str, url: str, seconds: float) -> None:
        from ..fetch.wheels import Progress

        progress(Progress(url, "stalled", detail=host, waited=seconds))

    return report
