"""The query worker pool, as the HTTP front sees it.

Queries wait in one queue; a free worker takes its share in one batch, one pipe write, and
answers them in order (docs/queries.md, *Batches*). A worker killed or dead is replaced and its
batch's unstarted queries go back to the front of the queue; so do those behind a head running
past ``STEAL_AFTER_S``, which the worker is told to skip (a flag in memory both map).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import math
import mmap
import os
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ServeError, first_line
from ..limits import died_of_memory
from .worker import ABORT, END, READY, SKIPPED, WHOLE, start_worker

if TYPE_CHECKING:
    from .http import Conn

MAX_BATCH = 32  # queries sent to a worker in one write, at most
STEAL_AFTER_S = 0.1  # a batch's head running this long gives the batch's rest back
_ENDS = (WHOLE, END, ABORT, SKIPPED)  # the frames that end an answer


class Worker:
    """A query worker process, its pipes, its batch (the clients of the queries sent to it
    and not yet answered, in order: None for one given back or whose client went) and the
    skip flag it reads before each query."""

    def __init__(self, pool: Pool, proc: subprocess.Popen[bytes], skip: mmap.mmap | None) -> None:
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
        self.batch: collections.deque[Conn | None] = collections.deque()
        self.sent = 0  # queries sent so far: the number of the batch's last one
        self.since = 0.0  # when the head of the batch started (monotonic)
        self.skip = skip

    @property
    def head(self) -> Conn | None:
        """The client whose answer the worker writes now (or will write next)."""
        return self.batch[0] if self.batch else None

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

    def skip_behind_head(self) -> None:
        """Tell the worker to skip (answer with ``K``) the queries sent after its batch's
        head, those it has not started (never the head: it may not have started yet)."""
        if self.skip is not None:
            first = self.sent - len(self.batch) + 2  # the number of the one after the head
            with contextlib.suppress(ValueError):  # closed
                self.skip[:16] = first.to_bytes(8, "little") + self.sent.to_bytes(8, "little")

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
            if self.skip is not None:
                self.skip.close()


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
        self.due = False  # a dispatch is scheduled
        self.largest = 0  # the largest batch sent so far (tests, diagnostics)
        self.given_back = 0  # queries taken back from a batch so far
        self.started: asyncio.Future[None] = loop.create_future()

    def start(self) -> None:
        for _ in range(self.size):
            self._spawn()

    def take(self, client: Conn) -> None:
        """Queue ``client``'s query; it goes out with the next batch."""
        client.waiting = True
        self.waiting.append(client)
        self._schedule()

    def _schedule(self) -> None:
        """Dispatch once the event loop's current turn is over: the queries that turn
        parsed go out together."""
        if not self.due and self.idle:
            self.due = True
            self.loop.call_soon(self.dispatch)

    def dispatch(self) -> None:
        """Give each idle worker its share of the queued queries (all of them, shared
        between the workers that take queries, ``MAX_BATCH`` at most), in one write."""
        self.due = False
        waiting = self.waiting
        while self.idle and waiting:
            share = min(MAX_BATCH, math.ceil(len(waiting) / max(1, len(self.all))))
            worker = self.idle.pop()
            batch: list[Conn] = []
            while waiting and len(batch) < share:
                client = waiting.popleft()
                if client.waiting:  # not timed out, not gone
                    batch.append(client)
            if not batch:
                self.idle.append(worker)
                return
            for client in batch:
                client.waiting = False
                client.worker = worker
                worker.batch.append(client)
            worker.sent += len(batch)
            self.largest = max(self.largest, len(batch))
            worker.since = time.monotonic()
            try:
                worker.send(b"".join(client.message for client in batch))
            except OSError:
                self.fail(worker)

    def _spawn(self) -> None:
        if self.closing:
            return
        skip: mmap.mmap | None = None
        fd = -1
        try:
            if hasattr(os, "memfd_create"):
                fd = os.memfd_create("hcgraph-serve-skip")
                os.ftruncate(fd, mmap.PAGESIZE)
                skip = mmap.mmap(fd, mmap.PAGESIZE)
            proc = start_worker(self.db_path, self.query_memory, fd)
        except OSError as exc:
            if skip is not None:
                skip.close()
            self._start_failed(f"a query worker did not start: {first_line(exc)}")
            return
        finally:
            if fd >= 0:
                os.close(fd)
        worker = Worker(self, proc, skip)
        self.all.append(worker)
        worker.listen()

    def _start_failed(self, message: str) -> None:
        if not self.started.done():
            self.started.set_exception(ServeError(message))
        elif not self.closing:
            self.loop.call_later(1.0, self._spawn)

    def frame(self, worker: Worker, kind: bytes, payload: bytes) -> None:
        """A frame from a worker: its first says whether it opened the store, the others
        belong to the query at the head of its batch (dropped: read to its end)."""
        if not worker.ready:
            self._first_frame(worker, kind, payload)
        elif not worker.batch:  # a frame for no query
            self.fail(worker)
        elif (client := worker.batch[0]) is not None:  # a K for it is nonsense: it fails
            client.frame(kind, payload)
        elif kind in _ENDS:  # the end of an answer no one waits for
            self.answered(worker)

    def _first_frame(self, worker: Worker, kind: bytes, payload: bytes) -> None:
        """``R``: the worker opened the store and takes queries; anything else: why not."""
        if kind != READY:
            self.fail(worker, payload.decode("utf-8", "replace") or "a query worker did not start")
            return
        worker.ready = True
        self.put_idle(worker)
        if not self.started.done() and all(w.ready for w in self.all):
            self.started.set_result(None)

    def answered(self, worker: Worker) -> None:
        """The head of ``worker``'s batch is answered: on to the next, or the worker is
        free; a worker killed meanwhile (a timeout, a client gone) is replaced."""
        worker.batch.popleft()
        if not worker.alive:
            self._requeue(worker)
            self.discard(worker)
            return
        worker.since = time.monotonic()
        if not worker.batch:
            self.put_idle(worker)
        elif (head := worker.batch[0]) is not None and head.paused_since is not None:
            worker.pause()

    def drop(self, client: Conn) -> None:
        """``client`` (timed out, or gone) no longer waits for the query it has in a
        worker's batch, behind the head: its answer will be read and thrown away."""
        worker, client.worker = client.worker, None
        if worker is not None:
            for i, queued in enumerate(worker.batch):
                if queued is client:
                    worker.batch[i] = None

    def steal(self, now: float) -> None:
        """Give the queries queued behind a head that has run ``STEAL_AFTER_S`` back to
        the queue (first in line), to be run by another worker; the worker skips them."""
        for worker in self.all:
            if len(worker.batch) > 1 and now - worker.since >= STEAL_AFTER_S:
                self._requeue(worker)
                worker.skip_behind_head()
        self._schedule()

    def _requeue(self, worker: Worker) -> None:
        """The queries behind the head of ``worker``'s batch go back to the front of the
        queue, in order; they stay in the batch as None (any answers are thrown away)."""
        batch = worker.batch
        back = [client for client in list(batch)[1:] if client is not None]
        for i in range(1, len(batch)):
            batch[i] = None
        self.given_back += len(back)
        for client in reversed(back):
            client.worker = None
            client.waiting = True
            self.waiting.appendleft(client)
        self._schedule()

    def fail(self, worker: Worker, message: str = "the query worker exited") -> None:
        """The worker ended or broke: replace it (one still starting: see
        ``_start_failed``); the queries behind its head go back to the queue, its head
        (if any) learns it, and whether the worker died of its memory limit."""
        self._requeue(worker)
        client = worker.head
        worker.batch.clear()
        died = self._out_of_memory(worker) if client is not None and not client.reason else False
        self.discard(worker, replace=worker.ready)
        if not worker.ready:
            self._start_failed(message)
        elif client is not None:
            client.worker = None
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
        """``worker`` is free: it takes the next batch."""
        worker.listen()
        self.idle.append(worker)
        self._schedule()

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
