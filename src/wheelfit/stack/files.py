"""The plan's extension files as the backend takes them: a URL and the sha256 it must have.

A listing that gives the sha256 (a GitHub asset's digest, a page's ``#sha256=``) is taken at its word and the
backend checks the download; a file in a ``--find-links`` folder is hashed where it lies; one listed without a
hash (data.pyg.org's pages give none) is downloaded once over verified TLS, hashed, and installed from that copy,
so what the backend installs is the very file the plan chose.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..fetch.hashes import hash_file
from ..index.local import is_local, local_path
from ..install.errors import InstallError
from ..install.install_set import FamilyFile
from ..install.sources import WheelStoreLike
from ..resolve.plan import PackagePin
from ..simple.errors import OfflineError
from ..simple.links import FileLink

__all__ = ["extension_files"]


def extension_files(
    pins: Sequence[PackagePin], store: WheelStoreLike | None, *, keep_urls: bool = False
) -> list[FamilyFile]:
    """Each extension pin (:attr:`~wheelfit.resolve.plan.Plan.extensions`) as an install-set file. ``keep_urls``
    (a lock): a file downloaded to be hashed keeps its published URL, pinned at that hash."""
    out: list[FamilyFile] = []
    for pin in pins:
        if pin.filename is None or pin.url is None:  # pragma: no cover - the joint plan always sets both
            raise InstallError(f"{pin.name}: the plan names no file for it; plan again")
        link = FileLink(pin.filename, pin.url, {"sha256": pin.sha256} if pin.sha256 else {})
        where = pin.url.rsplit("/", 1)[0]
        if is_local(pin.url):
            path = local_path(pin.url)
            try:
                sha: str | None = hash_file(path)
            except OSError as exc:
                raise InstallError(f"{pin.filename}: cannot read it in {path.parent} ({exc.strerror or exc})") from None
            url = pin.url
        elif pin.sha256 is not None:
            url, sha = pin.url, pin.sha256
        else:
            if store is None:
                raise OfflineError(f"offline: {pin.filename} is listed without a sha256 and is not downloaded yet")
            path, sha = store.fetch(link, require_hash=False)
            url = pin.url if keep_urls else path.as_uri()
        out.append(FamilyFile(pin.name, pin.version, pin.filename, url, sha, None, where))
    return out
