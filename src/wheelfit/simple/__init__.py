"""The simple repository API (PEP 503/691/658/714/792) and wheel file names as values: pages parsed into
:class:`~.links.FileLink`, wheel names read (:mod:`.filenames`), and the one file chosen for a requirement
(:mod:`.select`). Pure: text in, values out; the index client that reads pages is :mod:`wheelfit.index`.
The names below load on first use (PEP 562): planning from the knowledge base needs none of the page parsers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_attributes

if TYPE_CHECKING:
    from .errors import IndexPageError, NoMatchingFileError, OfflineError, ProjectNotFoundError
    from .filenames import WheelName, parse_wheel_name
    from .links import FileLink, ProjectPage, parse_html, parse_json, parse_page
    from .select import Rejected, Selection, select_wheel

_WHERE = {
    **dict.fromkeys(("IndexPageError", "NoMatchingFileError", "OfflineError", "ProjectNotFoundError"), "errors"),
    **dict.fromkeys(("WheelName", "parse_wheel_name"), "filenames"),
    **dict.fromkeys(("FileLink", "ProjectPage", "parse_html", "parse_json", "parse_page"), "links"),
    **dict.fromkeys(("Rejected", "Selection", "select_wheel"), "select"),
}

__all__ = [
    "FileLink",
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
    "select_wheel",
]

__getattr__ = lazy_attributes(__name__, _WHERE)
