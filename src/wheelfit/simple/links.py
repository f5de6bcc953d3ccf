"""Project pages of a simple repository (PEP 503 HTML, PEP 691 JSON) parsed into one model.

Both representations become the same :class:`FileLink` values, so nothing
downstream cares which one the server chose. Covers PEP 592 yanking,
``requires-python``, PEP 658/714 core-metadata (``data-core-metadata`` first,
the legacy ``data-dist-info-metadata`` as fallback), PEP 700 ``size`` and the
PEP 629 API version check. Anything malformed raises :class:`IndexPageError`
naming the page: a page is trusted input for what gets installed, so it is
never "best-effort" parsed. Pure: text in, values out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

from .errors import IndexPageError

__all__ = [
    "HTML_TYPES",
    "JSON_TYPE",
    "SUPPORTED_API",
    "FileLink",
    "ProjectPage",
    "parse_html",
    "parse_json",
    "parse_page",
    "url_filename",
]

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
HTML_TYPES = ("application/vnd.pypi.simple.v1+html", "text/html")
#: Newest simple-API version whose features we know (1.4 = PEP 792 status markers); newer minors only warn.
SUPPORTED_API = (1, 4)
#: The hex digits of each digest ``hashlib`` guarantees (``algorithms_guaranteed`` but the variable-length shakes),
#: written out so that parsing a page does not load OpenSSL; a test holds it to ``hashlib``.
HEX_DIGITS = {
    "md5": 32, "sha1": 40, "sha224": 56, "sha256": 64, "sha384": 96, "sha512": 128,
    "sha3_224": 56, "sha3_256": 64, "sha3_384": 96, "sha3_512": 128, "blake2b": 128, "blake2s": 64,
}  # fmt: skip
_HASH_NAMES = frozenset(HEX_DIGITS)
_HEX = re.compile(r"[0-9a-f]+")


@dataclass(frozen=True)
class FileLink:
    """One file on a project page."""

    filename: str
    #: Absolute URL without fragment; may be on another host than the page (download-r2.pytorch.org).
    url: str
    #: ``{"sha256": "<hex>"}``; empty when the index gives none (seen on download.pytorch.org).
    hashes: Mapping[str, str] = field(default_factory=dict)
    requires_python: str | None = None
    #: ``None`` if not yanked, else the reason (``""`` when none was given).
    yanked: str | None = None
    #: PEP 658: ``False`` no ``.metadata`` file, ``True`` one without a hash, else the METADATA file's hashes.
    core_metadata: Mapping[str, str] | bool = False
    #: PEP 700 (JSON only).
    size: int | None = None

    @property
    def metadata_url(self) -> str:
        return self.url + ".metadata"


@dataclass(frozen=True)
class ProjectPage:
    url: str
    links: tuple[FileLink, ...]
    api_version: str
    source: Literal["html", "json"]
    #: Things a user may want to know, e.g. a newer API minor version than we know.
    warnings: tuple[str, ...] = ()


def parse_page(body: bytes, content_type: str, url: str) -> ProjectPage:
    """Dispatch on the response's Content-Type, which must be one we asked for (PEP 691)."""
    mime = content_type.split(";", 1)[0].strip().lower()
    if mime == JSON_TYPE:
        return parse_json(body, url)
    if mime in HTML_TYPES:
        return parse_html(_decode(body, content_type, url), url)
    raise IndexPageError(
        f"{url}: unexpected Content-Type {mime or '(none)'!r}; the index must serve PEP 503 HTML or PEP 691 JSON"
    )


def _decode(body: bytes, content_type: str, url: str) -> str:
    charset = "utf-8"
    for part in content_type.split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
    try:
        return body.decode(charset)
    except (LookupError, ValueError) as exc:  # ValueError: UnicodeDecodeError, or a NUL in the charset name
        raise IndexPageError(f"{url}: page is not valid {charset!r} text ({exc.__class__.__name__})") from exc


# --- HTML (PEP 503) -------------------------------------------------------------------------------------------


