"""The slowest a response may arrive, and the longest one request may take (curl's ``--speed-limit``,
``--speed-time`` and ``--max-time``).

The read timeout bounds each socket read, so a server that sends one byte a second never trips it, and a
2.5 GB wheel at that pace would take eighty years. So a response body must keep up an average of
``speed_limit`` bytes/s over every ``speed_time`` seconds, from its headers on (waiting for the headers is
what ``--timeout`` bounds), and with ``max_time`` no request may take longer than that from connecting to its
last byte.

The defaults never trip a working link: 1 KiB/s is a tenth of a 2G mobile link, and 30 s is the read timeout
already. ``max_time`` is off by default: no one bound suits both a 1 kB index page and a 2.5 GB CUDA wheel on
a slow line. Each is set by a variable (``WHEELFIT_SPEED_LIMIT``, ``WHEELFIT_SPEED_TIME``,
``WHEELFIT_MAX_TIME``) or in the library by a :class:`SpeedRule`.

A request may also carry its caller's :class:`~.deadline.Deadline` (the request extension
:data:`DEADLINE_EXTENSION`, set by :func:`~.http.get`): it is checked wherever ``max_time`` is, and breaking it
raises :class:`DeadlineError`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import httpx

from .deadline import Deadline, number_from_environ

__all__ = [
    "DEADLINE_EXTENSION",
    "MAX_TIME_ENV",
    "SPEED_LIMIT_ENV",
    "SPEED_TIME_ENV",
    "DeadlineError",
    "MaxTimeError",
    "Pace",
    "SpeedRule",
    "TooSlowError",
]

SPEED_LIMIT_ENV = "WHEELFIT_SPEED_LIMIT"
SPEED_TIME_ENV = "WHEELFIT_SPEED_TIME"
MAX_TIME_ENV = "WHEELFIT_MAX_TIME"

#: The request extension that carries the caller's :class:`~.deadline.Deadline` (kept across redirects).
DEADLINE_EXTENSION = "wheelfit.deadline"

#: How often the speed is sampled (a tenth of ``speed_time`` when that is shorter): the window is measured to
#: within a step, and the samples kept are at most ``speed_time / step`` however fast the body arrives.
_STEP = 0.25


@dataclass(frozen=True)
class SpeedRule:
    #: Bytes per second that a body must average over every ``speed_time`` seconds; ``0`` turns the rule off.
    speed_limit: float = 1024.0
    speed_time: float = 30.0
    #: Seconds one request may take from start to last byte; ``None``: no bound but the two above.
    max_time: float | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> SpeedRule:
        """The rule ``environ`` sets (each variable left unset keeps its default); a bad value is one line."""
        default = cls()
        limit = _number(environ, SPEED_LIMIT_ENV, default.speed_limit, allow_zero=True)
        window = _number(environ, SPEED_TIME_ENV, default.speed_time)
        max_time = _number(environ, MAX_TIME_ENV, None)
        return cls(limit if limit is not None else 0.0, window or default.speed_time, max_time)


def _number(environ: Mapping[str, str], name: str, default: float | None, allow_zero: bool = False) -> float | None:
    return number_from_environ(environ, name, unit=_UNITS[name], default=default, allow_zero=allow_zero)


_UNITS = {SPEED_LIMIT_ENV: "bytes per second", SPEED_TIME_ENV: "seconds", MAX_TIME_ENV: "seconds"}


class TooSlowError(httpx.TransportError):
    """The body came in below the rule's speed; retried like a timeout (a resumed download may go faster)."""


class MaxTimeError(httpx.TransportError):
    """The request took longer than ``max_time``; not retried (another try would take as long)."""


class DeadlineError(MaxTimeError):
    """The request ran past the caller's :class:`~.deadline.Deadline`; not retried (no time is left)."""


class Pace:
    """One response's progress against a :class:`SpeedRule`: :meth:`add` each chunk, :meth:`check` at any time
    (from any thread: a watched body is read on a helper thread and checked on the waiting one)."""

    def __init__(
        self, rule: SpeedRule, started: float, clock: Callable[[], float] = time.monotonic, request: object = None
    ) -> None:
        """``started``: when the request began (``clock``'s time); the speed is measured from now on. A
        :class:`~.deadline.Deadline` in the request's :data:`DEADLINE_EXTENSION` is checked too (on its own
        clock)."""
        self.rule, self._clock, self._request = rule, clock, request
        self._deadline = _deadline_of(request)
        self._started = started
        now = clock()
        self._body_from = now
        self._received = 0
        #: ``(time, bytes received by then)``, oldest first; the first is at or before the window's start.
        self._samples: deque[tuple[float, int]] = deque([(now, 0)])
        self._lock = threading.Lock()

    def add(self, count: int) -> None:
        with self._lock:
            self._received += count
        self.check()

    def check_time(self, now: float | None = None) -> None:
        """Raise :class:`MaxTimeError` if the request has taken longer than ``max_time`` by ``now``, or
        :class:`DeadlineError` if its deadline has passed."""
        now = self._clock() if now is None else now
        rule = self.rule
        if rule.max_time is not None and now - self._started > rule.max_time:
            raise self._error(MaxTimeError, f"took longer than {rule.max_time:g} s ({MAX_TIME_ENV} sets the limit)")
        if self._deadline is not None and self._deadline.expired:
            raise self._error(DeadlineError, f"no answer within {self._deadline}")

    def check(self, now: float | None = None) -> None:
        """Raise :class:`MaxTimeError` or :class:`TooSlowError` if the rule is broken by ``now``."""
        now = self._clock() if now is None else now
        self.check_time(now)
        rule = self.rule
        if rule.speed_limit <= 0:
            return
        with self._lock:
            # Sampled on every call (each chunk, and every poll while a watched reader waits), at most every
            # step: the count at the window's start is known to within a step, also after the bytes stop coming.
            if now - self._samples[-1][0] >= min(_STEP, rule.speed_time / 10):
                self._samples.append((now, self._received))
            if now - self._body_from < rule.speed_time:
                return
            start = now - rule.speed_time
            while len(self._samples) > 1 and self._samples[1][0] <= start:
                self._samples.popleft()
            got = self._received - self._samples[0][1]
        if got < rule.speed_limit * rule.speed_time:
            raise self._error(
                TooSlowError,
                f"too slow: {got} bytes in the last {rule.speed_time:g} s, below {rule.speed_limit:g} bytes/s "
                f"({SPEED_LIMIT_ENV} and {SPEED_TIME_ENV} set the limit)",
            )

    def _error(self, kind: type[httpx.TransportError], message: str) -> httpx.TransportError:
        if isinstance(self._request, httpx.Request):
            return kind(message, request=self._request)
        return kind(message)


def _deadline_of(request: object) -> Deadline | None:
    if not isinstance(request, httpx.Request):
        return None
    deadline = request.extensions.get(DEADLINE_EXTENSION)
    return deadline if isinstance(deadline, Deadline) else None
