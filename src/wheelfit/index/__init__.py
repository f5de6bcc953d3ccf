"""Package indexes: simple-repository pages (PEP 503/691/658/714), wheel names, and file selection.

``links``, ``filenames`` and ``select`` are pure; ``client``, ``candidates`` and ``variant_index`` do I/O.
The names below load on first use (PEP 562): planning from the knowledge base needs none of the page parsers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_attributes

if TYPE_CHECKING:
    from .config import DEFAULT_INDEX_URL, DEFAULT_PYTORCH_INDEX, IndexConfig, IndexConfigError, resolve_index_config
    from .errors import IndexPageError, NoMatchingFileError, OfflineError, ProjectNotFoundError
    from .filenames import WheelName, parse_wheel_name
    from .links import FileLink, ProjectPage, parse_html, parse_json, parse_page
    from .select import Rejected, Selection, select_wheel

_WHERE = {
    **dict.fromkeys(
        ("DEFAULT_INDEX_URL", "DEFAULT_PYTORCH_INDEX", "IndexConfig", "IndexConfigError", "resolve_index_config"),
        "config",
    ),
    **dict.fromkeys(("IndexPageError", "NoMatchingFileError", "OfflineError", "ProjectNotFoundError"), "errors"),
    **dict.fromkeys(("WheelName", "parse_wheel_name"), "filenames"),
    **dict.fromkeys(("FileLink", "ProjectPage", "parse_html", "parse_json", "parse_page"), "links"),
    **dict.fromkeys(("Rejected", "Selection", "select_wheel"), "select"),
}

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
    "parse_html",
    "parse_json",
    "parse_page",
    "parse_wheel_name",
    "resolve_index_config",
    "select_wheel",
]

__getattr__ = lazy_attributes(__name__, _WHERE)
