"""Turning fetched bodies into stored stories, off the event loop.

A :class:`BatchRunner` runs the ingest pipeline (:mod:`hcgraph.pipeline`) over batches of
fetched bodies while the event loop keeps fetching: :class:`Runner` in a thread,
:class:`.worker.ProcessRunner` (the default) in a worker process. A batch is *submitted*
(awaited until it is mapped) and gives back a future of its outcomes, resolved once it has
landed in the store.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol, TypeVar

from ..errors import StoreBusyError
from ..pipeline import Document, Outcome, Pipeline
from ..store import Store

__all__ = ["BatchRunner", "Runner", "open_store"]

T = TypeVar("T")


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
    :class:`.worker.ProcessRunner` (a process). See :class:`Runner` for each method."""

    async def start(self) -> None: ...
    async def submit(self, documents: Sequence[Document]) -> asyncio.Future[list[Outcome]]: ...
    async def process(self, documents: Sequence[Document]) -> list[Outcome]: ...
    async def close(self, *, compact: bool = True) -> None: ...


class Runner:
    """Runs the pipeline over batches in one worker thread (its writer has one more).

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
        self.pipeline: Pipeline | None = None
        self.claims = claims

    async def start(self) -> None:
        """Nothing to wait for: the store is open already (:class:`.worker.ProcessRunner`
        opens its own)."""

    def _pipeline(self) -> Pipeline:
        if self.pipeline is None:  # made in the thread: opening it recovers the store
            self.pipeline = Pipeline(self.store, crawl_claims=self.claims)
        return self.pipeline

    async def _run(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn)

    async def submit(self, documents: Sequence[Document]) -> asyncio.Future[list[Outcome]]:
        """Parse, dedupe and map one batch and queue its write; once mapped, the future of
        its outcomes in order, which ends when the batch has landed (or its write failed)."""
        batch = list(documents)
        return asyncio.wrap_future(await self._run(lambda: self._pipeline().submit(batch)))

    async def process(self, documents: Sequence[Document]) -> list[Outcome]:
        """Process one batch (parse, dedupe, map, write) and return its outcomes in order."""
        return await (await self.submit(documents))

    async def close(self, *, compact: bool = True) -> None:
        """Finish the writes in flight, stop the thread, close the store if owned; with
        ``compact``, compact the store first if that is due (a crawl that completed).

        Raises:
            StoreError: the store's last flush failed (the thread is stopped all the same).
        """
        try:
            if self.pipeline is not None:
                pipeline = self.pipeline
                await self._run(lambda: pipeline.close(compact=compact))
        finally:
            self.pool.shutdown(wait=True)
        if self.owns_store:
            self.store.close()
