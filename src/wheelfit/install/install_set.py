"""The resolved install set: what a plan installs, as the backend is to be told it.

For every torch-family package, the planned file's URL and sha256 on the chosen index (or the file on disk);
the constraints that make every other torch-family name unresolvable on the default index (a same-named package
there can never win); the user's other requirements as they gave them. ``wheelfit install`` hands it to uv or
pip, which download, check the hashes and install; ``wheelfit lock`` writes it, with the closure uv resolves for
the rest, to a file. :func:`family_files` is the one walk both use: the plan's pins and the torch-family packages
they depend on (torch's Triton; from ROCm 7.14 on, the ``rocm`` packages), read from each file's metadata without
downloading the wheel where the index serves PEP 658 metadata (download.pytorch.org does).
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from email.parser import BytesParser
from pathlib import Path
from typing import Protocol

from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ..errors import first_line
from ..family import TORCH_FAMILY, is_torch_family
from ..simple.errors import NoMatchingFileError
from ..simple.links import FileLink
from ..simple.select import Selection, select_wheel
from .errors import InstallError, WheelNotFoundError

__all__ = [
    "FamilyFile",
    "FamilySource",
    "InstallSet",
    "MetadataSource",
    "Platform",
    "WheelMetadata",
    "agree",
    "constraints_text",
    "family_files",
    "parse_metadata",
    "read_wheel_metadata",
]

#: METADATA of a real wheel is a few kB; a torch wheel's under 100 kB.
_MAX_METADATA = 8 * 1024 * 1024


@dataclass(frozen=True)
class FamilyFile:
    """One torch-family file of the install set."""

    name: str
    version: str
    filename: str
    #: Where the backend takes it: the index's URL, or a ``file:`` URL (a local mirror's file, the plan's file
    #: in a wheelhouse, a wheel wheelfit had to open first).
    url: str
    #: The index's sha256, which the backend checks; ``None`` only for a local mirror's file listed without one.
    sha256: str | None
    size: int | None
    #: The index page the file was listed on (the plan's variant index, or ``the files given``).
    index_url: str
    #: The package whose metadata asked for this one (``torch 2.14.1+cu126``); None for the plan's own pins.
    needed_by: str | None = None
    #: The ``--find-links`` directory the file is taken from instead of the index (same file name as planned).
    wheelhouse: str | None = None
    #: What choosing the file needs said (PEP 592: a yanked file taken for an exact pin).
    warnings: tuple[str, ...] = ()

    @property
    def direct_reference(self) -> str:
        """``name @ url#sha256=...``: what uv and pip take as this very file, from nowhere else, hash checked."""
        return f"{self.name} @ {self.url}" + (f"#sha256={self.sha256}" if self.sha256 else "")

    def requirement(self, extras: Sequence[str] = ()) -> str:
        """:attr:`direct_reference`, with the extras the user asked for on it (``torch[opt-einsum] @ ...``)."""
        if not extras:
            return self.direct_reference
        return f"{self.name}[{','.join(sorted(extras))}]" + self.direct_reference[len(self.name) :]


@dataclass(frozen=True)
class WheelMetadata:
    name: str
    version: Version
    requires: tuple[Requirement, ...]
    #: The link as the backend should take it: a wheel that had to be downloaded to be read is taken from there.
    link: FileLink


class FamilySource(Protocol):
    """The index a plan's torch-family files are chosen from."""

    @property
    def index_url(self) -> str: ...

    def files(self, project: str) -> Sequence[FileLink]:
        """Every file the index lists for ``project`` (an empty list when it has no such project)."""
        ...


class MetadataSource(Protocol):
    def metadata(self, link: FileLink) -> WheelMetadata:
        """``link``'s name, version and Requires-Dist (PEP 658 file, the wheel on disk, or a checked download)."""
        ...


@dataclass(frozen=True)
class Platform:
    """What a file is chosen for: the target's tags (most preferred first), markers and Python."""

    tags: tuple[Tag, ...]
    markers: Mapping[str, str]
    python: str

    @property
    def full_python(self) -> str:
        return self.markers.get("python_full_version", self.python)


