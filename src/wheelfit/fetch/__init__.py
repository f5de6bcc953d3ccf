"""The HTTP edge (retries, TLS, timeouts, deadlines), the page cache, and the few wheels wheelfit reads itself.

The names below are loaded on first use (PEP 562): reading the cache (``--offline``) must not pay for
importing httpx and building a TLS trust store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_attributes

if TYPE_CHECKING:
    from .cache import CACHE_ENV, Cache, default_cache_dir
    from .errors import (
        DownloadError,
        HashMismatchError,
        HTTPStatusError,
        MissingHashError,
        NetworkError,
        RedirectError,
        TLSError,
        TruncatedDownloadError,
    )
    from .http import RetryPolicy, Timeouts, make_client
    from .pace import MaxTimeError, SpeedRule, TooSlowError
    from .trust import trust_context
    from .wheels import Progress, ProgressCallback, WheelStore

_WHERE = {
    **dict.fromkeys(("CACHE_ENV", "Cache", "default_cache_dir"), "cache"),
    **dict.fromkeys(("Progress", "ProgressCallback", "WheelStore"), "wheels"),
    **dict.fromkeys(
        (
            "DownloadError",
            "HTTPStatusError",
            "HashMismatchError",
            "MissingHashError",
            "NetworkError",
            "RedirectError",
            "TLSError",
            "TruncatedDownloadError",
        ),
        "errors",
    ),
    **dict.fromkeys(("RetryPolicy", "Timeouts", "make_client"), "http"),
    **dict.fromkeys(("MaxTimeError", "SpeedRule", "TooSlowError"), "pace"),
    "trust_context": "trust",
}

__all__ = [
    "CACHE_ENV",
    "Cache",
    "DownloadError",
    "HTTPStatusError",
    "HashMismatchError",
    "MaxTimeError",
    "MissingHashError",
    "NetworkError",
    "Progress",
    "ProgressCallback",
    "RedirectError",
    "RetryPolicy",
    "SpeedRule",
    "TLSError",
    "Timeouts",
    "TooSlowError",
    "TruncatedDownloadError",
    "WheelStore",
    "default_cache_dir",
    "make_client",
    "trust_context",
]


__getattr__ = lazy_attributes(__name__, _WHERE)
