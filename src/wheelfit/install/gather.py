"""Fetch the plan's torch-family wheels, and the torch-family wheels they depend on, from the variant index only.

This is the dependency-confusion guard by construction: every torch-family package the install needs is a file
wheelfit downloaded from the variant index and checked (sha256, archive safety) itself; installers are handed
those files, never a name they could look up on another index. A wheel already on this machine (a local
index's file, or the very file the plan chose in a ``--find-links`` wheelhouse) is taken from there instead,
with the same checks (:class:`LocalFiles`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol

from packaging.requirements import Requirement
from packaging.tags import Tag, parse_tag
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..index.errors import NoMatchingFileError
from ..index.links import FileLink
from ..index.select import Selection, select_wheel
from .errors import InstallError, WheelNotFoundError
from .family import is_torch_family
from .target_env import TargetEnv
from .wheelfile import checked_wheel

__all__ = ["FetchedWheel", "LocalFiles", "LocalWheel", "WheelSource", "agree", "gather_family", "select_family_wheel"]


class WheelSource(Protocol):
    """One index (the chosen variant's) and a verified download."""

    @property
    def index_url(self) -> str: ...

    def files(self, project: str) -> Sequence[FileLink]:
        """Every file the index lists for ``project`` (an empty list when it has no such project)."""
        ...

    def fetch_all(self, files: Sequence[FileLink]) -> list[Path]:
        """Local copies of ``files`` (fetched in parallel) whose sha256 matched the index; raise otherwise."""
        ...


@dataclass(frozen=True)
class LocalWheel:
    """A wheel taken from disk: its checked path, its link as taken (``file://`` URL, computed sha256), and the
    wheelhouse it came from (``None``: the local index's own file)."""

    path: Path
    link: FileLink
    wheelhouse: str | None = None


class LocalFiles(Protocol):
    """Wheels on this machine: a local index's files, and the plan's files found in a wheelhouse."""

    def take(self, link: FileLink) -> LocalWheel | None:
        """``link``'s file from disk (sha256 computed and checked against the link's), or None: download it."""
        ...


@dataclass(frozen=True)
class FetchedWheel:
    name: str
    version: Version
    file: FileLink
    path: Path
    #: The package whose metadata asked for this one; None for the plan's own pins.
    needed_by: str | None = None
    #: The ``--find-links`` directory the file was taken from instead of the index (same file name as planned).
    wheelhouse: str | None = None
    #: What choosing the file needs said (PEP 592: a yanked file taken for an exact pin).
    warnings: tuple[str, ...] = ()

    @property
    def requirement(self) -> str:
        """A direct reference no installer can satisfy from another index."""
        return f"{self.name} @ {self.path.resolve().as_uri()}"


def gather_family(
    pins: Sequence[Requirement],
    source: WheelSource,
    env: TargetEnv,
    local: LocalFiles | None = None,
    keep: Mapping[str, str] | None = None,
    opened: Callable[[str, Path], None] | None = None,
) -> list[FetchedWheel]:
    """Fetch ``pins`` and their torch-family dependencies (markers evaluated for ``env``) from ``source``, or
    take the chosen files from disk when ``local`` has them. A dependency on a package of ``keep`` (installed,
    name -> version, to stay as it is: PyPI's torch that runs here) that its version meets is not fetched.
    ``opened(name, path)``: a wheel's archive passed every check but its member hashes, which run next
    (:func:`~.wheelfile.checked_wheel`).

    In waves: every wheel a wave needs is downloaded in parallel, then their metadata names the next wave
    (torch and torchvision together, then triton)."""
    chosen: dict[str, FetchedWheel] = {}
    warned: dict[str, tuple[str, ...]] = {}
    queue: list[tuple[Requirement, str | None]] = [(p, None) for p in pins]
    python = env.markers.get("python_full_version", env.python)
    tags: list[Tag] = [t for text in env.tags for t in parse_tag(text)]
    while queue:
        wave: dict[str, tuple[Requirement, str | None, FileLink]] = {}
        later: list[tuple[Requirement, str | None]] = []
        for req, parent in queue:
            name = canonicalize_name(req.name)
            if name in wave:
                later.append((req, parent))  # checked against the chosen version once this wave is in
            elif name in chosen:
                agree(req, parent, chosen[name].name, chosen[name].version)
            elif (
                parent is not None
                and name in (keep or {})
                and req.specifier.contains((keep or {})[name], prereleases=True)
            ):
                continue  # installed, and kept as it is
            else:
                selection = select_family_wheel(req, parent, source, env, tags, python)
                wave[name] = (req, parent, selection.link)
                warned[name] = selection.warnings
        on_disk = {name: _take(local, link) for name, (_req, _parent, link) in wave.items()}
        remote = [name for name, taken in on_disk.items() if taken is None]
        paths = dict(zip(remote, source.fetch_all([wave[name][2] for name in remote]), strict=True))
        queue = later
        for wanted, (_req, parent, link) in wave.items():
            taken = on_disk[wanted]
            path = paths[wanted] if taken is None else taken.path
            link = link if taken is None else taken.link
            info = checked_wheel(path, None if opened is None else partial(opened, wanted, path))
            if info.name != wanted:
                raise InstallError(
                    f"{link.filename} from {source.index_url} is {info.name}, not {wanted}; the index is wrong"
                )
            chosen[wanted] = FetchedWheel(
                wanted, info.version, link, path, parent, None if taken is None else taken.wheelhouse,
                warned.get(wanted, ()),
            )  # fmt: skip
            for dep in info.requires:
                if not is_torch_family(dep.name):
                    continue  # ordinary dependencies come from the default index
                if dep.marker is not None and not dep.marker.evaluate({**env.markers, "extra": ""}):
                    continue
                queue.append((dep, f"{wanted} {info.version}"))
    return list(chosen.values())


def _take(local: LocalFiles | None, link: FileLink) -> LocalWheel | None:
    return None if local is None else local.take(link)


def agree(req: Requirement, parent: str | None, name: str, version: Version) -> None:
    """A second requirement on a package already chosen must admit the chosen version (no second pick)."""
    if not req.specifier.contains(version, prereleases=True):
        raise InstallError(
            f"{parent or 'the plan'} needs {req}, but {name} {version} was already chosen; "
            "pin a torch version whose companions agree"
        )


def select_family_wheel(
    req: Requirement, parent: str | None, source: WheelSource, env: TargetEnv, tags: Sequence[Tag], python: str
) -> Selection:
    """The file of ``source`` for ``req`` (needed by ``parent``) on ``env``; the one error naming the index."""
    name = canonicalize_name(req.name)
    listed = source.files(name)
    try:
        return select_wheel(listed, req, tags=tags, python_version=python)
    except NoMatchingFileError as exc:
        why = f"{name} is not on it" if not listed else str(exc)
        needer = f" (needed by {parent})" if parent else ""
        raise WheelNotFoundError(
            f"{req}{needer}: {why} ({source.index_url}, Python {env.python}, {env.tags[0] if env.tags else '?'}); "
            "check --pytorch-index or pick another torch version"
        ) from None
