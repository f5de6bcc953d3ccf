"""Serve a directory over HTTP on 127.0.0.1 for the length of a ``with`` block: the base of the test indexes
that are laid out as files (the install tests' simple index, the static wheel-variant index)."""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["LoopbackServer", "QuietHandler", "serve_directory"]


class QuietHandler(SimpleHTTPRequestHandler):
    """Files as they are, without a log line per request."""

    def log_message(self, format: str, *args: Any) -> None:
        return


class LoopbackServer(ThreadingHTTPServer):
    """Every test index's server: one thread per connection, and a listen backlog as a real index server has.
    The standard library's default of 5 drops the connections uv opens in parallel once more than five wait,
    and each dropped one costs the client a 1 s SYN retransmission (seen as uv's warm install taking 0.5 s in
    some benchmark rounds and 1.5 s in others)."""

    daemon_threads = True
    request_queue_size = 128


@contextlib.contextmanager
def serve_directory(root: Path, handler: type[SimpleHTTPRequestHandler] = QuietHandler) -> Iterator[str]:
    """Serve ``root`` on a free loopback port with ``handler``; yields the base URL."""
    server = LoopbackServer(("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
