"""The store's one writer: every write of stories, in order, on one thread, with its journal.

:class:`~hcgraph.pipeline.Pipeline` parses, dedupes and maps; what it prepared (a
:class:`Batch`: new stories, changed stories, the shared descriptions they state) goes to
:meth:`Writer.submit`, which returns at once with a future that is resolved when the batch
has *landed* — its stories are in Oxigraph and settled in the ledger — or fails with what
the write raised. That future is the only way to learn when a batch is stored.

States of the writer thread (:attr:`Writer.state`)::

    idle ──job──▶ loading    (new stories: one bulk load)       ──▶ idle
    idle ──job──▶ replacing  (changed stories: one transaction each) ──▶ idle
    any  ──a write fails and recovery fails too──▶ broken  (refuses every later write)

Jobs run in the order submitted. Batches of new stories that arrive while a job runs join
the next, not yet started, job (a *segment* of up to ``segment`` quads: few long bulk loads
are what RocksDB compacts cheaply); :meth:`Writer.submit` waits while that segment is full.
A batch with changed stories is a job of its own.

The journal (:mod:`hcgraph.ledger`), kept by the writer thread alone. Each job

1. records, in one SQLite transaction, the shared descriptions new when it starts and each
   story being written with its expected sha and quad count (``pending``, ledger ``dirty``);
2. writes Oxigraph: the bulk load (not transactional), or a transaction per changed story;
3. settles the stories, retracts descriptions that lost their last story, and marks the
   ledger clean when nothing is pending.

A story is in the store once its future is resolved. A process killed anywhere in steps 1
to 3 leaves pending records; :func:`recover` (run when a writer starts) keeps each story
whose graph is whole with the expected sha, removes partial ones and rewrites the shared
descriptions, so the store equals a clean ingest of the stories it holds. A job that fails
while the process goes on is recovered at once, its whole stories reported by
:meth:`Writer.failures`; if that recovery fails too, the writer is broken until reopened.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from .errors import StoreDiskError, StoreError, first_line
from .ledger import Pending, description_hash
from .mapping import MappedStory, body_of
from .rdftext import in_graph
from .store import Store

__all__ = ["Batch", "Writer", "recover", "remove_story"]

State = Literal["idle", "loading", "replacing", "broken"]


@dataclass
class Batch:
    """A prepared batch: the stories to write, as the writer needs them (a new story's
    N-Quads, a changed story's N-Triples, each story's ledger record), and the shared
    descriptions they state. No mapped story is held: memory is the text to write."""

    pending: list[Pending] = field(default_factory=list)  # each story's ledger record
    replaced: list[tuple[str, str]] = field(default_factory=list)  # (story, N-Triples)
    chunks: list[bytes] = field(default_factory=list)  # the new stories' N-Quads
    stated: dict[bytes, tuple[str, str, str]] = field(default_factory=dict)  # all of them
    descriptions: dict[bytes, tuple[str, str, str]] = field(default_factory=dict)  # new ones
    quads: int = 0  # of the new stories
    data: bytes = b""  # the chunks, joined
    withdrawn: dict[str, str] = field(default_factory=dict)  # story → its marker (N-Quads)

    def __bool__(self) -> bool:
        return bool(self.pending or self.withdrawn)

    def urls(self) -> list[str]:
        """The stories written."""
        return [p.story for p in self.pending] + list(self.withdrawn)

    @property
    def own_job(self) -> bool:
        """Changed or withdrawn stories: a job of its own, never joined to a bulk load."""
        return bool(self.replaced or self.withdrawn)

    def add(self, mapped: MappedStory, sha: str, *, replaces: bool) -> None:
        """Add one mapped story (``replaces``: a changed story) and the descriptions it states."""
        hashes = set()
        for desc in mapped.shared.values():
            digest, body = _identified(desc.graph, tuple(desc.triples))
            hashes.add(digest)
            if digest not in self.stated:
                self.stated[digest] = (desc.graph, desc.subject, body)
        self.pending.append(Pending(mapped.url, sha, len(mapped), frozenset(hashes), not replaces))
        if replaces:
            self.replaced.append((mapped.url, mapped.ntriples()))
        else:
            # Encoded story by story, its ASCII lines apart: one non-ASCII character would
            # make a joined text a wide string and its encoding ~2x slower.
            self.chunks.append(mapped.nquads_utf8())
            self.quads += len(mapped)

    def find_new(self, known: Callable[[bytes], bool]) -> None:
        """Keep as ``descriptions`` the stated ones the ledger does not know."""
        self.descriptions = {h: d for h, d in self.stated.items() if not known(h)}

    def shared_ntriples(self) -> dict[str, str]:
        """The new descriptions as N-Triples text per shared graph."""
        by_graph: dict[str, list[str]] = {}
        for graph, _, body in self.descriptions.values():
            by_graph.setdefault(graph, []).append(body)
        return {g: "".join(bodies) for g, bodies in sorted(by_graph.items())}

    def nquads(self) -> bytes:
        """The new stories as N-Quads."""
        return b"".join(self.chunks)

    def shared_nquads(self) -> bytes:
        """The new descriptions as N-Quads."""
        return b"".join(in_graph(g, b).encode() for g, b in self.shared_ntriples().items())


@lru_cache(maxsize=8192)
def _identified(graph: str, triples: tuple[str, ...]) -> tuple[bytes, str]:
    """A description's hash and body from its triples. Most recur story after story (the
    same publishers, manifests, claims), so the sort, the join and the hash are done once for
    each (the mapping, a pure function, gives the same description the same tuple)."""
    body = body_of(triples)
    return description_hash(graph, body), body


@dataclass
class _Job:
    """What the writer thread does in one go: one segment of batches of new stories, or
    one batch with changed stories."""

    batches: list[Batch]
    future: Future[None] = field(default_factory=Future)
    started: threading.Event = field(default_factory=threading.Event)

    @property
    def quads(self) -> int:
        return sum(b.quads for b in self.batches)


class Writer:
    """Writes prepared batches to a store on a thread of its own (see the module docstring).

    Args:
        store: an open, writable store (recovered here).
        segment: most quads per bulk load (bounds the loader's memory, ~0.5 KB a quad).
    """

    def __init__(self, store: Store, *, segment: int) -> None:
        self.store = store
        self.segment = segment
        #: What the writer thread is doing: ``idle``, ``loading``, ``replacing`` or ``broken``.
        self.state: State = "idle"
        recover(store)
        store.ledger.preload()  # here, not later on the writer thread
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="hcgraph-write")
        self._lock = threading.Lock()  # guards what follows
        self._open: _Job | None = None  # queued, not started: later new stories join it
        self._last: Future[None] | None = None
        self._urls: Counter[str] = Counter()  # stories of jobs not ended
        self._broken: str | None = None  # why, when broken
        self._broken_by: type[StoreError] = StoreError  # StoreDiskError: the disk, not data
        # From failed jobs, until taken: stories kept whole by recovery (url → (new, quads)),
        # and new stories that did not land.
        self._recovered: dict[str, tuple[bool, int]] = {}
        self._lost: set[str] = set()
        self._wrote = False  # a job landed: the store may be due a compaction at close

    def submit(self, batch: Batch) -> Future[None]:
        """Queue ``batch`` for writing; the future ends when it has landed (or failed).

        Its stories are joined into one text here, on the caller's thread (a batch that
        fails to has begun nothing), so the writer thread runs mostly Rust.

        Raises:
            StoreError: the writer is broken (an earlier write failed, and its recovery).
        """
        if not batch:
            done: Future[None] = Future()
            done.set_result(None)
            return done
        batch.data, batch.chunks = batch.nquads(), []
        while True:
            with self._lock:
                self._refuse_if_broken()
                job = self._open
                if job is None or batch.own_job or job.quads < self.segment:
                    self._urls.update(batch.urls())
                    if job is not None and not batch.own_job:
                        job.batches.append(batch)
                        return job.future
                    job = _Job([batch])
                    self._open = None if batch.own_job else job
                    self._last = job.future
                    self._pool.submit(self._run, job)
                    return job.future
            job.started.wait()  # the segment gathering is full: wait until it is loaded

    def writing(self, url: str) -> bool:
        """True while a submitted write of story ``url`` has not ended."""
        with self._lock:
            return self._urls[url] > 0

    def wait(self) -> None:
        """Wait until every submitted write has ended (landed or failed)."""
        last = self._last
        if last is not None:
            wait_for([last])

    def failures(self) -> tuple[dict[str, tuple[bool, int]], set[str]]:
        """Take what failed jobs left: (stories kept whole by recovery: url → (new, quads),
        new stories that did not land)."""
        with self._lock:
            taken = self._recovered, self._lost
            self._recovered, self._lost = {}, set()
        return taken

    def close(self, *, compact: bool = True) -> None:
        """Finish the queued writes and stop the thread; then, with ``compact``, if a write
        landed and the store says a compaction is due (:meth:`~hcgraph.store.Store.compaction_due`),
        compact it, so the store this run leaves is ready to query.

        A run that failed or was interrupted passes ``compact=False``: its error is the one
        to report, and a stop is not kept waiting (the next run that writes compacts).

        Raises:
            StoreDiskError: the compaction could not write (the stories stay stored).
        """
        self._pool.shutdown(wait=True)
        if compact and self._wrote and self._broken is None and self.store.compaction_due():
            self.store.optimize()

    def _break(self, error: BaseException) -> None:
        """Refuse every later write, saying why (a full disk stays a StoreDiskError)."""
        with self._lock:
            if self._broken is None:
                self._broken = first_line(error).removeprefix(f"{self.store.directory}: ")
                self._broken_by = (
                    StoreDiskError if isinstance(error, StoreDiskError) else StoreError
                )

    def _refuse_if_broken(self) -> None:
        if self._broken is not None:
            raise self._broken_by(
                f"{self.store.directory}: an earlier write failed ({self._broken}); "
                "reopen the store"
            )

    # --- the writer thread --------------------------------------------------------------
    def _run(self, job: _Job) -> None:
        with self._lock:
            if self._open is job:
                self._open = None
            self.state = "replacing" if job.batches[0].own_job else "loading"
        job.started.set()
        error: BaseException | None = None
        try:
            self._refuse_if_broken()
            self._write(job.batches)
            self._wrote = True
        except BaseException as exc:
            self._recover(job, exc)
            error = exc
        finally:
            with self._lock:
                self._urls.subtract(u for b in job.batches for u in b.urls())
                self._urls = +self._urls
                self.state = "idle" if self._broken is None else "broken"
        # Resolved only now: whoever waits on the future sees the writer's books settled.
        if error is None:
            job.future.set_result(None)
        else:
            job.future.set_exception(error)

    def _write(self, batches: list[Batch]) -> None:
        store, ledger = self.store, self.store.ledger
        pending: list[Pending] = []
        for batch in batches:
            batch.find_new(ledger.known)
            rows = ((h, g, s, b) for h, (g, s, b) in batch.descriptions.items())
            ledger.begin(rows, batch.pending)
            pending.extend(batch.pending)
        first = batches[0]
        if first.replaced:
            shared = first.shared_ntriples()
            for n, (story, ntriples) in enumerate(first.replaced):
                # Each changed story in its own transaction; the batch's new descriptions
                # ride with the first one.
                store.replace_graph(story, ntriples, shared if n == 0 else None)
            data = first.data
        else:
            data = b"".join(part for b in batches for part in (b.data, b.shared_nquads()))
        for batch in batches:  # held once, by the load
            batch.data = b""
        store.load_nquads(data)
        # A withdrawal adds one quad to a stored story's graph, in one small transaction;
        # the ledger has nothing to record (no shared description changes).
        if first.withdrawn:
            store.load_nquads("".join(first.withdrawn.values()).encode())
        _retract(store, ledger.settle(pending))
        ledger.clean()

    def _recover(self, job: _Job, error: BaseException) -> None:
        """A job failed, maybe part-written: bring the store and the ledger back in step.

        Left so, its stories would stay pending and its new descriptions 'known', and a
        later batch would cite things the store never described. :func:`recover` drops
        what did not land and retracts what only it stated, so writing can go on; if that
        fails too, the writer is broken (everything stays pending for the next open).
        """
        kept: dict[str, tuple[bool, int]] = {}
        try:
            self._refuse_if_broken()  # then nothing was written: nothing to recover
            kept = _recovered(self.store)
        except BaseException:
            self._break(error)
        with self._lock:
            self._recovered.update(kept)
            self._lost.update(
                p.story for b in job.batches for p in b.pending if p.new and p.story not in kept
            )


def _recovered(store: Store) -> dict[str, tuple[bool, int]]:
    """Recover the store; the pending stories it kept whole: url → (new, quads)."""
    written = [p for p in store.ledger.pending() if p.sha is not None]
    recover(store)
    # landed whole, so kept: a retry of it is no "unchanged"
    return {p.story: (p.new, p.quads) for p in written if store.raw_sha256(p.story) == p.sha}


def _retract(store: Store, dropped: set[bytes]) -> None:
    """Remove descriptions no story states any more; their subjects keep the rest."""
    if not dropped:
        return
    ledger = store.ledger
    subjects = {ledger.subject_of(h) for h in dropped} - {None}
    for graph, subject in sorted(s for s in subjects if s is not None):
        lines: dict[str, None] = {}
        for body in ledger.bodies_in_use(graph, subject):
            lines.update(dict.fromkeys(body.splitlines(keepends=True)))
        store.set_subject(graph, subject[1:-1], "".join(sorted(lines)))
    # Forgotten only once the store no longer says them: if the process stops before,
    # recover() finds them among the unused descriptions and retracts them again.
    ledger.forget(dropped)


def remove_story(store: Store, story_url: str) -> bool:
    """Remove one story: its graph, and what only it said about shared things.

    Returns:
        False if the story was not in the store.

    Raises:
        StoreError: the store is read-only or cannot be written.
    """
    if store.read_only:
        raise StoreError(f"{store.directory}: store opened read-only")
    recover(store)
    if store.raw_sha256(story_url) is None:
        return False
    ledger = store.ledger
    pending = [Pending(story_url, None, 0, frozenset())]
    ledger.begin((), pending)
    store.remove_graph(story_url)
    _retract(store, ledger.settle(pending))
    ledger.clean()
    return True


def recover(store: Store) -> None:
    """Settle or undo writes an earlier process left unfinished (see module docstring).

    For each pending story: if its graph holds the expected version, complete and with the
    expected number of quads, the write landed and is settled; otherwise a partial graph is
    removed and the record dropped. Descriptions of settled stories are written again
    (idempotent), and descriptions nobody uses are retracted.
    """
    if store.read_only:
        return
    ledger = store.ledger
    if not ledger.dirty:
        return
    landed = [p for p in ledger.pending() if _settle_or_undo(store, p)]
    hashes = {h for p in landed for h in (ledger.uses_of(p.story) if p.new else p.hashes)}
    text = "".join(in_graph(graph, body) for graph, body in ledger.bodies(sorted(hashes)))
    store.load_nquads(text.encode())
    dropped = ledger.settle(landed)
    _retract(store, dropped | set(ledger.unused()))
    ledger.clean()


def _settle_or_undo(store: Store, p: Pending) -> bool:
    """True if ``p``'s write landed (a removal: finished now); else undo it."""
    sha = store.raw_sha256(p.story)
    if p.sha is None:
        if sha is not None:
            store.remove_graph(p.story)
        return True
    if sha == p.sha and store.graph_size(p.story) == p.quads:
        return True
    # Not landed. A new story's graph may be partial (the bulk loader is not transactional):
    # remove it, a re-run ingests it again. A replaced story's old version (another sha) is
    # intact: keep it.
    if sha is None or sha == p.sha:
        store.remove_graph(p.story)
    store.ledger.drop_pending(p)
    return False
