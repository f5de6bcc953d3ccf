"""Network calls that Ctrl-C stops at once and that say when a server is slow to answer.

A thread blocked in ``recv`` cannot be interrupted: Python delivers SIGINT to the main thread only, and a
worker thread reading a wheel (or a hung index page) would keep the process alive until its read timeout.
So every blocking step of a request (connect, wait for the headers, each read of the body) runs on a daemon
helper thread while the calling thread waits in short slices: it stops as soon as the run's :class:`Watch` is
cancelled (by :func:`sigint_cancels`, which also raises ``KeyboardInterrupt`` in the main thread as usual), and
reports a stall (no answer, or no new bytes, for ``stall_after`` seconds) through ``on_stall``. A helper left
behind is a daemon: it never holds the process open.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, TypeVar

from ..errors import Interrupted

if TYPE_CHECKING:
    import httpx

__all__ = ["StallCallback", "Watch", "host_of", "sigint_cancels"]

T = TypeVar("T")

#: ``on_stall(host, url, seconds)``: ``host`` (``name:port``) has not answered ``url`` for ``seconds``.
StallCallback = Callable[[str, str, float], None]


@dataclass
class Watch:
    """One run's cancellation flag and stall reporting, shared by all its requests and threads."""

    on_stall: StallCallback | None = None
    #: Seconds without an answer (or new bytes) before the first stall report, then between reports.
    stall_after: float = 2.0
    stall_every: float = 3.0
    #: How often a waiting thread looks at the flag: the bound on how late it stops.
    poll: float = 0.1
    cancelled: threading.Event = field(default_factory=threading.Event)

    def check(self) -> None:
        if self.cancelled.is_set():
            raise Interrupted

    def sleep(self, seconds: float) -> None:
        """``time.sleep`` that ends early, raising :class:`Interrupted`, when the run is cancelled."""
        if self.cancelled.wait(max(0.0, seconds)):
            raise Interrupted

    def wait_for(
        self,
        done: threading.Event,
        host: str,
        url: str,
        since: float | None = None,
        check: Callable[[], None] | None = None,
    ) -> None:
        """Wait until ``done`` is set; raise :class:`Interrupted` on cancel, or what ``check`` raises (called
        every ``poll`` seconds: a deadline); report stalls meanwhile."""
        start = time.monotonic() if since is None else since
        report_at = start + self.stall_after
        while not done.wait(self.poll):
            self.check()
            if check is not None:
                check()
            now = time.monotonic()
            if now >= report_at:
                report_at = now + self.stall_every
                if self.on_stall is not None:
                    self.on_stall(host, url, now - start)
        self.check()

    def call(
        self,
        fn: Callable[[], T],
        url: httpx.URL,
        on_abandon: Callable[[T], None] | None = None,
        check: Callable[[], None] | None = None,
    ) -> T:
        """``fn()`` on a helper thread; its result or its exception here. If this thread gives up (cancelled, or
        ``check`` raised), ``on_abandon`` gets the result the helper produces later (to close a response nobody
        reads)."""
        done = threading.Event()
        lock = threading.Lock()
        box: list[tuple[bool, object]] = []
        abandoned = False

        def run() -> None:
            try:
                outcome: tuple[bool, object] = (True, fn())
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, which raises it
                outcome = (False, exc)
            with lock:
                box.append(outcome)
                late = abandoned
            done.set()
            if late and outcome[0] and on_abandon is not None:
                with contextlib.suppress(Exception):
                    on_abandon(outcome[1])  # type: ignore[arg-type]

        threading.Thread(target=run, name="wheelfit-http-call", daemon=True).start()
        try:
            self.wait_for(done, host_of(url), str(url), check=check)
        except BaseException:
            with lock:
                abandoned = True
                finished = bool(box)
            if finished and box[0][0] and on_abandon is not None:
                with contextlib.suppress(Exception):
                    on_abandon(box[0][1])  # type: ignore[arg-type]
            raise
        ok, value = box[0]
        if ok:
            return value  # type: ignore[return-value]
        raise value  # type: ignore[misc]


def host_of(url: httpx.URL) -> str:
    port = url.port
    return f"{url.host}:{port}" if port is not None else url.host


@contextlib.contextmanager
def sigint_cancels(watch: Watch) -> Iterator[None]:
    """While the block runs, Ctrl-C cancels ``watch`` (so worker threads stop) and raises ``KeyboardInterrupt``
    in the main thread as Python's own handler does. Does nothing off the main thread, or when someone else
    has installed a SIGINT handler."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.getsignal(signal.SIGINT)
    except ValueError:  # pragma: no cover - no signals here
        yield
        return
    if previous is not signal.default_int_handler:
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        watch.cancelled.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
