"""A loopback simple index as PyPI and download.pytorch.org serve it: project pages (PEP 503 HTML or PEP 691
JSON) with sha256 hashes and PEP 658/714 core metadata (``<wheel>.metadata`` beside each wheel, advertised with
its hash), files sent with ``sendfile`` so a gigabyte is not the server's bottleneck, and a log of every request
(path, start and end time) so tests can say what was fetched and when. ``slow`` delays chosen files (a slow
download that other work can overlap with); ``rate`` caps the bytes per second of all files together, as one
network link does; ``metadata=False`` serves pages without PEP 658 metadata, as older indexes do. Used by
tests/install/test_prefetch.py and bench/install.py.

Layout as tests/install/loopback.py: ``<root>/<index path>/<project>/<files>``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import shutil
import threading
import time
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from tests.support.static import LoopbackServer, QuietHandler

from .loopback import PageHandler

__all__ = ["Request", "Served", "serve_pep658"]


@dataclass(frozen=True)
class Request:
    path: str
    start: float
    end: float


@dataclass
class Served:
    url: str
    log: list[Request] = field(default_factory=list)

    def fetched(self, part: str) -> list[Request]:
        """Requests whose path contains ``part``."""
        return [r for r in self.log if part in r.path]


@dataclass(frozen=True)
class _Facts:
    sha256: str
    size: int
    metadata: bytes


_FACTS: dict[tuple[str, float, int], _Facts] = {}
_LOCK = threading.Lock()


def facts(wheel: Path) -> _Facts:
    """The wheel's sha256, size and METADATA, computed once per file version (the bench's are gigabytes)."""
    st = wheel.stat()
    key = (str(wheel), st.st_mtime, st.st_size)
    with _LOCK:
        if key not in _FACTS:
            digest = hashlib.sha256()
            with wheel.open("rb") as f:
                while chunk := f.read(1 << 22):
                    digest.update(chunk)
            with zipfile.ZipFile(wheel) as zf:
                name = next(n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
                metadata = zf.read(name)
            _FACTS[key] = _Facts(digest.hexdigest(), st.st_size, metadata)
        return _FACTS[key]


class _Link:
    """One shared link of ``rate`` bytes/s: each chunk books the next free slot, so concurrent files share it."""

    def __init__(self, rate: float) -> None:
        self.rate, self.free_at, self.lock = rate, 0.0, threading.Lock()

    def wait(self, size: int) -> None:
        with self.lock:
            now = time.monotonic()
            start = max(now, self.free_at)
            self.free_at = start + size / self.rate
        time.sleep(max(0.0, start - now))


class _Handler(PageHandler):
    log: list[Request]
    slow: Mapping[str, float]
    link: _Link | None
    serves_metadata: bool

    def do_GET(self) -> None:  # noqa: N802 - http.server calls it by this name
        start = time.monotonic()
        try:
            self._get()
        finally:
            self.log.append(Request(self.path, start, time.monotonic()))

    def _get(self) -> None:
        if self.send_page():
            return
        path = Path(self.translate_path(self.path))
        if self.serves_metadata and path.name.endswith(".whl.metadata") and path.with_suffix("").is_file():
            self.send_body(facts(path.with_suffix("")).metadata, "application/octet-stream")
            return
        for part, delay in self.slow.items():
            if part in self.path:
                time.sleep(delay)
        QuietHandler.do_GET(self)

    def sha256(self, wheel: Path) -> str:
        return facts(wheel).sha256

    def metadata(self, wheel: Path) -> bytes | None:
        return facts(wheel).metadata if self.serves_metadata else None

    def copyfile(self, source: BinaryIO, outputfile: Any) -> None:  # type: ignore[override]
        """``sendfile(2)``: the kernel copies the file to the socket (the standard library reads 64 KiB at a time
        through Python)."""
        outputfile.flush()
        try:
            source.fileno()
        except (AttributeError, io.UnsupportedOperation):  # a bounded range, read into memory (tests.support.static)
            shutil.copyfileobj(source, outputfile)
            return
        offset = source.tell()  # an open-ended range starts there
        if self.link is None:
            self.connection.sendfile(source, offset)
            return
        chunk = 1 << 20
        while True:
            self.link.wait(chunk)
            sent = os.sendfile(self.connection.fileno(), source.fileno(), offset, chunk)
            if sent == 0:
                return
            offset += sent


@contextlib.contextmanager
def serve_pep658(
    root: Path, slow: Mapping[str, float] | None = None, rate: float | None = None, metadata: bool = True
) -> Iterator[Served]:
    """Serve ``root`` on a free loopback port; every wheel's facts are computed before the first request."""
    for wheel in root.rglob("*.whl"):
        facts(wheel)
    served = Served("")
    link = _Link(rate) if rate else None
    handler = type(
        "Handler", (_Handler,), {"log": served.log, "slow": dict(slow or {}), "link": link, "serves_metadata": metadata}
    )
    server = LoopbackServer(("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    served.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
