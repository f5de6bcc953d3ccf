"""The typed result of reading requirements: each requirement classified, and the options that came with them.

Pure values: nothing here reads a file or the environment. Markers are kept on each requirement and evaluated only
when the caller passes the *target* environment's markers (``for_environment``), never this interpreter's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from packaging.markers import Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import Requirement
from packaging.version import Version

from ..errors import UsageError, first_line

__all__ = ["MARKER_KEYS", "Archive", "Kind", "Origin", "ParsedRequirement", "RequirementSet", "clip", "cut"]

#: ``named``: ``torch>=2.8``; ``direct``: ``torch @ https://...whl`` (or a bare URL); ``local``: a bare path or
#: ``file:`` URL (``./torch-2.9.0-...whl``, ``/abs/dir``, ``file:///x.whl``).
Kind = Literal["named", "direct", "local"]
#: What a direct or local requirement points at (``None`` for a named one).
Archive = Literal["wheel", "sdist", "directory", "other"]

#: The PEP 508 marker variables: a marker environment must give them all, or packaging would fill the gaps from
#: the interpreter running wheelfit, which is not the one being installed into.
MARKER_KEYS: tuple[str, ...] = (
    "implementation_name",
    "implementation_version",
    "os_name",
    "platform_machine",
    "platform_python_implementation",
    "platform_release",
    "platform_system",
    "platform_version",
    "python_full_version",
    "python_version",
    "sys_platform",
)


def cut(text: str, limit: int = 100) -> str:
    """``text`` for a one-line message, cut short when a hostile file makes it huge."""
    return text if len(text) <= limit else text[:limit] + "..."


def clip(text: str) -> str:
    """``text`` quoted (``repr``) and cut short for a one-line message."""
    return repr(cut(text))


@dataclass(frozen=True)
class Origin:
    """Where a requirement or option was written: ``file`` and ``line`` (1-based, the first physical line of a
    continued line), or the command line (``file is None``)."""

    file: str | None = None
    line: int = 0

    def __str__(self) -> str:
        return "command line" if self.file is None else f"{self.file}:{self.line}"


@dataclass(frozen=True)
class ParsedRequirement:
    """One requirement as the user wrote it, classified.

    ``spec`` is what to hand pip or uv: the text as written for named requirements and direct references, and an
    absolute form for local paths (``torch @ file:///abs/torch-2.9.0-...whl``, or the absolute directory), so the
    backend installs the file wheelfit read whatever its working directory.
    """

    kind: Kind
    #: The requirement as written (``${VAR}`` expanded, per-requirement options such as ``--hash`` removed).
    text: str
    spec: str
    origin: Origin
    #: Canonical name; ``None`` only for a source path or URL whose name cannot be known without building it.
    name: str | None = None
    #: The packaging requirement: named, direct, and local wheels (as ``name @ file:///...``); else ``None``.
    requirement: Requirement | None = None
    url: str | None = None
    #: Absolute local path: local requirements and ``file:`` direct references.
    path: str | None = None
    #: The version in a wheel's (or sdist's) file name.
    version: Version | None = None
    archive: Archive | None = None
    extras: frozenset[str] = frozenset()
    marker: Marker | None = None
    #: ``--hash`` values and a URL's ``#sha256=`` fragment, as ``algorithm:hexdigest``.
    hashes: tuple[str, ...] = ()

    def applies_to(self, markers: Mapping[str, str]) -> bool:
        """Whether this requirement's marker holds in the environment whose marker values are ``markers`` (all of
        :data:`MARKER_KEYS`); true without a marker."""
        if self.marker is None:
            return True
        missing = [k for k in MARKER_KEYS if k not in markers]
        if missing:
            raise ValueError(f"marker environment lacks {', '.join(missing)}: pass the target's full environment")
        try:
            return self.marker.evaluate({**markers, "extra": ""})
        except (UndefinedComparison, UndefinedEnvironmentName) as exc:
            raise UsageError(
                f"{self.origin}: cannot evaluate the marker of {clip(self.text)}: {first_line(exc)}; fix the marker"
            ) from exc

    def line(self) -> str:
        """This requirement as one requirements-file line for the backend: ``spec`` and its ``--hash`` options."""
        return " ".join([self.spec, *(f"--hash={h}" for h in self.hashes)])


@dataclass(frozen=True)
class IndexOptions:
    """The index options typed on the command line (pip's ``--index-url``, ``--extra-index-url``,
    ``--find-links``, ``--pre``, ``--no-index``); a requirement file's lines add to them."""

    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    pre: bool = False
    no_index: bool = False


@dataclass(frozen=True)
class RequirementSet:
    """Requirements, constraints and index options from the command line and requirement files.

    Options keep pip's meaning: ``index_url`` replaces the default index, ``extra_index_urls`` and ``find_links``
    add to it, ``no_index`` ignores every index (``find_links`` only), ``pre`` admits pre-releases.
    """

    requirements: tuple[ParsedRequirement, ...] = ()
    #: ``-c`` entries: named requirements that narrow a choice and are never installed themselves.
    constraints: tuple[ParsedRequirement, ...] = ()
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    #: URLs, or absolute paths (a relative path in a file is resolved against that file's directory).
    find_links: tuple[str, ...] = ()
    pre: bool = False
    no_index: bool = False
    #: Every file read, as written or joined to its includer's directory, in reading order.
    sources: tuple[str, ...] = ()

    def merge(self, later: RequirementSet) -> RequirementSet:
        """Both sets, ``later``'s entries after this one's; ``later``'s ``index_url`` wins when it has one (as a
        later ``--index-url`` line wins in pip). Merge the command line last so that what was typed wins."""
        return RequirementSet(
            requirements=self.requirements + later.requirements,
            constraints=self.constraints + later.constraints,
            index_url=later.index_url if later.index_url is not None else self.index_url,
            extra_index_urls=_unique(self.extra_index_urls + later.extra_index_urls),
            find_links=_unique(self.find_links + later.find_links),
            pre=self.pre or later.pre,
            no_index=self.no_index or later.no_index,
            sources=self.sources + later.sources,
        )

    def names(self) -> tuple[str, ...]:
        """Canonical names of the requirements (not the constraints), first occurrence first; unnamed source
        paths have none."""
        return _unique(tuple(r.name for r in self.requirements if r.name is not None))

    def split(
        self, is_family: Callable[[str], bool]
    ) -> tuple[tuple[ParsedRequirement, ...], tuple[ParsedRequirement, ...]]:
        """(requirements ``is_family`` claims, the others). A claimed name must come as a built wheel: a source
        archive, a directory or a VCS URL for it is a :class:`UsageError`; for other names they pass through."""
        family: list[ParsedRequirement] = []
        other: list[ParsedRequirement] = []
        for req in self.requirements:
            if req.name is None or not is_family(req.name):
                other.append(req)
                continue
            if req.archive not in (None, "wheel"):
                what = {"sdist": "a source archive", "directory": "a directory"}.get(str(req.archive), "not a wheel")
                raise UsageError(
                    f"{req.origin}: {clip(req.text)} is {what}; wheelfit installs {req.name} only from a built wheel: "
                    f"give the .whl file or just the name"
                )
            family.append(req)
        return tuple(family), tuple(other)

    def for_environment(self, markers: Mapping[str, str]) -> RequirementSet:
        """This set without the requirements and constraints whose marker is false for ``markers`` (the target
        environment's marker values, all of :data:`MARKER_KEYS`)."""
        return replace(
            self,
            requirements=tuple(r for r in self.requirements if r.applies_to(markers)),
            constraints=tuple(c for c in self.constraints if c.applies_to(markers)),
        )


def _unique(items: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
