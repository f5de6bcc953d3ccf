"""A loopback simple-repository server over a directory: ``<root>/<index path>/<project>/<files>``, each
project page served as PEP 503 HTML or PEP 691 JSON (by the Accept header) with sha256 hashes and, as
download.pytorch.org and PyPI do, PEP 658 core metadata (``<wheel>.metadata``; ``metadata=False`` serves none,
as older mirrors do). Used by the install tests and by bench/install.py."""

from __future__ import annotations

import contextlib
import hashlib
import html
import json
import zipfile
from pathlib import Path

from tests.support.static import QuietHandler, serve_directory

__all__ = ["PageHandler", "serve"]


def serve(
    root: Path,
    *,
    throttle: int | None = None,
    request_log: list[tuple[str, dict[str, str]]] | None = None,
    metadata: bool = True,
) -> contextlib.AbstractContextManager[str]:
    """Serve ``root`` on 127.0.0.1 (a free port) for the duration; yields the base URL. ``throttle``: file bodies
    at that many bytes per second, resumable with ``Range``; ``request_log`` collects every GET
    (:class:`tests.support.static.QuietHandler`); ``metadata=False``: no PEP 658 files."""
    handler = PageHandler if metadata else type("NoMetadataHandler", (PageHandler,), {"serves_metadata": False})
    return serve_directory(root, handler, throttle=throttle, request_log=request_log)


_HASHES: dict[tuple[str, float, int], str] = {}


class PageHandler(QuietHandler):
    """PEP 503 HTML or PEP 691 JSON for ``<index>/<project>/`` directories, files as they are. Subclasses give
    the hashes another way (:mod:`tests.install.pep658_index`)."""

    serves_metadata = True

    def do_GET(self) -> None:  # noqa: N802 - http.server calls it by this name
        if self.send_page():
            return
        path = Path(self.translate_path(self.path))
        if path.name.endswith(".whl.metadata") and path.with_suffix("").is_file():
            meta = self.metadata(path.with_suffix(""))
            if meta is not None:
                self.send_body(meta, "application/octet-stream")
                return
        super().do_GET()

    def send_page(self) -> bool:
        """Answer a project page request (a 404 for a directory without wheels); False for anything else."""
        path = Path(self.translate_path(self.path))
        if not (path.is_dir() and self.path.endswith("/")):
            return False
        wheels = sorted(p for p in path.iterdir() if p.suffix == ".whl")
        if not wheels:
            self.send_error(404)
            return True
        if "application/vnd.pypi.simple.v1+json" in self.headers.get("Accept", ""):
            self.send_body(self._json(path.name, wheels), "application/vnd.pypi.simple.v1+json")
        else:
            self.send_body(self._html(wheels), "text/html")
        return True

    def send_body(self, body: bytes, ctype: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def sha256(self, wheel: Path) -> str:
        return _sha(wheel)

    def metadata(self, wheel: Path) -> bytes | None:
        """The wheel's METADATA to advertise and serve as ``<wheel>.metadata`` (PEP 658/714); None: not served."""
        if not self.serves_metadata:
            return None
        with zipfile.ZipFile(wheel) as zf:
            name = next((n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")), None)
            return None if name is None else zf.read(name)

    def _json(self, project: str, wheels: list[Path]) -> bytes:
        files: list[dict[str, object]] = []
        for w in wheels:
            files.append({"filename": w.name, "url": w.name, "hashes": {"sha256": self.sha256(w)},
                          "size": w.stat().st_size})  # fmt: skip
            meta = self.metadata(w)
            if meta is not None:
                files[-1]["core-metadata"] = {"sha256": hashlib.sha256(meta).hexdigest()}
        return json.dumps({"meta": {"api-version": "1.1"}, "name": project, "files": files}).encode()

    def _html(self, wheels: list[Path]) -> bytes:
        links = []
        for w in wheels:
            meta = self.metadata(w)
            attr = f' data-core-metadata="sha256={hashlib.sha256(meta).hexdigest()}"' if meta is not None else ""
            name = html.escape(w.name)
            links.append(f'<a href="{name}#sha256={self.sha256(w)}"{attr}>{name}</a>\n')
        return f"<!DOCTYPE html><html><body>\n{''.join(links)}</body></html>".encode()


def _sha(p: Path) -> str:
    """Hashed once per file version: the large real torch wheel is 190 MB."""
    st = p.stat()
    key = (str(p), st.st_mtime, st.st_size)
    if key not in _HASHES:
        digest = hashlib.sha256()
        with p.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        _HASHES[key] = digest.hexdigest()
    return _HASHES[key]
