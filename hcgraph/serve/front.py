"""The HTTP front of ``hcgraph serve``: one event loop, its connections, its worker pool.

It runs in a thread of the :class:`~hcgraph.serve.server.Endpoint`'s process; its open
connections are the server's, held to ``max_connections``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import socket
from typing import TYPE_CHECKING

from .endpoint import Routes
from .http import Conn
from .pool import Pool
from .server import BACKLOG

if TYPE_CHECKING:
    from .server import Endpoint

_TICK = 0.1  # how often in-flight queries are checked for a gone client or a passed deadline


def new_loop() -> asyncio.AbstractEventLoop:
    """The front's event loop: uvloop's (libuv: accepting, reading and writing in C) where
    it is installed, else asyncio's own."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - a dependency; kept optional for odd platforms
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class Front:
    """The HTTP server's side: its event loop, connections (at most ``max_connections``) and
    query workers. ``ready`` is done once it serves, or holds why it could not start."""

    def __init__(self, endpoint: Endpoint, sock: socket.socket) -> None:
        self.sock = sock
        self.max_connections = endpoint.max_connections
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