def family_files(
    pins: Sequence[Requirement],
    source: FamilySource,
    reader: MetadataSource,
    platform: Platform,
    *,
    keep: Mapping[str, str] | None = None,
    wheelhouse: Callable[[str], Path | None] | None = None,
) -> list[FamilyFile]:
    """``pins`` and the torch-family packages they depend on (markers evaluated for ``platform`` and the extras
    each is asked with: a ROCm 7.14+ torch's ``rocm[device-all,libraries]``), each the file of ``source`` chosen
    for it. A dependency on a package of ``keep`` (installed, name -> version, to stay as it is) that its version
    meets is left to the backend. ``wheelhouse(filename)``: the planned file in a ``--find-links`` directory, taken
    instead of the index's URL (the index's sha256 still checked)."""
    chosen: dict[str, FamilyFile] = {}
    #: Each chosen package's Requires-Dist and the extras whose dependencies were queued ("" for none asked).
    requires: dict[str, tuple[Requirement, ...]] = {}
    followed: dict[str, set[str]] = {}
    queue: list[tuple[Requirement, str | None]] = [(p, None) for p in pins]

    def follow(name: str, extras: set[str]) -> None:
        """Queue the torch-family dependencies of ``name`` for ``extras`` not followed yet: torch asks for
        ``rocm[device-all,libraries]``, and those extras' packages must come from this index too."""
        done, new = followed[name], extras - followed[name]
        followed[name] = done | new
        parent = f"{name} {chosen[name].version}"
        for dep in requires[name]:
            if is_torch_family(dep.name) and _holds(dep, new, platform) and not _holds(dep, done, platform):
                queue.append((dep, parent))  # ordinary dependencies come from the default index

    while queue:
        req, parent = queue.pop(0)
        name = canonicalize_name(req.name)
        wanted = {"", *(canonicalize_name(e) for e in req.extras)}
        if name in chosen:
            agree(req, parent, name, Version(chosen[name].version))
            follow(name, wanted)
            continue
        kept = (keep or {}).get(name)
        if parent is not None and kept is not None and req.specifier.contains(kept, prereleases=True):
            continue  # installed, and kept as it is
        selection = _select(req, parent, source, platform)
        link = selection.link
        house = wheelhouse(link.filename) if wheelhouse is not None else None
        if house is not None:
            link = FileLink(link.filename, house.resolve().as_uri(), link.hashes, size=link.size)
        meta = reader.metadata(link)
        if canonicalize_name(meta.name) != name:
            raise InstallError(
                f"{link.filename} from {source.index_url} is {meta.name}, not {name}; the index is wrong"
            )
        link = meta.link
        chosen[name] = FamilyFile(
            name, str(meta.version), link.filename, link.url, link.hashes.get("sha256"), link.size,
            source.index_url, parent, None if house is None else str(house.parent), selection.warnings,
        )  # fmt: skip
        requires[name], followed[name] = meta.requires, set()
        follow(name, wanted)
    return list(chosen.values())


def _holds(dep: Requirement, extras: set[str], platform: Platform) -> bool:
    """``dep`` applies to ``platform`` when any of ``extras`` ("" for none) is asked for."""
    if dep.marker is None:
        return bool(extras)
    return any(dep.marker.evaluate({**platform.markers, "extra": extra}) for extra in sorted(extras))


def agree(req: Requirement, parent: str | None, name: str, version: Version) -> None:
    """A second requirement on a package already chosen must admit the chosen version (no second pick)."""
    if not req.specifier.contains(version, prereleases=True):
        raise InstallError(
            f"{parent or 'the plan'} needs {req}, but {name} {version} was already chosen; "
            "pin a torch version whose companions agree"
        )


def _select(req: Requirement, parent: str | None, source: FamilySource, platform: Platform) -> Selection:
    name = canonicalize_name(req.name)
    listed = source.files(name)
    try:
        return select_wheel(listed, req, tags=platform.tags, python_version=platform.full_python)
    except NoMatchingFileError as exc:
        why = f"{name} is not on it" if not listed else str(exc)
        needer = f" (needed by {parent})" if parent else ""
        tag = str(platform.tags[0]) if platform.tags else "?"
        raise WheelNotFoundError(
            f"{req}{needer}: {why} ({source.index_url}, Python {platform.python}, {tag}); "
            "check --pytorch-index or pick another torch version"
        ) from None


