"""Choosing one wheel from an index's file list for a requirement and an interpreter. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

__all__ = ["IndexFile", "pick_wheel"]


@dataclass(frozen=True)
class IndexFile:
    """One file an index lists for a project (PEP 503 anchor or PEP 691 ``files`` entry)."""

    filename: str
    url: str
    sha256: str | None = None
    size: int | None = None
    requires_python: str | None = None
    yanked: bool = False


def pick_wheel(
    files: Sequence[IndexFile], requirement: Requirement, tags: Sequence[str], python: str
) -> IndexFile | None:
    """The newest wheel that satisfies ``requirement`` and installs on an interpreter with ``tags`` and full
    version ``python`` (``3.11.7``); then the most preferred tag. Yanked files count only for an exact ``==``
    pin (PEP 592). Unlike :func:`wheelfit.index.select_wheel` it takes ranges too (``triton~=3.9.0`` in METADATA)."""
    rank = {tag: i for i, tag in enumerate(tags)}
    name = canonicalize_name(requirement.name)
    exact = any(s.operator in ("==", "===") and "*" not in s.version for s in requirement.specifier)
    best: tuple[Version, int, IndexFile] | None = None
    for f in files:
        try:
            fname, version, _build, ftags = parse_wheel_filename(f.filename)
        except InvalidWheelFilename:
            continue  # sdists and stray files: wheelfit installs torch-family packages from wheels only
        if fname != name or (f.yanked and not exact):
            continue
        if not requirement.specifier.contains(version, prereleases=True if exact else None):
            continue
        if f.requires_python and not _python_ok(f.requires_python, python):
            continue
        tag_rank = min((rank[str(t)] for t in ftags if str(t) in rank), default=None)
        if tag_rank is None:
            continue
        key = (version, -tag_rank, f)
        if best is None or key[:2] > best[:2]:
            best = key
    return best[2] if best else None


def _python_ok(spec: str, python: str) -> bool:
    try:
        return SpecifierSet(spec).contains(Version(python), prereleases=True)
    except InvalidSpecifier:
        return True  # a malformed Requires-Python is ignored, as pip and uv do
