"""Downloading files: the HTTP edge (retries, TLS, timeouts), streaming hashes, and the shared cache.

The names below are loaded on first use (PEP 562): reading the cache (``--offline``) must not pay for
importing httpx and building a TLS trust store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_attributes

if TYPE_CHECKING:
    from .cache import CACHE_ENV, Cache, default_cache_dir
    from .download import Downloader, DownloadRequest, DownloadResult, Progress, ProgressCallback
    from .errors import (
        CacheLockError,
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

_WHERE = {
    **dict.fromkeys(("CACHE_ENV", "Cache", "default_cache_dir"), "cache"),
    **dict.fromkeys(("Downloader", "DownloadRequest", "DownloadResult", "Progress", "ProgressCallback"), "download"),
    **dict.fromkeys(
        (
            "CacheLockError",
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
    "CacheLockError",
    "DownloadError",
    "DownloadRequest",
    "DownloadResult",
    "Downloader",
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
    "default_cache_dir",
    "make_client",
    "trust_context",
]


__getattr__ = lazy_attributes(__name__, _WHERE)
