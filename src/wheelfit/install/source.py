"""The variant index as a :class:`~wheelfit.install.gather.WheelSource`, on the index client and the
downloader (:mod:`wheelfit.index`, :mod:`wheelfit.fetch`): cached pages, verified and cached downloads; and
:class:`LocalWheels`, the wheels already on disk (a local mirror's, a wheelhouse's)."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..fetch.cache import Cache, fingerprint
from ..fetch.download import Downloader, DownloadRequest
from ..fetch.errors import HashMismatchError
from ..fetch.hashes import first_mismatch, hash_file
from ..index.client import IndexClient
from ..index.errors import ProjectNotFoundError
from ..index.links import FileLink
from ..index.local import is_local, local_path
from ..variants.errors import VariantError
from ..variants.filename import parse_wheel_name
from ..variants.markers import VariantEnvironment
from ..variants.plain import plain_filename
from .errors import InstallError, WheelNotFoundError
from .gather import LocalWheel
from .plain_wheel import plain_wheel

__all__ = ["IndexSource", "LocalWheels", "VariantSource"]


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
        local = next((f for f in files if is_local(f.url)), None)
        if local is not None:  # taken by LocalWheels (gather_family's ``local``) before it gets here
            raise InstallError(f"{local.filename} is a file on disk ({local.url}); install it with LocalWheels")
        return [result.path for result in self.downloader.fetch_all([_request(f) for f in files])]

    def has_copy(self, file: FileLink) -> bool:
        """Whether the download cache has ``file`` already (a hint: :meth:`fetch_all` verifies it)."""
        return not is_local(file.url) and self.downloader.has_copy(_request(file))


def _request(file: FileLink) -> DownloadRequest:
    return DownloadRequest(file.url, file.filename, dict(file.hashes), size=file.size, require_hash=True)


@dataclass
class VariantSource:
    """Variant mode's wheels, as a source an installer without variant support can take.

    The plan's wheel is offered under its plain name and fetched as the plain copy (markers evaluated for the
    chosen variant, :mod:`wheelfit.install.plain_wheel`). The torch-family packages it depends on (triton, ...)
    come from the variant index, or, when it has none, from the PyTorch index the label was built from
    (``cuda12.8`` -> ``cu128``): the same publisher, never the default index. Labelled wheels of other projects
    are not offered: their variant was not chosen.
    """

    variants: IndexSource
    pinned: FileLink
    variant: VariantEnvironment
    fallback: IndexSource | None = None
    _plain: FileLink | None = None

    @property
    def index_url(self) -> str:
        """Where torch-family wheels are looked for, as messages name it."""
        if self.fallback is None:
            return self.variants.index_url
        return f"{self.variants.index_url}, then {self.fallback.index_url}"

    def files(self, project: str) -> Sequence[FileLink]:
        pinned = parse_wheel_name(self.pinned.filename)
        if project == pinned.name:
            return (self._plain_link(),)
        links = [link for link in self.variants.files(project) if not _labelled(link.filename)]
        if not links and self.fallback is not None:
            return self.fallback.files(project)
        return links

    def fetch_all(self, files: Sequence[FileLink]) -> list[Path]:
        plain = self._plain_link()
        wanted = [self.pinned if f == plain else f for f in files]
        paths = self.variants.fetch_all(wanted)
        return [
            plain_wheel(path, self.pinned.filename, self._sha256(), self.variant) if f == plain else path
            for f, path in zip(files, paths, strict=True)
        ]

    def _plain_link(self) -> FileLink:
        """The pinned link as the index page lists it (with its hashes), under the plain file name."""
        if self._plain is None:
            pinned = parse_wheel_name(self.pinned.filename)
            listed = next((f for f in self.variants.files(pinned.name) if f.filename == self.pinned.filename), None)
            if listed is None:
                raise WheelNotFoundError(
                    f"{self.pinned.filename} is no longer on {self.variants.index_url}; plan again"
                )
            self.pinned = listed
            self._plain = replace(listed, filename=plain_filename(pinned))
        return self._plain

    def _sha256(self) -> str:
        return self.pinned.hashes.get("sha256", "")


def _labelled(filename: str) -> bool:
    try:
        return parse_wheel_name(filename).label is not None
    except VariantError:
        return False


@dataclass
class LocalWheels:
    """Torch-family wheels already on this machine: a local index's files, and a wheelhouse's (``--find-links``)
    file that has exactly the name of the one chosen (any other wheel there is never used for torch-family).

    Each is hashed (once per version of the file: the cache remembers its fingerprint, as for downloads) and
    checked against the sha256 its index gives, if any, then linked into the cache (a hard link, else a
    symbolic one) so that nothing, not even the archive check's memo, is ever written beside the original.
    """

    cache: Cache
    wheelhouses: Sequence[Path] = ()
    _listed: dict[str, Path] | None = None

    def take(self, link: FileLink) -> LocalWheel | None:
        found = self._wheelhouse_file(link.filename)
        if found is not None:
            where = f"the wheelhouse copy {found} differs from the file the index lists"
            path, wheelhouse = found, str(found.parent)
        elif is_local(link.url):
            path = local_path(link.url)
            wheelhouse, where = None, f"{path} does not match its index page"
        else:
            return None
        linked, digests = self._link(path, link.filename, set(link.hashes))
        mismatch = first_mismatch(link.hashes, digests)
        if mismatch is not None:
            name, expected, got = mismatch
            raise HashMismatchError(
                f"{link.filename}: {name} mismatch: expected {expected}, got {got} ({where}); nothing was installed"
            )
        taken = replace(link, url=path.resolve().as_uri(), hashes={**link.hashes, **digests})
        return LocalWheel(linked, taken, wheelhouse)

    def _wheelhouse_file(self, filename: str) -> Path | None:
        if self._listed is None:
            self._listed = {}
            for directory in reversed(self.wheelhouses):  # the first directory that has a name wins
                self._listed.update((p.name, p) for p in directory.iterdir() if p.name.endswith(".whl"))
        return self._listed.get(filename)

    def _link(self, path: Path, filename: str, algorithms: set[str]) -> tuple[Path, dict[str, str]]:
        """``path`` linked into the cache under ``filename``, and its digests (computed unless unchanged)."""
        try:
            regular = stat.S_ISREG(path.stat().st_mode)
        except OSError as exc:
            raise WheelNotFoundError(f"{filename}: cannot read {path} ({exc.strerror or exc}); plan again") from None
        if not regular:
            raise WheelNotFoundError(f"{filename}: {path} is not a regular file; fix the mirror or the wheelhouse")
        url = path.resolve().as_uri()
        linked = self.cache.entry_dir(url) / filename
        with self.cache.lock(url):
            if not (linked.exists() and os.path.samefile(linked, path)):
                spare = linked.with_name(f".{filename}.link")
                spare.unlink(missing_ok=True)
                try:
                    os.link(path, spare)
                except OSError:  # another file system, or protected_hardlinks: refer to it in place
                    os.symlink(path.resolve(), spare)
                os.replace(spare, linked)
            known = self.cache.recorded(url) or {}
            hashes, same = known.get("hashes"), known.get("fingerprint") == fingerprint(linked)
            if isinstance(hashes, dict) and same and algorithms <= set(hashes):
                return linked, {str(k): str(v) for k, v in hashes.items()}
            digests = hash_file(linked, algorithms)
            self.cache.record(url, linked, digests)
        return linked, digests
