"""One requirement's text classified as pip's ``parse_req_from_line`` does: a bare URL, a bare path (a ``.whl``,
a source archive or a directory), or a PEP 508 requirement (named, or ``name @ URL``).

Pure: a bare path is made absolute against the directory the caller gives (the working directory, also for paths
inside requirement files, as pip and uv read them: pypa/pip#8765, astral-sh/uv#13239) and is not looked at; the
backend reports a missing file.
"""

from __future__ import annotations

import ntpath
import os
import posixpath
from urllib.parse import SplitResult, quote, unquote, urlsplit

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
from packaging.version import Version

from ..errors import UsageError, first_line
from .model import Archive, Origin, ParsedRequirement, clip

__all__ = ["classify", "path_from_file_url"]

#: pip ``utils/filetypes.py`` ARCHIVE_EXTENSIONS (wheel, zip, tar and its compressions).
_SDIST_EXTENSIONS = (
    ".zip",
    ".tar.gz",
    ".tgz",
    ".tar",
    ".tar.bz2",
    ".tbz",
    ".tar.xz",
    ".txz",
    ".tlz",
    ".tar.lz",
    ".tar.lzma",
)
#: pip ``is_url``: these schemes (and VCS ones, ``git+https``) make a bare requirement a URL.
_URL_SCHEMES = frozenset({"http", "https", "file", "ftp"})
_VCS = ("git", "hg", "svn", "bzr")
#: The hash algorithms pip accepts (``--hash`` and URL fragments): pip ``utils/hashes.py`` STRONG_HASHES.
HASH_ALGORITHMS = frozenset({"sha256", "sha384", "sha512"})


def _is_url(text: str) -> bool:
    scheme = text.split(":", 1)[0].lower() if ":" in text else ""
    return scheme in _URL_SCHEMES or scheme in _VCS or scheme.startswith(tuple(f"{v}+" for v in _VCS))


def _looks_like_path(text: str) -> bool:
    """pip's ``_looks_like_path``: a separator in it, or a leading dot."""
    return "/" in text or "\\" in text or text.startswith(".")


def _archive(filename: str) -> Archive:
    lower = filename.lower()
    if lower.endswith(".whl"):
        return "wheel"
    return "sdist" if lower.endswith(_SDIST_EXTENSIONS) else "other"


def path_from_file_url(url: str, base: str) -> str:
    """The local path of a ``file:`` URL (``file:///abs``, ``file://localhost/abs``, ``file:///C:/x`` on
    Windows; a relative ``file:x.whl`` against ``base``). Raises ``ValueError`` for another host."""
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"a file: URL on host {parts.netloc!r} is not a local path")
    path = unquote(parts.path)
    if os.name == "nt" and len(path) > 2 and path[0] == "/" and path[2] == ":":
        path = path[1:]
    return os.path.normpath(os.path.join(base, path))


def _file_url(path: str) -> str:
    """``file:`` URL of an absolute path, as pip's ``path_to_url``."""
    posix = path.replace(ntpath.sep, "/") if os.name == "nt" else path
    return "file:" + ("//" if posix.startswith("/") else "///") + quote(posix, safe="/:" if os.name == "nt" else "/")


def _fail(origin: Origin, text: str, why: str) -> UsageError:
    return UsageError(f"{origin}: cannot read the requirement {clip(text)}: {why}")


def _url_parts(origin: Origin, text: str, url: str) -> SplitResult:
    try:
        return urlsplit(url)
    except ValueError as exc:  # "Invalid IPv6 URL": an unclosed '[' in the host
        raise _fail(origin, text, f"{exc}; fix the URL") from None


def _marker(origin: Origin, text: str, marker: str) -> Marker | None:
    if not marker.strip():
        return None
    try:
        return Marker(marker.strip())
    except InvalidMarker as exc:
        raise _fail(origin, text, f"{first_line(exc)}; fix the marker") from exc


