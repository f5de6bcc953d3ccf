"""A loopback package index for tests: PEP 503 HTML, PEP 691 JSON, PEP 658 metadata, Range, 304, faults.

Layout: every directory under ``root`` that holds wheels is an index. For
``root/pytorch/cu126/torch-2.8.0+cu126-py3-none-any.whl`` the server answers

* ``/pytorch/cu126/``                     project list
* ``/pytorch/cu126/torch/``               project page (HTML or JSON by ``Accept``)
* ``/pytorch/cu126/torch-2.8.0%2Bcu126-py3-none-any.whl``           the file (``Range``/``If-Range``)
* ``/pytorch/cu126/torch-2.8.0%2Bcu126-py3-none-any.whl.metadata``  PEP 658 METADATA

Hrefs are absolute paths with ``+`` encoded as ``%2B``, as on download.pytorch.org.
Pages are built from disk on every request, so tests may add wheels while it runs.
"""

from __future__ import annotations

import hashlib
import json
import ssl
import threading
import time
import zipfile
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from packaging.utils import canonicalize_name, parse_wheel_filename

from .static import LoopbackServer

__all__ = ["Faults", "IndexServer", "RequestLog"]

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
HTML_TYPES = ("application/vnd.pypi.simple.v1+html", "text/html")


@dataclass
class Faults:
    """What to break. File faults are keyed by file name; ``unavailable`` and ``slow`` by a path suffix
    (a file name, or ``"torch/"`` for a project page)."""

    #: Advertise a wrong sha256 (valid hex) for these files, in HTML fragments and JSON hashes.
    wrong_hash: Collection[str] = ()
    #: List these files without any hash.
    missing_hash: Collection[str] = ()
    #: Close the connection once the body reaches this absolute file offset, on every request.
    truncate: Mapping[str, int] = field(default_factory=dict)
    #: Close the connection after this many body bytes, on the first ``drop_times`` requests only.
    drop: Mapping[str, int] = field(default_factory=dict)
    drop_times: int = 1
    #: Answer 503 this many times, then normally.
    unavailable: Mapping[str, int] = field(default_factory=dict)
    #: Seconds to wait before answering.
    slow: Mapping[str, float] = field(default_factory=dict)
    #: Project names whose pages are served cut off in the middle of a tag (HTML) or a value (JSON).
    malformed: Collection[str] = ()
    #: Files for which ``Range`` is ignored (always 200 with the whole body).
    ignore_range: Collection[str] = ()


@dataclass
class RequestLog:
    path: str
    headers: dict[str, str]
    status: int = 0


def _offers(html: bool, json_: bool) -> list[str]:
    return ([JSON_TYPE] if json_ else []) + (list(HTML_TYPES) if html else [])


def negotiate(accept: str | None, offers: list[str]) -> str | None:
    """The offered type with the highest q in ``accept`` (server order breaks ties); None if none is acceptable."""
    ranges: list[tuple[str, float]] = []
    for item in (accept or "*/*").split(","):
        mime, *params = (p.strip() for p in item.split(";"))
        q = 1.0
        for p in params:
            if p.lower().startswith("q="):
                try:
                    q = float(p[2:])
                except ValueError:
                    q = 0.0
        if mime:
            ranges.append((mime.lower(), q))
    best: tuple[float, int, str] | None = None
    for order, offer in enumerate(offers):
        major = offer.split("/")[0]
        qs = [q for mime, q in ranges if mime in (offer, f"{major}/*", "*/*")]
        q = max(qs) if qs else 0.0
        if q > 0 and (best is None or (q, -order) > (best[0], best[1])):
            best = (q, -order, offer)
    return best[2] if best else None


