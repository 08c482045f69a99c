"""Turning fetched bodies into stored stories, off the event loop.

Parsing and mapping a story costs about as much CPU as fetching it, so the crawler hands
batches of fetched bodies to a *runner* and keeps fetching meanwhile:

* :class:`ProcessRunner` (the default for a store given as a directory) runs a
  :class:`StoryProcessor` in one worker process (:mod:`hcgraph.crawl.worker`) that owns
  the store, so parse/map/store use the second core while the event loop fetches. The
  worker dies with the crawl (``PR_SET_PDEATHSIG``), so a killed crawl never leaves a
  process holding the store's lock.
* :class:`ThreadRunner` runs it in one thread of this process (``--workers thread``, and
  with a caller's open :class:`~hcgraph.store.Store`; Oxigraph releases the GIL while it
  writes, which is most of the work).

Either way a batch is stored with ``Store.put_stories`` (one transaction of whole stories),
so a crash leaves every story either fully written or not at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import pickle
import signal
import struct
import sys
import time
from collections.abc import Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CrawlError, NotAStoryError, StoreError, StoryError
from ..model import Story, parse_story
from ..store import Store, now_utc

__all__ = [
    "Item",
    "Outcome",
    "ProcessRunner",
    "Runner",
    "StoryProcessor",
    "ThreadRunner",
    "graph_time",
    "open_store",
]


@dataclass(frozen=True)
class Item:
    """One fetched body to process.

    ``url`` is the frontier key; ``source`` is recorded as the story's source (the logical
    URL it came from, or a file path); ``retrieved_at`` is when it was fetched.
    """

    url: str
    body: bytes
    source: str
    retrieved_at: dt.datetime


@dataclass(frozen=True)
class Outcome:
    """What happened to one :class:`Item`.

    ``put`` is the store's verdict (``added``/``replaced``/``unchanged``) for a stored story;
    ``duplicate_of`` is set when the story was already crawled under another URL;
    ``reason``/``json_path`` explain a body that is not a valid story.
    """

    url: str
    story_url: str | None = None
    story_id: str | None = None
    related: tuple[str, ...] = ()
    put: str | None = None
    duplicate_of: str | None = None
    reason: str | None = None
    json_path: str | None = None
    not_a_story: bool = False

    @property
    def ok(self) -> bool:
        """True if the story is in the store."""
        return self.put is not None


def graph_time(fetched_at: dt.datetime) -> dt.datetime:
    """The retrieval time recorded in the graph: the fetch time (whole seconds, UTC), or
    ``SOURCE_DATE_EPOCH`` when set so reproducible builds give identical graphs."""
    if os.environ.get("SOURCE_DATE_EPOCH", "").isdigit():
        return now_utc()
    return fetched_at.astimezone(dt.UTC).replace(microsecond=0)


class StoryProcessor:
    """Parse, dedupe and store batches of bodies (synchronous; runs inside a runner).

    Args:
        store: the open store to write to.
        claims: story IRI → (crawl URL, story id) already stored in this run (for resume).
    """

    def __init__(self, store: Store, claims: dict[str, tuple[str, str | None]] | None = None):
        self.store = store
        self.by_story = {s: u for s, (u, _) in (claims or {}).items()}
        self.by_id = {i: s for s, (_, i) in (claims or {}).items() if i}

    def process(self, items: Sequence[Item]) -> list[Outcome]:
        """Process a batch; outcomes come back in item order."""
        outcomes: dict[int, Outcome] = {}
        to_store: list[tuple[int, Story, Item]] = []
        for n, item in enumerate(items):
            try:
                story = parse_story(item.body, item.source)
            except StoryError as exc:
                path, reason = exc.json_path, exc.reason
                not_a_story = isinstance(exc, NotAStoryError)
                outcomes[n] = Outcome(
                    item.url, reason=reason, json_path=path or None, not_a_story=not_a_story
                )
                continue
            dup = self._duplicate_of(story, item.url)
            related = tuple(r.url for r in story.related)
            if dup is not None:
                outcomes[n] = Outcome(item.url, story.url, story.id, related, duplicate_of=dup)
                continue
            self.by_story[story.url] = item.url
            self.by_id.setdefault(story.id, story.url)
            to_store.append((n, story, item))
        # One transaction for the batch; each story records when it was fetched.
        results = self.store.put_stories(
            [
                (story, item.body, item.source, graph_time(item.retrieved_at))
                for _, story, item in to_store
            ]
        )
        for (n, story, item), result in zip(to_store, results, strict=True):
            related = tuple(r.url for r in story.related)
            outcomes[n] = Outcome(item.url, story.url, story.id, related, put=result.status)
        return [outcomes[n] for n in range(len(items))]

    def _duplicate_of(self, story: Story, url: str) -> str | None:
        owner = self.by_story.get(story.url)
        if owner is not None and owner != url:
            return owner
        same_id = self.by_id.get(story.id)
        if same_id is not None and same_id != story.url:
            return self.by_story.get(same_id, same_id)
        return None


def open_store(directory: Path, wait: float = 15.0) -> Store:
    """Open a store for writing, waiting up to ``wait`` s while another process holds it.

    A crawl killed a moment ago may leave its worker alive for an instant; waiting briefly
    lets the re-run resume instead of failing on the lock.
    """
    deadline = time.monotonic() + wait
    while True:
        try:
            return Store(directory)
        except StoreError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.2)


class Runner:
    """Runs a :class:`StoryProcessor` somewhere other than the event loop."""

    async def process(self, items: Sequence[Item]) -> list[Outcome]:
        """Process one batch."""
        raise NotImplementedError

    async def close(self) -> None:
        """Flush and stop."""


class ThreadRunner(Runner):
    """Process batches in one worker thread, writing to an already open store."""

    def __init__(
        self, store: Store, claims: dict[str, tuple[str, str | None]], *, owns_store: bool = False
    ) -> None:
        self.processor = StoryProcessor(store, claims)
        self.owns_store = owns_store
        self.pool: Executor = ThreadPoolExecutor(1, thread_name_prefix="hcgraph-process")

    async def process(self, items: Sequence[Item]) -> list[Outcome]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, self.processor.process, list(items))

    async def close(self) -> None:
        self.pool.shutdown(wait=True)
        if self.owns_store:
            self.processor.store.close()


# --- the worker process ---------------------------------------------------------------------
# The worker is a plain subprocess (``python -m hcgraph.crawl.worker``) talking over its
# stdin/stdout with length-prefixed pickles. Unlike multiprocessing's spawn, this never
# re-imports the caller's ``__main__``, so a script without an ``if __name__ == "__main__"``
# guard can crawl too.


async def _send(writer: asyncio.StreamWriter, message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    writer.write(struct.pack("!Q", len(data)) + data)
    await writer.drain()


async def _receive(reader: asyncio.StreamReader) -> Any:
    try:
        header = await reader.readexactly(8)
        return pickle.loads(await reader.readexactly(struct.unpack("!Q", header)[0]))
    except asyncio.IncompleteReadError:
        raise StoreError("the store worker process exited unexpectedly") from None


class ProcessRunner(Runner):
    """Process batches in one worker process that owns the on-disk store.

    :meth:`start` launches the worker without waiting for it: the crawl starts fetching
    while the worker imports and opens the store, and the first batch waits for it.
    """

    def __init__(self, store_dir: Path, claims: dict[str, tuple[str, str | None]]) -> None:
        self.store_dir = store_dir
        self.claims = claims
        self.proc: asyncio.subprocess.Process | None = None
        self._ready: asyncio.Future[None] | None = None

    def start(self) -> None:
        """Launch the worker (returns at once; see the class docstring)."""
        self._ready = asyncio.ensure_future(self._launch())

    async def _launch(self) -> None:
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hcgraph.crawl.worker", str(self.store_dir),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env,
        )  # fmt: skip
        await self._call(("init", self.claims))

    async def _call(self, message: tuple[Any, ...]) -> Any:
        assert self.proc is not None and self.proc.stdin and self.proc.stdout
        await _send(self.proc.stdin, message)
        reply = await _receive(self.proc.stdout)
        if reply[0] == "error":
            _, kind, text = reply
            if kind == "StoreError":
                raise StoreError(text)
            raise CrawlError(f"the store worker failed: {kind}: {text}")
        return reply[1]

    async def process(self, items: Sequence[Item]) -> list[Outcome]:
        if self._ready is None:
            self.start()
        assert self._ready is not None
        await self._ready
        result: list[Outcome] = await self._call(("batch", list(items)))
        return result

    async def close(self) -> None:
        if self._ready is not None:
            with contextlib.suppress(Exception):  # a failed start was already reported
                await self._ready
        if self.proc is None:
            return
        try:
            if self.proc.returncode is None:
                await self._call(("close",))
        except (StoreError, CrawlError, BrokenPipeError, ConnectionResetError):
            pass
        finally:
            if self.proc.stdin:
                self.proc.stdin.close()
            await self.proc.wait()
            self.proc = None


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (no-op elsewhere)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
