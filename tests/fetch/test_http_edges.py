"""HTTP edge cases are one-line errors naming the URL, never internal errors (issue 15): a redirect loop."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.conftest import hermetic_env
from tests.support.inprocess import wheelfit_in_process


class _Loop(BaseHTTPRequestHandler):
    """Every GET is redirected to itself."""

    def do_GET(self) -> None:
        self.send_response(302)
        self.send_header("Location", self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def looping() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Loop)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_redirect_loop_is_one_line_naming_the_url(looping: str) -> None:
    url = f"{looping}/torch-2.9.0-variants.json"
    done = wheelfit_in_process(["variants", "rank", url, "--target", "cuda=8.6,driver=580.95.05"], hermetic_env())
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in lines[0], done.stderr
    assert lines[0].startswith(f"wheelfit: error: {url}: redirected more than ") and "redirect loop" in lines[0]
