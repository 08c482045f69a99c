"""Turning fetched bodies into stored stories, off the event loop: in a thread or a process.

A :class:`BatchRunner` runs the ingest pipeline over batches of fetched bodies while the
event loop keeps fetching: :class:`Runner` in a thread, :class:`ProcessRunner` (the default:
no GIL shared with the event loop) in a store worker process that holds the store. The
worker is started with ``python -P -c …`` (a caller's script is never imported again) and
spoken to over a socket pair wrapped in :class:`multiprocessing.connection.Connection`:

* requests go one at a time, parent → worker: ``(op, batch)``, op ``submit`` or ``close``
  (whose ``batch`` says whether to compact the store, when due, before closing it);
* the worker answers each with ``("reply", ok, value)`` (for ``submit``: the batch's number
  ``n``, once it is mapped), and sends ``("landed", n, ok, outcomes or error)`` from its
  writer thread when batch ``n``'s write ends.

What the worker promises (errors, signals, a parent gone): "Speed of the crawl" in
docs/crawling.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..errors import StoreBusyError, StoreError
from ..pipeline import Document, Outcome, Pipeline
from ..store import Store

__all__ = ["BatchRunner", "ProcessRunner", "Runner", "open_store"]

T = TypeVar("T")

_CLOSE_WAIT = 600.0  # seconds close() waits for the worker's last writes (a batch takes ~3 s)
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
# The worker imports this very hcgraph: its root goes first on sys.path unless it is there
# already (an installed hcgraph: putting site-packages before the stdlib could shadow it).
_START = (
    "import os, sys; root = os.path.realpath(sys.argv[2]); "
    "root in map(os.path.realpath, sys.path) or sys.path.insert(0, root); "
    "from hcgraph.crawling.worker import main; main(sys.argv)"
)


def open_store(directory: Path, wait: float = 15.0) -> Store:
    """Open a store for writing, waiting up to ``wait`` s while another process holds it
    (a crawl killed a moment ago may hold it an instant longer); other failures at once."""
    deadline = time.monotonic() + wait
    while True:
        try:
            return Store(directory, holder="hcgraph crawl")
        except StoreBusyError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.2)


class BatchRunner(Protocol):
    """What the crawler needs of whatever runs the pipeline: :class:`Runner` (a thread) or
    :class:`ProcessRunner` (a process)."""

    async def start(self) -> None:
        """Wait until batches can be submitted (raises what opening the store raised)."""
        ...

    async def submit(self, documents: Sequence[Document]) -> asyncio.Future[list[Outcome]]:
        """Parse, dedupe and map one batch and queue its write; once mapped, the future of
        its outcomes in order, which ends when the batch has landed (or its write failed)."""
        ...

    async def process(self, documents: Sequence[Document]) -> list[Outcome]:
        """Process one batch (parse, dedupe, map, write) and return its outcomes in order."""
        return await (await self.submit(documents))

    async def close(self, *, compact: bool = True) -> None:
        """Finish the writes in flight and close the store; with ``compact``, compact it
        first if that is due (a crawl that completed)."""
        ...


class Runner(BatchRunner):
    """Runs the pipeline over batches in a thread, on the open ``store`` (closed by
    :meth:`close` if ``owns_store``); ``claims``: story IRI → (crawl URL, story id) stored
    by this crawl before (a resume)."""

    def __init__(
        self, store: Store, claims: dict[str, tuple[str, str | None]], *, owns_store: bool = False
    ) -> None:
        self.store = store
        self.owns_store = owns_store
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="hcgraph-process")
        self.pipeline: Pipeline | None = None
        self.claims = claims

    async def start(self) -> None:
        """Nothing to wait for: the store is open already."""

    def _pipeline(self) -> Pipeline:
        if self.pipeline is None:  # made in the thread: opening it recovers the store
            self.pipeline = Pipeline(self.store, crawl_claims=self.claims)
        return self.pipeline

    async def _run(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn)

    async def submit(self, documents: Sequence[Document]) -> asyncio.Future[list[Outcome]]:
        batch = list(documents)
        return asyncio.wrap_future(await self._run(lambda: self._pipeline().submit(batch)))

    async def close(self, *, compact: bool = True) -> None:
        """As :meth:`BatchRunner.close`; then stop the thread, close the store if owned.

        Raises:
            StoreError: the store's last flush failed (the thread is stopped all the same).
        """
        try:
            if (pipeline := self.pipeline) is not None:
                await self._run(lambda: pipeline.close(compact=compact))
        finally:
            self.pool.shutdown(wait=True)
        if self.owns_store:
            self.store.close()


class _Remote(Exception):
    """An error from the worker that could not be sent as itself."""


def _wire(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a stand-in with its type and message."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        if isinstance(exc, StoreError):
            return StoreError(str(exc))
        return _Remote(f"{type(exc).__name__}: {exc}")
    return exc


def _serve(conn: Connection) -> None:
    """The worker's main loop (runs in the child process): open, then answer requests."""
    lock = threading.Lock()

    def send(message: tuple[Any, ...]) -> None:
        with lock, contextlib.suppress(OSError):
            conn.send(message)

    try:
        _, (directory, claims, wait) = conn.recv()
        store = open_store(Path(directory), wait)
        pipeline = Pipeline(store, crawl_claims=claims)
    except BaseException as exc:  # every failure to start is the parent's to report
        send(("reply", False, _wire(exc)))
        return
    send(("reply", True, None))
    failed = compact = False
    try:
        compact = _answer(conn, pipeline, send)
    except BaseException as exc:  # ends the worker: the call in hand failed, not succeeded
        send(("reply", False, _wire(exc)))
        failed = True
        raise
    finally:
        try:
            pipeline.close(compact=compact)
            store.close()
            closed: tuple[Any, ...] = ("reply", True, None)
        except BaseException as exc:
            closed = ("reply", False, _wire(exc))
        if not failed:  # the answer to "close" (or to nobody, when the parent is gone)
            send(closed)
        conn.close()


