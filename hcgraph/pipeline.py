"""The one ingest pipeline: documents in → parse → identity → revisions → map → write.

``hcgraph ingest`` (files), ``hcgraph crawl`` (fetched bodies) and ``hcgraph rebuild`` (the
raw archive) all hand :class:`Document` objects to a :class:`Pipeline`, which gives back one
:class:`Outcome` per document, in order.

Per batch of whole stories the pipeline

1. parses and validates each body (:func:`hcgraph.model.parse_story`; a bad one becomes a
   failed outcome with its JSON path, the rest carry on);
2. checks identity: a story the crawler already stored under another URL is a duplicate
   (crawl mode), identical bytes are a no-op, changed bytes are a revision;
3. maps each story to N-Quads text (:func:`hcgraph.mapping.map_story`): its own graph plus
   descriptions of shared things;
4. writes: descriptions new to the ledger go into the shared graphs once, new story graphs go
   in with Oxigraph's bulk loader (one load per segment of up to :data:`SEGMENT` quads; in
   a crawl, one per batch), a changed story's graph is replaced in one transaction, and
   what only a replaced or removed story said is retracted.

While Oxigraph loads segment *n* (in Rust, without the GIL) the pipeline already parses
and maps segment *n + 1*, so both cores work. Memory holds at most two segments.

Crash safety: before each write the ledger records the stories being written (with their
expected quad counts); :func:`recover` settles or undoes them on the next open (or at once,
when a write fails and the process goes on), so every story in the store is complete and
the shared graphs match the ledger.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import pyoxigraph as ox

from .errors import NotAStoryError, StoreDiskError, StoreError, StoryError, first_line
from .identity import crawled_from
from .ledger import Pending, description_hash
from .mapping import IngestInfo, MappedStory, Revision, map_story
from .model import Story, parse_story
from .store import Store, now_utc, source_date_epoch
from .vocab import DCTERMS

__all__ = [
    "BATCH",
    "SEGMENT",
    "Document",
    "Outcome",
    "Pipeline",
    "graph_time",
    "recover",
    "remove_story",
]

#: Stories per batch (parse + map, then one hand-over to the writer).
BATCH = 250
#: Most quads per bulk load: long, sorted loads write few SST files for RocksDB to compact, but
#: Oxigraph's loader holds what it sorts in memory (~0.5 KB a quad): this bounds peak RSS.
SEGMENT = 300_000
_IDENTIFIER = ox.NamedNode(str(DCTERMS.identifier))


@dataclass(frozen=True)
class Document:
    """One raw story document to ingest.

    Attributes:
        body: the raw bytes.
        source: where they came from (file path or URL), recorded in the graph.
        retrieved_at: when they were read or fetched (None: now).
        key: the crawl frontier URL the body was fetched for (None for local files).
        location: what the graph records as ``hc:sourceLocation`` when it is not ``source``
            (a local file's path relative to the ingest root; None: ``source``).
    """

    body: bytes
    source: str
    retrieved_at: dt.datetime | None = None
    key: str | None = None
    location: str | None = None


@dataclass(frozen=True)
class Outcome:
    """What happened to one :class:`Document`.

    ``status`` is ``added``, ``replaced`` or ``unchanged`` for a stored story; ``duplicate_of``
    is set when the story was already stored under another crawl URL; ``reason`` and
    ``json_path`` explain a body that is not a valid story. Duplicate identities are
    reported, not refused: ``id_clash`` is another story IRI with the same ``id`` (stored, or
    earlier in this run); ``repeat_of`` is the source of an earlier document of this run with
    the same ``url`` (this one replaced it).
    """

    source: str
    key: str | None = None
    story_url: str | None = None
    story_id: str | None = None
    related: tuple[str, ...] = ()
    status: str | None = None
    quads: int = 0
    duplicate_of: str | None = None
    reason: str | None = None
    json_path: str | None = None
    problems: tuple[tuple[str, str], ...] = ()
    not_a_story: bool = False
    id_clash: str | None = None
    repeat_of: str | None = None

    @property
    def ok(self) -> bool:
        """True if the story is in the store."""
        return self.status is not None


def graph_time(when: dt.datetime | None) -> dt.datetime:
    """The retrieval time recorded in the graph: whole seconds, UTC.

    ``SOURCE_DATE_EPOCH``, when set, wins (reproducible builds give identical graphs); an
    unknown time is now.
    """
    fixed = source_date_epoch()
    if fixed is not None:
        return fixed
    if when is None:
        return now_utc()
    return when.astimezone(dt.UTC).replace(microsecond=0)


@dataclass
class _Write:
    """A prepared batch: the stories to write and the descriptions new to the ledger."""

    new: list[tuple[MappedStory, str]] = field(default_factory=list)  # (mapping, sha)
    replaced: list[tuple[MappedStory, str]] = field(default_factory=list)
    descriptions: dict[bytes, tuple[str, str, str]] = field(default_factory=dict)
    uses: dict[str, frozenset[bytes]] = field(default_factory=dict)
    stated: dict[bytes, tuple[str, str, str]] = field(default_factory=dict)  # all of them

    def find_new(self, known: Callable[[bytes], bool]) -> None:
        """Keep as :attr:`descriptions` the stated ones the ledger does not know, decided
        when the write begins: a replacement written meanwhile may have retracted some."""
        self.descriptions = {h: d for h, d in self.stated.items() if not known(h)}

    def __bool__(self) -> bool:
        return bool(self.new or self.replaced)

    def pending(self) -> list[Pending]:
        """Ledger records of the stories in this batch."""
        return [
            *(Pending(m.url, sha, len(m), self.uses[m.url], new=True) for m, sha in self.new),
            *(Pending(m.url, sha, len(m), self.uses[m.url]) for m, sha in self.replaced),
        ]

    def shared_ntriples(self) -> dict[str, str]:
        """The new descriptions as N-Triples text per shared graph."""
        by_graph: dict[str, list[str]] = {}
        for graph, _, body in self.descriptions.values():
            by_graph.setdefault(graph, []).append(body)
        return {g: "".join(bodies) for g, bodies in sorted(by_graph.items())}

    def nquads(self, *, shared: bool) -> bytes:
        """The new stories (and, with ``shared``, the new descriptions) as N-Quads."""
        # Encoded story by story: one non-ASCII character would make a joined batch a wide
        # string and its encoding ~2x slower (measured: 600 vs 255 us a story).
        parts = [mapped.nquads().encode() for mapped, _ in self.new]
        if shared:
            parts.extend(_as_nquads(g, b).encode() for g, b in self.shared_ntriples().items())
        return b"".join(parts)


def _as_nquads(graph: str, ntriples: str) -> str:
    """N-Triples lines (hcgraph's own: one triple per line) placed in ``graph``."""
    tail = f" <{graph}> .\n"
    return tail.join(ntriples[:-3].split(" .\n")) + tail if ntriples else ""


class _Loader:
    """One segment of new stories: batches gathered as N-Quads, then one bulk load.

    Oxigraph's bulk loader is fast at long, sorted loads, but it must be handed *bytes*:
    fed from a Python stream, it calls ``read`` for every ~2 KB, each call needs the GIL,
    and while the pipeline's thread parses and maps (holding the GIL) every such call waits
    out the interpreter's switch interval — the load crawls and the two sides take turns
    instead of overlapping (measured: a 60 MB load next to a busy Python thread took 9-26 s
    from a stream, 2.5-5.6 s from bytes). Given bytes, the load runs in Rust without the
    GIL on the writer thread while the next segment is mapped. Segments of at most
    :data:`SEGMENT` quads bound peak memory: one load of everything held 1.6 GB at 10k
    stories (bench/bench_datapath.py measures both).
    """

    def __init__(self, store: Store, pool: ThreadPoolExecutor) -> None:
        self.store = store
        self.pool = pool
        self.chunks: list[bytes] = []
        self.future: Future[None] | None = None
        self.pending: list[Pending] = []
        self.urls: set[str] = set()
        self.quads = 0

    def feed(self, write: _Write, data: bytes) -> None:
        """Add one prepared batch (its new stories and new descriptions, ``data`` its
        N-Quads: ``write.nquads(shared=True)``) to the segment."""
        self.pending.extend(write.pending())
        self.urls.update(m.url for m, _ in write.new)
        self.quads += sum(len(m) for m, _ in write.new)
        self.chunks.append(data)

    def end_input(self) -> None:
        """The segment is complete: start its load on the writer thread."""
        if self.future is not None:
            return
        data, self.chunks = b"".join(self.chunks), []
        self.future = self.pool.submit(self.store.load_nquads, data)

    def done(self) -> bool:
        """True once the segment's load has finished (or failed)."""
        return self.future is not None and self.future.done()

    def finish(self) -> list[Pending]:
        """Start the load if needed, wait for it; the stories it wrote (raises its error)."""
        self.end_input()
        assert self.future is not None
        self.future.result()
        return self.pending


class Pipeline:
    """Parse, dedupe, map and write documents (see the module docstring).

    Args:
        store: an open, writable store.
        batch_size: stories per batch.
        crawl_claims: crawl mode: story IRI → (crawl URL, story id) already stored by this
            crawl; a story reached again under another URL is then a duplicate, not stored.
        protect_crawled: refuse a document that would replace a story crawled from its own
            URL (local files name their own ``url``; ``hcgraph ingest --replace`` lifts it).
    """

    def __init__(
        self,
        store: Store,
        *,
        batch_size: int = BATCH,
        crawl_claims: dict[str, tuple[str, str | None]] | None = None,
        protect_crawled: bool = False,
    ) -> None:
        self.store = store
        self.protect_crawled = protect_crawled
        self.batch_size = batch_size
        self.crawl = crawl_claims is not None
        self.by_story = {s: u for s, (u, _) in (crawl_claims or {}).items()}
        self.by_id = {i: s for s, (_, i) in (crawl_claims or {}).items() if i}
        # Writer threads: a segment's load runs (in Rust, without the GIL) while the next
        # segment (or crawl batch) is mapped; a replacement's transaction likewise.
        self._pool = ThreadPoolExecutor(2, thread_name_prefix="hcgraph-write")
        self._loader: _Loader | None = None
        self._closing: _Loader | None = None
        self._writing: Future[None] | None = None
        self._inflight: set[str] = set()
        # A write failed and could not be undone: the store waits for recover(). Its error,
        # so that what is refused after it still says why (a full disk), not only "earlier".
        self._broken: str | None = None
        self._broken_by: type[StoreError] = StoreError  # StoreDiskError: the disk, not data
        self._run_urls: dict[str, str] = {}  # story IRI → first source in this run
        self._run_ids: dict[str, str] = {}  # story id → first story IRI in this run
        # story IRI → (new, quads): written whole by a write that failed, kept by recovery
        self._recovered: dict[str, tuple[bool, int]] = {}
        recover(store)
        store.ledger.preload()  # here, not later in a writer thread
        # Stories already stored: a story not among them needs no look-up (on a store being
        # bulk-loaded, every point read has many fresh files to search).
        self._stored = set(store.story_graphs())
        self._stored_before = bool(self._stored)

    # --- public -------------------------------------------------------------------------
    def run(
        self, documents: Iterable[Document], on_progress: Callable[[int], None] | None = None
    ) -> Iterator[Outcome]:
        """Process a stream of documents; outcomes come back in order, batch by batch.

        New stories go to bulk loads of whole segments (see :class:`_Loader`); they are in
        the store when the iteration ends.
        """
        try:
            for batch in _batches(documents, self.batch_size):
                yield from self._submit(batch, stream=True)
                if on_progress is not None:
                    on_progress(len(batch))
        finally:
            self.flush()

    def process(self, documents: Sequence[Document]) -> list[Outcome]:
        """Process one batch and wait until it is written."""
        outcomes = self._submit(list(documents), stream=False)
        self.flush()
        return outcomes

    def submit(self, documents: Sequence[Document]) -> list[Outcome]:
        """Process one batch without waiting for its write (the crawler's overlapped call).

        The batch is parsed and mapped while the previous batch's transaction may still be
        running on the writer thread; then its own transaction starts. When this returns,
        every *earlier* batch is in the store (so the caller may record those as stored),
        while this batch is written once the next :meth:`submit` or :meth:`flush` returns.
        """
        before = self.writing
        outcomes = self._submit(list(documents), stream=False)
        if before is not None and self.writing is before:  # nothing new to write: wait here
            self.flush()
        return outcomes

    @property
    def writing(self) -> Future[None] | None:
        """The write started last on the writer thread (a batch's load or transaction),
        until it is settled; it may have ended already. None when nothing is to settle."""
        if self._writing is not None:
            return self._writing
        return None if self._closing is None else self._closing.future

    def flush(self) -> None:
        """Wait until everything submitted is in the store (raises what the write raised)."""
        try:
            self._end_segment()
            self._settle_closing()
            if self._writing is not None:
                writing, self._writing = self._writing, None
                try:
                    writing.result()
                except BaseException as exc:
                    self._after_failed_write(writing.done(), exc)
                    raise
        finally:
            self._inflight.clear()

    def _after_failed_write(self, ended: bool, error: BaseException) -> None:
        """A write failed, maybe part-written: bring the store and the ledger back in step.

        The failed write had entered its stories as pending and its new descriptions as
        known; left so, a later batch would not state those descriptions again and its
        stories would cite things the store never described. :func:`recover` drops the
        stories that did not land (a partial graph too) and retracts what only they stated,
        so the pipeline can go on (the crawler retries a failed batch one body at a time).
        If the write has not ended (interrupted while waiting) or recovery fails too, the
        pipeline writes nothing more: everything stays pending for recover() on the next
        open.
        """
        # The reason without the store's name, which the refusal puts in front of it.
        reason = first_line(error).removeprefix(f"{self.store.directory}: ")
        self._broken_by = StoreDiskError if isinstance(error, StoreDiskError) else StoreError
        if not ended:
            self._broken = reason
            return
        try:
            written = [p for p in self.store.ledger.pending() if p.sha is not None]
            recover(self.store)
            lost = set()
            for p in written:  # landed whole, so kept: a retry of it is no "unchanged"
                if self.store.raw_sha256(p.story) == p.sha:
                    self._recovered[p.story] = (p.new, p.quads)
                elif p.new:
                    lost.add(p.story)
            if lost and self.crawl:  # not stored: no claim (a retry claims them again)
                for story in lost:
                    self.by_story.pop(story, None)
                self.by_id = {i: s for i, s in self.by_id.items() if s not in lost}
        except Exception:
            self._broken = reason

    def _end_segment(self) -> None:
        """Close the current load's input; it finishes in the background (one at a time)."""
        if self._loader is None:
            return
        self._settle_closing()  # at most one load finishing while the next is fed
        self._loader.end_input()
        self._closing, self._loader = self._loader, None

    def _settle_closing(self) -> None:
        """Wait for the finishing load, then record its stories in the ledger as written."""
        if self._closing is None:
            return
        loader, self._closing = self._closing, None
        try:
            pending = loader.finish()
        except BaseException as exc:
            # The load failed, maybe part-written. The segment being gathered is dropped
            # too: its stories may rely on descriptions only the failed one carried.
            self._loader = None
            self._after_failed_write(loader.done(), exc)
            raise
        ledger = self.store.ledger
        _retract(self.store, ledger.settle(pending))
        if self._loader is None:
            ledger.clean()
        self._inflight.difference_update(loader.urls)

    def close(self) -> None:
        """Finish the writes in flight and stop the writer threads."""
        try:
            self.flush()
        finally:
            self._pool.shutdown(wait=True)

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- one batch ----------------------------------------------------------------------
    def _submit(self, documents: list[Document], *, stream: bool) -> list[Outcome]:
        outcomes: list[Outcome] = []
        write = _Write()
        batch_urls: set[str] = set()
        for doc in documents:
            parsed = self._parse(doc)
            if isinstance(parsed, Outcome):
                outcomes.append(parsed)
                continue
            story = parsed
            if story.url in batch_urls:
                # The same story twice in one batch: write what we have, then the later
                # version replaces it (with the earlier one as its revision).
                self._start(write, stream=False)
                self.flush()
                write, batch_urls = _Write(), set()
            elif story.url in self._inflight:
                self.flush()
            outcome = self._prepare(doc, story, write)
            if self.crawl and outcome.ok:  # only a stored story owns its url and id
                self.by_story[story.url] = doc.key or doc.source
                self.by_id.setdefault(story.id, story.url)
            outcomes.append(outcome)
            batch_urls.add(story.url)
        self._start(write, stream=stream)
        return outcomes

    def _parse(self, doc: Document) -> Story | Outcome:
        try:
            story = parse_story(doc.body, doc.source)
        except StoryError as exc:
            return Outcome(
                doc.source,
                doc.key,
                reason=exc.reason,
                json_path=exc.json_path or None,
                problems=tuple(exc.problems),
                not_a_story=isinstance(exc, NotAStoryError),
            )
        if self.crawl:
            related = tuple(r.url for r in story.related)
            dup = self._duplicate_of(story, doc.key or doc.source)
            if dup is not None:
                return Outcome(doc.source, doc.key, story.url, story.id, related, duplicate_of=dup)
        return story

    def _duplicate_of(self, story: Story, url: str) -> str | None:
        owner = self.by_story.get(story.url)
        if owner is not None and owner != url:
            return owner
        same_id = self.by_id.get(story.id)
        if same_id is not None and same_id != story.url:
            return self.by_story.get(same_id, same_id)
        return None

    def _prepare(self, doc: Document, story: Story, write: _Write) -> Outcome:
        related = tuple(r.url for r in story.related)
        sha = hashlib.sha256(doc.body).hexdigest()
        old = self.store.raw_sha256(story.url) if story.url in self._stored else None
        self._stored.add(story.url)
        repeat = self._run_urls.get(story.url)
        if repeat is None:
            self._run_urls[story.url] = doc.source
        new_id = story.id not in self._run_ids
        base = Outcome(
            doc.source,
            doc.key,
            story.url,
            story.id,
            related,
            id_clash=self._id_clash(story),
            repeat_of=repeat,
        )
        if old == sha:
            # Written whole by a write of this run that failed (kept by recovery): this is
            # its retry. Kept until another version comes: the retry may fail again.
            recovered = self._recovered.get(story.url)
            if recovered is not None:
                new, quads = recovered
                return replace(base, status="added" if new else "replaced", quads=quads)
            return replace(base, status="unchanged")
        self._recovered.pop(story.url, None)
        if old is not None and self.protect_crawled:
            origin = crawled_from(self.store, story.url)
            if origin is not None:
                reason = (
                    f"{story.url} was crawled from {origin}; a local file replaces a crawled "
                    "story only with --replace"
                )
                return replace(base, reason=reason, json_path="url", problems=(("url", reason),))
        revisions = (
            tuple(Revision(s, when) for s, when in self.store.revisions(story.url, old))
            if old
            else ()
        )
        info = IngestInfo(
            sha, doc.location or doc.source, graph_time(doc.retrieved_at), len(doc.body), revisions
        )
        try:
            mapped = map_story(story, info)
        except Exception as exc:  # a story that trips the mapping fails alone, not the run
            if repeat is None:
                self._run_urls.pop(story.url, None)  # it never reached the store
            if new_id:
                del self._run_ids[story.id]
            return replace(base, reason=f"cannot be mapped to RDF: {type(exc).__name__}: {exc}")
        hashes = set()
        for desc in mapped.shared.values():
            body = desc.body()
            digest = description_hash(desc.graph, body)
            hashes.add(digest)
            if digest not in write.stated:
                write.stated[digest] = (desc.graph, desc.subject, body)
        write.uses[story.url] = frozenset(hashes)
        (write.replaced if old else write.new).append((mapped, sha))
        return replace(base, status="replaced" if old else "added", quads=len(mapped))

    def _id_clash(self, story: Story) -> str | None:
        """Another story IRI with ``story``'s id: earlier in this run, or in the store."""
        first = self._run_ids.setdefault(story.id, story.url)
        if first != story.url:
            return first
        if not self._stored_before:  # an empty store: only this run's stories can clash
            return None
        pattern = self.store.quads(None, _IDENTIFIER, ox.Literal(story.id))
        for quad in pattern:
            subject = quad.subject
            if not isinstance(subject, ox.NamedNode) or subject != quad.graph_name:
                continue
            if subject.value != story.url:
                return subject.value
        return None

    def _start(self, write: _Write, *, stream: bool) -> None:
        """Send a prepared batch on its way: into a segment load, or to the writer thread."""
        if not write:
            return
        if self._broken is not None:
            raise self._broken_by(
                f"{self.store.directory}: an earlier write failed ({self._broken}); "
                "reopen the store"
            )
        if not write.replaced:
            if self._writing is not None:
                self.flush()
            write.find_new(self.store.ledger.known)
            # Encoded here, so the writer thread runs Rust only; and before the ledger
            # records the batch: a batch that fails to encode has begun nothing (else its
            # new descriptions would stay 'known' but unwritten, and a retry would omit them).
            data = write.nquads(shared=True)
            if self._loader is None:
                self._loader = _Loader(self.store, self._pool)
            self.store.ledger.begin(_rows(write), write.pending())
            self._loader.feed(write, data)
            self._inflight.update(self._loader.urls)
            # A stream's segment ends when it is full (bounded memory, see SEGMENT) or when
            # the writer is idle: loading starts with the first batch, and segments grow to
            # SEGMENT only while the loads are slower than the mapping. A crawl batch (not
            # a stream) is a segment of its own: the crawler records a batch as stored once
            # the next one is submitted.
            if (
                not stream
                or self._loader.quads >= SEGMENT
                or self._closing is None
                or self._closing.done()
            ):
                self._end_segment()
            return
        self.flush()  # replacements: one transaction after another
        write.find_new(self.store.ledger.known)
        self.store.ledger.begin(_rows(write), write.pending())
        self._inflight = {m.url for m, _ in (*write.new, *write.replaced)}
        self._writing = self._pool.submit(_write, self.store, write)


def _batches(documents: Iterable[Document], size: int) -> Iterator[list[Document]]:
    batch: list[Document] = []
    for doc in documents:
        batch.append(doc)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _rows(write: _Write) -> Iterator[tuple[bytes, str, str, str]]:
    return ((h, g, s, b) for h, (g, s, b) in write.descriptions.items())


def _write(store: Store, write: _Write) -> None:
    """Write one batch (ledger already begun): Oxigraph, then settle and retract."""
    shared = write.shared_ntriples()
    for n, (mapped, _) in enumerate(write.replaced):
        # Each changed story in its own transaction; the batch's new descriptions ride with
        # the first one.
        store.replace_graph(mapped.url, mapped.ntriples(), shared if n == 0 else None)
    store.load_nquads(write.nquads(shared=not write.replaced))
    ledger = store.ledger
    _retract(store, ledger.settle(write.pending()))
    ledger.clean()


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
    landed: list[Pending] = []
    for p in ledger.pending():
        sha = store.raw_sha256(p.story)
        if p.sha is None:
            if sha is not None:
                store.remove_graph(p.story)
            landed.append(p)
        elif sha == p.sha and store.graph_size(p.story) == p.quads:
            landed.append(p)
        else:
            # Not landed. A new story's graph may be partial (the bulk loader is not
            # transactional): remove it, a re-run ingests it again. A replaced story's old
            # version (another sha) is intact: keep it.
            if sha is None or sha == p.sha:
                store.remove_graph(p.story)
            ledger.drop_pending(p)
    hashes = {h for p in landed for h in (ledger.uses_of(p.story) if p.new else p.hashes)}
    text = "".join(_as_nquads(graph, body) for graph, body in ledger.bodies(sorted(hashes)))
    store.load_nquads(text.encode())
    dropped = ledger.settle(landed)
    _retract(store, dropped | set(ledger.unused()))
    ledger.clean()
