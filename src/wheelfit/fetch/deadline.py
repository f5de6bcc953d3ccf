"""One overall time limit for a piece of work that may take several requests: an index read with its retries.

The read timeout bounds each socket read and the retry policy the number of attempts, so a server that accepts
and never answers costs every attempt's timeout plus the pauses between them (4 x 30 s), and one that drips a
byte a second holds a request for as long as the speed rule allows. A :class:`Deadline` bounds the whole:
:func:`~.http.get` starts no attempt and sleeps no pause past it, clips each attempt's timeouts to the time
left, and stops reading a body at it (through the same check as :mod:`~.pace`'s ``max_time``).

How long an index read may take depends on what it is for: a plan falls back to the knowledge base (20 s by
default), an install fails (30 s). :func:`index_deadline` reads both from the environment, in this one place.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Literal

from ..errors import UsageError

__all__ = [
    "DEFAULT_INDEX_DEADLINES",
    "INDEX_DEADLINE_ENV",
    "INDEX_DEADLINE_SOURCE",
    "PHASE_DEADLINE_ENV",
    "Deadline",
    "Phase",
    "index_deadline",
]

#: Seconds for every index read of any command; it overrides the per-phase variables.
INDEX_DEADLINE_ENV = "WHEELFIT_INDEX_DEADLINE"

#: What an index read is for: a plan falls back to the knowledge base, an install fails.
Phase = Literal["plan", "install"]

#: Seconds for each index read of that phase, when :data:`INDEX_DEADLINE_ENV` is unset.
PHASE_DEADLINE_ENV: Mapping[Phase, str] = {
    "plan": "WHEELFIT_PLAN_INDEX_DEADLINE",
    "install": "WHEELFIT_INSTALL_INDEX_DEADLINE",
}
DEFAULT_INDEX_DEADLINES: Mapping[Phase, float] = {"plan": 20.0, "install": 30.0}

#: How an index read's deadline is named in messages.
INDEX_DEADLINE_SOURCE = f"the index deadline; {INDEX_DEADLINE_ENV} sets it"


class Deadline:
    """``seconds`` from when it is made, on ``clock`` (a monotonic clock; injected in tests). Pure: it only reads
    the clock, so one value may be shared by threads (several reads sharing one budget)."""

    __slots__ = ("_clock", "_ends", "seconds", "source")

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic, *, source: str = "") -> None:
        """``source``: what set it, for messages (``"the index deadline; WHEELFIT_INDEX_DEADLINE sets it"``)."""
        if not math.isfinite(seconds) or seconds < 0:
            raise ValueError(f"a deadline is a finite number of seconds, 0 or more, not {seconds!r}")
        self.seconds = float(seconds)
        self.source = source
        self._clock = clock
        self._ends = clock() + self.seconds

    def remaining(self) -> float:
        """Seconds left, never below 0."""
        return max(0.0, self._ends - self._clock())

    @property
    def expired(self) -> bool:
        return self._clock() >= self._ends

    def describe(self) -> str:
        """``20 s (the index deadline; WHEELFIT_INDEX_DEADLINE sets it)``: for "no answer within ..."."""
        return f"{self.seconds:g} s ({self.source})" if self.source else f"{self.seconds:g} s"

    __str__ = describe

    def __repr__(self) -> str:
        return f"Deadline({self.seconds:g}, remaining={self.remaining():g}, source={self.source!r})"


def index_deadline(environ: Mapping[str, str], phase: Phase) -> float:
    """Seconds each index read of ``phase`` may take: :data:`INDEX_DEADLINE_ENV` if set, else the phase's own
    variable (:data:`PHASE_DEADLINE_ENV`), else :data:`DEFAULT_INDEX_DEADLINES` (plan 20, install 30). A value
    that is not a finite number of seconds, 0 or more, is a :class:`~wheelfit.errors.UsageError` naming its
    variable (both variables are checked, the one overridden too)."""
    general = _seconds(environ, INDEX_DEADLINE_ENV)
    own = _seconds(environ, PHASE_DEADLINE_ENV[phase])
    if general is not None:
        return general
    return own if own is not None else DEFAULT_INDEX_DEADLINES[phase]


def _seconds(environ: Mapping[str, str], name: str) -> float | None:
    return number_from_environ(environ, name, unit="seconds", allow_zero=True, example="20 means 20 s")


def number_from_environ(
    environ: Mapping[str, str],
    name: str,
    *,
    unit: str,
    default: float | None = None,
    allow_zero: bool = False,
    example: str = "",
) -> float | None:
    """The finite, non-negative number the variable ``name`` holds (``default`` when unset or empty); anything else
    is a :class:`~wheelfit.errors.UsageError` naming the variable: the one reader of wheelfit's numeric variables."""
    text = environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        least = "0 or more" if allow_zero else "more than 0"
        hint = f" ({example})" if example else ""
        raise UsageError(f"{name}={text[:200]!r}: not a number of {unit}; give {least}{hint}, or unset it")
    return value