def _answer(conn: Connection, pipeline: Pipeline, send: Callable[[tuple[Any, ...]], None]) -> bool:
    """Answer ``submit`` requests until ``close`` (or until the parent is gone); whether the
    store is to be compacted (when due) before it is closed."""
    submitted = 0
    while True:
        try:
            op, batch = conn.recv()
        except (EOFError, OSError):
            return False  # the parent is gone: finish the writes
        if op == "close":
            return bool(batch)
        try:
            if op != "submit":  # pragma: no cover - the parent sends only these ops
                raise ValueError(f"unknown op {op!r}")
            landed = pipeline.submit(batch)
        except Exception as exc:
            send(("reply", False, _wire(exc)))
            continue
        submitted += 1
        send(("reply", True, submitted))
        landed.add_done_callback(functools.partial(_announce, send, submitted))


def _announce(
    send: Callable[[tuple[Any, ...]], None], n: int, future: Future[list[Outcome]]
) -> None:
    """Batch ``n``'s write ended (``future`` done): tell the parent how."""
    error = future.exception()
    if error is None:
        send(("landed", n, True, future.result()))
    else:
        send(("landed", n, False, _wire(error)))


def main(argv: Sequence[str]) -> None:
    """The worker process's entry point: serve the parent over the socket ``argv[1]``."""
    # The parent decides how a crawl stops: a Ctrl-C, or a SIGTERM sent to every process of
    # the crawl (systemctl stop: the whole cgroup), must not kill a write it will wait for.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _serve(Connection(int(argv[1])))


