"""The crawl: seeds → breadth-first over ``related[].url`` → archive → store.

(And, with ``follow``, over the stories' edition and newsroom pages and the sites' sitemaps:
:mod:`~hcgraph.crawling.discovery` reads those; a seed that is an index page or a sitemap is
read as one.)

How the parts fit (one job each):

* :mod:`hcgraph.urls` canonicalises, resolves page → JSON URLs, checks scope, applies mirrors;
* :mod:`~hcgraph.crawling.frontier` persists every URL's depth and state (resume after any crash);
* :mod:`~hcgraph.crawling.robots`, :mod:`~hcgraph.crawling.politeness` and
  :mod:`~hcgraph.crawling.fetch` make each request polite and robust;
* :mod:`~hcgraph.crawling.identity_check` accepts a story only under the URL it was fetched from;
* :mod:`hcgraph.archive` keeps every body and its fetch metadata before anything else;
* :mod:`~hcgraph.crawling.process` parses and stores batches off the event loop;
* :mod:`~hcgraph.crawling.scheduler` leases URLs to workers, caps the stories, and sees when
  the crawl is idle;
* :mod:`~hcgraph.crawling.recorder` writes each outcome into the frontier and the progress
  counters;
* :mod:`~hcgraph.crawling.report` summarises the run.

``concurrency`` worker tasks lease URLs from the frontier (shallowest first), fetch, archive
and hand bodies to one processing task through a bounded queue (so memory stays flat however
many stories there are); the processing task records each outcome and queues the story's
related links one hop deeper. The crawl ends when nothing is queued, in flight or waiting to
be processed.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import json
import re
import signal
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Literal
from urllib.parse import urlsplit

import httpx

from .._io import ensure_dir, read_at_most
from .._version import __version__
from ..archive import Archive, FetchRecord
from ..errors import ArchiveError, CrawlError, StoreDiskError, StoreError
from ..ingest import discover, shown_path
from ..pipeline import Document, Outcome
from ..store import Store
from ..urls import DEFAULT_JSON_SUFFIX, Mirror, Mirrors, Scope, canonicalize, json_url, page_url
from .decoding import ACCEPT_ENCODING
from .discovery import (
    DEFAULT_STORY_PATTERN,
    html_links,
    parse_follow,
    parse_sitemap,
    robots_sitemaps,
    seed_role,
    story_pattern,
)
from .fetch import Fetcher, FetchPolicy, FetchResult
from .frontier import INDEX_ROLES, Frontier, Row, Validators
from .identity_check import identity_mismatch, variant_of
from .politeness import Politeness
from .process import BatchRunner, Runner, open_store
from .recorder import CrawlProgress, Recorder
from .report import CrawlReport, build_report
from .robots import Robots
from .scheduler import Scheduler
from .worker import ProcessRunner

__all__ = ["CrawlOptions", "CrawlProgress", "Crawler", "acrawl", "crawl", "user_agent"]

BATCH = 500  # at most this many fetched stories per pipeline batch (one bulk load each)
_FETCH_POLL = 0.05  # s: how often a batch waiting for bodies checks that fetches go on
_INLINE_BODY = 256 * 1024  # bytes: larger bodies are archived off the event loop
_JSONISH = ("application/json", "text/json", "text/plain", "application/octet-stream")
_GONE = (404, 410)  # a stored story's URL answering these (twice in a row) is withdrawn


def user_agent(contact: str | None = None) -> str:
    """The User-Agent: hcgraph, its version, and how to reach whoever runs the crawl."""
    extra = f"; +{contact}" if contact else ""
    return f"hcgraph/{__version__} (provenance graph crawler{extra})"


@dataclass(frozen=True)
class CrawlOptions:
    """Everything that shapes a crawl. Defaults are those of ``hcgraph crawl``.

    Attributes:
        depth: follow related links up to this many hops from a seed (seed = 0).
        max_stories: stop after this many stories are stored (None: no cap).
        concurrency: requests in flight overall.
        per_host: requests in flight to one host (default: ``concurrency``).
        rate: request starts per second per host (None: unlimited).
        allow_hosts: hosts in scope besides the seeds' hosts.
        mirrors: ``ORIGIN=MIRROR`` rewrites (fetch from MIRROR, keep ORIGIN's IRIs).
        ignore_robots: do not read robots.txt (for one's own mirror).
        json_suffix: page URL + this = the story's JSON URL.
        contact: an e-mail or URL added to the User-Agent.
        conditional: send If-None-Match / If-Modified-Since from earlier crawls.
        policy: timeouts, retries, back-off, body cap, redirects.
        report: where to write the JSON report (default ``STORE/crawl-report.json``).
        follow: what a stored story's links lead to: ``related`` (its related stories),
            ``edition`` and ``newsroom`` (those HTML pages, and the stories they list),
            ``sitemap`` (the seeds' hosts' sitemaps, from robots.txt ``Sitemap:`` lines or
            ``/sitemap.xml``). A seed that is an index page or a sitemap is read as one
            whatever this says.
        story_pattern: a regular expression on the path of a canonical page URL: the links
            of index pages and sitemaps that are stories.
        store_worker: where the pipeline runs when the crawl opens the store itself:
            ``process`` (a worker process of its own, see
            :mod:`hcgraph.crawling.worker`: measured faster, the event loop and the pipeline
            no longer share one GIL) or ``thread``. A crawl
            handed an open :class:`~hcgraph.store.Store` always uses a thread.
    """

    depth: int = 2
    max_stories: int | None = None
    concurrency: int = 8
    per_host: int | None = None
    rate: float | None = None
    allow_hosts: tuple[str, ...] = ()
    mirrors: tuple[str, ...] = ()
    ignore_robots: bool = False
    json_suffix: str = DEFAULT_JSON_SUFFIX
    contact: str | None = None
    conditional: bool = True
    policy: FetchPolicy = field(default_factory=FetchPolicy)
    report: Path | None = None
    follow: tuple[str, ...] = ("related",)
    story_pattern: str = DEFAULT_STORY_PATTERN
    store_worker: Literal["process", "thread"] = "process"

    def fingerprint(self, seeds: Sequence[str]) -> str:
        """What identifies "the same crawl" for resume: seeds and what decides the result.

        Politeness, mirrors and timeouts are left out: they change how, not what.
        """
        key = {
            "seeds": sorted(seeds),
            "depth": self.depth,
            "max_stories": self.max_stories,
            "allow_hosts": sorted(self.allow_hosts),
            "json_suffix": self.json_suffix,
            "ignore_robots": self.ignore_robots,
        }
        # Only when not the default: a crawl left unfinished by an earlier version resumes.
        if self.follow != ("related",):
            key["follow"] = list(self.follow)
        if self.story_pattern != DEFAULT_STORY_PATTERN:
            key["story_pattern"] = self.story_pattern
        return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()

    def describe(self) -> dict[str, Any]:
        """The options as plain JSON data (for the report)."""
        data = asdict(self)
        data["report"] = str(self.report) if self.report else None
        return data


def _seed_kind(seed: str) -> str:
    if not seed.strip():  # Path("") is the current directory: it would be crawled
        raise CrawlError(
            f"seed {seed!r} is empty: give a story URL or a local story file "
            "(an unset shell variable?)"
        )
    if Path(seed).exists():
        return "path"
    if "://" in seed:
        return "url"
    raise CrawlError(f"seed {seed!r}: not an http(s) URL and no such file or directory")


def _seed_url(seed: str, suffix: str, pattern: re.Pattern[str]) -> tuple[str, str]:
    """A URL seed's frontier key and role: a story's JSON URL (``story``, or ``page``: a
    page that is read as an index page if it has no story JSON), else the canonical URL of
    a sitemap or robots.txt."""
    try:
        role = seed_role(seed, pattern, suffix)
        if role in ("story", "page"):
            return json_url(seed, suffix), role
        return canonicalize(seed), role
    except ValueError as exc:
        raise CrawlError(f"seed {seed!r}: {exc}") from None


class Crawler:
    """One crawl run. Use :func:`crawl` / :func:`acrawl` unless you need :meth:`stop`.

    Args:
        seeds: story page URLs, JSON URLs, or local story files/directories.
        store: the store directory (the archive, frontier and report live in it too), or an
            open on-disk :class:`~hcgraph.store.Store` (then stories are stored in a thread).
        options: see :class:`CrawlOptions`.
        client: an ``httpx.AsyncClient`` to use (must not follow redirects); default: one
            made here with ``transport`` if given.
        on_progress: called with :class:`~hcgraph.crawling.recorder.CrawlProgress` after each
            change.

    Raises:
        CrawlError: a bad seed or option (before anything is fetched).
    """

    # Made when the crawl starts (:meth:`_crawl`): the URL leases, and what records outcomes.
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
        self.options = options or CrawlOptions()
        if self.options.depth < 0:
            raise CrawlError("--depth must be 0 or more")
        if self.options.concurrency < 1:
            raise CrawlError("--concurrency must be at least 1")
        if not seeds:
            raise CrawlError("no seeds given")
        self.follow = parse_follow(self.options.follow)
        self.pattern = story_pattern(self.options.story_pattern)
        self.open_store = store if isinstance(store, Store) else None
        if isinstance(store, Store):
            if store.directory is None:
                raise CrawlError("a crawl needs an on-disk store (its archive lives there)")
            self.store_dir = store.directory
        else:
            self.store_dir = Path(store)
        self.url_seeds: list[str] = []
        self.seed_roles: dict[str, str] = {}
        self.path_seeds: list[Path] = []
        for seed in seeds:
            if _seed_kind(seed) == "path":
                self.path_seeds.extend(discover([seed]))
                continue
            key, role = _seed_url(seed, self.options.json_suffix, self.pattern)
            self.url_seeds.append(key)
            self.seed_roles.setdefault(key, role)
        self.mirrors = Mirrors(tuple(Mirror.parse(m) for m in self.options.mirrors))
        self.scope = Scope.of(self.url_seeds, self.options.allow_hosts)
        self.seeds = [*self.url_seeds, *(shown_path(p) for p in self.path_seeds)]
        self.client = client
        self.transport = transport
        self.on_progress = on_progress
        self.progress = CrawlProgress()
        self.archive = Archive(self.store_dir / "archive")
        self.frontier: Frontier | None = None
        self._stop = False
        self._resume_items: list[Document] = []
        self._resumed_bodies: list[str] = []  # their SHA-256s, flushed before they are stored
        self._workers: list[asyncio.Task[None]] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._queue: asyncio.Queue[Document | None] = asyncio.Queue(maxsize=2 * BATCH)
        self._io = ThreadPoolExecutor(1, thread_name_prefix="hcgraph-archive")  # large bodies
        self._gone: set[str] = set()  # URLs whose last fetch answered 404/410 (any run)

    # --- public -----------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop soon: no new fetches; what is fetched stays in the archive for the resume."""
        self._stop = True
        for task in self._workers:  # a cancelled fetch leaves its URL queued
            task.cancel()
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
        frontier = self.frontier = Frontier(self.store_dir / "crawl" / "frontier.sqlite")
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
            report = build_report(
                frontier,
                seeds=self.seeds,
                status=status,
                resumed=resumed,
                started_at=started_at,
                finished_at=dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
                elapsed=time.monotonic() - t0,
                options=self.options.describe(),
                requests=requests,
            )
            failing = False
        finally:
            _close_all((self.archive.close, frontier.close, lock.close), failing=failing)
        report.write(self.options.report or self.store_dir / "crawl-report.json")
        return report

    # --- setup ------------------------------------------------------------------------------
    def _begin(self, frontier: Frontier) -> bool:
        fingerprint = self.options.fingerprint(self.seeds)
        resumed = frontier.begin(fingerprint, self.options.depth)
        hosts = frontier.get_setting("hosts")
        if resumed and hosts:
            for host in json.loads(hosts):
                self.scope = self.scope.with_host(host)
        if not resumed:
            with frontier.batch():
                for url in self.url_seeds:
                    frontier.add(url, 0, via="seed", role=self.seed_roles[url])
                if "sitemap" in self.follow:
                    self._sitemaps_of_seeds(frontier)
                for path in self.path_seeds:
                    self._read_local(frontier, path)
            frontier.set_setting("hosts", json.dumps(sorted(self.scope.hosts)))
        return resumed

    def _sitemaps_of_seeds(self, frontier: Frontier) -> None:
        """``--follow sitemap``: each seed origin's robots.txt ``Sitemap:`` lines (or, with
        ``--ignore-robots``, its ``/sitemap.xml``) are read at depth 0."""
        for url in dict.fromkeys(self.url_seeds):
            parts = urlsplit(url)
            origin = f"{parts.scheme}://{parts.netloc}"
            if self.options.ignore_robots:
                frontier.add(origin + "/sitemap.xml", 0, via="sitemap", role="sitemap")
            else:
                frontier.add(origin + "/robots.txt", 0, via="sitemap", role="robots")

    def _read_local(self, frontier: Frontier, path: Path) -> None:
        """A local seed file goes into the archive and the frontier as if it was fetched."""
        uri = path.resolve().as_uri()
        frontier.add(uri, 0)
        now = dt.datetime.now(dt.UTC)
        cap = self.options.policy.max_bytes
        try:
            with path.open("rb") as handle:
                body = read_at_most(handle, cap + 1)
        except OSError as exc:
            frontier.mark_failed(
                uri, status=None, kind="file", reason=f"cannot read: {exc.strerror}"
            )
            return
        if len(body) > cap:
            reason = f"file too large: more than the {cap}-byte cap"
            frontier.mark_failed(uri, status=None, kind="too-large", reason=reason)
            return
        sha = self.archive.put_body(body)
        shown = shown_path(path)  # the file's name even when its bytes are not UTF-8
        record = FetchRecord(
            url=uri, final_url=uri, fetch_url=shown, status=None, fetched_at=now.isoformat(),
            sha256=sha, size=len(body),
        )  # fmt: skip
        self.archive.add_record(record)
        frontier.mark_fetched(uri, sha, shown, now.isoformat(), None)

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

    # --- the crawl loop ---------------------------------------------------------------------
    async def _crawl(self, frontier: Frontier, runner: BatchRunner) -> int:
        # A resumed run counts what it stored before towards --max-stories.
        scheduler = self._scheduler = Scheduler(
            frontier, max_stories=self.options.max_stories, stored=frontier.count("done")
        )
        if self._stop:
            scheduler.stop()
        self.progress.stored = 0
        recorder = self._recorder = Recorder(
            frontier, self.scope, self.options.json_suffix, self.progress,
            follow=self.follow, pattern=self.pattern,
        )  # fmt: skip
        own_client = self.client is None
        client = self.client or self._make_client()
        per_host = self.options.per_host or self.options.concurrency
        fetcher = Fetcher(
            client, Politeness(per_host, self.options.rate), self.options.policy,
            lambda u: recorder.scope.why_not(u), self.mirrors,
        )  # fmt: skip
        robots = Robots(fetcher, enabled=not self.options.ignore_robots)
        self._gone = frontier.gone_urls()
        frontier.requeue_gone()
        for row in frontier.rows("fetched"):  # fetched before an interruption: reprocess
            if not row.sha256 or not self._buffer_processing(
                row.url, row.sha256, row.source or row.url, row.fetched_at
            ):
                frontier.requeue(row.url)  # its body is missing or damaged: fetch it again
        processor = asyncio.create_task(self._process_loop(frontier, runner))
        workers = self._workers = [
            asyncio.create_task(self._worker(frontier, fetcher, robots))
            for _ in range(self.options.concurrency)
        ]
        # If processing dies, nothing would ever drain the queue: stop the fetchers at once
        # (the error is raised below) instead of waiting for it forever. Likewise if a
        # fetcher dies of an error: the URL it held is never handed over, so the others
        # would wait for it to be processed, for ever.
        processor.add_done_callback(lambda _: self._abort_fetching())
        for task in workers:
            task.add_done_callback(self._fetcher_ended)
        try:
            results = await asyncio.gather(*workers, return_exceptions=True)
            errors = [r for r in results if isinstance(r, Exception)]
            if errors and not processor.done():
                raise errors[0]
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            if not processor.done():
                await self._queue.put(None)
            try:
                await processor  # re-raises a processing failure
            finally:
                self._io.shutdown(wait=True)  # archive writes of cancelled fetches end too
                if own_client:
                    await client.aclose()
        return fetcher.requests

    async def _archived(
        self, result: FetchResult, sha: str | None, body: bytes | None
    ) -> str | None:
        """Archive a fetch: its body (when given) and its record; the body's SHA-256.

        Appending to the archive's pack costs ~0.04 ms for a typical body, less than a hop
        to another thread, so it runs on the event loop; a body over ``_INLINE_BODY`` (up to
        the 10 MiB cap: ~20 ms to hash and write) goes to the archive's own thread instead.
        """

        def write() -> str | None:
            digest = sha if body is None else self.archive.put_body(body)
            self.archive.add_record(_record(result, digest))
            return digest

        if body is None or len(body) <= _INLINE_BODY:
            return write()
        return await asyncio.get_running_loop().run_in_executor(self._io, write)

    async def _synced(self) -> None:
        """Flush the archive to disk before a batch goes to the store (on the archive's
        thread: one ``fdatasync`` a batch), so the store never holds a story whose body a
        power cut took from the archive, and ``rebuild`` can always recreate it."""
        # Bodies a resume takes from the archive: an earlier run may never have flushed them.
        bodies, self._resumed_bodies = self._resumed_bodies, []
        await asyncio.get_running_loop().run_in_executor(self._io, self.archive.sync, bodies)

    def _fetcher_ended(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._abort_fetching()

    def _abort_fetching(self) -> None:
        for task in self._workers:
            task.cancel()

    def _buffer_processing(self, url: str, sha: str, source: str, fetched_at: str | None) -> bool:
        """Queue an archived body for processing; False if the archive cannot give it back."""
        try:
            body = self.archive.get_body(sha)
        except ArchiveError:
            return False
        when = dt.datetime.fromisoformat(fetched_at) if fetched_at else dt.datetime.now(dt.UTC)
        self._scheduler.handed_over()
        self._resume_items.append(Document(body, source, when, url))
        self._resumed_bodies.append(sha)
        return True

    async def _notify(self) -> None:
        await self._scheduler.wake()
        if self.on_progress is not None:
            self.on_progress(self.progress)

    async def _worker(self, frontier: Frontier, fetcher: Fetcher, robots: Robots) -> None:
        while True:
            leased = await self._scheduler.lease()
            if leased is None:
                return
            url, _depth = leased
            try:
                await self._fetch_one(frontier, fetcher, robots, url)
            finally:
                self._scheduler.release(url)
            await self._notify()

    async def _fetch_one(
        self, frontier: Frontier, fetcher: Fetcher, robots: Robots, url: str
    ) -> None:
        """Fetch one URL into the archive and hand its body to processing (or read an index
        page's links)."""
        row = frontier.row(url)
        role = (row.role if row else None) or "story"
        # robots.txt itself is never disallowed; everything else asks it first
        if role != "robots" and not await self._robots_allow(robots, url):
            return
        if row is not None and role in INDEX_ROLES:
            await self._read_index(frontier, fetcher, robots, row)
            return
        validators = frontier.validators(url) if self.options.conditional else None
        if row is not None and row.lastmod and await self._unchanged(frontier, row, validators):
            return
        result, sha, old_body, not_modified = await self._get(fetcher, url, validators)
        if _gone(result) and frontier.validators(url) is not None:  # a story came from it
            if url not in self._gone:  # not confirmed by the fetch before: ask once more now
                self._set_gone(frontier, url, True)
                result, sha, old_body, not_modified = await self._get(fetcher, url, None)
            if _gone(result):
                await self._withdrawn(frontier, url, result)
                return
        self._set_gone(frontier, url, _gone(result))
        failure = _failure(result, not_modified)
        if failure is not None:
            self._fetch_failed(frontier, row, result, failure)
            return
        assert sha is not None
        body = old_body if not_modified else result.body
        assert body is not None
        if self._claims_other(frontier, url, result, body):
            return
        await self._hand_over(frontier, url, result, sha, body, not_modified)

    async def _get(
        self, fetcher: Fetcher, url: str, validators: Validators | None
    ) -> tuple[FetchResult, str | None, bytes | None, bool]:
        """GET a story URL (conditionally when validators are known) and archive the fetch:
        the result, its body's SHA-256, the archived body a 304 confirms, and whether it
        was one."""
        headers, old_body = _conditional(validators, self.archive)
        result = await fetcher.get(url, headers)
        not_modified = result.status == 304 and bool(headers)
        if not_modified and validators is not None:
            sha = await self._archived(result, validators.sha256, None)
        else:
            sha = await self._archived(result, None, result.body)
        self._recorder.fetched()
        return result, sha, old_body, not_modified

    async def _robots_allow(self, robots: Robots, url: str) -> bool:
        """True if robots.txt lets ``url`` be fetched; else it is recorded skipped (or failed,
        when robots.txt could not be read)."""
        verdict = await robots.why_not(url)
        if verdict is None:
            return True
        state, reason = verdict
        if state == "failed":
            self._recorder.failed(url, status=None, kind="robots", reason=reason)
        else:
            self._recorder.skipped(url, reason)
        return False

    def _fetch_failed(
        self, frontier: Frontier, row: Row | None, result: FetchResult, failure: tuple[str, str]
    ) -> None:
        """Record a response that cannot be a story; a seed page whose JSON is not there is
        read as an index page instead."""
        kind, reason = failure
        if row is not None and row.role == "page" and _no_story_here(result, kind):
            with frontier.batch():
                self._recorder.as_index(row, page_url(row.url, self.options.json_suffix), reason)
            return
        self._recorder.failed(result.url, status=result.status, kind=kind, reason=reason)

    def _claims_other(self, frontier: Frontier, url: str, result: FetchResult, body: bytes) -> bool:
        """True if the story in ``body`` may not be stored under ``url`` (recorded: a
        duplicate when it is a variant of the story's own URL, else an identity mismatch).
        The body stays in the archive; nothing is stored."""
        fetched = [url, *result.redirects]
        mismatch = identity_mismatch(body, fetched, self.options.json_suffix)
        if mismatch is None:
            return False
        claim = variant_of(body, fetched, self.options.json_suffix)
        with frontier.batch():
            if claim is not None:  # the same story under a variant of its URL
                self._recorder.variant(url, claim)
            else:
                self._recorder.failed(
                    url, status=result.status, kind="identity-mismatch", reason=mismatch
                )
        return True

    async def _hand_over(
        self,
        frontier: Frontier,
        url: str,
        result: FetchResult,
        sha: str,
        body: bytes,
        not_modified: bool,
    ) -> None:
        """Record a story body as fetched (with its validators) and queue it for processing."""
        with frontier.batch():  # one commit, not two: each is a WAL write on the event loop
            if result.status == 200:
                etag, modified = result.headers.get("etag"), result.headers.get("last-modified")
                when = result.fetched_at.isoformat()
                frontier.set_validators(url, Validators(etag, modified, sha, when))
            elif not_modified:
                frontier.confirmed(url, result.fetched_at.isoformat())
            frontier.mark_fetched(
                url, sha, result.final_url, result.fetched_at.isoformat(), result.status
            )
        if not_modified:
            self._recorder.not_modified.add(url)
        self._scheduler.handed_over()  # before the (possibly blocking) put: not idle meanwhile
        await self._queue.put(Document(body, result.final_url, result.fetched_at, url))

    def _set_gone(self, frontier: Frontier, url: str, gone: bool) -> None:
        """Remember whether ``url``'s last fetch answered 404/410 (written only on a change)."""
        if gone != (url in self._gone):
            frontier.set_gone(url, gone)
            (self._gone.add if gone else self._gone.discard)(url)

    async def _withdrawn(self, frontier: Frontier, url: str, result: FetchResult) -> None:
        """A URL a story was fetched from answered 404/410 twice in a row (a retry, or the
        fetch of an earlier crawl, and this one): the pipeline marks its story withdrawn,
        at this answer's time. Never on 5xx, timeouts, robots or network errors: those
        are failures, and the story stays current."""
        assert result.status is not None
        with frontier.batch():
            self._set_gone(frontier, url, True)
            frontier.mark_gone(url, result.status)
        self._recorder.gone[url] = result.status
        doc = Document(b"", result.final_url or url, result.fetched_at, url, withdrawn=True)
        self._scheduler.handed_over()
        await self._queue.put(doc)

    async def _unchanged(self, frontier: Frontier, row: Row, validators: Validators | None) -> bool:
        """A story a sitemap lists as unchanged (``<lastmod>``) since its body was last
        fetched whole is not requested: its archived body is processed as a 304's would be.
        False (fetch it) when anything is unknown or the archived body is not intact."""
        v = validators
        if v is None or not v.sha256 or not _listed_unchanged(row.lastmod, v.fetched_at):
            return False
        body = self.archive.intact_body(v.sha256)
        if body is None:
            return False
        assert v.fetched_at is not None
        frontier.mark_fetched(row.url, v.sha256, row.url, v.fetched_at, None)
        self._recorder.not_modified.add(row.url)
        self._scheduler.handed_over()
        when = dt.datetime.fromisoformat(v.fetched_at)
        await self._queue.put(Document(body, row.url, when, row.url))
        return True

    async def _read_index(
        self, frontier: Frontier, fetcher: Fetcher, robots: Robots, row: Row
    ) -> None:
        """Fetch an index page, a sitemap or robots.txt and queue what it lists (one
        transaction with marking it read, so a crash leaves it queued, whole).

        Index bodies are not archived: they are not stories, and nothing is rebuilt from
        them (the stories they list are archived when fetched).
        """
        record = self._recorder
        if row.role == "robots":
            links = await self._robots_sitemaps(fetcher, robots, row.url)
            with frontier.batch():
                record.index_read(row, links, sitemaps=True)
            return
        result = await self._index_body(frontier, fetcher, row)
        if result is None or result.body is None:
            return
        if row.role == "sitemap":
            try:
                sitemap = parse_sitemap(result.body, self.options.policy.max_bytes)
            except CrawlError as exc:
                record.failed(row.url, status=result.status, kind="sitemap", reason=str(exc))
                return
            with frontier.batch():
                record.index_read(row, sitemap.entries, sitemaps=sitemap.index)
            return
        charset = _charset(result.headers.get("content-type", ""))
        hrefs = html_links(result.body, result.final_url or row.url, charset)
        with frontier.batch():
            record.index_read(row, [(h, None) for h in hrefs], sitemaps=False)

    async def _robots_sitemaps(
        self, fetcher: Fetcher, robots: Robots, url: str
    ) -> list[tuple[str, str | None]]:
        """The sitemaps a robots.txt names (read with its rules, or here with
        ``--ignore-robots``); the origin's ``/sitemap.xml`` when it names none."""
        found = await robots.sitemaps(url)
        if found is None:  # --ignore-robots: read it for its Sitemap lines only
            result = await fetcher.get(url)
            self._recorder.fetched()
            body = result.body if result.status == 200 and result.error is None else None
            found = robots_sitemaps(
                (body or b"")[: 512 * 1024].decode("utf-8", "replace").splitlines()
            )
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
        return [(s, None) for s in found or [origin + "/sitemap.xml"]]

    async def _index_body(
        self, frontier: Frontier, fetcher: Fetcher, row: Row
    ) -> FetchResult | None:
        """Fetch an index page or sitemap; None (recorded as failed) unless it is a 200."""
        result = await fetcher.get(row.url)
        self._recorder.fetched()
        if result.error is None and result.status == 200 and result.body is not None:
            return result
        kind = result.kind if result.error is not None else "http"
        reason = result.error or f"HTTP {result.status}"
        seed = frontier.row(row.parent) if row.via == "seed" and row.parent else None
        if seed is not None and seed.role == "page":  # say why it was read as a page
            reason = f"no story JSON at {seed.url} ({seed.reason}); the page: {reason}"
        self._recorder.failed(row.url, status=result.status, kind=kind, reason=reason)
        return None

    async def _process_loop(self, frontier: Frontier, runner: BatchRunner) -> None:
        """Take fetched bodies off the queue in batches and hand them to the pipeline.

        One batch is written while the next is filled and mapped. Each submitted batch has a
        task (:meth:`_settle`) that records its outcomes as soon as its future says it has
        landed (a URL recorded as stored is in the store), so the links it brings feed the
        fetchers at once; the loop waits for that task before it submits the batch after
        next, before a suspect, on a stop, and at the end.
        """
        pending, self._resume_items = self._resume_items, []
        # Bodies that were in a batch when the store worker died: retried one at a time.
        suspects = set(json.loads(frontier.get_setting("suspects") or "[]"))
        pending.sort(key=lambda item: item.key not in suspects)
        writing: asyncio.Task[None] | None = None  # records the batch being written
        finished = False
        try:
            while not finished:
                alone = bool(pending) and pending[0].key in suspects
                size = 1 if alone else BATCH
                batch, pending = pending[:size], pending[size:]
                if not alone:
                    finished = await self._fill(batch, writing)
                if writing is not None and (alone or self._stop or writing.done()):
                    await writing  # raises what recording it raised
                    writing = None
                if not batch:
                    continue
                if self._stop:  # leave them fetched: the resume processes them from the archive
                    self._scheduler.processed(len(batch))
                    await self._notify()
                elif alone:
                    await self._settle(frontier, runner, batch, suspects, None)
                else:
                    await self._synced()  # not in the try: a disk that fails ends the crawl
                    try:
                        landed: asyncio.Future[list[Outcome]] | None = await runner.submit(batch)
                    except Exception:  # not mapped: processed again by its task
                        landed = None
                    previous = writing
                    writing = asyncio.ensure_future(
                        self._settle(frontier, runner, batch, suspects, landed)
                    )
                    if previous is not None:
                        await previous
            if writing is not None:
                await writing
        finally:
            if writing is not None and not writing.done():  # the loop failed: stop it too
                writing.cancel()
                await asyncio.gather(writing, return_exceptions=True)

    async def _fill(self, batch: list[Document], written: asyncio.Future[Any] | None) -> bool:
        """Add queued bodies to ``batch``, up to :data:`BATCH`; True once the end is seen.

        An empty batch waits for its first body, or until ``written`` (the task recording
        the batch in flight) ends: then it comes back empty, for the loop to see how that
        went. While the batch before is still being written, wait for more bodies instead
        of starting a small batch: each write has a fixed cost (a bulk load: new files for
        the store to compact), so a batch grows with the time its predecessor takes to
        write. Without a write in flight, take only what is queued already; and stop
        waiting once no fetch can bring more (the end of a crawl, or a depth that waits for
        the related links of what is being processed): checked every :data:`_FETCH_POLL`
        seconds.
        """
        queue = self._queue
        while len(batch) < BATCH:
            if queue.empty():
                if batch and not self._may_grow(written):
                    return False
                got = await self._next_item(written, _FETCH_POLL if batch else None)
                if not got:  # the write in flight ended (back to the loop), or a poll
                    if not batch:
                        return False
                    continue
                item = got[0]
            else:
                item = queue.get_nowait()
            if item is None:
                return True
            batch.append(item)
        return False

    def _may_grow(self, written: asyncio.Future[Any] | None) -> bool:
        """Whether a batch waits for more bodies: a write is in flight and fetches go on."""
        running = written is not None and not written.done()
        return running and not self._stop and self._scheduler.may_fetch()

    async def _next_item(
        self, written: asyncio.Future[Any] | None, timeout: float | None
    ) -> list[Document | None]:
        """The next queued item (as a list of one), or [] if ``written`` ended or
        ``timeout`` passed first."""
        getter = asyncio.ensure_future(self._queue.get())
        either: set[asyncio.Future[Any]] = {getter} if written is None else {getter, written}
        try:
            await asyncio.wait(either, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting = not getter.done()
            if waiting:  # a cancelled get leaves its item in the queue
                getter.cancel()
        return [] if waiting else [getter.result()]

    async def _settle(
        self,
        frontier: Frontier,
        runner: BatchRunner,
        batch: list[Document],
        suspects: set[str],
        landed: asyncio.Future[list[Outcome]] | None,
    ) -> None:
        """Record ``batch``'s outcomes once its write has landed (``landed``); if it was not
        submitted (``landed`` is None) or its write failed, process it again, one body at a
        time if need be (:meth:`_process_batch`), and record that."""
        outcomes = None
        if landed is not None:
            with contextlib.suppress(Exception):
                outcomes = await landed
        if outcomes is None:
            outcomes = await self._process_batch(frontier, runner, batch, suspects)
        await self._record(frontier, batch, outcomes)

    async def _record(
        self, frontier: Frontier, batch: list[Document], outcomes: list[Outcome]
    ) -> None:
        """Record a written batch's outcomes in the frontier (one transaction)."""
        record = self._recorder
        with frontier.batch():
            stored = sum(record.outcome(outcome) for outcome in outcomes)
        self._scheduler.processed(len(batch), stored)
        self.progress.queued = frontier.count("queued")
        await self._notify()

    async def _process_batch(
        self, frontier: Frontier, runner: BatchRunner, batch: list[Document], suspects: set[str]
    ) -> list[Outcome]:
        """Process a batch; a body that makes processing fail fails alone, not the crawl.

        A batch that raises is retried one body at a time, and each body that raises on its
        own is recorded as failed (``process-error``). A store worker that *dies* (a
        :class:`StoreError`) ends the crawl with that error; the bodies of its batch are
        remembered as suspects, so the resume retries them one at a time and records the one
        that kills it as failed instead of dying on it again and again.
        """
        await self._synced()  # not in the try: a disk that fails ends the crawl
        try:
            outcomes = await runner.process(batch)
        except StoreDiskError as exc:  # the disk, not a body: no story is held responsible
            raise CrawlError(
                f"processing failed: {exc} (run the same command again to resume once the "
                "store's disk has room)"
            ) from None
        except StoreError as exc:
            # The store's error is the one to report. On a full disk the frontier cannot
            # be written either: then the batch is not remembered (the resume redoes it).
            with contextlib.suppress(CrawlError):
                if len(batch) == 1 and batch[0].key in suspects:  # alone, and again
                    self._recorder.poisoned(batch[0], exc)
                else:
                    suspects.update(item.key or "" for item in batch)
                    frontier.set_setting("suspects", json.dumps(sorted(suspects)))
            raise CrawlError(
                f"processing failed: {exc} (run the same command again to resume; a body "
                "that made the store worker fail is retried alone, and recorded as failed if it "
                "does again)"
            ) from None
        except Exception as exc:
            if len(batch) == 1:
                self._recorder.poisoned(batch[0], exc)
                return []
            outcomes = []
            for item in batch:
                outcomes.extend(await self._process_batch(frontier, runner, [item], suspects))
            return outcomes
        if len(batch) == 1 and batch[0].key in suspects:
            suspects.discard(batch[0].key or "")
            frontier.set_setting("suspects", json.dumps(sorted(suspects)))
        return outcomes


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
    """Hold an exclusive lock on the store's crawl state for this process's lifetime.

    The kernel drops it when the process dies (even by SIGKILL), so a resume never waits
    for a stale lock, while a second crawl on the same store is refused before it can
    touch the first one's frontier.
    """
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


def _conditional(v: Validators | None, archive: Archive) -> tuple[dict[str, str], bytes | None]:
    """The headers that make a re-fetch conditional, with the archived body a 304 would
    confirm: read and checked against its hash here, once, and used as is on a 304."""
    if v is None or not v.sha256 or not (v.etag or v.last_modified):
        return {}, None
    old = archive.intact_body(v.sha256)
    if old is None:  # lost or damaged: a 304 would leave nothing, so ask unconditionally
        return {}, None
    headers = {}
    if v.etag:
        headers["If-None-Match"] = v.etag
    if v.last_modified:
        headers["If-Modified-Since"] = v.last_modified
    return headers, old


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


def _gone(result: FetchResult) -> bool:
    """The server answered that the URL is gone: 404 or 410, not a failed fetch."""
    return result.error is None and result.status in _GONE


def _listed_unchanged(lastmod: str | None, fetched_at: str | None) -> bool:
    """True when a sitemap's ``lastmod`` (UTC ISO) is no later than ``fetched_at``."""
    if not lastmod or not fetched_at:
        return False
    try:
        listed, fetched = dt.datetime.fromisoformat(lastmod), dt.datetime.fromisoformat(fetched_at)
    except ValueError:
        return False
    return listed.tzinfo is not None and fetched.tzinfo is not None and listed <= fetched


def _charset(content_type: str) -> str | None:
    """The ``charset`` parameter of a Content-Type header, if any."""
    for param in content_type.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            return value.strip(" \"'") or None
    return None


def _no_story_here(result: FetchResult, kind: str) -> bool:
    """The JSON URL of a seed page answered as if there is no story there: 404/410, or an
    HTML page (a site that answers every path with one)."""
    if result.status in (404, 410):
        return True
    ctype = result.headers.get("content-type", "").split(";")[0].strip().lower()
    return kind == "content-type" and ctype in ("text/html", "application/xhtml+xml")


def _failure(result: FetchResult, not_modified: bool) -> tuple[str, str] | None:
    """``(kind, reason)`` if the response cannot be a story, else None."""
    if result.error is not None:
        return result.kind, result.error
    if not_modified:
        return None
    if result.status != 200:
        return "http", f"HTTP {result.status}"
    ctype = result.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype and not (ctype.endswith("+json") or ctype in _JSONISH):
        return "content-type", f"not JSON: Content-Type {ctype}"
    if result.body is None:
        return "http", "empty response"
    return None


async def acrawl(
    seeds: Sequence[str],
    store: Path | str | Store,
    options: CrawlOptions | None = None,
    **kwargs: Any,
) -> CrawlReport:
    """Crawl (async). See :class:`Crawler` for the arguments."""
    return await Crawler(seeds, store, options, **kwargs).run()


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
