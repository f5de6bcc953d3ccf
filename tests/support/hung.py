"""A loopback server that accepts connections and then never answers (or answers part of a response and then
stalls): the hung index or mirror that timeouts, stall reports and Ctrl-C are tested against."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["HungServer", "hung_server"]


@dataclass
class HungServer:
    url: str
    port: int
    #: Requests received so far (their first line), one per connection.
    requests: list[str] = field(default_factory=list)
    connected: threading.Event = field(default_factory=threading.Event)


@contextlib.contextmanager
def hung_server(prefix: bytes = b"") -> Iterator[HungServer]:
    """Yield a server on a free loopback port that reads each request and sends ``prefix`` (e.g. response headers
    and the first body bytes), then nothing more until the block ends."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    server = HungServer(f"http://127.0.0.1:{port}", port)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)
            with contextlib.suppress(OSError):
                conn.settimeout(5)
                first = conn.recv(65536).split(b"\r\n", 1)[0].decode("latin-1")
                server.requests.append(first)
                server.connected.set()
                if prefix:
                    conn.sendall(prefix)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        stop.set()
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes a blocked accept(), which close() alone does not
        listener.close()
        thread.join(timeout=10)  # no connection is taken after the ones closed below
        for conn in held:
            with contextlib.suppress(OSError):
                conn.close()
