"""Variant mode's I/O edge: read an index's ``{name}-{version}-variants.json`` files and the chosen wheel's METADATA.

A variant index (``https://download.pytorch.org/whl/variant/``) links the metadata files
from the project page beside the wheels (reference wheel-variants.md §2.7, §5.5). Reading
goes through :class:`~wheelfit.index.client.IndexClient` (pages, PEP 658 files) and the
shared HTTP edge; the deciding is :mod:`wheelfit.variants.choose`.
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from dataclasses import dataclass

import httpx
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..errors import WheelfitError
from ..fetch.download import Downloader, DownloadRequest
from ..fetch.hashes import bytes_mismatch
from ..fetch.http import RetryPolicy, get, status_error
from ..index.client import IndexClient, project_url
from ..index.errors import ProjectNotFoundError
from ..index.links import FileLink
from ..report import HardwareReport
from ..resolve.plan import Plan
from .choose import choose_variant, dependencies, metadata_file_version, target_tags, variant_plan
from .machine import marker_environment, supported_configs
from .metadata import VariantsMetadata, loads

__all__ = [
    "VariantIndex",
    "VariantIndexError",
    "plan_from_variant_index",
    "read_variant_index",
    "wheel_core_metadata",
]

#: Variant metadata is small (PyTorch's is under 5 kB); anything far larger is not one.
_MAX_BYTES = 8 * 1024 * 1024


class VariantIndexError(WheelfitError):
    """A variant index serves a metadata file that cannot be used (hash mismatch, too large, HTTP error)."""


@dataclass(frozen=True)
class VariantIndex:
    index_url: str
    page_url: str
    links: tuple[FileLink, ...]
    #: version -> (file name, parsed metadata), only for versions the specifier allows.
    metadata: Mapping[Version, tuple[str, VariantsMetadata]]


def read_variant_index(
    index: IndexClient,
    client: httpx.Client,
    index_url: str,
    project: str = "torch",
    specifier: SpecifierSet | None = None,
    retry: RetryPolicy | None = None,
) -> VariantIndex | None:
    """The project's page and its variants metadata; ``None`` when the index links no such file for it."""
    try:
        page = index.project_page(index_url, project)
    except ProjectNotFoundError:
        return None
    spec = specifier if specifier is not None else SpecifierSet()
    found: dict[Version, tuple[str, VariantsMetadata]] = {}
    for link in page.links:
        version = metadata_file_version(link.filename, project)
        if version is None or not spec.contains(version, prereleases=True):
            continue
        found[version] = (link.filename, loads(_fetch(client, link, retry or RetryPolicy()), link.filename))
    if not found:
        return None
    return VariantIndex(index_url.rstrip("/"), page.url, page.links, found)


def _fetch(client: httpx.Client, link: FileLink, retry: RetryPolicy) -> bytes:
    """A small file, checked against the page's hash when it gives one (it is optional, §2.7)."""
    response = get(client, link.url, {"Accept": "application/json, */*"}, retry)
    if response.status_code != 200:
        raise status_error(link.url, response)
    body = response.content
    if len(body) > _MAX_BYTES:
        raise VariantIndexError(f"{link.url}: larger than {_MAX_BYTES // 1024 // 1024} MiB, not variant metadata")
    mismatch = bytes_mismatch(link.hashes, body)
    if mismatch is not None:
        name, expected, actual = mismatch
        raise VariantIndexError(
            f"{link.filename}: {name} mismatch: the index page says {expected}, the file has {actual}; "
            "the variant index is inconsistent or tampered with"
        )
    return body


def wheel_core_metadata(index: IndexClient, link: FileLink, downloader: Downloader | None) -> bytes:
    """METADATA: the PEP 658 file when the page advertises one, else read from the downloaded wheel."""
    if link.core_metadata is not False:
        return index.core_metadata(link)
    if downloader is None:
        raise VariantIndexError(
            f"{link.filename}: the index serves no PEP 658 metadata file and downloads are off; "
            "its dependencies cannot be read"
        )
    result = downloader.fetch(DownloadRequest(link.url, link.filename, link.hashes, link.size))
    with zipfile.ZipFile(result.path) as zf:
        for name in zf.namelist():
            if name.count("/") == 1 and name.endswith(".dist-info/METADATA"):
                return zf.read(name)
    raise VariantIndexError(f"{link.filename}: the wheel has no .dist-info/METADATA; it is broken")


def plan_from_variant_index(
    report: HardwareReport,
    environ: Mapping[str, str],
    *,
    index: IndexClient,
    client: httpx.Client,
    index_url: str,
    specifier: SpecifierSet | None = None,
    downloader: Downloader | None = None,
    project: str = "torch",
) -> Plan | None:
    """Variant mode end to end; ``None`` when the index serves no variants metadata for ``project`` (fall back)."""
    found = read_variant_index(index, client, index_url, project, specifier)
    if found is None:
        return None
    environment = marker_environment(report)
    choice = choose_variant(
        found.links,
        found.metadata,
        supported_configs(report, environ),
        report,
        project=project,
        specifier=specifier or SpecifierSet(),
        tags=target_tags(report),
        environment=environment,
    )
    if choice is None:
        return None
    deps = dependencies(
        wheel_core_metadata(index, choice.link, downloader), environment, choice.variant, f"{choice.link.filename}"
    )
    return variant_plan(
        choice,
        report,
        project=canonicalize_name(project),
        index_url=found.index_url,
        page_url=project_url(found.index_url, project),
        deps=deps,
    )
