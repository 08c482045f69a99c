"""The crawl: seeds → breadth-first over ``related[].url`` → archive → store.

:class:`Crawler` wires the parts of :mod:`hcgraph.crawling`, one job each (each module says
which). ``concurrency`` worker tasks lease URLs (shallowest first), fetch, archive and hand bodies
to the batches through a bounded queue (memory stays flat however many stories there are);
recording a story queues its links one hop deeper. The crawl ends when nothing is queued,
in flight or waiting to be processed.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import signal
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any, NamedTuple

import httpx

from .._io import ensure_dir
from ..archive import Archive, FetchRecord
from ..errors import CrawlError
from ..pipeline import Document
from ..store import Store
from ..urls import Mirror, Mirrors, Scope
from .batching import Batches, Written, fill
from .decoding import ACCEPT_ENCODING
from .discovery import IndexReader, parse_follow, seed_sitemaps, story_pattern
from .fetch import Fetcher, FetchResult, Politeness
from .frontier import INDEX_ROLES, Frontier, Row, Validators
from .identity_check import identity_mismatch, variant_of
from .options import CrawlOptions, Seeds, read_local, user_agent
from .recorder import CrawlProgress, Recorder, is_gone
from .report import CrawlReport, tally
from .robots import Robots
from .scheduler import Scheduler
from .worker import BatchRunner, ProcessRunner, Runner, open_store

__all__ = ["CrawlOptions", "CrawlProgress", "Crawler", "crawl", "user_agent"]

BATCH = 500  # at most this many fetched stories per pipeline batch (one bulk load each)
_INLINE_BODY = 256 * 1024  # bytes: larger bodies are archived off the event loop


class _Got(NamedTuple):
    """A story URL's GET, archived (``body``: the archived one, when a 304 confirmed it)."""

    result: FetchResult
    sha: str | None
    body: bytes | None
    not_modified: bool