class IndexServer:
    """Context manager: ``with IndexServer(root) as server: server.url`` -> ``http://127.0.0.1:<port>``."""

    def __init__(
        self,
        root: Path,
        *,
        html: bool = True,
        json: bool = True,
        faults: Faults | None = None,
        yanked: Mapping[str, str] | None = None,
        tls: tuple[Path, Path] | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.html = html
        self.json = json
        self.faults = faults or Faults()
        #: File name -> yank reason (``""`` for none).
        self.yanked = dict(yanked or {})
        #: ``(certfile, keyfile)``: serve HTTPS with this certificate.
        self.tls = tls
        self.requests: list[RequestLog] = []
        self.connections = 0
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str], int] = {}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    # -- lifecycle -----------------------------------------------------------------------------

    def __enter__(self) -> IndexServer:
        owner = self

        class Server(LoopbackServer):
            def process_request(self, request: Any, client_address: Any) -> None:
                with owner._lock:
                    owner.connections += 1
                super().process_request(request, client_address)

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # failed TLS handshakes and dropped clients are what the tests provoke

        class Handler(_Handler):
            server_owner = owner

        self._server = Server(("127.0.0.1", 0), Handler)
        scheme = "http"
        if self.tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*self.tls)
            # Handshake in the handler thread, so a client that rejects the certificate cannot stall the server.
            self._server.socket = context.wrap_socket(
                self._server.socket, server_side=True, do_handshake_on_connect=False
            )
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self._server.server_address[1]}"
        server = self._server
        self._thread = threading.Thread(
            target=lambda: server.serve_forever(poll_interval=0.02), name="index-server", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # -- helpers for tests ---------------------------------------------------------------------

    def index_url(self, index: str) -> str:
        """``"pytorch/cu126"`` -> ``http://127.0.0.1:<port>/pytorch/cu126``."""
        return f"{self.url}/{index.strip('/')}"

    def requests_for(self, suffix: str) -> list[RequestLog]:
        with self._lock:
            return [r for r in self.requests if unquote(urlsplit(r.path).path).endswith(suffix)]

    def _count(self, kind: str, key: str) -> int:
        """How many times ``kind`` happened for ``key`` before (then counts this one)."""
        with self._lock:
            n = self._counts.get((kind, key), 0)
            self._counts[(kind, key)] = n + 1
            return n

    # -- content -------------------------------------------------------------------------------

    def resolve(self, relative: str) -> Path | None:
        path = (self.root / relative.strip("/")).resolve()
        return path if path == self.root or self.root in path.parents else None

    def project_files(self, index_dir: Path, project: str) -> list[Path]:
        files = []
        for wheel in sorted(index_dir.glob("*.whl")):
            try:
                name = parse_wheel_filename(wheel.name)[0]
            except ValueError:
                continue
            if name == canonicalize_name(project):
                files.append(wheel)
        return files

    def file_entry(self, index_path: str, wheel: Path) -> dict[str, Any]:
        data = wheel.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if wheel.name in self.faults.wrong_hash:
            digest = hashlib.sha256(b"not the file" + data).hexdigest()
        metadata = _wheel_metadata(wheel)
        requires_python = None
        for line in metadata.decode().splitlines():
            if line.startswith("Requires-Python:"):
                requires_python = line.split(":", 1)[1].strip()
        return {
            "filename": wheel.name,
            "url": f"/{index_path}/{quote(wheel.name)}",
            "hashes": {} if wheel.name in self.faults.missing_hash else {"sha256": digest},
            "requires-python": requires_python,
            "yanked": self.yanked.get(wheel.name, False),
            "core-metadata": {"sha256": hashlib.sha256(metadata).hexdigest()},
            "size": len(data),
        }

    def html_page(self, project: str, entries: list[dict[str, Any]]) -> str:
        lines = [
            "<!DOCTYPE html>",
            '<html><head><meta name="pypi:repository-version" content="1.1">',
            f"<title>Links for {escape(project)}</title></head>",
            f"<body><h1>Links for {escape(project)}</h1>",
        ]
        for e in entries:
            href = e["url"] + "".join(f"#{k}={v}" for k, v in e["hashes"].items())
            attrs = [f'href="{escape(href)}"']
            if e["requires-python"]:
                attrs.append(f'data-requires-python="{escape(e["requires-python"])}"')
            if e["yanked"] is not False:
                attrs.append(f'data-yanked="{escape(e["yanked"])}"')
            meta = "sha256=" + e["core-metadata"]["sha256"]
            attrs += [f'data-dist-info-metadata="{meta}"', f'data-core-metadata="{meta}"']
            lines.append(f"<a {' '.join(attrs)}>{escape(e['filename'])}</a><br/>")
        lines += ["</body>", "</html>", f"<!--TIMESTAMP {int(time.time())}-->"]
        return "\n".join(lines) + "\n"

    def json_page(self, project: str, entries: list[dict[str, Any]]) -> str:
        files = []
        for e in entries:
            files.append({**e, "dist-info-metadata": e["core-metadata"]})
        versions = sorted({str(parse_wheel_filename(e["filename"])[1]) for e in entries})
        meta = {"api-version": "1.1"}
        return json.dumps({"meta": meta, "name": canonicalize_name(project), "files": files, "versions": versions})


def _wheel_metadata(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.count("/") == 1 and name.endswith(".dist-info/METADATA"):
                return zf.read(name)
    raise ValueError(f"{wheel.name}: no METADATA")


def _http_date(timestamp: float) -> str:
    return formatdate(timestamp, usegmt=True)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so clients can reuse connections
    server_owner: IndexServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        owner = self.server_owner
        log = RequestLog(self.path, {k.lower(): v for k, v in self.headers.items()})
        with owner._lock:
            owner.requests.append(log)
        path = unquote(urlsplit(self.path).path)
        faults = owner.faults
        for suffix, seconds in faults.slow.items():
            if path.endswith(suffix):
                time.sleep(seconds)
        for suffix, times in faults.unavailable.items():
            if path.endswith(suffix) and owner._count("503", suffix) < times:
                self._send(log, 503, b"try again later\n", "text/plain")
                return
        if path.endswith("/"):
            self._page(log, path)
        else:
            self._file(log, path)

    # -- responses -----------------------------------------------------------------------------

    def _send(self, log: RequestLog, status: int, body: bytes, content_type: str, **headers: str) -> None:
        log.status = status
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def _not_modified(self, log: RequestLog, etag: str, last_modified: str) -> bool:
        inm = self.headers.get("If-None-Match")
        ims = self.headers.get("If-Modified-Since")
        fresh = False
        if inm is not None:
            fresh = etag in [t.strip() for t in inm.split(",")] or inm.strip() == "*"
        elif ims is not None:
            try:
                fresh = parsedate_to_datetime(ims) >= parsedate_to_datetime(last_modified)
            except (TypeError, ValueError):
                fresh = False
        if fresh:
            log.status = 304
            self.send_response(304)
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", last_modified)
            self.send_header("Content-Length", "0")
            self.end_headers()
        return fresh

    def _page(self, log: RequestLog, path: str) -> None:
        owner = self.server_owner
        target = owner.resolve(path)
        if target is not None and target.is_dir() and any(target.glob("*.whl")):
            names = sorted({canonicalize_name(parse_wheel_filename(w.name)[0]) for w in target.glob("*.whl")})
            body = "".join(f'<a href="{quote(n)}/">{escape(n)}</a><br/>\n' for n in names)
            self._send(log, 200, f"<!DOCTYPE html><html><body>\n{body}</body></html>\n".encode(), "text/html")
            return
        index_path, _, project = path.strip("/").rpartition("/")
        index_dir = owner.resolve(index_path)
        files = owner.project_files(index_dir, project) if index_dir is not None and index_dir.is_dir() else []
        if not files:
            self._send(log, 404, b"no such project\n", "text/plain")
            return
        mime = negotiate(self.headers.get("Accept"), _offers(owner.html, owner.json))
        if mime is None:
            self._send(log, 406, b"not acceptable\n", "text/plain")
            return
        entries = [owner.file_entry(index_path, f) for f in files]
        text = owner.json_page(project, entries) if mime == JSON_TYPE else owner.html_page(project, entries)
        if canonicalize_name(project) in {canonicalize_name(p) for p in owner.faults.malformed}:
            cut = text.find("<a ") + 12 if mime != JSON_TYPE else len(text) // 2
            text = text[:cut]
        payload = text.encode()
        # The TIMESTAMP comment changes each second; the validator is over the stable part, like a CDN's.
        etag = '"' + hashlib.sha256(text.split("<!--TIMESTAMP")[0].encode() + mime.encode()).hexdigest()[:16] + '"'
        last_modified = _http_date(max(f.stat().st_mtime for f in files))
        if self._not_modified(log, etag, last_modified):
            return
        content_type = f"{mime}; charset=utf-8" if mime != JSON_TYPE else mime
        self._send(log, 200, payload, content_type, ETag=etag, Last_Modified=last_modified, Vary="Accept")

    def _file(self, log: RequestLog, path: str) -> None:
        owner = self.server_owner
        metadata = path.endswith(".metadata")
        target = owner.resolve(path.removesuffix(".metadata") if metadata else path)
        if target is None or not target.is_file() or target.suffix != ".whl":
            self._send(log, 404, b"not found\n", "text/plain")
            return
        if metadata:
            self._send(log, 200, _wheel_metadata(target), "application/octet-stream")
            return
        data = target.read_bytes()
        name = target.name
        etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
        last_modified = _http_date(target.stat().st_mtime)
        start = self._range_start(name, len(data), etag, last_modified)
        if start is not None and start >= len(data):
            self._send(log, 416, b"", "text/plain", Content_Range=f"bytes */{len(data)}")
            return
        begin = start or 0
        body = data[begin:]
        faults = owner.faults
        limit = len(body)
        if name in faults.truncate:
            limit = max(0, min(limit, faults.truncate[name] - begin))
        if name in faults.drop and owner._count("drop", name) < faults.drop_times:
            limit = min(limit, faults.drop[name])
        log.status = 206 if start is not None else 200
        self.send_response(log.status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", last_modified)
        self.send_header("Accept-Ranges", "bytes")
        if start is not None:
            self.send_header("Content-Range", f"bytes {begin}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        self.wfile.write(body[:limit])
        if limit < len(body):
            self.wfile.flush()
            self.close_connection = True  # the client sees EOF before Content-Length bytes

    def _range_start(self, name: str, size: int, etag: str, last_modified: str) -> int | None:
        header = self.headers.get("Range")
        if not header or name in self.server_owner.faults.ignore_range:
            return None
        if_range = self.headers.get("If-Range")
        if if_range is not None and if_range.strip() not in (etag, last_modified):
            return None  # the client's copy is of another version: send the whole file
        spec = header.strip()
        if not spec.startswith("bytes=") or "," in spec:
            return None
        first, _, _ = spec[len("bytes=") :].partition("-")
        return int(first) if first.isdigit() else None
