"""Turning fetched bodies into stored stories, off the event loop.

The crawler hands batches of fetched bodies (:class:`~hcgraph.pipeline.Document`, keyed by
their frontier URL) to a :class:`BatchRunner`, which runs the one ingest pipeline
(:mod:`hcgraph.pipeline`) while the event loop keeps fetching: :class:`Runner` in a thread
of this process, :class:`.worker.ProcessRunner` (the default of ``hcgraph crawl``) in a
worker process. Both drive the pipeline through the same :class:`Batches`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Protocol, TypeVar

from ..errors import StoreBusyError, StoreError
from ..pipeline import Document, Outcome, Pipeline
from ..store import Store

__all__ = ["BatchRunner", "Batches", "Runner", "open_store"]

T = TypeVar("T")


def open_store(directory: Path, wait: float = 15.0) -> Store:
    """Open a store for writing, waiting up to ``wait`` s while another process holds it.

    A crawl killed a moment ago may hold the lock for an instant longer; waiting briefly
    lets the re-run resume instead of failing on the lock. Any other failure (a damaged
    store) is raised at once: waiting would not mend it.
    """
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
    :class:`.worker.ProcessRunner` (a process). See :class:`Runner` for each method."""

    async def start(self) -> None: ...
    async def process(self, documents: Sequence[Document]) -> list[Outcome]: ...
    async def submit(self, documents: Sequence[Document]) -> list[Outcome]: ...
    async def flush(self) -> None: ...
    def written(self) -> asyncio.Future[None] | None: ...
    async def previous_landed(self) -> bool: ...
    async def close(self) -> None: ...


class Batches:
    """The pipeline as the crawl drives it, one call at a time (from :class:`Runner`'s
    thread, or in :mod:`.worker`'s process): it remembers which write was in flight when
    a :meth:`submit` began, so that after a failed submit :meth:`previous_landed` can say
    whether the batch before it is in the store.
    """

    def __init__(self, store: Store, claims: dict[str, tuple[str, str | None]]) -> None:
        self.pipeline = Pipeline(store, crawl_claims=claims)
        self._previous: Future[None] | None = None  # the write in flight when submit began

    @property
    def writing(self) -> Future[None] | None:
        """The batch write running now, if any."""
        return self.pipeline.writing

    def process(self, documents: Sequence[Document]) -> list[Outcome]:
        """Map and write one batch, and wait for it."""
        return self.pipeline.process(documents)

    def submit(self, documents: Sequence[Document]) -> list[Outcome]:
        """Map one batch while the one before is written; start its write."""
        self._previous = self.pipeline.writing
        return self.pipeline.submit(documents)

    def flush(self) -> None:
        """Wait until every submitted batch is written (raises what a write raised)."""
        self.pipeline.flush()

    def previous_landed(self) -> bool:
        """After :meth:`submit` raised: True if the write that was in flight when it began
        (the batch before) is in the store. Waits for that write to end."""
        previous, self._previous = self._previous, None
        with contextlib.suppress(Exception):  # its error is the answer below
            self.pipeline.flush()
        return previous is None or previous.exception() is None

    def close(self) -> None:
        """Finish the writes in flight."""
        self.pipeline.close()


class Runner:
    """Runs the pipeline over batches in one worker thread.

    Two ways to hand it a batch: :meth:`process` (map, write, wait) and :meth:`submit`
    (map while the previous batch is still being written, then start this one's write), so
    the mapping of batch n + 1 overlaps the write of batch n.

    Args:
        store: the open, writable store.
        claims: story IRI → (crawl URL, story id) already stored by this crawl (resume).
        owns_store: close the store on :meth:`close`.
    """

    def __init__(
        self, store: Store, claims: dict[str, tuple[str, str | None]], *, owns_store: bool = False
    ) -> None:
        self.store = store
        self.owns_store = owns_store
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="hcgraph-process")
        self.batches: Batches | None = None
        self.claims = claims

    async def start(self) -> None:
        """Nothing to wait for: the store is open already (:class:`.worker.ProcessRunner`
        opens its own)."""

    def _batches(self) -> Batches:
        if self.batches is None:  # made in the thread: opening the pipeline reads the store
            self.batches = Batches(self.store, self.claims)
        return self.batches

    async def _run(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn)

    async def process(self, documents: Sequence[Document]) -> list[Outcome]:
        """Process one batch (parse, dedupe, map, write) and return its outcomes in order."""
        batch = list(documents)
        return await self._run(lambda: self._batches().process(batch))

    async def submit(self, documents: Sequence[Document]) -> list[Outcome]:
        """Parse, dedupe and map one batch and start its write; its outcomes in order.

        When this returns, the batches submitted before it are in the store; this one is
        once the next :meth:`submit` or :meth:`flush` returns. If it raises, ask
        :meth:`previous_landed` whether the batch before it was written.
        """
        batch = list(documents)
        return await self._run(lambda: self._batches().submit(batch))

    async def flush(self) -> None:
        """Wait until every submitted batch is in the store (raises what its write raised)."""
        if self.batches is not None:
            await self._run(self.batches.flush)

    def written(self) -> asyncio.Future[None] | None:
        """An awaitable that ends when the write in flight ends (however it ends); None
        when no write is running. Call between batches (not while one is submitted)."""
        running = self.batches.writing if self.batches is not None else None
        if running is None or running.done():
            return None
        loop = asyncio.get_running_loop()
        ended: asyncio.Future[None] = loop.create_future()

        def end() -> None:
            if not ended.done():
                ended.set_result(None)

        def wake(_: object) -> None:
            loop.call_soon_threadsafe(end)

        running.add_done_callback(wake)
        return ended

    async def previous_landed(self) -> bool:
        """After :meth:`submit` raised: True if the write that was in flight when it began
        (the batch before) is in the store. Waits for that write to end."""
        return await self._run(self._batches().previous_landed)

    async def close(self) -> None:
        """Finish the batch in flight, stop the thread, close the store if owned.

        Raises:
            StoreError: a write in flight failed, or the store's last flush did (the first
                of them; the thread is stopped and the store closed all the same).
        """
        try:
            if self.batches is not None:
                await self._run(self.batches.close)
        except BaseException:
            self.pool.shutdown(wait=True)
            if self.owns_store:
                with contextlib.suppress(StoreError):  # the write's error is the one raised
                    self.store.close()
            raise
        self.pool.shutdown(wait=True)
        if self.owns_store:
            self.store.close()
