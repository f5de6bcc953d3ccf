"""wheelfit's exceptions: one root, each message says what went wrong and what to do."""

from __future__ import annotations

__all__ = ["Interrupted", "ProviderError", "ReportError", "UsageError", "WheelfitError", "clip", "first_line"]


class WheelfitError(Exception):
    """All errors raised by wheelfit's own code."""


class UsageError(WheelfitError):
    """What the user typed cannot be read (an unknown ``--target`` key or value, a malformed option): exit
    status 2, as uv's and click's usage errors. Everything else wheelfit refuses is a failure (1)."""


class Interrupted(KeyboardInterrupt):
    """The run was interrupted (Ctrl-C) while this thread waited (on the network, on another install's lock); it
    stops here. A ``KeyboardInterrupt``, so no ``except Exception`` on the way swallows it and the command line
    exits 130."""


class ReportError(WheelfitError, ValueError):
    """A hardware report (from a provider or a file) does not follow the contract."""


class ProviderError(WheelfitError):
    """A detector plugin could not be loaded."""


def first_line(exc: BaseException) -> str:
    """A third-party error's own first line: packaging's parse errors add a drawing of the input with a caret under
    the fault, which does not belong in a one-line message."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def clip(text: str, limit: int = 200) -> str:
    """A value as quoted in an error: its start and its end when it is long (a 100 kB argument is not repeated)."""
    return text if len(text) <= limit else f"{text[: limit // 2]}...[{len(text) - limit} more]...{text[-limit // 2 :]}"
