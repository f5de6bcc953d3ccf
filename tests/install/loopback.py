"""A loopback simple-repository server over a directory: ``<root>/<index path>/<project>/<files>``, each
project page served as PEP 503 HTML or PEP 691 JSON (by the Accept header) with sha256 hashes. Used by the
install tests and by bench/install.py."""

from __future__ import annotations

import contextlib
import hashlib
import html
import json
from pathlib import Path

from tests.support.static import QuietHandler, serve_directory

__all__ = ["serve"]


def serve(
    root: Path, *, throttle: int | None = None, request_log: list[tuple[str, dict[str, str]]] | None = None
) -> contextlib.AbstractContextManager[str]:
    """Serve ``root`` on 127.0.0.1 (a free port) for the duration; yields the base URL. ``throttle``: file bodies
    at that many bytes per second, resumable with ``Range``; ``request_log`` collects every GET
    (:class:`tests.support.static.QuietHandler`)."""
    return serve_directory(root, _Handler, throttle=throttle, request_log=request_log)


_HASHES: dict[tuple[str, float, int], str] = {}


class _Handler(QuietHandler):
    """PEP 503 HTML or PEP 691 JSON for ``<index>/<project>/`` directories, files as they are."""

    def do_GET(self) -> None:  # noqa: N802 - http.server calls it by this name
        path = Path(self.translate_path(self.path))
        if path.is_dir() and self.path.endswith("/"):
            wheels = sorted(p for p in path.iterdir() if p.suffix == ".whl")
            if not wheels:
                self.send_error(404)
                return
            as_json = "application/vnd.pypi.simple.v1+json" in self.headers.get("Accept", "")
            body, ctype = (_json if as_json else _html)(path.name, wheels)
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


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


def _json(project: str, wheels: list[Path]) -> tuple[bytes, str]:
    files = [
        {"filename": w.name, "url": w.name, "hashes": {"sha256": _sha(w)}, "size": w.stat().st_size} for w in wheels
    ]
    data = {"meta": {"api-version": "1.1"}, "name": project, "files": files}
    return json.dumps(data).encode(), "application/vnd.pypi.simple.v1+json"


def _html(project: str, wheels: list[Path]) -> tuple[bytes, str]:
    links = "".join(f'<a href="{html.escape(w.name)}#sha256={_sha(w)}">{html.escape(w.name)}</a>\n' for w in wheels)
    return f"<!DOCTYPE html><html><body>\n{links}</body></html>".encode(), "text/html"
