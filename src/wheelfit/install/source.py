"""The variant index as a :class:`~wheelfit.install.gather.WheelSource`, on the index client and the
downloader (:mod:`wheelfit.index`, :mod:`wheelfit.fetch`): cached pages, verified and cached downloads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..fetch.download import Downloader, DownloadRequest
from ..index.client import IndexClient
from ..index.errors import ProjectNotFoundError
from ..index.links import FileLink

__all__ = ["IndexSource"]


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
