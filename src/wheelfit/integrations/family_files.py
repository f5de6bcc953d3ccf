"""The exact torch-family files a lock (or a pip file) pins for one target: the install set's walk
(:func:`wheelfit.app.install.planned_files`) for a machine that is not this one (a ``--target``), keeping the index's
URLs, every file with its sha256."""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name

from ..errors import WheelfitError
from ..install.install_set import FamilyFile, Platform
from ..kinds import Mode
from ..simple.links import FileLink

if TYPE_CHECKING:
    from ..app.session import Network
    from ..install.sources import IndexPages
    from ..resolve import Machine
    from ..resolve.plan import Plan

__all__ = ["FamilyFile", "LockError", "locked_files"]


class LockError(WheelfitError):
    """A lock cannot be written as asked (a file without a hash, a torch-family name from elsewhere)."""


def locked_files(plan: Plan, found: Machine, network: Network) -> tuple[FamilyFile, ...]:
    """The files to lock for ``plan`` on ``found``, each with the index's sha256."""
    from ..app.install import planned_files
    from ..install.sources import IndexPages

    if plan.mode is Mode.VARIANT:
        files: list[FamilyFile] = [_variant_file(plan, IndexPages(plan.index_url, network.index))]
    else:
        source = IndexPages(plan.index_url, network.index)
        platform = Platform(tuple(found.tags), found.markers, found.python)
        files = planned_files(plan, source, platform, network, for_lock=True)
    for f in files:
        if not f.sha256:
            raise LockError(
                f"{f.filename} on {f.index_url} has no sha256 on the index; a lock must pin hashes: "
                "use an index (or mirror) that lists them"
            )
    return tuple(files)


def _variant_file(plan: Plan, source: IndexPages) -> FamilyFile:
    """Variant mode: the one wheel the plan chose, listed on the variant index with its hash."""
    pin = plan.packages[0]
    listed = next((f for f in source.files(canonicalize_name(pin.name)) if f.filename == pin.filename), None)
    if listed is None:
        listed = FileLink(pin.filename or "", pin.url or "")
    return FamilyFile(
        canonicalize_name(pin.name), pin.version, listed.filename, listed.url, listed.hashes.get("sha256"),
        listed.size, plan.index_url,
    )  # fmt: skip