class Crawler:
    """One crawl run. Use :func:`crawl` (or, in a running event loop, ``await Crawler(...).run()``)
    unless you need :meth:`stop`.

    Args:
        seeds: story page URLs, JSON URLs, sitemaps, or local story files/directories.
        store: the store directory (the archive, frontier and report live in it too), or an
            open on-disk :class:`~hcgraph.store.Store` (then stories are stored in a thread).
        client: an ``httpx.AsyncClient`` that does not follow redirects (default: one made
            here, on ``transport`` if given).
        on_progress: called with :class:`~hcgraph.crawling.recorder.CrawlProgress` after each
            change.

    Raises:
        CrawlError: a bad seed or option (before anything is fetched).
    """

    _scheduler: Scheduler
    _recorder: Recorder

    def __init__(
        self,
        seeds: Sequence[str],
        store: Path | str | Store,
        options: CrawlOptions | None = None,
        *,
        client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        on_progress: Callable[[CrawlProgress], None] | None = None,
    ) -> None:
        self.options = options = options or CrawlOptions()
        if options.depth < 0:
            raise CrawlError("--depth must be 0 or more")
        if options.concurrency < 1:
            raise CrawlError("--concurrency must be at least 1")
        if not seeds:
            raise CrawlError("no seeds given")
        self.follow = parse_follow(options.follow)
        self.pattern = story_pattern(options.story_pattern)
        self.open_store = store if isinstance(store, Store) else None
        directory = Path(store) if not isinstance(store, Store) else store.directory
        if directory is None:
            raise CrawlError("a crawl needs an on-disk store (its archive lives there)")
        self.store_dir = directory
        self.seeds = Seeds.parse(seeds, options.json_suffix, self.pattern)
        self.mirrors = Mirrors(tuple(Mirror.parse(m) for m in options.mirrors))
        self.scope = Scope.of(self.seeds.urls, options.allow_hosts)
        self.client = client
        self.transport = transport
        self.on_progress = on_progress
        self.progress = CrawlProgress()
        self.archive = Archive(self.store_dir / "archive")
        self._stop = False
        self._workers: list[asyncio.Task[None]] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._queue: asyncio.Queue[Document | None] = asyncio.Queue(maxsize=2 * BATCH)
        self._io = ThreadPoolExecutor(1, thread_name_prefix="hcgraph-archive")  # large bodies

    def stop(self) -> None:
        """Stop soon: no new fetches; what is fetched stays in the archive for the resume."""
        self._stop = True
        self._abort_fetching()  # a cancelled fetch leaves its URL queued
        if hasattr(self, "_scheduler"):  # the crawl has started
            self._scheduler.stop()
            task = asyncio.get_running_loop().create_task(self._notify())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def run(self) -> CrawlReport:
        """Run (or resume) the crawl; return its report (also written as JSON)."""
        started_at = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
        t0 = time.monotonic()
        lock = _lock(self.store_dir / "crawl" / "lock")
        frontier = Frontier(self.store_dir / "crawl" / "frontier.sqlite")
        failing = True
        try:
            resumed = self._begin(frontier)
            runner = self._runner(frontier)
            try:
                await runner.start()
                requests = await self._crawl(frontier, runner)
            except BaseException:
                # The crawl's error is the one to report: closing after it may fail too (on
                # a full disk the store's last flush does) and must not replace it.
                with contextlib.suppress(Exception):
                    await runner.close(compact=False)
                raise
            await runner.close(compact=not self._stop)  # a stop is not kept waiting
            status = "interrupted" if self._stop else "complete"
            if status == "complete":
                frontier.finish()
            report = CrawlReport(
                seeds=self.seeds.shown(),
                status=status,
                resumed=resumed,
                started_at=started_at,
                finished_at=dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
                elapsed_seconds=round(time.monotonic() - t0, 3),
                options=self.options.describe(),
                **tally(frontier, requests),
            )
            failing = False
        finally:
            _close_all((self.archive.close, frontier.close, lock.close), failing=failing)
        report.write(self.options.report or self.store_dir / "crawl-report.json")
        return report

    def _begin(self, frontier: Frontier) -> bool:
        """Start the run (seeds queued) or resume it; True when it resumes."""
        resumed = frontier.begin(self.options.fingerprint(self.seeds.shown()), self.options.depth)
        if resumed:
            for host in json.loads(frontier.get_setting("hosts") or "[]"):
                self.scope = self.scope.with_host(host)
            frontier.requeue_gone()  # left gone by an interruption: fetched again
            return True
        with frontier.batch():
            for url in self.seeds.urls:
                frontier.add(url, 0, via="seed", role=self.seeds.roles[url])
            if "sitemap" in self.follow:
                for url, role in seed_sitemaps(self.seeds.urls, self.options.ignore_robots):
                    frontier.add(url, 0, via="sitemap", role=role)
            for path in self.seeds.paths:
                read_local(path, self.archive, frontier, self.options.policy.max_bytes)
        frontier.set_setting("hosts", json.dumps(sorted(self.scope.hosts)))
        return False

    def _runner(self, frontier: Frontier) -> BatchRunner:
        claims = frontier.claims()
        if self.open_store is not None:
            return Runner(self.open_store, claims)
        if self.options.store_worker == "process":
            return ProcessRunner(self.store_dir, claims)
        return Runner(open_store(self.store_dir), claims, owns_store=True)

    def _make_client(self) -> httpx.AsyncClient:
        n = self.options.concurrency
        return httpx.AsyncClient(
            transport=self.transport,
            headers={
                "User-Agent": user_agent(self.options.contact),
                "Accept": "application/json, */*;q=0.1",
                "Accept-Encoding": ACCEPT_ENCODING,
            },
            follow_redirects=False,
            trust_env=False,
            timeout=httpx.Timeout(self.options.policy.timeout),
            limits=httpx.Limits(max_connections=n, max_keepalive_connections=n),
        )

    async def _crawl(self, frontier: Frontier, runner: BatchRunner) -> int:
        """Fetch and process until nothing is left or the crawl stops; the requests made."""
        options = self.options
        # A resumed run counts what it stored before towards --max-stories.
        scheduler = self._scheduler = Scheduler(
            frontier, max_stories=options.max_stories, stored=frontier.count("done")
        )
        if self._stop:
            scheduler.stop()
        self.progress.stored = 0
        recorder = self._recorder = Recorder(
            frontier, self.archive, self.scope, options.json_suffix, self.progress,
            follow=self.follow, pattern=self.pattern,
        )  # fmt: skip
        batches = Batches(runner, recorder, scheduler, self._io, self._fill, self._notify, BATCH)
        batches.resume()
        client = self.client or self._make_client()
        politeness = Politeness(options.per_host or options.concurrency, options.rate)
        fetcher = Fetcher(  # the scope as it is at each fetch: a local seed's site joins it
            client, politeness, options.policy, lambda u: recorder.scope.why_not(u), self.mirrors
        )
        robots = Robots(fetcher, enabled=not options.ignore_robots)
        indexes = IndexReader(robots, recorder)
        try:
            await self._run_tasks(batches, fetcher, robots, indexes)
        finally:
            self._io.shutdown(wait=True)  # archive writes of cancelled fetches end too
            if self.client is None:
                await client.aclose()
        return fetcher.requests

    async def _run_tasks(
        self, batches: Batches, fetcher: Fetcher, robots: Robots, indexes: IndexReader
    ) -> None:
        """The fetching workers and the processing task, until all end (or one fails)."""
        processor = asyncio.create_task(batches.run())
        workers = self._workers = [
            asyncio.create_task(self._worker(fetcher, robots, indexes))
            for _ in range(self.options.concurrency)
        ]
        # If processing dies, nothing would ever drain the queue: stop the fetchers at once
        # (the error is raised below). Likewise if a fetcher dies of an error: the URL it
        # held is never handed over, so the others would wait for it for ever.
        processor.add_done_callback(lambda _: self._abort_fetching())
        for task in workers:
            task.add_done_callback(self._fetcher_ended)
        try:
            results = await asyncio.gather(*workers, return_exceptions=True)
            errors = [r for r in results if isinstance(r, Exception)]
            if errors and not processor.done():
                raise errors[0]
        finally:
            self._abort_fetching()
            await asyncio.gather(*workers, return_exceptions=True)
            if not processor.done():
                await self._queue.put(None)
            await processor  # re-raises a processing failure

    def _fetcher_ended(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._abort_fetching()

    def _abort_fetching(self) -> None:
        for task in self._workers:
            task.cancel()

    async def _notify(self) -> None:
        await self._scheduler.wake()
        if self.on_progress is not None:
            self.on_progress(self.progress)

    async def _fill(self, batch: list[Document], written: Written) -> bool:
        """Add queued bodies to ``batch`` (see :func:`.batching.fill`)."""
        return await fill(self._queue, batch, written, BATCH, self._fetching)

    def _fetching(self) -> bool:
        """Whether fetches may still bring bodies."""
        return not self._stop and self._scheduler.may_fetch()

    async def _hand_over(self, doc: Document) -> None:
        """Queue a body (or a withdrawal) for processing."""
        self._scheduler.handed_over()  # before the (possibly blocking) put: never idle between
        await self._queue.put(doc)

    async def _worker(self, fetcher: Fetcher, robots: Robots, indexes: IndexReader) -> None:
        while (leased := await self._scheduler.lease()) is not None:
            url, _depth = leased
            try:
                await self._fetch_one(fetcher, robots, indexes, url)
            finally:
                self._scheduler.release(url)
            await self._notify()

    async def _fetch_one(
        self, fetcher: Fetcher, robots: Robots, indexes: IndexReader, url: str
    ) -> None:
        """Fetch one URL: read an index page's links, or archive a story and hand it over."""
        row = self._recorder.frontier.row(url)
        role = (row.role if row else None) or "story"
        # robots.txt itself is never disallowed; everything else asks it first
        if role != "robots" and not self._recorder.robots_allow(url, await robots.why_not(url)):
            return
        if row is not None and role in INDEX_ROLES:
            await indexes.read(row)
        else:
            await self._fetch_story(fetcher, url, row)

    async def _fetch_story(self, fetcher: Fetcher, url: str, row: Row | None) -> None:
        """Archive a story URL's body and hand it to processing (or a withdrawal, or the
        archived body of a story listed unchanged), unless it cannot be stored (recorded)."""
        record = self._recorder
        validators = record.frontier.validators(url) if self.options.conditional else None
        listed = record.listed_unchanged(row, validators) if row and row.lastmod else None
        if listed is not None:  # processed as a 304's body would be
            await self._hand_over(listed)
            return
        got = await self._unless_withdrawn(fetcher, url, await self._get(fetcher, url, validators))
        if got is None or record.fetch_failed(row, got.result, got.not_modified):
            return
        assert got.sha is not None and got.body is not None
        if self._claims_other(url, got.result, got.body):
            return
        record.story_fetched(url, got.result, got.sha, got.not_modified)
        await self._hand_over(Document(got.body, got.result.final_url, got.result.fetched_at, url))

    async def _get(self, fetcher: Fetcher, url: str, validators: Validators | None) -> _Got:
        """GET a story URL (conditionally when validators are known) and archive the fetch."""
        headers, old_body = self._recorder.conditional(validators)
        result = await fetcher.get(url, headers)
        self._recorder.fetched()
        if result.status == 304 and headers and validators is not None:
            return _Got(result, await self._archived(result, validators.sha256), old_body, True)
        return _Got(result, await self._archived(result, None), result.body, False)

    async def _archived(self, result: FetchResult, sha: str | None) -> str | None:
        """Archive a fetch, its body (if any) and its record; the body's SHA-256 (``sha``
        for a 304). A body over ``_INLINE_BODY`` is hashed and written off the event loop."""

        def write() -> str | None:
            digest = sha if body is None else self.archive.put_body(body)
            self.archive.add_record(_record(result, digest))
            return digest

        body = None if sha is not None else result.body
        if body is None or len(body) <= _INLINE_BODY:
            return write()
        return await asyncio.get_running_loop().run_in_executor(self._io, write)

    async def _unless_withdrawn(self, fetcher: Fetcher, url: str, got: _Got) -> _Got | None:
        """``got`` (or the GET asked again), or None once the URL is withdrawn: a URL a story
        came from answered 404/410 twice in a row (the fetch before, or one more now)."""
        record = self._recorder
        if is_gone(got.result) and record.frontier.validators(url) is not None:
            if url not in record.gone_before:
                record.set_gone(url, True)
                got = await self._get(fetcher, url, None)
            if is_gone(got.result):
                await self._hand_over(record.withdrawn(url, got.result))
                return None
        record.set_gone(url, is_gone(got.result))
        return got

    def _claims_other(self, url: str, result: FetchResult, body: bytes) -> bool:
        """True (recorded: a variant's duplicate, or an identity mismatch) if the story in
        ``body`` may not be stored under ``url``; the body stays in the archive."""
        fetched = [url, *result.redirects]
        mismatch = identity_mismatch(body, fetched, self.options.json_suffix)
        if mismatch is None:
            return False
        claim = variant_of(body, fetched, self.options.json_suffix)
        with self._recorder.frontier.batch():
            if claim is not None:  # the same story under a variant of its URL
                self._recorder.variant(url, claim)
            else:
                self._recorder.failed(
                    url, status=result.status, kind="identity-mismatch", reason=mismatch
                )
        return True


def _close_all(closers: Sequence[Callable[[], object]], *, failing: bool) -> None:
    """Call every closer, even after one raised; then raise the first error, unless the
    caller is ``failing`` already (its error is the one to report, not a later one)."""
    first: Exception | None = None
    for close in closers:
        try:
            close()
        except Exception as exc:
            first = first or exc
    if first is not None and not failing:
        raise first


def _lock(path: Path) -> IO[bytes]:
    """Hold an exclusive lock on the store's crawl state while this process lives (the
    kernel drops it even on SIGKILL: a resume never waits for a stale lock)."""
    import fcntl

    ensure_dir(path.parent)
    try:
        handle = path.open("ab")
    except OSError as exc:
        raise CrawlError(f"{path}: cannot open the crawl lock: {exc.strerror}") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise CrawlError(f"{path.parent.parent}: another crawl is running on this store") from None
    return handle


def _record(result: FetchResult, sha: str | None) -> FetchRecord:
    return FetchRecord(
        url=result.url,
        final_url=result.final_url or result.url,
        fetch_url=result.final_fetch_url or result.fetch_url,
        status=result.status,
        fetched_at=result.fetched_at.isoformat(),
        sha256=sha,
        size=len(result.body) if result.body is not None else 0,
        headers=result.headers,
        etag=result.headers.get("etag"),
        last_modified=result.headers.get("last-modified"),
        error=result.error,
        attempts=result.attempts,
        redirects=result.redirects,
    )


def crawl(
    seeds: Sequence[str],
    store: Path | str | Store,
    options: CrawlOptions | None = None,
    *,
    handle_signals: bool = False,
    **kwargs: Any,
) -> CrawlReport:
    """Crawl from ``seeds`` into ``store``; return the report (exit code in ``.exit_code``).

    With ``handle_signals`` (the CLI), SIGINT and SIGTERM stop the crawl cleanly: nothing
    fetched is lost and the same command resumes it.

    Raises:
        CrawlError: a bad seed or option.
        StoreError: the store cannot be opened or written.
    """
    crawler = Crawler(seeds, store, options, **kwargs)

    async def main() -> CrawlReport:
        if handle_signals:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.add_signal_handler(sig, crawler.stop)
        return await crawler.run()

    return asyncio.run(main())