def parse_metadata(raw: bytes, link: FileLink) -> WheelMetadata:
    """Name, Version and Requires-Dist of a METADATA file (a PEP 658 file or the wheel's own)."""
    msg = BytesParser().parsebytes(raw, headersonly=True)
    name, version = str(msg.get("Name") or ""), str(msg.get("Version") or "")
    try:
        parsed = Version(version)
    except (InvalidVersion, ValueError):  # ValueError: a release number past int()'s 4300-digit limit
        raise InstallError(f"{link.filename}: its METADATA gives no readable Version ({version[:80]!r})") from None
    requires: list[Requirement] = []
    for text in msg.get_all("Requires-Dist") or []:
        try:
            requires.append(Requirement(str(text)))
        except InvalidRequirement as exc:
            why = first_line(exc)
            raise InstallError(f"{link.filename}: Requires-Dist {str(text)[:200]!r} cannot be read ({why})") from None
    return WheelMetadata(name, parsed, tuple(requires), link)


def read_wheel_metadata(path: Path, filename: str) -> bytes:
    """The ``*.dist-info/METADATA`` member of the wheel at ``path`` (exactly one, of a sane size)."""
    try:
        with zipfile.ZipFile(path) as archive:
            found = [i for i in archive.infolist() if _is_metadata(i.filename)]
            if len(found) != 1:
                raise InstallError(f"{filename}: has {len(found)} .dist-info/METADATA files, a wheel has exactly one")
            if found[0].file_size > _MAX_METADATA:
                raise InstallError(f"{filename}: its METADATA is {found[0].file_size} bytes, not a wheel's")
            return archive.read(found[0])
    except (zipfile.BadZipFile, OSError, RuntimeError, ValueError, EOFError) as exc:
        raise InstallError(f"{filename} is not a readable wheel ({first_line(exc)})") from None


def _is_metadata(member: str) -> bool:
    return member.count("/") == 1 and member.endswith(".dist-info/METADATA")


def constraints_text(blocked: Sequence[str], kept: Mapping[str, str] | None = None) -> str:
    """``name<0`` matches no version: a dependency on a blocked name fails to resolve instead of reaching the
    default index. A ``kept`` name (installed already, not in the plan) is held at its installed version, which
    the installer finds in the environment and never looks up."""
    lines = ["# written by wheelfit: torch-family packages come only from the variant index"]
    lines += [f"{name}<0" for name in sorted(blocked)]
    lines += [f"{name}=={version}" for name, version in sorted((kept or {}).items())]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class InstallSet:
    """Everything the backend is told: the torch family as files, the guard, and the rest as the user gave it."""

    family: tuple[FamilyFile, ...]
    #: The user's other requirements, as written (for the default index).
    others: tuple[str, ...] = ()
    #: The user's constraints on names that are not torch-family (``-c``), as lines of a constraints file.
    constraints: tuple[str, ...] = ()
    #: Torch-family names installed already and not in the set, held at their versions.
    kept: Mapping[str, str] = field(default_factory=dict)
    #: Extras asked for on a torch-family package: ``{"torch": ("opt-einsum",)}``.
    extras: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def blocked(self) -> tuple[str, ...]:
        """Every torch-family name neither in the set nor kept: unresolvable on every other index."""
        taken = {f.name for f in self.family} | set(self.kept)
        return tuple(sorted(n for n in TORCH_FAMILY if n not in taken))

    @property
    def requirements(self) -> tuple[str, ...]:
        return (*(f.requirement(self.extras.get(f.name, ())) for f in self.family), *self.others)

    def constraints_file(self, *, hash_checked: bool = False) -> str:
        """The guard and the user's constraints. In hash-checking mode every package installed is one of the
        requirements, pinned with its hash, so no dependency can reach another index: the ``<0`` guard, which
        uv refuses there (it wants ``==`` pins), is left out."""
        guard = constraints_text(() if hash_checked else self.blocked, self.kept)
        return guard + "".join(f"{c}\n" for c in self.constraints)
