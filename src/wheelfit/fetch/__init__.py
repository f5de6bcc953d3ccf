"""Downloading files: the HTTP edge (retries, TLS, timeouts), streaming hashes, and the shared cache."""

from __future__ import annotations

from .cache import CACHE_ENV, Cache, default_cache_dir
from .download import Downloader, DownloadRequest, DownloadResult, Progress, ProgressCallback
from .errors import (
    CacheLockError,
    DownloadError,
    HashMismatchError,
    HTTPStatusError,
    MissingHashError,
    NetworkError,
    TLSError,
    TruncatedDownloadError,
)
from .http import RetryPolicy, Timeouts, make_client
from .trust import trust_context

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
    "MissingHashError",
    "NetworkError",
    "Progress",
    "ProgressCallback",
    "RetryPolicy",
    "TLSError",
    "Timeouts",
    "TruncatedDownloadError",
    "default_cache_dir",
    "make_client",
    "trust_context",
]
