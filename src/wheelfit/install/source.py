"""The variant index as a :class:`~wheelfit.install.gather.WheelSource`, on the index client and the
downloader (:mod:`wheelfit.index`, :mod:`wheelfit.fetch`): cached pages, verified and cached downloads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..fetch.download import Downloader, DownloadRequest
from ..index.client import IndexClient
from ..index.errors import ProjectNotFoundError
from .select import IndexFile

__all__ = ["IndexSource"]


@dataclass
class IndexSource:
    index_url: str
    index: IndexClient
    downloader: Downloader
    _pages: dict[str, list[IndexFile]] = field(default_factory=dict)

    def files(self, project: str) -> Sequence[IndexFile]:
        if project not in self._pages:
            try:
                links = self.index.project_page(self.index_url, project).links
            except ProjectNotFoundError:
                links = ()
            self._pages[project] = [
                IndexFile(
                    filename=link.filename,
                    url=link.url,
                    sha256=link.hashes.get("sha256"),
                    size=link.size,
                    requires_python=link.requires_python,
                    yanked=link.yanked is not None,
                )
                for link in links
            ]
        return self._pages[project]

    def fetch(self, file: IndexFile) -> Path:
        """Torch-family wheels are installed only when the index's sha256 checks out (``require_hash``)."""
        hashes = {"sha256": file.sha256} if file.sha256 else {}
        request = DownloadRequest(file.url, file.filename, hashes, size=file.size, require_hash=True)
        return self.downloader.fetch(request).path