def parse_html(text: str, url: str) -> ProjectPage:
    """A PEP 503 page: one ``<a>`` per file; the filename is the last path segment of the href."""
    from .anchors import AnchorCollector  # html.parser: only when a page is read

    parser = AnchorCollector()
    try:
        parser.feed(text)
        leftover = parser.rawdata.strip()  # html.parser keeps an unfinished tag here
        parser.close()
    except AssertionError as exc:  # CPython's _markupbase asserts on e.g. ``<![x[`` (an unknown marked section)
        raise IndexPageError(f"{url}: page is not HTML a parser can read ({exc}); it is malformed") from None
    if leftover.startswith("<"):
        raise IndexPageError(f"{url}: page ends inside a tag ({leftover[:40]!r}); it is truncated or malformed")
    version = parser.api_version or "1.0"
    warnings = _check_api_version(version, url)
    base = _join(url, parser.base, url) if parser.base else url
    links = tuple(_html_link(a, base, url) for a in parser.anchors)
    return ProjectPage(url=url, links=links, api_version=version, source="html", warnings=warnings)


def _html_link(attrs: Mapping[str, str | None], base: str, page: str) -> FileLink:
    href = attrs.get("href")
    if not href:
        raise IndexPageError(f"{page}: a link has no href; the page is malformed")
    absolute, fragment = urldefrag(_join(base, href.strip(), page))
    filename = _filename_from_url(absolute, page)
    hashes = _fragment_hashes(fragment, filename, page)
    metadata = attrs.get("data-core-metadata")
    if metadata is None:
        metadata = attrs.get("data-dist-info-metadata")
    return FileLink(
        filename=filename,
        url=absolute,
        hashes=hashes,
        requires_python=attrs.get("data-requires-python") or None,
        yanked=None if "data-yanked" not in attrs else (attrs["data-yanked"] or ""),
        core_metadata=False if metadata is None else _html_metadata(metadata, filename, page),
    )


def _fragment_hashes(fragment: str, filename: str, page: str) -> dict[str, str]:
    name, sep, value = fragment.partition("=")
    name = name.lower()
    if not sep or name not in _HASH_NAMES:
        return {}  # no fragment, or one that is not a hash (``#egg=``)
    return {name: _hex(name, value, filename, page)}


def _html_metadata(value: str, filename: str, page: str) -> Mapping[str, str] | bool:
    if value.strip().lower() == "true":
        return True
    name, sep, digest = value.partition("=")
    name = name.strip().lower()
    if not sep or name not in _HASH_NAMES:
        raise IndexPageError(f"{page}: {filename}: core-metadata value {value!r} is neither 'true' nor '<hash>=<hex>'")
    return {name: _hex(name, digest, filename, page)}


# --- JSON (PEP 691) -------------------------------------------------------------------------------------------


def parse_json(body: bytes | str, url: str) -> ProjectPage:
    """A PEP 691 page; every field is type-checked because a wrong type would surface far from here."""
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise IndexPageError(f"{url}: page is not valid JSON ({exc})") from exc
    except RecursionError:
        raise IndexPageError(f"{url}: page is JSON nested too deeply to be an index page") from None
    if not isinstance(data, dict):
        raise IndexPageError(f"{url}: JSON page is not an object")
    meta = data.get("meta")
    version = meta.get("api-version") if isinstance(meta, dict) else None
    if not isinstance(version, str):
        raise IndexPageError(f"{url}: JSON page has no meta.api-version (PEP 691 requires it)")
    warnings = _check_api_version(version, url)
    files = data.get("files")
    if not isinstance(files, list):
        raise IndexPageError(f"{url}: JSON page has no 'files' list")
    links = tuple(_json_link(f, url) for f in files)
    return ProjectPage(url=url, links=links, api_version=version, source="json", warnings=warnings)


