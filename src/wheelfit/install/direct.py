"""The user's own torch-family files (``torch @ https://...whl``, ``torch @ file:///...``, ``./torch-...whl``) as
a :class:`~wheelfit.install.gather.WheelSource`: those projects come from the file given, every other
torch-family package (its ``triton``, the companions) from the plan's index, as before."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from packaging.utils import canonicalize_name
from packaging.version import Version

from ..errors import UsageError
from ..fetch.download import Downloader, DownloadRequest
from ..index.links import FileLink
from ..requirements import ParsedRequirement
from .gather import WheelSource

__all__ = ["DirectFile", "DirectSource", "direct_file"]


@dataclass(frozen=True)
class DirectFile:
    """A direct reference, read: the project, the wheel's version (with its local label) and where it is."""

    name: str
    version: Version
    link: FileLink
    #: The file on this machine, for ``file:`` references; ``None`` for a URL to download.
    path: Path | None

    @property
    def label(self) -> str | None:
        return self.version.local


def direct_file(req: ParsedRequirement) -> DirectFile:
    """The wheel a torch-family direct or local requirement names, as :mod:`wheelfit.requirements` read it (name,
    version and hashes from there, never parsed again); a :class:`UsageError` for a missing file or a URL scheme
    wheelfit cannot fetch."""
    url = req.url or ""
    if req.name is None or req.version is None or req.archive != "wheel":  # RequirementSet.split refuses these
        raise UsageError(f"{req.origin}: {req.text}: wheelfit installs torch-family packages from built wheels")
    parts = urlsplit(url)
    filename = unquote(parts.path.rsplit("/", 1)[-1])
    hashes = {a: d for a, _, d in (h.partition(":") for h in req.hashes) if a == "sha256"}
    path = None
    if req.path is not None:
        path = Path(req.path)
        if not path.is_file():
            raise UsageError(f"{req.origin}: {req.text}: no such file")
    elif parts.scheme not in ("http", "https"):
        raise UsageError(f"{req.origin}: {req.text}: give an https://, http:// or file: URL, or a path to a wheel")
    return DirectFile(req.name, req.version, FileLink(filename, parts._replace(fragment="").geturl(), hashes), path)


@dataclass
class DirectSource:
    """``inner`` (the plan's index), except for the projects the user gave a file for."""

    inner: WheelSource | None
    given: dict[str, DirectFile]
    downloader: Downloader | None

    @property
    def index_url(self) -> str:
        return self.inner.index_url if self.inner is not None else "the files given"

    def files(self, project: str) -> Sequence[FileLink]:
        found = self.given.get(canonicalize_name(project))
        if found is not None:
            return (found.link,)
        return self.inner.files(project) if self.inner is not None else ()

    def fetch_all(self, files: Sequence[FileLink]) -> list[Path]:
        mine = {d.link.url: d for d in self.given.values()}
        theirs = [f for f in files if f.url not in mine]
        fetched = iter(self.inner.fetch_all(theirs) if theirs and self.inner is not None else [])
        out: list[Path] = []
        for f in files:
            given = mine.get(f.url)
            if given is None:
                out.append(next(fetched))
            elif given.path is not None:
                out.append(given.path)  # read in place; the archive checks run on it as on any download
            else:
                out.append(self._download(given))
        return out

    def _download(self, given: DirectFile) -> Path:
        if self.downloader is None:
            raise UsageError(f"{given.link.url}: cannot download without a network session")
        request = DownloadRequest(given.link.url, given.link.filename, dict(given.link.hashes))
        return self.downloader.fetch(request).path