class ProcessRunner(BatchRunner):
    """Runs the pipeline over batches in a worker process that opens the store in
    ``directory`` (this process must not), waiting up to ``wait`` s while another process
    holds it; ``claims`` as for :class:`Runner`."""

    def __init__(
        self, directory: Path, claims: dict[str, tuple[str, str | None]], *, wait: float = 15.0
    ) -> None:
        ours, theirs = socket.socketpair()
        with ours, theirs:
            self._process = subprocess.Popen(
                # -P: not the working directory first on sys.path (it may hold another hcgraph)
                [sys.executable, "-P", "-c", _START, str(theirs.fileno()), _PACKAGE_ROOT],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C meant for the crawl is the crawl's to handle
            )
            self._conn = Connection(ours.detach())
        self._sender = ThreadPoolExecutor(1, thread_name_prefix="hcgraph-send")
        self._sender.submit(self._conn.send, ("open", (str(directory), claims, wait)))
        self._reply: asyncio.Future[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._dead: str | None = None
        self._landed: dict[int, asyncio.Future[list[Outcome]]] = {}  # batches writing
        self._submitted = 0  # batches the worker took
        self._asking = asyncio.Lock()
        self._closed = False

    @property
    def pid(self) -> int:
        """The worker's process id."""
        return self._process.pid

    async def start(self) -> None:
        """Wait until the worker has opened the store (raises what opening raised)."""
        self._loop = asyncio.get_running_loop()
        self._reply = self._loop.create_future()
        self._loop.add_reader(self._conn.fileno(), self._readable)
        try:
            await self._reply
        except BaseException as exc:
            self._dead = f"the store worker did not start: {exc}"  # close() has nothing to ask
            raise

    def _readable(self) -> None:
        try:
            while self._conn.poll():
                message = self._conn.recv()
                if message[0] == "landed":
                    _, n, ok, value = message
                    _resolve(self._landed.pop(n, None), ok, value)
                else:
                    _, ok, value = message
                    reply, self._reply = self._reply, None
                    _resolve(reply, ok, value)
        except (EOFError, OSError):
            self._died()

    def _died(self) -> None:
        assert self._loop is not None
        self._loop.remove_reader(self._conn.fileno())
        try:
            code: int | None = self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        self._dead = f"the store worker process ended (exit code {code})"
        waiting = [self._reply, *self._landed.values()]
        self._reply = None
        for future in waiting:
            _resolve(future, False, StoreError(self._dead))

    async def _call(self, op: str, batch: Sequence[Document] | bool | None = None) -> Any:
        if self._dead is not None:
            raise StoreError(self._dead)
        assert self._loop is not None and self._reply is None
        reply = self._reply = self._loop.create_future()
        with contextlib.suppress(OSError):  # the worker is gone: _readable sees the pipe end
            await self._loop.run_in_executor(self._sender, self._conn.send, (op, batch))
        return await reply

    async def submit(self, documents: Sequence[Document]) -> asyncio.Future[list[Outcome]]:
        assert self._loop is not None
        async with self._asking:  # one request at a time (a batch retried meanwhile waits)
            # Made before asking: the worker's "landed" may come right after its reply.
            n = self._submitted + 1
            landed = self._landed[n] = self._loop.create_future()
            try:
                await self._call("submit", list(documents))
            except BaseException:
                del self._landed[n]
                if not landed.cancel():  # ended by the worker's death: the error raised says it
                    landed.exception()
                raise
            self._submitted = n
        return landed

    async def close(self, *, compact: bool = True) -> None:
        """As :meth:`BatchRunner.close`, in the worker; then end it.

        Raises:
            StoreError: the worker failed to close the store, or did not end within
                ``_CLOSE_WAIT`` seconds (then it is killed; what it had not written stays
                pending in the ledger for the next run's recovery).
        """
        if self._closed:
            return
        self._closed = True
        ended = True
        try:
            # Not after a call that was abandoned (cancelled): its reply is still to come.
            if self._dead is None and self._loop is not None and self._reply is None:
                try:
                    await asyncio.wait_for(self._call("close", compact), _CLOSE_WAIT)
                except TimeoutError:
                    ended = False
        finally:
            if self._loop is not None:
                with contextlib.suppress(ValueError, OSError):
                    self._loop.remove_reader(self._conn.fileno())
            ended = ended and await self._ended()
            if not ended:
                self._process.kill()
                await asyncio.get_running_loop().run_in_executor(None, self._process.wait)
                self._sender.shutdown(wait=True)  # a send blocked on the pipe failed with it
                self._conn.close()
        if not ended:
            raise StoreError(
                f"the store worker did not finish its writes in {_CLOSE_WAIT:.0f} s and was "
                "stopped; the next run on this store recovers them"
            )

    async def _ended(self) -> bool:
        """Close the pipe and wait for the worker to exit; False if it did not in time."""
        self._sender.shutdown(wait=True)  # a request still being sent is read first
        # Before waiting: a worker not told to close sees the pipe end, finishes its writes
        # and exits (instead of waiting for a request that never comes).
        self._conn.close()
        try:
            await asyncio.get_running_loop().run_in_executor(None, self._process.wait, _CLOSE_WAIT)
        except subprocess.TimeoutExpired:
            return False
        return True


def _resolve(future: asyncio.Future[Any] | None, ok: bool, value: Any) -> None:
    """End ``future`` (if it is still waiting) with ``value``, or with it raised."""
    if future is None or future.done():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
