"""A forwarding proxy on loopback that counts what goes through it: ``CONNECT host:port`` tunnels (https) and
absolute-form requests (``GET http://host:port/path``, plain http), as a corporate proxy sees them.

It forwards only to loopback addresses (anything else is answered 403), one request per client connection.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = ["CountingProxy", "counting_proxy"]


@dataclass
class CountingProxy:
    url: str
    #: The request line of every request that reached the proxy, e.g. ``CONNECT 127.0.0.1:4443 HTTP/1.1``.
    requests: list[str] = field(default_factory=list)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _head(sock: socket.socket) -> tuple[bytes, bytes] | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk or len(data) > 1 << 20:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _handle(client: socket.socket, proxy: CountingProxy, lock: threading.Lock) -> None:
    with contextlib.suppress(OSError, ValueError), client:
        client.settimeout(10)
        got = _head(client)
        if got is None:
            return
        head, rest = got
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ", 2)
        with lock:
            proxy.requests.append(lines[0])
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
        else:
            parts = urlsplit(target)
            host, port = parts.hostname or "", str(parts.port or 80)
        if not _loopback(host):
            client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        with socket.create_connection((host.strip("[]"), int(port)), timeout=10) as upstream:
            if method == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                upstream.sendall(rest)
            else:
                path = urlsplit(target).path or "/"
                query = urlsplit(target).query
                headers = [
                    line
                    for line in lines[1:]
                    if line.split(":", 1)[0].strip().lower() not in ("connection", "proxy-connection", "keep-alive")
                ]
                request = [f"{method} {path}{'?' + query if query else ''} {version}", *headers, "Connection: close"]
                upstream.sendall("\r\n".join(request).encode("latin-1") + b"\r\n\r\n" + rest)
            # The client's bytes go up on a helper; the answer comes back here, and when the server has sent it
            # (and closed, or the tunnel ends) the client's connection is closed too.
            threading.Thread(target=_pipe, args=(client, upstream), daemon=True).start()
            _pipe(upstream, client)


@contextlib.contextmanager
def counting_proxy() -> Iterator[CountingProxy]:
    """A proxy on a free 127.0.0.1 port for the block's length."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.05)
    proxy = CountingProxy(f"http://127.0.0.1:{listener.getsockname()[1]}")
    stop = threading.Event()
    lock = threading.Lock()

    def serve() -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=_handle, args=(client, proxy, lock), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        stop.set()
        thread.join(5)
        listener.close()
