"""Errors from the network and the download cache: one line, naming the file or URL, saying what to do."""

from __future__ import annotations

from ..errors import WheelfitError

__all__ = [
    "DownloadError",
    "HTTPStatusError",
    "HashMismatchError",
    "MissingHashError",
    "NetworkError",
    "RedirectError",
    "TLSError",
    "TruncatedDownloadError",
]


class NetworkError(WheelfitError):
    """A request failed after the bounded retries (connection refused, reset, timeouts, 5xx)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        #: What failed, without the advice a layer above may add to the message (``; or use --offline ...``): what
        #: a caller that keeps going quotes in a note of its own.
        self.detail = message


class TLSError(NetworkError):
    """TLS setup or certificate verification failed; never retried, since retrying cannot fix it."""


class RedirectError(NetworkError):
    """A redirect that is refused, not retried: from https to plain http (a downgrade), or to another scheme."""


class HTTPStatusError(NetworkError):
    """The server answered with a status that retrying will not change (404, 403, ...)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class DownloadError(WheelfitError):
    """A file could not be downloaded intact; nothing was left in the cache."""


class TruncatedDownloadError(DownloadError):
    """The body was shorter (or longer) than its Content-Length or the index's size, after every retry."""


class HashMismatchError(DownloadError):
    """The downloaded bytes do not have the hash the index or the user gave; fails closed, never retried."""


class MissingHashError(DownloadError):
    """Hashes were required and the index gave none for this file."""
