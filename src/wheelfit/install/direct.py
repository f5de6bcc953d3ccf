"""The user's own torch-family files (``torch @ https://...whl``, ``torch @ file:///...``, ``./torch-...whl``),
read: those projects come from the file given (:class:`~wheelfit.install.sources.GivenFiles`), every other
torch-family package (its ``triton``, the companions) from the plan's index, as before."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from packaging.version import Version

from ..errors import UsageError
from ..requirements import ParsedRequirement
from ..simple.links import FileLink

__all__ = ["DirectFile", "direct_file"]


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
