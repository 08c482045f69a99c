"""An HTTP front of ``hcgraph serve``: one event loop, its connections, its worker pool.

The first front is a thread of the :class:`~hcgraph.serve.server.Endpoint`'s process; each
further one a child process on the same listening socket. The connection cap is the server's:
every front takes a place from one :class:`ConnectionCount` in memory they share.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import fcntl
import mmap
import os
import pickle
import signal
import socket
import sys
import tempfile
from typing import TYPE_CHECKING

from ..errors import first_line
from .endpoint import Routes
from .http import Conn
from .pool import Pool
from .server import BACKLOG
from .worker import die_with_parent

if TYPE_CHECKING:
    from .server import Endpoint

_TICK = 0.1  # how often in-flight queries are checked for a gone client or a passed deadline


class ConnectionCount:
    """The number of connections open in the whole server (at most ``limit``), in a page of
    memory every front maps (``fd``: a child front's, handed down), changed under a POSIX
    record lock; not ``shared`` (one front): counted in this process, without the lock."""

    def __init__(self, limit: int, fd: int | None = None, *, shared: bool = True) -> None:
        self.limit = limit
        self.shared = shared or fd is not None
        self.count = 0  # the count, when it is not shared
        if fd is None:
            if hasattr(os, "memfd_create"):
                fd = os.memfd_create("hcgraph-serve-connections")
            else:  # pragma: no cover - not Linux
                fd, name = tempfile.mkstemp(prefix="hcgraph-serve-")
                os.unlink(name)
            os.ftruncate(fd, mmap.PAGESIZE)
        self.fd = fd
        self.map = mmap.mmap(fd, mmap.PAGESIZE)

    def _add(self, step: int) -> bool:
        fcntl.lockf(self.fd, fcntl.LOCK_EX)
        try:
            count = int.from_bytes(self.map[:8], "little")
            if step > 0 and count >= self.limit:
                return False
            self.map[:8] = max(0, count + step).to_bytes(8, "little")
            return True
        finally:
            fcntl.lockf(self.fd, fcntl.LOCK_UN)

    def take(self) -> bool:
        """Take a place for a new connection; False if the server is full."""
        if self.shared:
            return self._add(1)
        if self.count >= self.limit:
            return False
        self.count += 1
        return True

    def give(self) -> None:
        """Give back the place of a connection that closed."""
        if self.shared:
            self._add(-1)
        else:
            self.count = max(0, self.count - 1)

    def close(self) -> None:
        self.map.close()
        os.close(self.fd)


def new_loop() -> asyncio.AbstractEventLoop:
    """The front's event loop: uvloop's (libuv: accepting, reading and writing in C) where
    it is installed, else asyncio's own."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - a dependency; kept optional for odd platforms
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class Front:
    """One HTTP server process's (or thread's) side: its event loop, connections and query
    workers. ``ready`` is done once it serves, or holds why it could not start."""

    def __init__(self, endpoint: Endpoint, sock: socket.socket, cap: ConnectionCount) -> None:
        self.sock = sock
        self.cap = cap
        self.timeout_s = endpoint.timeout_s
        self.read_timeout_s = endpoint.read_timeout_s
        self.routes = Routes(
            endpoint.host, endpoint.port,
            allow_service=endpoint.allow_service, static=endpoint.static,
        )  # fmt: skip
        self.conns: set[Conn] = set()
        self.loop = new_loop()
        self.loop.set_exception_handler(lambda _loop, _context: None)  # quiet: no tracebacks
        self.pool = Pool(self.loop, endpoint.db_path, endpoint.workers, endpoint.query_memory)
        self.stopping = asyncio.Event()
        self.ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._ticker: asyncio.TimerHandle | None = None

    def request_stop(self) -> None:
        """Stop serving (from any thread, or a signal handler)."""
        if not self.loop.is_closed():
            with contextlib.suppress(RuntimeError):
                self.loop.call_soon_threadsafe(self.stopping.set)

    def serve(self) -> None:
        """Serve on the front's event loop until it stops; an error before it serves (a
        worker could not open the store) goes to ``ready``."""
        try:
            self.loop.run_until_complete(self._run())
        except BaseException as exc:
            if not self.ready.done():
                self.ready.set_exception(exc)
        finally:
            self.loop.close()

    async def _run(self) -> None:
        server: asyncio.Server | None = None
        self._ticker = self.loop.call_later(_TICK, self._tick)
        try:
            self.pool.start()
            await self.pool.started
            server = await self.loop.create_server(
                lambda: Conn(self), sock=self.sock, backlog=BACKLOG
            )
            self.ready.set_result(None)
            await self.stopping.wait()
        finally:
            await self._shut(server)

    async def _shut(self, server: asyncio.Server | None) -> None:
        """Stop listening, drop every connection, end the workers (5 s at most)."""
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if server is not None:
            server.close()
        else:
            self.sock.close()
        for conn in list(self.conns):
            conn.transport.abort()
        await self.pool.close()
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)

    def _tick(self) -> None:
        """The watchdog: time limits and gone clients, slow batches given back, reaping."""
        try:
            now = self.loop.time()
            for conn in list(self.conns):
                conn.tick(now)
            self.pool.steal(now)
            self.pool.reap()
        finally:
            if not self.pool.closing:
                self._ticker = self.loop.call_later(_TICK, self._tick)


def front_main() -> None:
    """A further HTTP server process (``python -c ... SOCKET_FD COUNT_FD``, its
    :class:`~hcgraph.serve.server.Endpoint` pickled on stdin): serves the inherited listening
    socket with workers of its own until SIGTERM; prints ``ready`` once serving."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the first process's to handle
    die_with_parent()
    endpoint: Endpoint = pickle.load(sys.stdin.buffer)
    sock = socket.socket(fileno=int(sys.argv[1]))
    sock.setblocking(False)
    front = Front(endpoint, sock, ConnectionCount(endpoint.max_connections, int(sys.argv[2])))

    def report(done: concurrent.futures.Future[None]) -> None:
        error = done.exception()
        print("ready" if error is None else f"error: {first_line(error)}", flush=True)

    front.ready.add_done_callback(report)
    signal.signal(signal.SIGTERM, lambda _signum, _frame: front.request_stop())
    front.serve()
