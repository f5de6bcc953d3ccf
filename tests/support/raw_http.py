"""A loopback server whose every answer a test writes byte by byte: the hostile or broken server (malformed
chunking, a Content-Length the body never reaches, bodies dripped a byte at a time, redirects to plain http,
a file that changes between two requests) that ``http.server`` cannot be made to be.

One request per connection: the script answers it and the connection is closed (answers built with
:func:`reply` say ``Connection: close``). With ``tls`` the socket is wrapped first; a client that refuses the
certificate is counted in ``connections`` and never reaches ``requests``. Everything stops when the block ends.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

__all__ = ["Conn", "RawRequest", "RawServer", "raw_server", "reply"]


@dataclass(frozen=True)
class RawRequest:
    method: str
    target: str
    #: Header names in lower case.
    headers: dict[str, str]


class Conn:
    """The connection a script answers on."""

    def __init__(self, sock: socket.socket, stop: threading.Event) -> None:
        self._sock, self._stop = sock, stop

    def send(self, data: bytes) -> bool:
        """Send ``data``; ``False`` if the client has gone."""
        try:
            self._sock.sendall(data)
            return True
        except OSError:
            return False

    def drip(self, data: bytes, every: float, *, at_most: float = 10.0) -> None:
        """Send ``data`` one byte every ``every`` seconds, for at most ``at_most`` seconds (so a client without a
        defence still ends, with a cut-off body) or until the client goes or the server stops."""
        until = time.monotonic() + at_most
        for i in range(len(data)):
            if self._stop.is_set() or time.monotonic() > until or not self.send(data[i : i + 1]):
                return
            self._stop.wait(every)


Script = Callable[[RawRequest, Conn], None]


@dataclass
class RawServer:
    url: str
    port: int
    requests: list[RawRequest] = field(default_factory=list)
    #: Connections accepted, a refused TLS handshake included.
    connections: int = 0


def reply(status: str, body: bytes = b"", **headers: str) -> bytes:
    """A whole HTTP/1.1 answer: ``reply("200 OK", b"...", ETag='"v1"')``; ``Content-Length`` is the body's unless
    given (``Content_Length="999"``), ``Connection: close`` always."""
    fields = {"Content-Length": str(len(body)), **{k.replace("_", "-"): v for k, v in headers.items()}}
    fields["Connection"] = "close"
    head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items()) + "\r\n"
    return head.encode("latin-1") + body


def _read_head(sock: socket.socket) -> RawRequest | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
        if len(data) > 1 << 20:
            return None
    lines = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return RawRequest(method, target, headers)


@contextlib.contextmanager
def raw_server(script: Script, *, tls: ssl.SSLContext | None = None) -> Iterator[RawServer]:
    """Serve on a free 127.0.0.1 port: each request is answered by ``script(request, conn)``."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.05)  # the accept loop looks at ``stop`` this often
    port = listener.getsockname()[1]
    server = RawServer(f"{'https' if tls else 'http'}://127.0.0.1:{port}", port)
    stop = threading.Event()
    lock = threading.Lock()
    open_socks: list[socket.socket] = []

    def handle(sock: socket.socket) -> None:
        with contextlib.suppress(OSError, ValueError, ssl.SSLError):
            sock.settimeout(5)
            if tls is not None:
                sock = tls.wrap_socket(sock, server_side=True)
                with lock:
                    open_socks.append(sock)
            request = _read_head(sock)
            if request is None:
                return
            with lock:
                server.requests.append(request)
            script(request, Conn(sock, stop))
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()

    def serve() -> None:
        while not stop.is_set():
            try:
                sock, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with lock:
                server.connections += 1
                open_socks.append(sock)
            threading.Thread(target=handle, args=(sock,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield server
    finally:
        stop.set()
        listener.close()
        with lock:
            for sock in open_socks:
                with contextlib.suppress(OSError):
                    sock.close()
