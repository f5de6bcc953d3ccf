"""Reading a wheel-variant index: its ``{name}-{version}-variants.json`` files, and a chosen wheel's METADATA.

A variant index (``https://download.pytorch.org/whl/variant/``) links the metadata files from the project
page beside the wheels (PEP 825 index layout; PyTorch's test-infra ``release-wheel-variants.yml``). Reading
goes through :class:`~wheelfit.index.client.IndexClient` (pages, PEP 658 files) and the shared HTTP edge;
the candidates are :func:`wheelfit.candidates.variants.variant_candidates`, the choice the one resolver's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import httpx
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..candidates.model import CandidateSet, VariantsFile
from ..candidates.variants import metadata_file_version, variant_candidates
from ..errors import WheelfitError
from ..fetch.deadline import Deadline
from ..fetch.hashes import bytes_mismatch
from ..fetch.http import RetryPolicy, get, status_error
from ..simple.errors import ProjectNotFoundError
from ..simple.links import FileLink
from ..variants.metadata import loads
from .client import IndexClient

__all__ = ["VariantIndex", "VariantIndexError", "read_variant_index", "variant_set"]

#: Variant metadata is small (PyTorch's is under 5 kB); anything far larger is not one.
_MAX_BYTES = 8 * 1024 * 1024


class VariantIndexError(WheelfitError):
    """A variant index serves a metadata file that cannot be used (hash mismatch, too large, HTTP error)."""


@dataclass(frozen=True)
class VariantIndex:
    index_url: str
    page_url: str
    links: tuple[FileLink, ...]
    #: version -> its variants file, only for versions the specifier allows.
    metadata: Mapping[Version, VariantsFile]


def read_variant_index(
    index: IndexClient,
    client: httpx.Client,
    index_url: str,
    project: str = "torch",
    specifier: SpecifierSet | None = None,
    retry: RetryPolicy | None = None,
) -> VariantIndex | None:
    """The project's page and its variants metadata; ``None`` when the index links no such file for it. Each
    metadata file is read within the deadline ``index`` gives a read (:meth:`IndexClient.new_deadline`)."""
    try:
        page = index.project_page(index_url, project)
    except ProjectNotFoundError:
        return None
    spec = specifier if specifier is not None else SpecifierSet()
    found: dict[Version, VariantsFile] = {}
    for link in page.links:
        version = metadata_file_version(link.filename, project)
        if version is None or not spec.contains(version, prereleases=True):
            continue
        body = _fetch(client, link, retry or RetryPolicy(), index.new_deadline())
        found[version] = VariantsFile(link.filename, loads(body, link.filename))
    if not found:
        return None
    return VariantIndex(index_url.rstrip("/"), page.url, page.links, found)


def _fetch(client: httpx.Client, link: FileLink, retry: RetryPolicy, deadline: Deadline | None) -> bytes:
    """A small file, checked against the page's hash when it gives one (PEP 503/825: the hash fragment is
    optional); within ``deadline`` (the index client's, for one read)."""
    response = get(client, link.url, {"Accept": "application/json, */*"}, retry, deadline)
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


def variant_set(found: VariantIndex, platform: str, knowledge: CandidateSet, project: str = "torch") -> CandidateSet:
    """The variant index's candidates, with the knowledge base's span (for messages) and platform facts from
    ``knowledge``."""
    return CandidateSet(
        variant_candidates(
            found.metadata, found.links, platform=platform, index_url=found.index_url, page_url=found.page_url,
            project=project,
        ),
        knowledge=knowledge.knowledge,
        knowledge_updated=knowledge.knowledge_updated,
        index=found.index_url,
        index_complete=True,
        platform_end=knowledge.platform_end,
        elsewhere=knowledge.elsewhere,
    )  # fmt: skip
