"""The exact torch-family files a lock pins for one target: the plan's pins and the torch-family packages they
depend on, each a file of the plan's index with its sha256.

The walk is :func:`wheelfit.install.gather.gather_family`'s (same selection, same agreement rule), but for a
machine that is not this one (a ``--target``) and without installing: dependencies are read from the index's
PEP 658 metadata file when it has one, else from the wheel's own METADATA after a verified, cached download.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.parser import BytesParser
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..errors import WheelfitError
from ..index.links import FileLink
from ..install.family import is_torch_family
from ..install.gather import WheelSource, agree, select_family_wheel
from ..install.target_env import TargetEnv
from ..install.wheelfile import checked_wheel
from ..resolve import Machine
from ..resolve.plan import Plan

__all__ = ["FamilyFile", "LockError", "MetadataReader", "family_files", "machine_env"]


class LockError(WheelfitError):
    """A lock cannot be written as asked (a file without a hash, a torch-family name from elsewhere)."""


@dataclass(frozen=True)
class FamilyFile:
    """One torch-family file a lock pins."""

    name: str
    version: str
    filename: str
    url: str
    sha256: str
    size: int | None
    #: The index page the file was listed on (the plan's variant index).
    index_url: str
    #: The package whose metadata asked for this one (``torch 2.14.1+cu126``); None for the plan's own pins.
    needed_by: str | None = None

    @property
    def direct_reference(self) -> str:
        """``name @ url#sha256=...``: what uv and pip take as this very file, from nowhere else."""
        return f"{self.name} @ {self.url}#sha256={self.sha256}"


def machine_env(found: Machine) -> TargetEnv:
    """The target machine as the environment the family walk selects for (tags, markers, Python)."""
    return TargetEnv(
        executable="", prefix=Path(), python=found.python, tags=tuple(str(t) for t in found.tags),
        markers=dict(found.markers), install_dirs=(), installed={},
    )  # fmt: skip


def family_files(
    plan: Plan, found: Machine, source: WheelSource, requires: Callable[[FileLink], Sequence[Requirement]]
) -> list[FamilyFile]:
    """The files to lock for ``plan`` on ``found``: ``source`` is the plan's index, ``requires`` reads a file's
    Requires-Dist (:class:`MetadataReader`)."""
    if plan.mode == "variant":
        return [_variant_file(plan, source)]
    env = machine_env(found)
    tags: list[Tag] = list(found.tags)
    python = env.markers.get("python_full_version", env.python)
    chosen: dict[str, FamilyFile] = {}
    queue: list[tuple[Requirement, str | None]] = [(Requirement(p.requirement), None) for p in plan.packages]
    while queue:
        req, parent = queue.pop(0)
        name = canonicalize_name(req.name)
        if name in chosen:
            agree(req, parent, name, Version(chosen[name].version))
            continue
        selection = select_family_wheel(req, parent, source, env, tags, python)
        link = selection.link
        chosen[name] = _record(name, str(selection.wheel.version), link, source.index_url, parent)
        for dep in requires(link):
            if not is_torch_family(dep.name):
                continue  # ordinary dependencies: uv resolves them from the default index
            if dep.marker is not None and not dep.marker.evaluate({**env.markers, "extra": ""}):
                continue
            queue.append((dep, f"{name} {selection.wheel.version}"))
    return list(chosen.values())


class MetadataReader:
    """A file's Requires-Dist: from the index's PEP 658 file when advertised (no multi-GB download), else from
    the wheel's own METADATA, downloaded and checked against the index's sha256 (cached for the install)."""

    def __init__(self, core_metadata: Callable[[FileLink], bytes], source: WheelSource) -> None:
        self._core = core_metadata
        self._source = source

    def __call__(self, link: FileLink) -> Sequence[Requirement]:
        if link.core_metadata is not False:
            return _requires(self._core(link))
        (path,) = self._source.fetch_all([link])
        return checked_wheel(path).requires


def _record(name: str, version: str, link: FileLink, index_url: str, parent: str | None) -> FamilyFile:
    sha = link.hashes.get("sha256")
    if not sha:
        raise LockError(
            f"{link.filename} on {index_url} has no sha256 on the index; a lock must pin hashes: "
            "use an index (or mirror) that lists them"
        )
    return FamilyFile(name, version, link.filename, link.url, sha, link.size, index_url, parent)


def _variant_file(plan: Plan, source: WheelSource) -> FamilyFile:
    """Variant mode: the one wheel the plan chose, listed on the variant index with its hash."""
    pin = plan.packages[0]
    listed = next((f for f in source.files(canonicalize_name(pin.name)) if f.filename == pin.filename), None)
    if listed is None:
        listed = FileLink(pin.filename or "", pin.url or "")
    return _record(canonicalize_name(pin.name), pin.version, listed, plan.index_url, None)


def _requires(raw: bytes) -> Sequence[Requirement]:
    msg = BytesParser().parsebytes(raw, headersonly=True)
    out: list[Requirement] = []
    for text in msg.get_all("Requires-Dist") or []:
        try:
            out.append(Requirement(text))
        except InvalidRequirement:
            raise LockError(f"Requires-Dist {text!r} cannot be read; the index's metadata is broken") from None
    return out
