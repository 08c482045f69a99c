"""The query worker pool, as one HTTP front process sees it.

Each :class:`Worker`'s answer pipe is a raw non-blocking fd the event loop watches (one
``os.read`` per readable event, frames cut from the bytes). A worker killed, or dead, is
replaced by the :class:`Pool` with a fresh one.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ServeError, first_line
from ..limits import died_of_memory
from .worker import READY, start_worker

if TYPE_CHECKING:
    from .http import Conn


class Worker:
    """A query worker process and its pipes."""

    def __init__(self, pool: Pool, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.pool = pool
        self.proc = proc
        self.fd_in = proc.stdin.fileno()
        self.fd_out = proc.stdout.fileno()
        os.set_blocking(self.fd_out, False)
        self.buffer = b""
        self.alive = True
        self.ready = False  # the store is open: it takes queries
        self.closed = False
        self.reading = False
        self.client: Conn | None = None  # the connection whose query it answers

    def listen(self) -> None:
        if not self.reading and not self.closed:
            self.pool.loop.add_reader(self.fd_out, self._readable)
            self.reading = True

    def pause(self) -> None:
        """Stop reading its answer (the client is slow): the worker blocks on the pipe."""
        if self.reading:
            self.pool.loop.remove_reader(self.fd_out)
            self.reading = False

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd_in, view) :]

    def _readable(self) -> None:
        try:
            data = os.read(self.fd_out, 1 << 18)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.pool.fail(self)
            return
        buf = self.buffer + data if self.buffer else data
        start = 0
        while len(buf) - start >= 5:
            end = start + 5 + int.from_bytes(buf[start + 1 : start + 5], "big")
            if len(buf) < end:
                break
            kind, payload = buf[start : start + 1], buf[start + 5 : end]
            start = end
            self.pool.frame(self, kind, payload)
            if self.closed:
                return
        self.buffer = buf[start:] if start else buf

    def kill(self) -> None:
        if self.alive:
            self.alive = False
            with contextlib.suppress(ProcessLookupError, OSError):
                self.proc.kill()

    def close(self) -> None:
        """Kill it and close its pipes (it is reaped by :meth:`Pool.reap`)."""
        self.kill()
        self.pause()
        if not self.closed:
            self.closed = True
            for pipe in (self.proc.stdin, self.proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()


class Pool:
    """``size`` workers on one database, each limited to ``query_memory`` bytes (0: no
    limit): idle ones, queued clients, ended ones not yet reaped. ``started`` is done once
    every first worker opened the store (or failed)."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, db_path: Path, size: int, query_memory: int = 0
    ) -> None:
        self.loop = loop
        self.db_path = db_path
        self.size = size
        self.query_memory = query_memory
        self.all: list[Worker] = []
        self.idle: list[Worker] = []
        self.waiting: collections.deque[Conn] = collections.deque()
        self.dying: list[subprocess.Popen[bytes]] = []
        self.closing = False
        self.started: asyncio.Future[None] = loop.create_future()

    def start(self) -> None:
        for _ in range(self.size):
            self._spawn()

    def take(self, client: Conn) -> None:
        """Give ``client`` an idle worker now, or queue it for the next one free."""
        if self.idle:
            client.start(self.idle.pop())
        else:
            client.waiting = True
            self.waiting.append(client)

    def _spawn(self) -> None:
        if self.closing:
            return
        try:
            proc = start_worker(self.db_path, self.query_memory)
        except OSError as exc:
            self._start_failed(f"a query worker did not start: {first_line(exc)}")
            return
        worker = Worker(self, proc)
        self.all.append(worker)
        worker.listen()

    def _start_failed(self, message: str) -> None:
        if not self.started.done():
            self.started.set_exception(ServeError(message))
        elif not self.closing:
            self.loop.call_later(1.0, self._spawn)

    def frame(self, worker: Worker, kind: bytes, payload: bytes) -> None:
        """A frame from a worker: its first says whether it opened the store, the others
        belong to the query it answers."""
        if worker.ready and worker.client is not None:
            worker.client.frame(kind, payload)
        elif worker.ready or kind != READY:  # a frame for no query, or the store not open
            self.fail(worker, payload.decode("utf-8", "replace") or "a query worker did not start")
        else:
            worker.ready = True
            self.put_idle(worker)
            if not self.started.done() and all(w.ready for w in self.all):
                self.started.set_result(None)

    def fail(self, worker: Worker, message: str = "the query worker exited") -> None:
        """The worker ended or broke: replace it (one still starting: see
        ``_start_failed``); its query (if any) learns it, and whether the worker died
        of its memory limit."""
        client, worker.client = worker.client, None
        died = self._out_of_memory(worker) if client is not None and not client.reason else False
        self.discard(worker, replace=worker.ready)
        if not worker.ready:
            self._start_failed(message)
        elif client is not None:
            client.worker_failed(died)

    def _out_of_memory(self, worker: Worker) -> bool:
        """Did the worker, ended with its query unanswered, die of its memory limit? Its
        pipe closed as it exited: its status follows within moments."""
        if not self.query_memory:
            return False
        try:
            code = worker.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return False
        return died_of_memory(code)

    def discard(self, worker: Worker, *, replace: bool = True) -> None:
        """End ``worker`` (killed, or broken) and start a fresh one in its place."""
        if worker.closed:
            return
        self.dying.append(worker.proc)
        worker.close()
        if worker in self.all:
            self.all.remove(worker)
        if worker in self.idle:
            self.idle.remove(worker)
        if replace:
            self._spawn()

    def put_idle(self, worker: Worker) -> None:
        """``worker`` is free: the first client still waiting gets it, else it idles."""
        worker.listen()
        while self.waiting:
            client = self.waiting.popleft()
            if client.waiting:
                client.start(worker)
                return
        self.idle.append(worker)

    def reap(self) -> None:
        """Collect the exit status of ended workers (no zombies)."""
        if self.dying:
            self.dying = [p for p in self.dying if p.poll() is None]

    async def close(self) -> None:
        """End every worker; wait (5 s at most) for them to exit."""
        self.closing = True
        for worker in list(self.all):
            self.discard(worker, replace=False)
        until = self.loop.time() + 5
        while self.dying and self.loop.time() < until:
            self.reap()
            await asyncio.sleep(0.01)