def _json_link(entry: Any, page: str) -> FileLink:
    if not isinstance(entry, dict):
        raise IndexPageError(f"{page}: a 'files' entry is not an object")
    href, filename, hashes = entry.get("url"), entry.get("filename"), entry.get("hashes")
    if not isinstance(href, str) or not href or not isinstance(filename, str) or not isinstance(hashes, dict):
        raise IndexPageError(f"{page}: a file entry lacks a string 'url', 'filename' or a 'hashes' object")
    absolute = urldefrag(_join(page, href.strip(), page))[0]
    _filename_from_url(absolute, page)  # same scheme and path-safety checks as HTML
    _check_filename(filename, page)
    requires_python = entry.get("requires-python")
    yanked = entry.get("yanked", False)
    size = entry.get("size")
    if requires_python is not None and not isinstance(requires_python, str):
        raise IndexPageError(f"{page}: {filename}: 'requires-python' is not a string")
    if not isinstance(yanked, (bool, str)):
        raise IndexPageError(f"{page}: {filename}: 'yanked' is neither a boolean nor a reason")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
        raise IndexPageError(f"{page}: {filename}: 'size' is not a non-negative integer")
    metadata = entry.get("core-metadata", entry.get("dist-info-metadata", False))
    return FileLink(
        filename=filename,
        url=absolute,
        hashes=_json_hashes(hashes, filename, page),
        requires_python=requires_python or None,
        yanked=(yanked if isinstance(yanked, str) else "") if yanked is not False else None,
        core_metadata=_json_metadata(metadata, filename, page),
        size=size,
    )


def _json_hashes(hashes: Mapping[Any, Any], filename: str, page: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in hashes.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise IndexPageError(f"{page}: {filename}: 'hashes' must map names to hex strings")
        if name.lower() in _HASH_NAMES:  # names we cannot compute are of no use for checking
            out[name.lower()] = _hex(name.lower(), value, filename, page)
    return out


def _json_metadata(value: Any, filename: str, page: str) -> Mapping[str, str] | bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, dict):
        return _json_hashes(value, filename, page) or True
    raise IndexPageError(f"{page}: {filename}: 'core-metadata' is neither a boolean nor a hashes object")


# --- shared ---------------------------------------------------------------------------------------------------


def _check_api_version(version: str, url: str) -> tuple[str, ...]:
    """PEP 629: hard-fail on another major version, warn on a newer minor."""
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", version)
    if not match:
        raise IndexPageError(f"{url}: repository API version {version!r} is not '<major>.<minor>'")
    major, minor = int(match[1]), int(match[2])
    if major != SUPPORTED_API[0]:
        raise IndexPageError(
            f"{url}: repository API version {version} is not supported (wheelfit reads {SUPPORTED_API[0]}.x)"
        )
    if minor > SUPPORTED_API[1]:
        return (f"{url}: repository API version {version} is newer than {SUPPORTED_API[0]}.{SUPPORTED_API[1]}",)
    return ()


def _join(base: str, href: str, page: str) -> str:
    """``urljoin``, whose ``ValueError`` for a malformed host (``http://[::1/x``) becomes an IndexPageError."""
    try:
        return urljoin(base, href)
    except ValueError as exc:
        raise IndexPageError(f"{page}: link {href[:80]!r} is not a valid URL ({exc})") from None


def url_filename(url: str, page: str) -> str:
    """The file name of ``url``, a link found on ``page`` outside a PEP 503/691 page (a GitHub release asset),
    checked as every index link is: http(s) with a host, one safe path component."""
    return _filename_from_url(url, page)


def _filename_from_url(url: str, page: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:  # ``HTTP:0`` joins to a URL without a host
        raise IndexPageError(f"{page}: link {url!r} is not an http(s) URL")
    filename = unquote(parts.path.rsplit("/", 1)[-1])
    _check_filename(filename, page)
    return filename


def _check_filename(filename: str, page: str) -> None:
    """A file name becomes a path in the cache: one plain component only (CVE-2026-13346, CVE-2019-20916)."""
    unsafe = (
        not filename
        or filename in (".", "..")
        or any(c in filename for c in "/\\%")
        or any(ord(c) < 32 or ord(c) == 127 for c in filename)
    )
    if unsafe:
        raise IndexPageError(f"{page}: link file name {filename!r} is not a single safe path component")


def _hex(name: str, value: str, filename: str, page: str) -> str:
    digest = value.strip().lower()
    expected = HEX_DIGITS[name]
    if not _HEX.fullmatch(digest) or len(digest) != expected:
        raise IndexPageError(f"{page}: {filename}: {name} value {value!r} is not a {expected}-digit hex digest")
    return digest
