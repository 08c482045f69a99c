"""Fetched bodies → the pipeline in batches, and each batch's outcomes → the recorder.

One batch is written while the next is filled and mapped; a batch's outcomes are recorded as
soon as its write has landed, so the links it brings feed the fetchers at once. A batch that
raises is retried one body at a time (a body that raises alone fails alone). A store worker
that *dies* ends the crawl, and the bodies of its batch become *suspects*: the resume retries
them alone, and records the one that kills the worker again as failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from typing import Any

from ..errors import ArchiveError, CrawlError, StoreDiskError, StoreError
from ..pipeline import Document, Outcome
from .recorder import Recorder
from .scheduler import Scheduler
from .worker import BatchRunner

__all__ = ["Batches", "fill"]

_FETCH_POLL = 0.05  # s: how often a batch waiting for bodies checks that fetches go on
Queue = asyncio.Queue[Document | None]
Written = asyncio.Future[Any] | None


async def fill(
    queue: Queue, batch: list[Document], written: Written, size: int, fetching: Callable[[], bool]
) -> bool:
    """Add queued bodies to ``batch``, up to ``size``; True once the end (``None``) is seen.

    An empty batch waits for its first body, or until ``written`` (the task recording the
    batch in flight) ends: then it comes back empty. While that write runs and ``fetching``
    says fetches go on, a batch waits for more bodies instead of going small (each write has
    a fixed cost, so a batch grows with the time its predecessor takes); otherwise it takes
    only what is queued already.
    """
    while len(batch) < size:
        if queue.empty():
            got = await _wait(queue, batch, written, fetching)
        else:
            got = [queue.get_nowait()]
        if got is None:
            return False
        for item in got:
            if item is None:
                return True
            batch.append(item)
    return False


async def _wait(
    queue: Queue, batch: list[Document], written: Written, fetching: Callable[[], bool]
) -> list[Document | None] | None:
    """The next queued item (a list of one) or [] to look again; None when the batch goes
    as it is: no write in flight, or no fetch can bring more, or (an empty batch) the write
    in flight ended."""
    if batch and (written is None or written.done() or not fetching()):
        return None
    getter = asyncio.ensure_future(queue.get())
    either: set[asyncio.Future[Any]] = {getter} if written is None else {getter, written}
    try:
        timeout = _FETCH_POLL if batch else None
        await asyncio.wait(either, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting = not getter.done()
        if waiting:  # a cancelled get leaves its item in the queue
            getter.cancel()
    if waiting:  # the write ended, or the poll passed
        return [] if batch else None
    return [getter.result()]


class Batches:
    """Processes the crawl's fetched bodies in batches of up to ``size`` with ``runner``
    and records their outcomes. ``fill`` adds queued bodies to a batch (see :func:`fill`);
    the recorder's archive is flushed on ``io`` (the thread that writes large bodies) before
    each batch is stored, so the store never holds a story the archive lost; ``notify`` is
    called after each change of the counts."""

    def __init__(
        self,
        runner: BatchRunner,
        recorder: Recorder,
        scheduler: Scheduler,
        io: Executor,
        fill: Callable[[list[Document], Written], Awaitable[bool]],
        notify: Callable[[], Awaitable[None]],
        size: int,
    ) -> None:
        self.runner = runner
        self.recorder = recorder
        self.frontier = recorder.frontier
        self.scheduler = scheduler
        self.archive = recorder.archive
        self.io = io
        self.fill = fill
        self.notify = notify
        self.size = size
        self.suspects: set[str] = set(json.loads(self.frontier.get_setting("suspects") or "[]"))
        self._pending: list[Document] = []  # bodies fetched before an interruption
        self._unsynced: list[str] = []  # their SHA-256s: an earlier run may not have flushed them
        self._writing: asyncio.Future[None] | None = None  # records the batch being written

    def resume(self) -> None:
        """Queue the bodies an interrupted run fetched (from the archive; one the archive
        cannot give back is fetched again), suspects first."""
        for row in self.frontier.rows("fetched"):
            try:
                body = self.archive.get_body(row.sha256) if row.sha256 else None
            except ArchiveError:
                body = None
            if body is None or row.sha256 is None:
                self.frontier.mark(row.url, "queued", sha256=None)  # its body went missing
                continue
            at = row.fetched_at
            when = dt.datetime.fromisoformat(at) if at else dt.datetime.now(dt.UTC)
            self.scheduler.handed_over()
            self._pending.append(Document(body, row.source or row.url, when, row.url))
            self._unsynced.append(row.sha256)
        self._pending.sort(key=lambda item: item.key not in self.suspects)

    async def run(self) -> None:
        """Process batches until the end of the queue (re-raises a processing failure)."""
        finished = False
        try:
            while not finished:
                batch, alone = self._take()
                if not alone:
                    finished = await self.fill(batch, self._writing)
                written = self._writing is not None and self._writing.done()
                if alone or self.scheduler.stopped or written:
                    await self._landed()
                if batch:
                    await self._hand_on(batch, alone)
            await self._landed()
        finally:
            if self._writing is not None and not self._writing.done():  # the loop failed
                self._writing.cancel()
                await asyncio.gather(self._writing, return_exceptions=True)

    def _take(self) -> tuple[list[Document], bool]:
        """Bodies fetched before an interruption go first: a suspect alone, or a batch."""
        alone = bool(self._pending) and self._pending[0].key in self.suspects
        size = 1 if alone else self.size
        batch, self._pending = self._pending[:size], self._pending[size:]
        return batch, alone

    async def _landed(self) -> None:
        """Wait for the batch being written to be recorded (raises what recording raised)."""
        writing, self._writing = self._writing, None
        if writing is not None:
            await writing

    async def _hand_on(self, batch: list[Document], alone: bool) -> None:
        """Submit ``batch``, with a task that records it once written; then wait for the
        batch before it to be recorded. A suspect goes alone, and is recorded here."""
        if self.scheduler.stopped:  # left fetched: the resume processes them from the archive
            self.scheduler.processed(len(batch))
            await self.notify()
            return
        if alone:
            await self._settle(batch, None)
            return
        await self._sync()  # not in the try: a disk that fails ends the crawl
        landed: asyncio.Future[list[Outcome]] | None
        try:
            landed = await self.runner.submit(batch)
        except Exception:  # not mapped: processed again by its task
            landed = None
        previous, self._writing = self._writing, asyncio.ensure_future(self._settle(batch, landed))
        if previous is not None:
            await previous

    async def _sync(self) -> None:
        """Flush the archive to disk (one ``fdatasync`` a batch) before a batch is stored."""
        bodies, self._unsynced = self._unsynced, []
        await asyncio.get_running_loop().run_in_executor(self.io, self.archive.sync, bodies)

    async def _settle(
        self, batch: list[Document], landed: asyncio.Future[list[Outcome]] | None
    ) -> None:
        """Record ``batch``'s outcomes once its write has ``landed``; if it was not submitted
        or its write failed, process it again, one body at a time if need be."""
        outcomes = None
        if landed is not None:
            with contextlib.suppress(Exception):
                outcomes = await landed
        if outcomes is None:
            outcomes = await self._process(batch)
        with self.frontier.batch():
            stored = sum(self.recorder.outcome(outcome) for outcome in outcomes)
        self.scheduler.processed(len(batch), stored)
        self.recorder.progress.queued = self.frontier.count("queued")
        await self.notify()

    async def _process(self, batch: list[Document]) -> list[Outcome]:
        """Process a batch; a body that makes processing fail fails alone, not the crawl."""
        await self._sync()
        try:
            outcomes = await self.runner.process(batch)
        except StoreDiskError as exc:  # the disk, not a body: no story is held responsible
            raise CrawlError(
                f"processing failed: {exc} (run the same command again to resume once the "
                "store's disk has room)"
            ) from None
        except StoreError as exc:
            self._suspect(batch, exc)
            raise CrawlError(
                f"processing failed: {exc} (run the same command again to resume; a body "
                "that made the store worker fail is retried alone, and recorded as failed if it "
                "does again)"
            ) from None
        except Exception as exc:
            if len(batch) == 1:
                self.recorder.poisoned(batch[0], exc)
                return []
            return [outcome for item in batch for outcome in await self._process([item])]
        if len(batch) == 1 and batch[0].key in self.suspects:
            self.suspects.discard(batch[0].key or "")
            self.frontier.set_setting("suspects", json.dumps(sorted(self.suspects)))
        return outcomes

    def _suspect(self, batch: list[Document], exc: StoreError) -> None:
        """The store worker died on ``batch``: remember its bodies as suspects, or record the
        suspect that did it again as failed. On a full disk the frontier cannot be written
        either: then nothing is remembered (the resume redoes the batch)."""
        with contextlib.suppress(CrawlError):
            if len(batch) == 1 and batch[0].key in self.suspects:  # alone, and again
                self.recorder.poisoned(batch[0], exc)
            else:
                self.suspects.update(item.key or "" for item in batch)
                self.frontier.set_setting("suspects", json.dumps(sorted(self.suspects)))