def _url_hashes(origin: Origin, text: str, url: str) -> tuple[str, ...]:
    """``#sha256=...`` in a URL, as ``sha256:...`` (pip checks a link's hash fragment as a ``--hash``)."""
    fragment = urlsplit(url).fragment
    hashes: list[str] = []
    for item in fragment.split("&") if fragment else ():
        key, _, value = item.partition("=")
        if key.lower() in HASH_ALGORITHMS:
            if not value or any(c not in "0123456789abcdefABCDEF" for c in value):
                raise _fail(origin, text, f"#{key}= must be followed by a hex digest; fix the URL")
            hashes.append(f"{key.lower()}:{value.lower()}")
    return tuple(hashes)


def _from_filename(origin: Origin, text: str, filename: str) -> tuple[Archive, str | None, Version | None]:
    """(archive kind, canonical name, version) read from a wheel's or sdist's file name."""
    archive = _archive(filename)
    if archive == "wheel":
        try:
            name, version, _, _ = parse_wheel_filename(filename)
        except ValueError as exc:  # InvalidWheelFilename, or int()'s 4300-digit limit (notatallshaw/nab#652)
            raise _fail(origin, text, f"{first_line(exc)}; rename the file as the wheel spec says") from exc
        return archive, name, version
    if archive == "sdist":
        try:
            sname, sversion = parse_sdist_filename(filename)
        except ValueError:  # InvalidSdistFilename, or int()'s 4300-digit limit
            return archive, None, None  # pip builds it to learn its name; so does the backend
        return archive, sname, sversion
    return archive, None, None


def _egg_name(url: str) -> str | None:
    for item in urlsplit(url).fragment.split("&"):
        key, _, value = item.partition("=")
        if key == "egg" and value:
            return canonicalize_name(value)
    return None


def _bare_url(origin: Origin, text: str, cwd: str) -> ParsedRequirement:
    url, _, marker_text = text.partition("; ")  # pip: a URL may hold ';', so its marker needs "; "
    url = url.strip()
    marker = _marker(origin, text, marker_text)
    filename = unquote(_url_parts(origin, text, url).path.rsplit("/", 1)[-1])
    archive, name, version = found = _from_filename(origin, text, filename)
    if url.lower().startswith("file:"):
        try:
            path = path_from_file_url(url, cwd)
        except ValueError as exc:
            raise _fail(origin, text, f"{exc}; give a local path") from exc
        return _local(origin, text, path, found, frozenset(), marker, _url_hashes(origin, text, url))
    if archive == "other" and url.split(":", 1)[0].lower().startswith(_VCS):
        name = _egg_name(url)
    requirement = None
    if name is not None:
        requirement = _requirement(origin, text, f"{name} @ {url}" + (f" ; {marker}" if marker else ""))
    return ParsedRequirement(
        kind="direct",
        text=text,
        spec=text,
        origin=origin,
        name=name,
        requirement=requirement,
        url=url,
        version=version,
        archive=archive,
        marker=marker,
        hashes=_url_hashes(origin, text, url),
    )


def _local(
    origin: Origin,
    text: str,
    path: str,
    found: tuple[Archive, str | None, Version | None],
    extras: frozenset[str],
    marker: Marker | None,
    hashes: tuple[str, ...] = (),
) -> ParsedRequirement:
    """A local path or ``file:`` URL; ``found`` is what its file name says (archive kind, name, version)."""
    archive, name, version = found
    url = _file_url(path)
    extras_text = f"[{','.join(sorted(extras))}]" if extras else ""
    marker_text = f" ; {marker}" if marker else ""
    requirement = None
    if archive == "wheel" and name is not None:
        requirement = _requirement(origin, text, f"{name}{extras_text} @ {url}{marker_text}")
        spec = str(requirement)
    else:
        spec = f"{path}{extras_text}{marker_text}"
    return ParsedRequirement(
        kind="local",
        text=text,
        spec=spec,
        origin=origin,
        name=name,
        requirement=requirement,
        url=url,
        path=path,
        version=version,
        archive=archive,
        extras=extras,
        marker=marker,
        hashes=hashes,
    )


