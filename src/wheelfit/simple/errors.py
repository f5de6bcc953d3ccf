"""Errors from reading package indexes: each names the page or file and says what to do."""

from __future__ import annotations

from ..errors import WheelfitError

__all__ = ["IndexPageError", "NoMatchingFileError", "OfflineError", "ProjectNotFoundError"]


class IndexPageError(WheelfitError, ValueError):
    """An index page (or PEP 658 metadata file) is malformed or of an unsupported API version."""


class ProjectNotFoundError(WheelfitError):
    """The index has no page for the project (HTTP 404)."""


class OfflineError(WheelfitError):
    """``--offline`` was asked for and the cache has no copy of the page."""


class NoMatchingFileError(WheelfitError):
    """No file on the page fits the pinned requirement, the Python version and the platform tags."""
