"""Where an install set's torch-family files are chosen from, and how their metadata is read.

:class:`IndexPages` is the plan's variant index; :class:`VariantPages` a wheel-variant plan (PEP 817), whose
chosen wheel is offered as its plain copy (neither uv nor pip installs variant wheels yet); :class:`GivenFiles`
the user's own files (``torch @ https://...whl``, ``./torch-...whl``) before the plan's index.
:class:`MetadataReader` reads a file's METADATA: the index's PEP 658 file, the wheel on disk, or, for an index
that serves no metadata file, the wheel downloaded once (:class:`~wheelfit.fetch.wheels.WheelStore`), which is
then the file the backend installs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from ..index.client import IndexClient
from ..index.local import is_local, local_path
from ..simple.errors import OfflineError, ProjectNotFoundError
from ..simple.links import FileLink
from ..variants.errors import VariantError
from ..variants.filename import parse_wheel_name
from ..variants.markers import VariantEnvironment
from .errors import WheelNotFoundError
from .install_set import FamilySource, WheelMetadata, parse_metadata, read_wheel_metadata

__all__ = ["GivenFiles", "IndexPages", "MetadataReader", "VariantPages"]

@dataclass
class IndexPages:
    """The plan's index: each project's page read once."""

    index_url: str
    index: IndexClient
    _pages: dict[str, Sequence[FileLink]] = field(default_factory=dict)

    def files(self, project: str) -> Sequence[FileLink]:
        if project not in self._pages:
            try:
                self._pages[project] = self.index.project_page(self.index_url, project).links
            except ProjectNotFoundError:
                self._pages[project] = ()
        return self._pages[project]


class WheelStoreLike(Protocol):
    """:class:`~wheelfit.fetch.wheels.WheelStore` as the readers use it."""

    def fetch(self, link: FileLink, *, require_hash: bool = True) -> tuple[Path, str]: ...


@dataclass
class MetadataReader:
    """A file's METADATA, read without downloading the wheel where that can be done."""

    index: IndexClient
    #: Fetches a wheel whose index serves no PEP 658 file; ``None`` (``--offline`` with nothing kept) refuses.
    store: WheelStoreLike | None
    #: URLs the user gave without a hash: downloaded to be read, and pinned at the sha256 they have.
    unpinned: frozenset[str] = frozenset()
    #: A wheel downloaded to be read is what the backend installs (an install); a lock keeps the index's URL.
    take_download: bool = True

    def metadata(self, link: FileLink) -> WheelMetadata:
        return parse_metadata(*self.raw(link))

    def raw(self, link: FileLink) -> tuple[bytes, FileLink]:
        """``link``'s METADATA bytes, and the link as the backend should take it (a downloaded wheel's own file)."""
        if is_local(link.url):
            return read_wheel_metadata(local_path(link.url), link.filename), link
        if link.core_metadata is not False:
            return self.index.core_metadata(link), link
        if self.store is None:
            raise OfflineError(f"offline: {link.filename} has no PEP 658 metadata and is not downloaded yet")
        path, sha = self.store.fetch(link, require_hash=link.url not in self.unpinned)
        url = path.as_uri() if self.take_download else link.url
        taken = FileLink(link.filename, url, {**link.hashes, "sha256": sha}, size=link.size)
        return read_wheel_metadata(path, link.filename), taken


@dataclass
class VariantPages:
    """A variant plan's files, as an installer without variant support can take them.

    The plan's wheel is offered as its plain copy (markers evaluated for the chosen variant,
    :mod:`wheelfit.install.plain_wheel`), made once from the downloaded, hash-checked variant wheel. The
    torch-family packages it depends on (triton, ...) come from the variant index, or, when it has none, from the
    PyTorch index the label was built from (``cuda12.8`` -> ``cu128``): the same publisher, never the default
    index. Labelled wheels of other projects are not offered: their variant was not chosen.
    """

    variants: IndexPages
    pinned: FileLink
    variant: VariantEnvironment
    store: WheelStoreLike
    fallback: IndexPages | None = None
    _plain: FileLink | None = None

    @property
    def index_url(self) -> str:
        if self.fallback is None:
            return self.variants.index_url
        return f"{self.variants.index_url}, then {self.fallback.index_url}"

    def files(self, project: str) -> Sequence[FileLink]:
        if project == parse_wheel_name(self.pinned.filename).name:
            return (self._plain_link(),)
        links = [link for link in self.variants.files(project) if not _labelled(link.filename)]
        if not links and self.fallback is not None:
            return self.fallback.files(project)
        return links

    def _plain_link(self) -> FileLink:
        if self._plain is None:
            from .plain_wheel import plain_wheel

            name = parse_wheel_name(self.pinned.filename).name
            listed = next((f for f in self.variants.files(name) if f.filename == self.pinned.filename), None)
            if listed is None:
                where = self.variants.index_url
                raise WheelNotFoundError(f"{self.pinned.filename} is no longer on {where}; plan again")
            path, sha = self.store.fetch(listed)
            plain, plain_sha = plain_wheel(path, listed.filename, sha, self.variant)
            self._plain = FileLink(plain.name, plain.as_uri(), {"sha256": plain_sha}, size=plain.stat().st_size)
        return self._plain


def _labelled(filename: str) -> bool:
    try:
        return parse_wheel_name(filename).label is not None
    except VariantError:
        return False


@dataclass
class GivenFiles:
    """``inner`` (the plan's index), except for the projects the user gave a file for."""

    inner: FamilySource | None
    given: dict[str, FileLink]

    @property
    def index_url(self) -> str:
        return self.inner.index_url if self.inner is not None else "the files given"

    def files(self, project: str) -> Sequence[FileLink]:
        found = self.given.get(project)
        if found is None:
            return self.inner.files(project) if self.inner is not None else ()
        # The index's own file (a lock's line): its PEP 658 metadata is read instead of the wheel
        listed = next((f for f in self.inner.files(project) if f.url == found.url), None) if self.inner else None
        index_sha = None if listed is None else listed.hashes.get("sha256")
        if listed is not None and found.hashes.get("sha256", index_sha) == index_sha:
            return (replace(listed, hashes={**listed.hashes, **found.hashes}),)
        return (found,)