def _bare_path(origin: Origin, text: str, cwd: str) -> ParsedRequirement:
    path_text, _, marker_text = text.partition(";")
    path_text = path_text.strip()
    marker = _marker(origin, text, marker_text)
    extras: frozenset[str] = frozenset()
    if path_text.endswith("]") and "[" in path_text:  # pip's _strip_extras: ./dir[extra]
        path_text, _, extras_text = path_text[:-1].rpartition("[")
        extras = frozenset(canonicalize_name(e.strip()) for e in extras_text.split(",") if e.strip())
    path = os.path.normpath(os.path.join(cwd, path_text))
    filename = posixpath.basename(path.replace("\\", "/"))
    archive, name, version = _from_filename(origin, text, filename)
    if archive == "other":
        archive = "directory"
    return _local(origin, text, path, (archive, name, version), extras, marker)


def _requirement(origin: Origin, text: str, spec: str) -> Requirement:
    try:
        return Requirement(spec)
    except InvalidRequirement as exc:
        raise _fail(origin, text, f"{first_line(exc)}; write it as PEP 508 says (name, extras, version)") from exc


def classify(text: str, origin: Origin, *, cwd: str) -> ParsedRequirement:
    """``text`` (one requirement, without ``--`` options) classified; a relative path made absolute against
    ``cwd``. Raises :class:`~wheelfit.errors.UsageError` naming ``origin``."""
    text = text.strip()
    if _is_url(text):
        return _bare_url(origin, text, cwd)
    head = text.split(";", 1)[0].strip()
    name_at = head.split("@", 1)
    is_reference = len(name_at) == 2 and not _looks_like_path(name_at[0])  # pip: `name @ url`, not a path
    if not is_reference and (_archive(head.split("[", 1)[0]) != "other" or _looks_like_path(head)):
        return _bare_path(origin, text, cwd)
    req = _requirement(origin, text, text)
    name = canonicalize_name(req.name)
    extras = frozenset(canonicalize_name(e) for e in req.extras)  # PEP 685
    if not req.url:
        return ParsedRequirement(
            kind="named", text=text, spec=text, origin=origin, name=name, requirement=req, extras=extras,
            marker=req.marker,
        )  # fmt: skip
    filename = unquote(_url_parts(origin, text, req.url).path.rsplit("/", 1)[-1])
    archive, file_name, version = _from_filename(origin, text, filename)
    if archive == "wheel" and file_name != name:
        raise _fail(origin, text, f"the wheel {filename} is {file_name}, not {req.name}; fix the name or the URL")
    path = None
    spec, url, written = text, req.url, req.url
    if url.lower().startswith("file:") or ":" not in url.split("/", 1)[0]:  # file: URL, or a path (as uv takes)
        try:
            path = (
                path_from_file_url(url, cwd)
                if ":" in url.split("/", 1)[0]
                else os.path.normpath(os.path.join(cwd, url.split("#", 1)[0]))
            )
        except ValueError as exc:
            raise _fail(origin, text, f"{exc}; give a local path") from exc
        if archive == "other":
            archive = "directory"
        # Absolute, so the backend finds the same file from any working directory.
        fragment = urlsplit(written).fragment
        url = _file_url(path) + (f"#{fragment}" if fragment else "")
        extras_text = f"[{','.join(sorted(extras))}]" if extras else ""
        spec = f"{req.name}{extras_text} @ {url}" + (f" ; {req.marker}" if req.marker else "")
        req = _requirement(origin, text, spec)
    return ParsedRequirement(
        kind="direct",
        text=text,
        spec=spec,
        origin=origin,
        name=name,
        requirement=req,
        url=url,
        path=path,
        version=version,
        archive=archive,
        extras=extras,
        marker=req.marker,
        hashes=_url_hashes(origin, text, written),
    )
