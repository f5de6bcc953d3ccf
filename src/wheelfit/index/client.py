"""Reading project pages and PEP 658 metadata from an index, with a validator-based cache and offline mode.

Content negotiation asks for PEP 691 JSON first and accepts PEP 503 HTML
(download.pytorch.org only serves HTML). Every page is kept in the cache with
its ``ETag``/``Last-Modified`` and revalidated with a conditional request, so
an unchanged page costs a 304; ``offline`` reads the cache only. Each read (a page, a
metadata file, with its retries) may be held to its own :class:`~wheelfit.fetch.deadline.Deadline`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from packaging.utils import canonicalize_name

from ..fetch.cache import Cache, CachedPage
from ..fetch.deadline import INDEX_DEADLINE_SOURCE, Deadline
from ..fetch.errors import HTTPStatusError, NetworkError
from ..fetch.hashes import bytes_mismatch
from ..simple.errors import IndexPageError, OfflineError, ProjectNotFoundError
from ..simple.links import FileLink, ProjectPage, parse_html, parse_page
from .local import is_local, local_path, read_local_page

if TYPE_CHECKING:
    import httpx

    from ..fetch.http import RetryPolicy

__all__ = ["ACCEPT", "IndexClient", "project_url"]

_T = TypeVar("_T")

#: A 404 remembered in the cache, so that ``offline`` knows a project is absent rather than unknown.
_NOT_FOUND = "application/x-wheelfit-not-found"

#: PEP 691's recommended header, HTML last so a server that knows both sends JSON.
ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"


def project_url(index_url: str, project: str) -> str:
    """PEP 503: clients request the normalized name, with a trailing slash."""
    return f"{index_url.rstrip('/')}/{canonicalize_name(project)}/"


class IndexClient:
    def __init__(
        self,
        client: httpx.Client | Callable[[], httpx.Client] | None,
        cache: Cache | None = None,
        *,
        offline: bool = False,
        retry: RetryPolicy | None = None,
        memo: bool = False,
        deadline: float | Callable[[], Deadline] | None = None,
    ) -> None:
        """``client`` may be a function that makes it, called on the first request (none offline). With ``memo``
        a page is read once per client: one run's planning and installing read the same pages. ``deadline``
        bounds each read, retries included: seconds (a fresh :class:`~wheelfit.fetch.deadline.Deadline` per
        read, named as the index deadline in messages), or a function called at the start of each read (return
        one shared value for a budget across reads); ``None``: only the retry policy and timeouts bound it."""
        if offline and cache is None:
            raise ValueError("offline mode needs a cache")
        if client is None and not offline:
            raise ValueError("an index client that may go online needs an HTTP client")
        self._client = client
        self._cache = cache
        self._offline = offline
        self._retry = retry
        self._deadline = deadline
        self._pages: dict[str, ProjectPage] | None = {} if memo else None

    def project_page(self, index_url: str, project: str) -> ProjectPage:
        url = project_url(index_url, project)
        if self._pages is not None and url in self._pages:
            return self._pages[url]
        if is_local(url):  # a mirror on disk (air-gapped): read as it is, offline too, never cached
            page = read_local_page(url)
        else:
            cached, fresh = self._fetch(url, ACCEPT, what=f"{canonicalize_name(project)} on {index_url}")
            page = parse_page(cached.body, cached.content_type, cached.final_url or url)
            if fresh:
                self._store(cached)  # only after it parsed: a malformed page is never cached
        if self._pages is not None:
            self._pages[url] = page
        return page

    def find_links_page(self, url: str) -> ProjectPage:
        """A find-links page (pip's ``--find-links URL``): PEP 503 HTML whose links may be any project's files,
        cached and revalidated as project pages are. A 404 is :class:`ProjectNotFoundError`."""
        if self._pages is not None and url in self._pages:
            return self._pages[url]
        cached, fresh = self._fetch(url, "text/html", what=url)
        page = parse_html(_decode_html(cached.body, url), cached.final_url or url)
        if fresh:
            self._store(cached)
        if self._pages is not None:
            self._pages[url] = page
        return page

    def json_document(self, url: str, read: Callable[[bytes, str], _T], *, what: str) -> _T:
        """A JSON document (the GitHub releases API's listing) as ``read(body, url)`` makes it, cached and
        revalidated as pages are, and stored only once ``read`` took it (a malformed answer is never cached)."""
        cached, fresh = self._fetch(url, "application/json", what=what)
        value = read(cached.body, cached.final_url or url)
        if fresh:
            self._store(cached)
        return value

    def core_metadata(self, link: FileLink) -> bytes:
        """The PEP 658 METADATA file for ``link``, checked against the page's core-metadata hash."""
        if link.core_metadata is False:
            raise IndexPageError(f"{link.filename}: the index advertises no PEP 658 metadata file")
        if is_local(link.metadata_url):
            try:
                body = local_path(link.metadata_url).read_bytes()
            except OSError as exc:
                raise IndexPageError(f"{link.filename}.metadata: cannot read it ({exc.strerror or exc})") from None
            cached, fresh = CachedPage(url=link.metadata_url, body=body, content_type=""), False
        else:
            known = self._pinned_metadata(link)
            if known is not None:
                return known
            cached, fresh = self._fetch(link.metadata_url, "*/*", what=f"metadata of {link.filename}")
        if isinstance(link.core_metadata, bool):
            if fresh:
                self._store(cached)
            return cached.body
        mismatch = bytes_mismatch(link.core_metadata, cached.body)
        if mismatch is not None:
            name, expected, actual = mismatch
            raise IndexPageError(
                f"{link.filename}.metadata: {name} mismatch: expected {expected}, got {actual}; "
                "the index is inconsistent"
            )
        if fresh:
            self._store(cached)
        return cached.body

    def _pinned_metadata(self, link: FileLink) -> bytes | None:
        """The cached metadata file when the page pins its hash and the copy has it: a file's metadata never
        changes under the same hash, so it is not asked for again (one request fewer per torch-family file on
        every warm plan and install)."""
        if isinstance(link.core_metadata, bool) or self._cache is None:
            return None
        cached = self._cache.load_page(link.metadata_url)
        if cached is None or cached.content_type == _NOT_FOUND or not link.core_metadata:
            return None
        return cached.body if bytes_mismatch(link.core_metadata, cached.body) is None else None

    def new_deadline(self) -> Deadline | None:
        """The deadline for one read starting now (also for reads made beside this client: variant metadata)."""
        if self._deadline is None:
            return None
        if callable(self._deadline):
            return self._deadline()
        return Deadline(self._deadline, source=INDEX_DEADLINE_SOURCE)

    def _http(self) -> httpx.Client:
        if self._client is None:  # pragma: no cover - refused by __init__
            raise OfflineError("offline: no HTTP client")
        if callable(self._client):  # made on the first request: offline runs never import httpx
            self._client = self._client()
        return self._client

    def _store(self, page: CachedPage) -> None:
        if self._cache is not None and urlsplit(page.url).scheme in ("http", "https"):
            self._cache.store_page(page)

    def _fetch(self, url: str, accept: str, *, what: str) -> tuple[CachedPage, bool]:
        """The page body and whether it came from the network just now (and so still needs storing)."""
        cached = self._cache.load_page(url) if self._cache is not None else None
        if self._offline:
            if cached is None:
                raise OfflineError(f"offline: no cached copy of {what} ({url}); run once without --offline first")
            if cached.content_type == _NOT_FOUND:
                raise ProjectNotFoundError(f"{what}: not found ({url} answered 404 when last read)")
            return cached, False
        if cached is not None and cached.content_type == _NOT_FOUND:
            cached = None
        from ..fetch.http import RetryPolicy, get, status_error

        headers = {"Accept": accept}
        if cached is not None and cached.etag:
            headers["If-None-Match"] = cached.etag
        if cached is not None and cached.last_modified:
            headers["If-Modified-Since"] = cached.last_modified
        client = self._http()  # a trust store that cannot be loaded is a setting to fix, not a reason to go offline
        try:
            response = get(client, url, headers, self._retry or RetryPolicy(), self.new_deadline())
        except NetworkError as exc:
            raise _offline_hint(exc) from exc
        if response.status_code == 304 and cached is not None:
            return cached, False
        if response.status_code == 404:
            self._store(CachedPage(url=url, body=b"", content_type=_NOT_FOUND))
            raise ProjectNotFoundError(f"{what}: not found ({url} answered 404); check the name and the index URL")
        if response.status_code == 406:
            raise IndexPageError(f"{url}: the index serves neither PEP 691 JSON nor PEP 503 HTML (406)")
        if response.status_code != 200:
            raise status_error(url, response)
        fresh = CachedPage(
            url=url,
            body=response.content,
            content_type=response.headers.get("content-type", ""),
            etag=response.headers.get("etag"),
            last_modified=response.headers.get("last-modified"),
            final_url=str(response.url) if str(response.url) != url else None,
        )
        return fresh, True


def _decode_html(body: bytes, url: str) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IndexPageError(f"{url}: page is not valid UTF-8 text ({exc.reason})") from None


def _offline_hint(exc: NetworkError) -> NetworkError:
    """The same error (its type kept: a refused redirect, a TLS failure, a status) saying ``--offline`` exists."""
    message = f"{exc}; or use --offline to read the cache"
    hinted = HTTPStatusError(message, exc.status) if isinstance(exc, HTTPStatusError) else type(exc)(message)
    hinted.detail = exc.detail
    return hinted
