"""Where an extension's wheels are listed, read: the user's ``--find-links`` (folders of wheels, find-links pages),
else the place its project publishes them (:mod:`wheelfit.kb.extensions`): a find-links page per torch build
(data.pyg.org), the GitHub releases API's JSON (flash-attn), or a PEP 503/691 index.

Given ``--find-links``, extension wheels come from there only: a wheelhouse is what an air-gapped site has, and
a plan must not reach past it. One published beside torch on the PyTorch index (xformers) is torch-family and
comes from the plan's own index, as torch does. A published source's URL may be redirected to a mirror
(``mirrors``: URL prefix -> replacement). Every read goes through the index client (cache, deadline, TLS,
offline); listings are read once per run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..errors import UsageError
from ..index.client import IndexClient
from ..index.local import is_local, local_path, read_local_page
from ..kb.extensions import Extension
from ..simple.errors import IndexPageError, OfflineError, ProjectNotFoundError
from ..simple.links import FileLink, url_filename
from .match import Listing, TorchBuild

__all__ = ["ExtensionSources", "mirrored", "read_github_releases", "read_mirrors"]

_SHA256 = frozenset("0123456789abcdef")


@dataclass
class ExtensionSources:
    """The listings of extension wheels one plan reads."""

    #: Reads pages and JSON; ``None``: no network at all (a find-links folder still works).
    index: IndexClient | None
    #: The user's ``--find-links``: folders (absolute paths) and http(s) pages.
    find_links: tuple[str, ...] = ()
    #: Published URLs redirected to a mirror: prefix -> replacement.
    mirrors: Mapping[str, str] = field(default_factory=dict)
    _read: dict[str, tuple[FileLink, ...]] = field(default_factory=dict)

    def listing(self, ext: Extension, build: TorchBuild) -> Listing:
        if ext.url == "{index}":  # published beside torch (xformers): torch-family, from the plan's index only
            return Listing(self._project(build.index, ext.name), build.index)
        if self.find_links:
            links = tuple(link for place in self.find_links for link in self._find_links(place))
            return Listing(links, f"--find-links {' '.join(self.find_links)}")
        url = self._mirrored(_expand(ext.url, build))
        if ext.where == "find-links":
            per_build = "{torch" in ext.url or "{variant}" in ext.url
            links = self._page(url)
            if not links and "{torch}" in ext.url and build.version.micro != 0:
                # a page per release: torch 2.9.1's wheels may be listed on torch 2.9.0's (same ABI, PyG's habit)
                first = TorchBuild(Version(f"{build.series}.0"), build.variant, build.platform)
                url = self._mirrored(_expand(ext.url, first))
                links = self._page(url)
            return Listing(links, url, per_build=per_build)
        if ext.where == "github-releases":
            return Listing(self._github(url, ext.name), url)
        return Listing(self._project(url, ext.name), url)  # a PEP 503/691 index (PyPI, the PyTorch index)

    def torch_pin(self, link: FileLink) -> SpecifierSet | None:
        """What the wheel's ``Requires-Dist`` asks of torch: its PEP 658 metadata (or the wheel in a folder);
        ``None`` when it names no torch or its metadata cannot be read without downloading the wheel."""
        from ..install.install_set import parse_metadata, read_wheel_metadata

        if is_local(link.url):
            raw = read_wheel_metadata(local_path(link.url), link.filename)
        elif link.core_metadata is not False and self.index is not None:
            raw = self.index.core_metadata(link)
        else:
            return None
        pins = [r.specifier for r in parse_metadata(raw, link).requires if canonicalize_name(r.name) == "torch"]
        return pins[0] if pins else None

    def _mirrored(self, url: str) -> str:
        return mirrored(url, self.mirrors)

    def _find_links(self, place: str) -> tuple[FileLink, ...]:
        if place not in self._read:
            if "://" not in place:
                self._read[place] = read_local_page(Path(place).as_uri()).links
            else:
                self._read[place] = self._client(place).find_links_page(place).links
        return self._read[place]

    def _page(self, url: str) -> tuple[FileLink, ...]:
        if url not in self._read:
            try:
                self._read[url] = self._client(url).find_links_page(url).links
            except ProjectNotFoundError:  # no page for this torch build: the project publishes nothing for it
                self._read[url] = ()
        return self._read[url]

    def _github(self, url: str, name: str) -> tuple[FileLink, ...]:
        if url not in self._read:
            listing = f"{url}?per_page=100"
            self._read[url] = self._client(url).json_document(
                listing, read_github_releases, what=f"{name}'s GitHub releases"
            )
        return self._read[url]

    def _project(self, url: str, name: str) -> tuple[FileLink, ...]:
        key = f"{url} {name}"
        if key not in self._read:
            try:
                self._read[key] = self._client(url).project_page(url, name).links
            except ProjectNotFoundError:
                self._read[key] = ()
        return self._read[key]

    def _client(self, url: str) -> IndexClient:
        if self.index is None:
            raise OfflineError(f"offline: {url} cannot be read; give --find-links with the wheels")
        return self.index


def _expand(template: str, build: TorchBuild) -> str:
    """``{torch}`` (the release, ``2.9.0``), ``{torch_series}`` (``2.9``), ``{variant}`` (``cu128``) and ``{index}``
    (the plan's own index: what the user's ``--pytorch-index`` names, mirrors included)."""
    return (
        template.replace("{index}", build.index)
        .replace("{torch}", str(build.version.public))
        .replace("{torch_series}", build.series)
        .replace("{variant}", build.variant)
    )


def read_github_releases(body: bytes, url: str) -> tuple[FileLink, ...]:
    """The wheel assets of a GitHub releases listing (``GET /repos/{owner}/{repo}/releases``), with the sha256
    GitHub computed for each (``digest``, ``sha256:<hex>``, given since June 2025). Checked before use: a
    listing of another shape is an error naming ``url``."""
    try:
        releases = json.loads(body)
    except (ValueError, RecursionError):
        raise IndexPageError(f"{url}: not the GitHub releases API's JSON") from None
    if not isinstance(releases, list):
        raise IndexPageError(f"{url}: not the GitHub releases API's JSON (expected a list of releases)")
    links: list[FileLink] = []
    for release in releases:
        assets = release.get("assets") if isinstance(release, dict) else None
        if not isinstance(assets, list):
            raise IndexPageError(f"{url}: a release without an assets list")
        if release.get("draft") is True:
            continue
        for asset in assets:
            link = _asset(asset, url)
            if link is not None:
                links.append(link)
    return tuple(links)


def _asset(asset: object, url: str) -> FileLink | None:
    if not isinstance(asset, dict):
        raise IndexPageError(f"{url}: an asset is not an object")
    name, href, digest = asset.get("name"), asset.get("browser_download_url"), asset.get("digest")
    if not isinstance(name, str) or not isinstance(href, str):
        raise IndexPageError(f"{url}: an asset without a name or browser_download_url")
    if not name.endswith(".whl"):
        return None
    if url_filename(href, url) != name:
        raise IndexPageError(f"{url}: asset {name!r} downloads as another file ({href[:120]!r})")
    hashes: dict[str, str] = {}
    if isinstance(digest, str) and digest.startswith("sha256:"):
        hexdigest = digest[7:].lower()
        if len(hexdigest) != 64 or not set(hexdigest) <= _SHA256:
            raise IndexPageError(f"{url}: {name}: digest {digest[:80]!r} is not a sha256")
        hashes["sha256"] = hexdigest
    size = asset.get("size")
    return FileLink(name, href, hashes, size=size if isinstance(size, int) and size >= 0 else None)


def mirrored(url: str, mirrors: Mapping[str, str]) -> str:
    """``url`` redirected by the longest prefix of ``mirrors`` it starts with."""
    for prefix, replacement in sorted(mirrors.items(), key=lambda m: len(m[0]), reverse=True):
        if url.startswith(prefix):
            return replacement + url[len(prefix) :]
    return url


def read_mirrors(value: str, source: str) -> dict[str, str]:
    """``PREFIX=REPLACEMENT`` pairs separated by spaces, both http(s) URLs: each published URL starting with a
    prefix is read from the replacement instead (a folder of wheels is ``--find-links``' job)."""
    out: dict[str, str] = {}
    for pair in value.split():
        prefix, sep, replacement = pair.partition("=")
        if not sep or urlsplit(prefix).scheme not in ("http", "https") or not urlsplit(prefix).netloc:
            raise UsageError(f"{source}: {pair[:200]!r} is not PREFIX=REPLACEMENT with an http(s) URL prefix")
        if urlsplit(replacement).scheme not in ("http", "https") or not urlsplit(replacement).netloc:
            raise UsageError(f"{source}: {pair[:200]!r}: the replacement must be an http(s) URL")
        out[prefix] = replacement
    return out
