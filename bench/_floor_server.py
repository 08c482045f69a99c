"""The floor for ``bench_serve.py``: the cheapest Python HTTP front for a guarded endpoint.

What it does per request is the minimum a guard in front of a SPARQL server must do, and
nothing else: read the request head, parse the request line and the headers, check the
Host, take the ``query`` parameter out of the target, ask :func:`hcgraph.sparqlguard.uses_service`
about it (unless ``plain``), and answer a fixed, precomputed SPARQL JSON ASK answer (no
worker, no store). asyncio ``Protocol`` callbacks (no streams, no tasks per connection) in
as many processes as ``hcgraph serve`` has HTTP processes, sharing one listening socket.
Its rate is the ceiling of any Python guard on this stack; ``plain`` skips the guard call
(pure HTTP).

Usage (from bench_serve.py)::

    python bench/_floor_server.py PORT guard|plain PROCESSES
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path
from urllib.parse import parse_qs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hcgraph.sparqlguard import uses_service

BODY = b'{"head":{},"boolean":true}'
HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\n"
    b"Content-Length: %d\r\nVary: Accept\r\n" % len(BODY)
)
ANSWER_KEEP = HEAD + b"\r\n" + BODY
ANSWER_CLOSE = HEAD + b"Connection: close\r\n\r\n" + BODY
REFUSED = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class Floor(asyncio.Protocol):
    guard = True
    hosts: frozenset[bytes] = frozenset()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: asyncio.Transport = transport  # type: ignore[assignment]
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) != -1:
            head, self.buffer = self.buffer[:end], self.buffer[end + 4 :]
            if not self.answer(head):
                self.transport.write(REFUSED)
                self.transport.close()
                return

    def answer(self, head: bytes) -> bool:
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ")
        if len(parts) != 3 or parts[2] not in (b"HTTP/1.1", b"HTTP/1.0"):
            return False
        close = False
        host = b""
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            if not sep:
                return False
            name = name.lower()
            if name == b"host":
                host = value.strip().lower()
            elif name == b"connection":
                close = b"close" in value.lower()
        if host not in self.hosts:
            return False
        path, _, query = parts[1].decode("latin-1").partition("?")
        texts = parse_qs(query).get("query", [])
        if path != "/query" or len(texts) != 1:
            return False
        if self.guard and uses_service(texts[0]):
            return False
        self.transport.write(ANSWER_CLOSE if close else ANSWER_KEEP)
        if close:
            self.transport.close()
        return True


def serve(sock: socket.socket) -> None:
    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(loop.create_server(Floor, sock=sock, backlog=1024))
    try:
        loop.run_forever()
    finally:
        server.close()


def _die_with_parent() -> None:
    """Linux: a forked server process ends when the first one does (even by SIGKILL)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def main() -> None:
    port, mode, processes = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    Floor.guard = mode == "guard"
    Floor.hosts = frozenset({b"127.0.0.1:%d" % port, b"localhost:%d" % port})
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(1024)
    sock.setblocking(False)
    for _ in range(processes - 1):
        if os.fork() == 0:
            _die_with_parent()
            serve(sock)
            return
    serve(sock)


if __name__ == "__main__":
    main()
