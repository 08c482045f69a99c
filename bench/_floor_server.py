"""The floor for ``bench_serve.py``: the cheapest Python HTTP front for a guarded endpoint.

What it does per request is the minimum a guard in front of a SPARQL server must do, and
nothing else: read the request head, parse the request line and the headers, check the
Host, take the ``query`` parameter out of the target, ask :func:`hcgraph.sparqlguard.uses_service`
about it (unless ``plain``), and answer a fixed, precomputed SPARQL JSON ASK answer (no
worker, no store). asyncio ``Protocol`` callbacks (no streams, no tasks per connection) in
as many processes as ``hcgraph serve`` has HTTP processes, sharing one listening socket.
Its rate is the ceiling of any Python guard on this stack; ``plain`` skips the guard call
(pure HTTP). ``worker`` adds the one thing a guard that can stop a runaway query must do
(pyoxigraph cannot interrupt one, so queries run in processes it can kill): each query goes
over a pipe (4-byte length + text) to a worker process holding the store read-only, which
answers JSON the same way; still no timeouts, no content negotiation, no streaming.

Usage (from bench_serve.py)::

    python bench/_floor_server.py PORT guard|plain|worker PROCESSES [STORE]
"""

from __future__ import annotations

import asyncio
import collections
import io
import os
import socket
import subprocess
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
        if pool is not None:
            pool.submit(texts[0], self.transport, close)
            return True
        self.transport.write(ANSWER_CLOSE if close else ANSWER_KEEP)
        if close:
            self.transport.close()
        return True


class Pool:
    """Worker processes over pipes: a query out, an answer back (both length-prefixed)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, store: str, count: int) -> None:
        self.loop = loop
        self.idle: list[subprocess.Popen[bytes]] = []
        self.waiting: collections.deque[tuple[str, asyncio.Transport, bool]] = collections.deque()
        self.busy: dict[int, tuple[subprocess.Popen[bytes], asyncio.Transport, bool, bytes]] = {}
        for _ in range(count):
            proc = subprocess.Popen(
                [sys.executable, __file__, "0", "serve-worker", "1", store],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            )  # fmt: skip
            assert proc.stdout is not None
            assert proc.stdout.read(1) == b"R"  # the store is open
            os.set_blocking(proc.stdout.fileno(), False)
            self.idle.append(proc)

    def submit(self, query: str, transport: asyncio.Transport, close: bool) -> None:
        if not self.idle:
            self.waiting.append((query, transport, close))
            return
        proc = self.idle.pop()
        data = query.encode()
        assert proc.stdin is not None and proc.stdout is not None
        os.write(proc.stdin.fileno(), len(data).to_bytes(4, "big") + data)
        fd = proc.stdout.fileno()
        self.busy[fd] = (proc, transport, close, b"")
        self.loop.add_reader(fd, self.ready, fd)

    def ready(self, fd: int) -> None:
        proc, transport, close, got = self.busy[fd]
        got += os.read(fd, 1 << 16)
        if len(got) < 4 or len(got) < 4 + int.from_bytes(got[:4], "big"):
            self.busy[fd] = (proc, transport, close, got)
            return
        self.loop.remove_reader(fd)
        del self.busy[fd]
        body = got[4:]
        head = (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\n"
            b"Content-Length: %d\r\nVary: Accept\r\n%s\r\n"
            % (len(body), b"Connection: close\r\n" if close else b"")
        )
        if not transport.is_closing():
            transport.write(head + body)
            if close:
                transport.close()
        self.idle.append(proc)
        if self.waiting:
            self.submit(*self.waiting.popleft())


def worker(store: str) -> None:
    """A worker: the store read-only, one query at a time, answers as SPARQL JSON."""
    import pyoxigraph as ox

    db = ox.Store.read_only(store)
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    out.write(b"R")
    out.flush()
    while len(size := inp.read(4)) == 4:
        query = inp.read(int.from_bytes(size, "big")).decode()
        sink = io.BytesIO()
        db.query(query, use_default_graph_as_union=True).serialize(sink, ox.QueryResultsFormat.JSON)
        data = sink.getvalue()
        out.write(len(data).to_bytes(4, "big") + data)
        out.flush()


pool: Pool | None = None


def serve(sock: socket.socket, store: str | None) -> None:
    global pool
    loop = asyncio.new_event_loop()
    if store is not None:
        pool = Pool(loop, store, 2)  # as many as hcgraph serve's default per HTTP process
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
    store = sys.argv[4] if len(sys.argv) > 4 else None
    if mode == "serve-worker":
        assert store is not None
        _die_with_parent()
        worker(store)
        return
    Floor.guard = mode in {"guard", "worker"}
    Floor.hosts = frozenset({b"127.0.0.1:%d" % port, b"localhost:%d" % port})
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(1024)
    sock.setblocking(False)
    for _ in range(processes - 1):
        if os.fork() == 0:
            _die_with_parent()
            serve(sock, store)
            return
    serve(sock, store)


if __name__ == "__main__":
    main()
