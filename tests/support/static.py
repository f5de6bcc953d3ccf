"""Serve a directory over HTTP on 127.0.0.1 for the length of a ``with`` block: the base of the test indexes
that are laid out as files (the install tests' simple index, the static wheel-variant index)."""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["LoopbackServer", "QuietHandler", "serve_directory"]


class QuietHandler(SimpleHTTPRequestHandler):
    """Files as they are, without a log line per request.

    With ``throttle`` (bytes per second, set by :func:`serve_directory`) file bodies trickle out at that rate;
    ``request_log`` collects ``(path, headers)`` of every GET. Neither is set by default. A ``Range`` (with an
    ``If-Range`` equal to the file's ``Last-Modified``) is answered 206, as download.pytorch.org's CDN does."""

    throttle: int | None = None
    request_log: list[tuple[str, dict[str, str]]] | None = None

    def log_message(self, format: str, *args: Any) -> None:
        return

    def parse_request(self) -> bool:
        ok = super().parse_request()
        if ok and self.request_log is not None and self.command == "GET":
            self.request_log.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
        return ok

    def send_head(self) -> Any:
        """Files with ``Accept-Ranges: bytes``, and one range answered 206 (``N-``, ``N-M`` or ``-N``), as a CDN
        does: uv reads a URL wheel's METADATA with range requests and resumes with ``Range``/``If-Range``."""
        path = self.translate_path(self.path)
        if "Range" not in self.headers or not os.path.isfile(path):
            return super().send_head()
        size = os.path.getsize(path)
        modified = self.date_time_string(int(os.path.getmtime(path)))
        wanted = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers["Range"].strip())
        if_range = self.headers.get("If-Range")
        if wanted is None or not (wanted[1] or wanted[2]) or (if_range is not None and if_range != modified):
            return super().send_head()
        if wanted[1]:
            start, end = int(wanted[1]), min(int(wanted[2]) if wanted[2] else size - 1, size - 1)
        else:
            start, end = max(size - int(wanted[2]), 0), size - 1
        if start >= size or end < start:
            return super().send_head()
        f = open(path, "rb")  # noqa: SIM115 - closed by do_GET, as the base class's is
        f.seek(start)
        body: BinaryIO = f
        if end < size - 1:  # a bounded range (uv's metadata reads: small)
            body = io.BytesIO(f.read(end - start + 1))
            f.close()
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Last-Modified", modified)
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        return body

    def end_headers(self) -> None:
        sent: list[bytes] = getattr(self, "_headers_buffer", [])
        if not any(b"Accept-Ranges" in line for line in sent):
            self.send_header("Accept-Ranges", "bytes")
        super().end_headers()

    def copyfile(self, source: BinaryIO, outputfile: BinaryIO) -> None:  # type: ignore[override]
        if self.throttle is None:
            shutil.copyfileobj(source, outputfile)
            return
        step = max(1, self.throttle // 20)
        try:
            while chunk := source.read(step):
                outputfile.write(chunk)
                outputfile.flush()
                time.sleep(0.05)
        except (ConnectionError, OSError):
            return  # the client went away (interrupted): nothing to report


class LoopbackServer(ThreadingHTTPServer):
    """Every test index's server: one thread per connection, and a listen backlog as a real index server has.
    The standard library's default of 5 drops the connections uv opens in parallel once more than five wait,
    and each dropped one costs the client a 1 s SYN retransmission (seen as uv's warm install taking 0.5 s in
    some benchmark rounds and 1.5 s in others)."""

    daemon_threads = True
    request_queue_size = 128


@contextlib.contextmanager
def serve_directory(
    root: Path,
    handler: type[SimpleHTTPRequestHandler] = QuietHandler,
    *,
    throttle: int | None = None,
    request_log: list[tuple[str, dict[str, str]]] | None = None,
) -> Iterator[str]:
    """Serve ``root`` on a free loopback port with ``handler``; yields the base URL. ``throttle`` and
    ``request_log``: see :class:`QuietHandler` (``handler`` must be one for them)."""
    if throttle is not None or request_log is not None:
        attrs = {"throttle": throttle, "request_log": request_log}
        handler = type(handler.__name__, (handler,), attrs)
    server = LoopbackServer(("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
