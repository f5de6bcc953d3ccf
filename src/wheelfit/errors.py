"""wheelfit's exceptions: one root, each message says what went wrong and what to do."""

from __future__ import annotations

__all__ = ["ProviderError", "ReportError", "WheelfitError"]


class WheelfitError(Exception):
    """All errors raised by wheelfit's own code."""


class ReportError(WheelfitError, ValueError):
    """A hardware report (from a provider or a file) does not follow the contract."""


class ProviderError(WheelfitError):
    """A detector plugin could not be loaded."""
