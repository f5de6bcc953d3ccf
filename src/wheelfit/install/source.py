"""The variant index as a :class:`~wheelfit.install.gather.WheelSource`, on the index client and the
downloader (:mod:`wheelfit.index`, :mod:`wheelfit.fetch`): cached pages, verified and cached downloads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..fetch.download import Downloader, DownloadRequest
from ..index.client import IndexClient
from ..index.errors import ProjectNotFoundError
from ..index.links import FileLink
from ..variants.errors import VariantError
from ..variants.filename import parse_wheel_name
from ..variants.markers import VariantEnvironment
from ..variants.plain import plain_filename
from .errors import WheelNotFoundError
from .plain_wheel import plain_wheel

__all__ = ["IndexSource", "VariantSource"]


@dataclass
class IndexSource:
    index_url: str
    index: IndexClient
    downloader: Downloader
    _pages: dict[str, Sequence[FileLink]] = field(default_factory=dict)

    def files(self, project: str) -> Sequence[FileLink]:
        if project not in self._pages:
            try:
                self._pages[project] = self.index.project_page(self.index_url, project).links
            except ProjectNotFoundError:
                self._pages[project] = ()
        return self._pages[project]

    def fetch_all(self, files: Sequence[FileLink]) -> list[Path]:
        """Torch-family wheels are installed only when the index's sha256 checks out (``require_hash``)."""
        requests = [DownloadRequest(f.url, f.filename, dict(f.hashes), size=f.size, require_hash=True) for f in files]
        return [result.path for result in self.downloader.fetch_all(requests)]


@dataclass
class VariantSource:
    """Variant mode's wheels, as a source an installer without variant support can take.

    The plan's wheel is offered under its plain name and fetched as the plain copy (markers evaluated for the
    chosen variant, :mod:`wheelfit.install.plain_wheel`). The torch-family packages it depends on (triton, ...)
    come from the variant index, or, when it has none, from the PyTorch index the label was built from
    (``cuda12.8`` -> ``cu128``): the same publisher, never the default index. Labelled wheels of other projects
    are not offered: their variant was not chosen.
    """

    variants: IndexSource
    pinned: FileLink
    variant: VariantEnvironment
    fallback: IndexSource | None = None
    _plain: FileLink | None = None

    @property
    def index_url(self) -> str:
        """Where torch-family wheels are looked for, as messages name it."""
        if self.fallback is None:
            return self.variants.index_url
        return f"{self.variants.index_url}, then {self.fallback.index_url}"

    def files(self, project: str) -> Sequence[FileLink]:
        pinned = parse_wheel_name(self.pinned.filename)
        if project == pinned.name:
            return (self._plain_link(),)
        links = [link for link in self.variants.files(project) if not _labelled(link.filename)]
        if not links and self.fallback is not None:
            return self.fallback.files(project)
        return links

    def fetch_all(self, files: Sequence[FileLink]) -> list[Path]:
        plain = self._plain_link()
        wanted = [self.pinned if f == plain else f for f in files]
        paths = self.variants.fetch_all(wanted)
        return [
            plain_wheel(path, self.pinned.filename, self._sha256(), self.variant) if f == plain else path
            for f, path in zip(files, paths, strict=True)
        ]

    def _plain_link(self) -> FileLink:
        """The pinned link as the index page lists it (with its hashes), under the plain file name."""
        if self._plain is None:
            pinned = parse_wheel_name(self.pinned.filename)
            listed = next((f for f in self.variants.files(pinned.name) if f.filename == self.pinned.filename), None)
            if listed is None:
                raise WheelNotFoundError(
                    f"{self.pinned.filename} is no longer on {self.variants.index_url}; plan again"
                )
            self.pinned = listed
            self._plain = replace(listed, filename=plain_filename(pinned))
        return self._plain

    def _sha256(self) -> str:
        return self.pinned.hashes.get("sha256", "")


def _labelled(filename: str) -> bool:
    try:
        return parse_wheel_name(filename).label is not None
    except VariantError:
        return False
