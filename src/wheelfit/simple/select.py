"""Choosing the one file to install for a requirement: pure, deterministic, and explained.

Order (as pip's candidate key): not yanked, then the highest version the requirement allows
(``torch==2.8.0`` may match several local variants on a flat index; ``triton~=3.9.0`` from a wheel's
METADATA several releases), then the most preferred supported tag, then the highest build tag. A yanked
file is used only when nothing else fits an exact pin (PEP 592), with a warning; a range never takes one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..errors import first_line
from .errors import NoMatchingFileError
from .filenames import WheelName, parse_wheel_name
from .links import FileLink

__all__ = ["Rejected", "Selection", "requires_python_problem", "select_wheel"]


@dataclass(frozen=True)
class Rejected:
    filename: str
    reason: str


@dataclass(frozen=True)
class Selection:
    link: FileLink
    wheel: WheelName
    #: Files for this project that were turned down, and why (for ``--explain``).
    rejected: tuple[Rejected, ...] = ()
    warnings: tuple[str, ...] = ()


def select_wheel(
    links: Iterable[FileLink],
    requirement: str | Requirement,
    *,
    tags: Sequence[Tag],
    python_version: str,
) -> Selection:
    """Pick the best wheel for ``requirement``; ``tags`` are the target's supported tags, most preferred first."""
    req = _requirement(requirement)
    exact = any(s.operator in ("==", "===") and not s.version.endswith("*") for s in req.specifier)
    priority = {tag: i for i, tag in reversed(list(enumerate(tags)))}
    python = Version(python_version)
    fits: list[tuple[tuple[bool, Version, int, tuple[int, str] | tuple[()]], FileLink, WheelName]] = []
    rejected: list[Rejected] = []
    for link in links:
        wheel = parse_wheel_name(link.filename)
        if wheel is None:
            if link.filename.endswith(".whl"):
                rejected.append(Rejected(link.filename, "not a valid wheel file name"))
            continue  # sdists and other files: wheelfit installs wheels only
        if wheel.name != canonicalize_name(req.name):
            continue
        if not req.specifier.contains(wheel.version, prereleases=True if exact else None):
            continue
        reason = requires_python_problem(link.requires_python, python)
        if reason is None and link.yanked is not None and not exact:
            reason = "yanked (only an exact pin takes a yanked file)"
        if reason is None:
            ranks = [priority[t] for t in wheel.tags if t in priority]
            if not ranks:
                reason = f"tags {_tags(wheel)} do not fit this platform and Python"
            else:
                fits.append(((link.yanked is None, wheel.version, -min(ranks), wheel.build), link, wheel))
                continue
        rejected.append(Rejected(link.filename, reason))
    if not fits:
        summary = "; ".join(f"{r.filename}: {r.reason}" for r in rejected[:3]) or "the index lists no wheel for it"
        more = f" (+{len(rejected) - 3} more)" if len(rejected) > 3 else ""
        raise NoMatchingFileError(f"no wheel for {req} fits Python {python_version} and this platform: {summary}{more}")
    fits.sort(key=lambda f: f[0], reverse=True)
    _, link, wheel = fits[0]
    for _, other, _ in fits[1:]:
        why = "yanked" if other.yanked is not None else f"{link.filename} ranks higher"
        rejected.append(Rejected(other.filename, why))
    warnings: tuple[str, ...] = ()
    if link.yanked is not None:
        reason = f": {link.yanked}" if link.yanked else ""
        warnings = (f"{link.filename} is yanked{reason}; it is used only because {req} pins it",)
    return Selection(link=link, wheel=wheel, rejected=tuple(rejected), warnings=warnings)


def _requirement(requirement: str | Requirement) -> Requirement:
    try:
        return requirement if isinstance(requirement, Requirement) else Requirement(requirement)
    except InvalidRequirement as exc:
        raise NoMatchingFileError(f"{requirement!r} is not a valid requirement ({first_line(exc)})") from exc


def requires_python_problem(requires_python: str | None, python: Version) -> str | None:
    """Why a file's Requires-Python excludes ``python`` (a malformed one excludes it too), or None."""
    if not requires_python:
        return None
    try:
        spec = SpecifierSet(requires_python)
    except InvalidSpecifier:
        return f"Requires-Python {requires_python!r} is not a valid specifier"
    if spec.contains(python, prereleases=True):
        return None
    return f"requires Python {requires_python} (target is {python})"


def _tags(wheel: WheelName) -> str:
    return ".".join(sorted({f"{t.interpreter}-{t.abi}-{t.platform}" for t in wheel.tags}))
