"""Indexes on disk, for air-gapped sites: a directory (or ``file://`` URL) read as an index, and handed to uv or pip.

A PyTorch mirror is ``<dir>/<variant>/<project>/*.whl``: a project directory's wheels are its page, unless it
holds an ``index.html``, which is then read as PEP 503 HTML (with its ``#sha256=`` fragments). A directory that
is not there is a project that is not on the index (a 404). Nothing here writes to the directory.

uv (0.13) and pip (23-25) read a ``file://`` index URL only through ``<project>/index.html`` (pip's
``collector._get_index_content`` appends it to a directory URL; uv answers "not found in the package registry"
without it, tried); a flat wheelhouse or a tree of plain files is handed to them as ``--no-index --find-links``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..errors import UsageError
from ..simple.errors import IndexPageError, ProjectNotFoundError
from ..simple.links import FileLink, ProjectPage, parse_html

__all__ = [
    "BackendIndex",
    "backend_index",
    "is_local",
    "local_index_url",
    "local_path",
    "read_local_page",
    "resolve_find_links",
]

#: What a local index.html is parsed against, so that its relative links resolve as on a web server and an
#: absolute ``file:`` link in it is refused as the HTML reader refuses it on any index; mapped back to ``file:``.
_STANDIN = "http://wheelfit-local.invalid"
#: Files a project directory lists as its page (index.html aside).
_DISTRIBUTIONS = (".whl", ".tar.gz", ".zip")


def is_local(url: str) -> bool:
    return urlsplit(url).scheme == "file"


def local_path(url: str) -> Path:
    """The path of a ``file://`` URL (``file:///dir`` or ``file://localhost/dir``)."""
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise UsageError(f"{url}: a file URL on another host ({parts.netloc}) cannot be read; mount it and give a path")
    if os.name == "nt":  # file:///C:/mirror -> C:\\mirror; urllib.request would import ssl (and 20 ms) for it
        from nturl2path import url2pathname

        return Path(url2pathname(parts.path))
    return Path(unquote(parts.path))


def local_index_url(value: str, source: str, error: type[UsageError] = UsageError) -> str | None:
    """``value`` as the ``file://`` URL of an existing directory, if it is a path or a file URL; else None
    (an http(s) URL). A path that is not a directory raises ``error``."""
    scheme = urlsplit(value).scheme
    if scheme not in ("", "file") and len(scheme) != 1:  # one letter: a Windows drive
        return None
    path = (local_path(value) if scheme == "file" else Path(value)).expanduser()
    if not path.is_dir():
        raise error(
            f"{source}={value!r}: no such directory; give a directory laid out as an index, "
            "a file:// URL of one, or an http(s) URL"
        )
    return path.resolve().as_uri().rstrip("/")


def read_local_page(url: str) -> ProjectPage:
    """``url`` (``file://.../<project>/``) as a project page: its ``index.html``, else its distribution files."""
    directory = local_path(url)
    if not directory.is_dir():
        raise ProjectNotFoundError(f"{directory} does not exist; check the name and the index directory")
    page_url = directory.resolve().as_uri().rstrip("/") + "/"
    html = directory / "index.html"
    if html.is_file():
        try:
            text = html.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise IndexPageError(f"{html}: cannot read it ({exc})") from None
        standin = parse_html(text, _STANDIN + urlsplit(page_url).path)
        links = tuple(_back_to_file(link) for link in standin.links)
        return replace(standin, url=page_url, links=links)
    files = sorted(p for p in directory.iterdir() if p.name.endswith(_DISTRIBUTIONS) and p.is_file())
    links = tuple(FileLink(filename=p.name, url=p.resolve().as_uri()) for p in files)
    return ProjectPage(url=page_url, links=links, api_version="1.0", source="html")


def _back_to_file(link: FileLink) -> FileLink:
    if not link.url.startswith(_STANDIN + "/"):
        return link  # an absolute http(s) link: a mirror's page may point at the web
    return replace(link, url="file://" + link.url[len(_STANDIN) :])


@dataclass(frozen=True)
class BackendIndex:
    """The default index and the wheelhouses as uv and pip take them."""

    index_url: str
    no_index: bool
    find_links: tuple[str, ...]


def backend_index(default_index: str, find_links: Sequence[str] = ()) -> BackendIndex:
    """``default_index`` (an http(s) URL or a local index's ``file://`` URL) plus ``find_links`` for the backend.

    A local PEP 503 tree whose every project has an ``index.html`` stays an index URL; a flat wheelhouse is one
    more find-links directory, a tree of plain files one per project directory."""
    links = tuple(find_links)
    if not is_local(default_index):
        return BackendIndex(default_index, False, links)
    root = local_path(default_index)
    entries = sorted(root.iterdir())
    if any(p.name.endswith(_DISTRIBUTIONS) and p.is_file() for p in entries):
        return BackendIndex(default_index, True, (*links, str(root)))
    projects = [p for p in entries if p.is_dir() and not p.name.startswith(".")]
    if projects and all((p / "index.html").is_file() for p in projects):
        return BackendIndex(default_index, False, links)
    return BackendIndex(default_index, True, (*links, *(str(p) for p in projects)))


def resolve_find_links(env: Mapping[str, str], given: Sequence[str] = ()) -> tuple[str, ...]:
    """``--find-links`` values, else ``UV_FIND_LINKS`` (comma-separated), else ``PIP_FIND_LINKS`` (spaces):
    local ones as absolute paths of existing directories, http(s) ones as they are."""
    values, source = list(given), "--find-links"
    if not values and env.get("UV_FIND_LINKS", "").strip():
        values, source = [v for v in env["UV_FIND_LINKS"].split(",") if v.strip()], "UV_FIND_LINKS"
    elif not values and env.get("PIP_FIND_LINKS", "").strip():
        values, source = env["PIP_FIND_LINKS"].split(), "PIP_FIND_LINKS"
    out: list[str] = []
    for value in (v.strip() for v in values):
        if urlsplit(value).scheme in ("http", "https"):
            out.append(value)
            continue
        url = local_index_url(value, source)
        if url is None:
            raise UsageError(f"{source}={value!r}: give a directory of wheels or an http(s) URL")
        out.append(str(local_path(url)))
    return tuple(dict.fromkeys(out))
