"""Package indexes: simple-repository pages (PEP 503/691/658/714), wheel names, and file selection.

``links``, ``filenames`` and ``select`` are pure; ``client`` is the only module here that does I/O.
"""

from __future__ import annotations

from .config import DEFAULT_INDEX_URL, DEFAULT_PYTORCH_INDEX, IndexConfig, IndexConfigError, resolve_index_config
from .errors import IndexPageError, NoMatchingFileError, OfflineError, ProjectNotFoundError
from .filenames import WheelName, parse_wheel_name
from .links import FileLink, ProjectPage, parse_html, parse_json, parse_page
from .metadata import metadata_differences
from .select import Rejected, Selection, select_wheel

__all__ = [
    "DEFAULT_INDEX_URL",
    "DEFAULT_PYTORCH_INDEX",
    "FileLink",
    "IndexConfig",
    "IndexConfigError",
    "IndexPageError",
    "NoMatchingFileError",
    "OfflineError",
    "ProjectNotFoundError",
    "ProjectPage",
    "Rejected",
    "Selection",
    "WheelName",
    "metadata_differences",
    "parse_html",
    "parse_json",
    "parse_page",
    "parse_wheel_name",
    "resolve_index_config",
    "select_wheel",
]
