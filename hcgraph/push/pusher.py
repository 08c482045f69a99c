"""Push the store's graphs to a triple store: orchestration, concurrency, retries.

The changed graphs (by hash, :mod:`.state`) become *jobs* — a GSP PUT, an update batch or a
bulk-load chunk — sent by ``concurrency`` workers over one keep-alive pool while a worker
thread reads on. Transient failures are retried; a refused graph is reported and the rest go
on; an unreachable server, refused credentials, a wrong path or a redirect stop the push.
Only 2xx answers are recorded, each as it comes. See docs/pushing.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import ssl
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

import httpx

from .._version import __version__
from ..errors import PushError, first_line, visible
from ..errors import one_line as _v
from ..retry import Backoff
from ..store import Store
from .auth import Credentials, answered_challenge
from .endpoints import RemoteEndpoint
from .protocols import LocalGraph, local_graphs, request
from .state import PushState
from .verify import VerifyReport, compare_counts, remote_counts, remote_graphs

if TYPE_CHECKING:
    from rich.text import Text

__all__ = [
    "GraphFailure",
    "PushExtras",
    "PushOptions",
    "PushReport",
    "push_graphs",
    "push_graphs_async",
]

#: ``bulk="auto"``: the fewest graphs to send that make a bulk load worth it.
BULK_MIN_GRAPHS = 500
_BULK_CHUNK_BYTES = 8 * 1024 * 1024  # 32 MB cost the server more CPU at 10k (RESULTS)
_BULK_IN_FLIGHT = 2  # the bulk loader uses the server's cores itself; more only queue
_DROP_BATCH = 500
_READ_BATCH = 16  # graphs read per hop to the reading thread
_MAX_BATCH_BYTES = 8 * 1024 * 1024
_MAX_RETRY_AFTER = 30.0
# (option, what the message calls it, its choices) and (option, lowest, highest)
_CHOICES = (
    ("protocol", "protocol", ("gsp", "update")),
    ("mode", "mode", ("replace", "merge")),
    ("bulk", "bulk setting", ("auto", "always", "never")),
)
_RANGES = (("concurrency", 1, 64), ("batch", 1, 10_000), ("retries", 0, 10))

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class PushOptions:
    """How to push: the CLI's options of the same names (docs/pushing.md; ``force`` is
    ``--all``), plus ``backoff``, the first retry delay (doubled each time), and ``bulk_bytes``,
    about the N-Triples bytes per bulk request. ``bulk``: ``auto`` bulk-loads the unrecorded
    graphs (all with ``force``) where the endpoint has a bulk path, the protocol is gsp and at
    least :data:`BULK_MIN_GRAPHS` go; ``always`` however few; ``never``.
    """

    protocol: str = "gsp"
    mode: str = "replace"
    concurrency: int = 4
    batch: int = 50
    retries: int = 3
    backoff: float = 0.5
    timeout: float = 60.0
    force: bool = False
    verify: bool = False
    dry_run: bool = False
    ca_bundle: Path | None = None
    bulk: str = "auto"
    bulk_bytes: int = _BULK_CHUNK_BYTES

    def check(self) -> None:
        """Raise :class:`~hcgraph.errors.PushError` for an option out of range."""
        for name, label, choices in _CHOICES:
            value = getattr(self, name)
            if value not in choices:
                either = ", ".join(choices[:-1]) + " or " + choices[-1]
                raise PushError(f"unknown {label} {value!r}; choose {either}")
        if self.bulk_bytes < 1:
            raise PushError("bulk_bytes must be positive")
        for name, low, high in _RANGES:
            if not low <= getattr(self, name) <= high:
                raise PushError(f"--{name} must be between {low} and {high}")
        if not (self.timeout > 0 and math.isfinite(self.timeout)):  # nan fails `<= 0` too
            raise PushError("--timeout must be a positive number of seconds")


@dataclass(frozen=True)
class GraphFailure:
    """A graph the server did not take, and why (one line, secrets removed)."""

    graph: str
    reason: str


@dataclass
class PushReport:
    """The outcome of a push: ``graphs`` = ``pushed`` + ``unchanged`` + ``len(failures)`` +
    ``not_sent``; ``bulk`` of the ``pushed`` graphs went through the server's bulk loader."""

    endpoint: str
    protocol: str
    graphs: int = 0
    pushed: int = 0
    bulk: int = 0
    triples: int = 0
    unchanged: int = 0
    failures: list[GraphFailure] = field(default_factory=list)
    not_sent: int = 0
    aborted: str | None = None
    seconds: float = 0.0
    verify: VerifyReport | None = None
    pending: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every graph is on the server (and, with verify, the counts match)."""
        verified = self.verify is None or self.verify.ok
        return not self.failures and self.aborted is None and verified

    def render(self, *, dry_run: bool = False) -> list[tuple[str, Text]]:
        """The push for people, as ``(stream, line)`` pairs in order: refused graphs on
        ``"err"``, the summary on ``"out"``, then the verification and an abort. A
        ``dry_run`` lists the pending graphs instead. What the server and the store wrote
        (graph names, reasons) is escaped (:func:`~hcgraph.errors.visible`)."""
        if dry_run:
            pending = [_line("out", _v(graph)) for graph in self.pending]
            would = f"would push {len(self.pending)} of {self.graphs} graphs to {_v(self.endpoint)}"
            return [*pending, _line("out", f"{would} ({self.unchanged} unchanged)")]
        lines = [_line("err", f"{_v(f.graph)}: {_v(f.reason)}", "failed:") for f in self.failures]
        lines += [_line("out", self._summary()), *self._verified()]
        if self.aborted is not None:
            lines.append(_line("err", f"error: {_v(self.aborted)}; rerun to push the rest"))
        return lines

    def _summary(self) -> str:
        seconds = max(self.seconds, 1e-9)
        via = self.protocol
        if self.bulk:
            rest = self.pushed - self.bulk
            via = "bulk load" + (f" ({self.bulk}) and {via} ({rest})" if rest else "")
        return (
            f"pushed {self.pushed} graphs ({self.triples:,} triples) to {_v(self.endpoint)} via "
            f"{via} in {self.seconds:.1f} s ({self.pushed / seconds:,.0f} graphs/s, "
            f"{self.triples / seconds:,.0f} triples/s); {self.unchanged} unchanged, "
            f"{len(self.failures)} failed"
            + (f", {self.not_sent} not sent" if self.not_sent else "")
        )

    def _verified(self) -> list[tuple[str, Text]]:
        """The verification's lines: the graphs that differ, then the verdict (or why the
        counts could not be compared: the push happened all the same)."""
        verify = self.verify
        if verify is None:
            return []
        if verify.error is not None:
            return [_line("err", f"error: {_v(verify.error)}; the counts were not compared")]
        lines = []
        for m in verify.mismatches:
            remote = "missing" if m.remote == 0 else f"{m.remote} triples"
            text = f"{_v(m.graph)}: local {m.local} triples, remote {remote}"
            lines.append(_line("err", text, "verify:"))
        state = "all match" if verify.ok else f"{len(verify.mismatches)} differ"
        lines.append(_line("out", f"verified {verify.checked} graphs on the server: {state}"))
        return lines


def _line(stream: str, text: str, label: str = "") -> tuple[str, Text]:
    """One ``(stream, line)`` of the rendered push; a ``label`` goes first, in red."""
    from rich.text import Text

    return stream, Text.assemble((label, "red"), f" {text}") if label else Text(text)


class _Abort(Exception):
    """Stop the whole push: every further request would fail the same way."""


class _Refused(Exception):
    """The server refused this request; other graphs may still go through. ``server_side``:
    it kept failing (5xx/429/timeout), so splitting a batch would not help; ``unsupported``:
    it has no such service (a bulk load answered 404/405/415/501)."""

    def __init__(
        self, message: str, *, server_side: bool = False, unsupported: bool = False
    ) -> None:
        super().__init__(message)
        self.server_side = server_side
        self.unsupported = unsupported


class PushExtras(TypedDict, total=False):
    """The keyword arguments of :func:`push_graphs` and :func:`push_graphs_async`."""

    credentials: Credentials | None
    state: PushState | None
    on_progress: Progress | None
    transport: httpx.AsyncBaseTransport | None


def push_graphs(
    store: Store,
    endpoint: RemoteEndpoint,
    options: PushOptions | None = None,
    **extras: Unpack[PushExtras],
) -> PushReport:
    """Push the story graphs of ``store`` to ``endpoint`` (blocking; see :func:`push_graphs_async`).

    Args:
        store: the local store (read only).
        endpoint: where to push (:func:`~hcgraph.push.endpoints.resolve_endpoint`).
        options: protocol, mode, concurrency, retries, ``force``, ``verify``...
        credentials: sent on every request (:func:`~hcgraph.push.auth.credentials_from_env`).
        state: what was pushed before; default: the state file in the store directory.
        on_progress: called with ``(graphs_done, triples_sent)`` increments.
        transport: an httpx transport (tests inject ``httpx.MockTransport``).

    Returns:
        A :class:`PushReport`; failures are in it, not raised (a ``--verify`` query that
        failed too: ``report.verify.error``).

    Raises:
        PushError: bad options, an unreadable state file or CA bundle.
    """
    return asyncio.run(push_graphs_async(store, endpoint, options, **extras))


async def push_graphs_async(
    store: Store,
    endpoint: RemoteEndpoint,
    options: PushOptions | None = None,
    *,
    credentials: Credentials | None = None,
    state: PushState | None = None,
    on_progress: Progress | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> PushReport:
    """:func:`push_graphs` for callers inside an event loop (notebooks)."""
    opts = options or PushOptions()
    opts.check()
    state = state if state is not None else PushState.for_store(store.directory)
    run = _Run(store, endpoint, opts, credentials, state, on_progress or (lambda g, t: None))
    started = time.perf_counter()
    try:
        run.report.graphs = len(store.graph_names())
        if opts.dry_run:
            run.report.pending = [graph.iri async for graph in run.changed()]
        else:
            async with _client(opts, credentials, transport) as client:
                await run.send_all(client)
                if opts.verify and run.report.aborted is None:
                    run.report.verify = await run.verify(client)
    finally:
        run.report.seconds = time.perf_counter() - started
        if not opts.dry_run:
            state.save(endpoint.url)
    return run.report


def _client(
    opts: PushOptions, credentials: Credentials | None, transport: httpx.AsyncBaseTransport | None
) -> httpx.AsyncClient:
    verify: ssl.SSLContext | bool = True
    if opts.ca_bundle is not None:
        try:
            verify = ssl.create_default_context(cafile=str(opts.ca_bundle))
        except (OSError, ssl.SSLError) as exc:
            raise PushError(f"--ca-bundle {opts.ca_bundle}: cannot load: {exc}") from exc
    return httpx.AsyncClient(
        auth=credentials.auth if credentials else None,
        timeout=httpx.Timeout(opts.timeout, connect=min(10.0, opts.timeout)),
        limits=httpx.Limits(
            max_connections=opts.concurrency, max_keepalive_connections=opts.concurrency
        ),
        verify=verify,
        follow_redirects=False,  # never carry credentials to wherever a redirect points
        headers={"User-Agent": f"hcgraph/{__version__}"},
        transport=transport,
    )


@dataclass(eq=False)
class _Run:
    """The state of one push run: the work list, the report, the abort flag."""

    store: Store
    endpoint: RemoteEndpoint
    opts: PushOptions
    credentials: Credentials | None
    state: PushState
    on_progress: Progress

    def __post_init__(self) -> None:
        opts = self.opts
        self.local_counts: dict[str, int] = {}
        self.report = PushReport(self.endpoint.url, opts.protocol)
        self.bulk: set[str] = set()  # graphs going in bulk chunks (see _prepare_bulk)
        self._bulk_off = False  # the server refused the bulk path: graph by graph from now
        self._bulk_slots = asyncio.Semaphore(min(_BULK_IN_FLIGHT, opts.concurrency))
        self._server_failures = 0  # consecutive jobs lost to server errors
        self._max_server_failures = max(5, 2 * opts.concurrency)
        self._crash: Exception | None = None  # a worker's unexpected error, raised at the end

    # --- what to send -------------------------------------------------------------------
    def _skip(self, graph: LocalGraph) -> bool:
        """Count ``graph``; True when it is unchanged since the last push here."""
        self.local_counts[graph.iri] = graph.triples
        if not self.opts.force and self.state.is_current(
            self.endpoint.url, graph.iri, graph.sha256
        ):
            self.report.unchanged += 1
            self.on_progress(1, 0)
            return True
        return False

    async def changed(self) -> AsyncIterator[LocalGraph]:
        """The changed graphs, read a batch per hop on a worker thread (the engine releases
        the GIL) so the requests in flight keep moving; every graph is counted."""
        graphs = local_graphs(self.store)
        while batch := await asyncio.to_thread(list, itertools.islice(graphs, _READ_BATCH)):
            for graph in batch:
                if not self._skip(graph):
                    yield graph

    async def _jobs(self) -> AsyncIterator[tuple[str, list[LocalGraph]]]:
        """``(kind, graphs)``: ``bulk`` chunks for the graphs in ``self.bulk``, the rest one
        ``gsp`` graph or one ``update`` batch per job."""
        batch: list[LocalGraph] = []
        size = 0
        chunk: list[LocalGraph] = []
        chunk_size = 0
        async for graph in self.changed():
            if graph.iri in self.bulk:
                chunk.append(graph)
                chunk_size += len(graph.body)
                if chunk_size >= self.opts.bulk_bytes:
                    yield "bulk", chunk
                    chunk, chunk_size = [], 0
                continue
            if self.opts.protocol == "gsp":
                yield "gsp", [graph]
                continue
            full = len(batch) >= self.opts.batch or size + len(graph.body) > _MAX_BATCH_BYTES
            if batch and full:
                yield "update", batch
                batch, size = [], 0
            batch.append(graph)
            size += len(graph.body)
        if chunk:
            yield "bulk", chunk
        if batch:
            yield "update", batch

    async def verify(self, client: httpx.AsyncClient) -> VerifyReport:
        """Compare remote triple counts with the local ones; a failed count query is reported
        in the result, not raised (the push happened all the same)."""
        try:
            remote = await remote_counts(client, self.endpoint)
        except PushError as exc:
            return VerifyReport(error=self._redact(str(exc)))
        return compare_counts(self.local_counts, remote)

    # --- the bulk path ------------------------------------------------------------------
    def _bulk_candidates(self, names: Sequence[str]) -> list[str]:
        """The graphs to bulk-load: the unrecorded ones (all with ``--all``), or none when
        this push does not take the bulk path."""
        opts = self.opts
        if opts.bulk == "never" or opts.protocol != "gsp" or self.endpoint.bulk_url is None:
            return []
        recorded = self.state.graphs(self.endpoint.url)
        wanted = list(names) if opts.force else [g for g in names if g not in recorded]
        return [] if opts.bulk == "auto" and len(wanted) < BULK_MIN_GRAPHS else wanted

    async def _prepare_bulk(self, client: httpx.AsyncClient) -> None:
        """Choose the bulk graphs, forgotten in the push state first (until its chunk is
        acknowledged the server may hold part of one); in replace mode, drop those the
        server holds."""
        wanted = self._bulk_candidates(self.store.graph_names())
        if not wanted:
            return
        url = self.endpoint.url
        held: set[str] = set()
        if self.opts.mode == "replace":
            try:
                held = await remote_graphs(client, self.endpoint)
            except PushError:
                return  # no list, no safe bulk replace: one PUT per graph, as without bulk
        self.state.forget(url, wanted)
        stale = [g for g in wanted if g in held]
        chosen = set(wanted)
        for start in range(0, len(stale), _DROP_BATCH):
            iris = stale[start : start + _DROP_BATCH]
            try:
                await self._send(client, iris, "drop")
            except _Abort as exc:
                self._abort(exc)
                return
            except _Refused:
                chosen.difference_update(iris)  # these are replaced by a PUT each instead
        self.bulk = chosen

    # --- sending ------------------------------------------------------------------------
    async def send_all(self, client: httpx.AsyncClient) -> None:
        await self._prepare_bulk(client)
        depth = self.opts.concurrency if self.bulk else self.opts.concurrency * 2
        queue: asyncio.Queue[tuple[str, list[LocalGraph]] | None] = asyncio.Queue(depth)
        workers = [
            asyncio.create_task(self._worker(client, queue)) for _ in range(self.opts.concurrency)
        ]
        try:
            if self.report.aborted is None:
                async for job in self._jobs():
                    if self.report.aborted is not None:
                        break
                    await queue.put(job)
        finally:
            for _ in workers:
                await queue.put(None)
            await asyncio.gather(*workers)
        if self._crash is not None:
            raise self._crash
        r = self.report
        r.not_sent = r.graphs - r.pushed - r.unchanged - len(r.failures)

    async def _worker(
        self,
        client: httpx.AsyncClient,
        queue: asyncio.Queue[tuple[str, list[LocalGraph]] | None],
    ) -> None:
        while (job := await queue.get()) is not None:
            if self.report.aborted is None:
                try:
                    await self._send_job(client, *job)
                except PushError as exc:  # the push state cannot be recorded (disk full)
                    self._abort(_Abort(str(exc)))  # a worker that died left the queue full
                except Exception as exc:  # a bug: stop, drain, raise it once all have ended
                    self._abort(_Abort(f"{type(exc).__name__}: {exc}"))
                    self._crash = self._crash or exc

    async def _send_job(
        self, client: httpx.AsyncClient, kind: str, job: Sequence[LocalGraph]
    ) -> None:
        try:
            if kind == "bulk" and self._bulk_off:
                raise _Refused("no bulk path")
            async with self._bulk_slots if kind == "bulk" else contextlib.nullcontext():
                await self._send(client, job, kind)
        except _Abort as exc:
            self._abort(exc)
        except _Refused as exc:
            if exc.server_side or (kind != "bulk" and len(job) == 1):
                self._failed(job, exc)
            else:
                await self._one_by_one(client, kind, job, exc.unsupported)
        else:
            self._pushed(job, kind)

    async def _one_by_one(
        self, client: httpx.AsyncClient, kind: str, job: Sequence[LocalGraph], unsupported: bool
    ) -> None:
        """Resend a refused batch or chunk graph by graph, to name the graph(s) the server
        objects to; a chunk by PUT, which replaces whatever part the bulk loader wrote."""
        if kind == "bulk":
            self._bulk_off = self._bulk_off or unsupported
        for graph in job:
            if self.report.aborted is None:
                await self._send_job(client, "gsp" if kind == "bulk" else kind, [graph])

    def _failed(self, job: Sequence[LocalGraph], exc: _Refused) -> None:
        """Report ``job`` refused; a server failing job after job stops the push."""
        reason = self._redact(str(exc))
        self.report.failures.extend(GraphFailure(g.iri, reason) for g in job)
        self.on_progress(len(job), 0)
        if exc.server_side:
            self._server_failures += 1
            if self._server_failures >= self._max_server_failures:
                self.report.aborted = f"the server keeps failing: {reason}"

    def _pushed(self, job: Sequence[LocalGraph], kind: str) -> None:
        """Record ``job`` acknowledged, in the state and the report."""
        self._server_failures = 0
        for graph in job:
            self.state.record(self.endpoint.url, graph.iri, graph.sha256)
        triples = sum(g.triples for g in job)
        self.report.pushed += len(job)
        if kind == "bulk":
            self.report.bulk += len(job)
        self.report.triples += triples
        self.on_progress(len(job), triples)

    async def _send(
        self, client: httpx.AsyncClient, job: Sequence[LocalGraph] | Sequence[str], kind: str
    ) -> None:
        """Send one job (``kind``: gsp, update, bulk or drop), retrying transient failures;
        return on 2xx."""
        url = {"gsp": self.endpoint.gsp_url, "bulk": self.endpoint.bulk_url or ""}.get(
            kind, self.endpoint.update_url
        )
        problem = ""
        last: httpx.Response | None = None
        for attempt in range(self.opts.retries + 1):
            if attempt:
                await asyncio.sleep(self._delay(attempt, last))
            try:
                last = await self._deliver(client, job, kind, url)
            except httpx.TransportError as exc:
                last, problem = None, _unreachable(url, exc, self.opts.timeout)
                continue
            if last.status_code < 300:
                return
            problem = self._judge(last, url, kind)
        attempts = self.opts.retries + 1
        if last is None:
            raise _Abort(f"{problem} (after {attempts} attempts)")
        raise _Refused(f"{problem} (after {attempts} attempts)", server_side=True)

    async def _deliver(
        self,
        client: httpx.AsyncClient,
        job: Sequence[LocalGraph] | Sequence[str],
        kind: str,
        url: str,
    ) -> httpx.Response:
        """One attempt. A connection dropped on the answer to a ``401`` challenge is tried
        once more; dropped again, the credentials are taken as refused (Virtuoso may close
        the connection on a wrong Digest password instead of answering ``401``). A redirect
        httpx cannot resolve (it resolves every ``Location``) stops the push like any other."""
        try:
            return await client.send(request(client, self.endpoint, kind, job, self.opts.mode))
        except httpx.InvalidURL as exc:  # Location: javascript:… (the worker died: a hang)
            raise _Abort(f"{url} redirects to a URL httpx cannot read ({exc})") from exc
        except httpx.TransportError as exc:
            if not (_dropped(exc) and _challenged(exc)):
                raise
        try:
            return await client.send(request(client, self.endpoint, kind, job, self.opts.mode))
        except httpx.TransportError as exc:
            if _dropped(exc):
                closed = "; the server closed the connection instead of answering"
                raise _Abort(f"{url}: HTTP 401: {self._refused()}{closed}") from exc
            raise

    def _refused(self) -> str:
        """Why a ``401``/``403`` stops the push: the user named, never the secret."""
        creds = self.credentials
        if creds is None:
            return "the server wants credentials (use --auth-env VAR)"
        who = f"user {creds.user}" if creds.user else f"{creds.scheme} credentials"
        return f"the credentials were refused ({who} from ${creds.variable})"

    def _judge(self, response: httpx.Response, url: str, kind: str) -> str:
        """What went wrong with a non-2xx answer; raised unless a retry may help."""
        status = response.status_code
        problem = f"HTTP {status} from {url}{_snippet(response)}"
        if status in (401, 403):
            raise _Abort(f"{url}: HTTP {status}: {self._refused()}")
        if 300 <= status < 400:
            where = visible(response.headers.get("Location", "?"))  # the server's text
            raise _Abort(f"{url} redirects (HTTP {status} to {where}); push to that URL")
        if kind in ("bulk", "drop") and status in (404, 405, 415, 501):
            raise _Refused(problem, unsupported=True)  # then graph by graph
        if status in (404, 405):
            raise _Abort(f"{problem} (wrong path for this store? see --preset, --gsp-path)")
        if status < 500 and status != 429:
            raise _Refused(problem)
        return problem

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        """The shared retry policy (:mod:`hcgraph.retry`), ``Retry-After`` capped at
        ``_MAX_RETRY_AFTER`` (a push is interactive)."""
        policy = Backoff(base=self.opts.backoff, max_retry_after=_MAX_RETRY_AFTER)
        after = None
        if response is not None and response.status_code in (429, 503):
            after = response.headers.get("Retry-After")
        wait = policy.wait(attempt, after)
        return _MAX_RETRY_AFTER if wait is None else wait

    def _abort(self, exc: _Abort) -> None:
        """Stop the push for ``exc`` (the first reason stands)."""
        if self.report.aborted is None:
            self.report.aborted = self._redact(str(exc))

    def _redact(self, text: str) -> str:
        return self.credentials.redact(text) if self.credentials else text


def _unreachable(url: str, exc: httpx.TransportError, timeout: float) -> str:
    """What a transport error says (a retry may help); a read timeout is raised instead:
    the server took the request and is too slow, so retrying would only add to its load."""
    if isinstance(exc, httpx.ConnectTimeout):
        return f"cannot reach {url}: connection timed out"
    if isinstance(exc, httpx.TimeoutException):
        message = f"no answer from {url} within {timeout:g} s"
        raise _Refused(message, server_side=True) from exc
    return f"cannot reach {url}: {first_line(exc)}"


def _dropped(exc: httpx.TransportError) -> bool:
    """True when the server closed or reset the connection on a request it had received
    (not a timeout, not a failure to connect)."""
    return isinstance(exc, (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError))


def _challenged(exc: httpx.TransportError) -> bool:
    """True when the failed request answered a ``401`` challenge with credentials."""
    try:
        return answered_challenge(exc.request)
    except RuntimeError:  # no request attached (httpx attaches one to what it sends)
        return False


def _snippet(response: httpx.Response) -> str:
    """The first line of an error body, short, control characters escaped (the server
    wrote it; the user's terminal shows it)."""
    text = response.content[:300].decode("utf-8", "replace").strip()
    line = text.splitlines()[0] if text else ""
    return f": {visible(line[:200])}" if line else ""
