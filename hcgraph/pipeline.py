"""The one ingest pipeline: documents in → parse → identity → revisions → map → write.

``hcgraph ingest`` (files), ``hcgraph crawl`` (fetched bodies) and ``hcgraph rebuild`` (the
raw archive) all hand :class:`Document` objects to a :class:`Pipeline`, which gives back one
:class:`Outcome` per document, in order.

Per batch of whole stories the pipeline

0. checks that the store's disk has room for it (:meth:`~hcgraph.store.Store.check_room`: a
   batch that may not fit stops the run before it is written, every story stored before it kept);
1. parses and validates each body (:func:`hcgraph.model.parse_story`; a bad one becomes a
   failed outcome with its JSON path, the rest carry on);
2. checks identity: a story the crawler already stored under another URL is a duplicate
   (crawl mode), identical bytes are a no-op, changed bytes are a revision;
3. maps each story to N-Quads text (:func:`hcgraph.mapping.map_story`): its own graph plus
   descriptions of shared things;
4. hands the prepared batch to the store's :class:`~hcgraph.writer.Writer`, which writes it
   on its own thread — descriptions new to the ledger into the shared graphs once, new
   stories with Oxigraph's bulk loader (batches that arrive while it is busy join one
   segment of up to :data:`SEGMENT` quads), a changed story's graph replaced in one
   transaction, what only a replaced or removed story said retracted — and resolves the
   batch's future once it has landed.

The pipeline has no threads of its own: while the writer loads segment *n* (in Rust,
without the GIL) the caller already parses and maps the next, so both cores work.

Crash safety is the writer's (see :mod:`hcgraph.writer`): every story in the store is
complete and the shared graphs match the ledger, after any crash, once
:func:`~hcgraph.writer.recover` ran.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace

import pyoxigraph as ox

from .errors import NotAStoryError, StoryError
from .mapping import IngestInfo, Revision, map_story, withdrawal_nquads
from .model import Story, parse_story
from .origin import crawled_from
from .rdftext import nfc
from .store import Store, now_utc, source_date_epoch
from .version_content import from_graph as graph_content
from .version_content import revision_contents as version_contents
from .vocab import DCTERMS
from .writer import Batch, Writer, recover, remove_story

__all__ = [
    "ARCHIVE_BYTES_PER_STORY",
    "BATCH",
    "SEGMENT",
    "STORE_BYTES_PER_BYTE",
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
#: Bytes a story takes in the store per byte of its JSON, measured at 10k generated stories
#: (1.40 GB of tables and 64 MB of ledger for 116 MB of JSON: 12.6), rounded up for the
#: tables the engine's compactions write before they delete the ones they merge.
STORE_BYTES_PER_BYTE = 16
#: Bytes the crawl archive takes per story besides its body (its fetch record: 930 bytes a
#: fetch in the demo's crawl, 793,505 bytes of pack for 734,941 of bodies and 63 fetches).
ARCHIVE_BYTES_PER_STORY = 1024
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
        withdrawn: not a body but a withdrawal: the story stored from ``source`` (a story
            IRI, or the URL or file it was ingested from; or from ``key``) answered 404/410
            (confirmed), so it is marked withdrawn at ``retrieved_at``; ``body`` is unused.
    """

    body: bytes
    source: str
    retrieved_at: dt.datetime | None = None
    key: str | None = None
    location: str | None = None
    withdrawn: bool = False


@dataclass(frozen=True)
class Outcome:
    """What happened to one :class:`Document`.

    ``status`` is ``added``, ``replaced`` or ``unchanged`` for a stored story, ``withdrawn``
    for a withdrawal document whose story is in the store (marked now, or already);
    ``withdrawal`` is set for the outcome of a withdrawal document (without a ``status``
    when no stored story came from its URL); ``duplicate_of``
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
    index_links: tuple[tuple[str, str], ...] = ()  # ("edition"/"newsroom", URL): for a crawl
    duplicate_of: str | None = None
    reason: str | None = None
    json_path: str | None = None
    problems: tuple[tuple[str, str], ...] = ()
    not_a_story: bool = False
    id_clash: str | None = None
    repeat_of: str | None = None
    withdrawal: bool = False

    @property
    def ok(self) -> bool:
        """True if the story is in the store."""
        return self.status is not None


def _index_links(story: Story) -> tuple[tuple[str, str], ...]:
    """The story's edition and newsroom pages, for a crawl that follows them."""
    links = story.links
    if links is None:
        return ()
    return tuple((k, u) for k, u in (("edition", links.edition), ("newsroom", links.newsroom)) if u)


def graph_time(when: dt.datetime | None) -> dt.datetime:
    """The retrieval time recorded in the graph: whole seconds, UTC.

    ``SOURCE_DATE_EPOCH``, when set, wins (reproducible builds give identical graphs); an
    unknown time is now.
    """
    fixed = source_date_epoch()
    if fixed is not None:
        return fixed
    return now_utc() if when is None else when.astimezone(dt.UTC).replace(microsecond=0)


class Pipeline:
    """Parse, dedupe and map documents, and hand them to a :class:`~hcgraph.writer.Writer`
    (see the module docstring).

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
        self.writer = Writer(store, segment=SEGMENT)  # recovers the store first
        self._run_urls: dict[str, str] = {}  # story IRI → first source in this run
        self._run_ids: dict[str, str] = {}  # story id → first story IRI in this run
        # story IRI → (new, quads): written whole by a write that failed, kept by recovery
        self._recovered: dict[str, tuple[bool, int]] = {}
        # Stories already stored: a story not among them needs no look-up (on a store being
        # bulk-loaded, every point read has many fresh files to search).
        self._stored = set(store.story_graphs())
        self._stored_before = bool(self._stored)

    # --- public -------------------------------------------------------------------------
    def run(
        self, documents: Iterable[Document], on_progress: Callable[[int], None] | None = None
    ) -> Iterator[Outcome]:
        """Process a stream of documents; outcomes come back in order, batch by batch.

        A batch's outcomes come once it is mapped; its stories are in the store when the
        iteration ends, which raises what a write raised (as soon as it is seen).
        """
        landed: deque[Future[None]] = deque()
        docs = iter(documents)
        try:  # batches of batch_size documents (the last one may be short) until none is left
            for batch in iter(lambda: list(itertools.islice(docs, self.batch_size)), []):
                outcomes, futures = self._submit(batch)
                landed.extend(futures)
                yield from outcomes
                if on_progress is not None:
                    on_progress(len(batch))
                while landed and landed[0].done():
                    landed.popleft().result()
        except BaseException:
            self.writer.wait()  # what was submitted ends before the error goes up
            raise
        for future in landed:
            future.result()

    def submit(self, documents: Sequence[Document]) -> Future[list[Outcome]]:
        """Parse, dedupe and map one batch, and queue its write.

        Returns once the batch is mapped (the write of an earlier batch may still run);
        the future gives the batch's outcomes, in order, once its stories have landed in
        the store, or raises what the write raised.
        """
        outcomes, futures = self._submit(list(documents))
        return _landed(futures, outcomes)

    def process(self, documents: Sequence[Document]) -> list[Outcome]:
        """Process one batch and wait until it is written."""
        return self.submit(documents).result()

    def close(self, *, compact: bool = True) -> None:
        """Finish the writes in flight and stop the writer; with ``compact``, compact the
        store if that is due (:meth:`~hcgraph.writer.Writer.close`)."""
        self.writer.close(compact=compact)

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(compact=exc_type is None)  # after an error: that error, not a compaction

    # --- one batch ----------------------------------------------------------------------
    def _submit(self, documents: list[Document]) -> tuple[list[Outcome], list[Future[None]]]:
        """The batch's outcomes, and the futures of its writes (more than one when a story
        comes twice: the later version replaces the earlier)."""
        self._check_room(documents)
        self._take_failures()
        outcomes: list[Outcome] = []
        futures: list[Future[None]] = []
        write, urls = Batch(), set[str]()
        for doc in documents:
            if doc.withdrawn:
                # Rare: everything before it lands first, so the story it names (maybe
                # stored a moment ago, by this run) is found in the store.
                if write:
                    futures.append(self.writer.submit(write))
                    write, urls = Batch(), set[str]()
                self.writer.wait()
                self._take_failures()
                story_url = self._stored_from(doc)
                outcomes.append(self._withdraw(doc, story_url, write))
                if story_url is not None:
                    urls.add(story_url)
                continue
            parsed = self._parse(doc)
            if isinstance(parsed, Outcome):
                outcomes.append(parsed)
                continue
            story = parsed
            if story.url in urls:  # the same story twice in this batch
                futures.append(self.writer.submit(write))
                write, urls = Batch(), set[str]()
            if self.writer.writing(story.url):  # its stored version is to be read
                self.writer.wait()
                self._take_failures()
            outcome = self._prepare(doc, story, write)
            if self.crawl and outcome.ok:  # only a stored story owns its url and id
                self.by_story[story.url] = doc.key or doc.source
                self.by_id.setdefault(story.id, story.url)
            outcomes.append(outcome)
            urls.add(story.url)
        futures.append(self.writer.submit(write))
        return outcomes, futures

    def _stored_from(self, doc: Document) -> str | None:
        """The stored story a withdrawal document names: a story IRI, or the story whose
        ingest came from its source (or key) URL."""
        if self.store.raw_sha256(doc.source) is not None:
            return doc.source
        for where in (doc.source, doc.key):
            found = self.store.story_fetched_from(where) if where else None
            if found is not None:
                return found
        return None

    def _withdraw(self, doc: Document, story_url: str | None, write: Batch) -> Outcome:
        """Mark ``story_url`` withdrawn (unless it is already): its marker joins ``write``."""
        base = Outcome(doc.source, doc.key, story_url, withdrawal=True)
        if story_url is None:
            return base
        if self.store.withdrawn_at(story_url) is None and story_url not in write.withdrawn:
            write.withdraw(story_url, withdrawal_nquads(story_url, graph_time(doc.retrieved_at)))
        return replace(base, status="withdrawn")

    def _check_room(self, documents: list[Document]) -> None:
        """Stop before a batch that may not fit on the store's disk
        (:meth:`~hcgraph.store.Store.check_room`).

        The estimate: :data:`STORE_BYTES_PER_BYTE` per byte of JSON, and in crawl mode the
        archive's share of the next batch (as large as this one: its bodies are archived
        before they come here).
        """
        body = sum(len(d.body) for d in documents)
        need = STORE_BYTES_PER_BYTE * body
        if self.crawl:
            need += body + ARCHIVE_BYTES_PER_STORY * len(documents)
        self.store.check_room(need, f"the next {len(documents)} documents")

    def _take_failures(self) -> None:
        """Learn what failed writes left: stories recovery kept, new ones that were lost."""
        recovered, lost = self.writer.failures()
        self._recovered.update(recovered)
        if not lost:
            return
        for story in lost:  # not stored: no claim (a retry claims them again)
            self.by_story.pop(story, None)
            self._run_urls.pop(story, None)
        self.by_id = {i: s for i, s in self.by_id.items() if s not in lost}
        self._run_ids = {i: s for i, s in self._run_ids.items() if s not in lost}

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
                return Outcome(
                    doc.source, doc.key, story.url, story.id, related, duplicate_of=dup,
                    index_links=_index_links(story),
                )  # fmt: skip
        return story

    def _duplicate_of(self, story: Story, url: str) -> str | None:
        owner = self.by_story.get(story.url)
        if owner is not None and owner != url:
            return owner
        same_id = self.by_id.get(story.id)
        if same_id is not None and same_id != story.url:
            return self.by_story.get(same_id, same_id)
        return None

    def _prepare(self, doc: Document, story: Story, write: Batch) -> Outcome:
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
            index_links=_index_links(story),
            id_clash=self._id_clash(story),
            repeat_of=repeat,
        )
        # A withdrawn story that comes back is current again: a new graph (without the
        # marker), as a revision of the withdrawn version, even with the same bytes.
        gone_at = self.store.withdrawn_at(story.url) if old else None
        if old == sha and gone_at is None:
            return self._same_bytes(base, story.url)
        self._recovered.pop(story.url, None)
        origin = crawled_from(self.store, story.url) if old and self.protect_crawled else None
        if origin is not None:
            reason = (
                f"{story.url} was crawled from {origin}; a local file replaces a crawled "
                "story only with --replace"
            )
            return replace(base, reason=reason, json_path="url", problems=(("url", reason),))
        try:
            mapped = map_story(story, self._info(doc, story.url, sha, old, gone_at))
        except Exception as exc:  # a story that trips the mapping fails alone, not the run
            if repeat is None:
                self._run_urls.pop(story.url, None)  # it never reached the store
            if new_id:
                del self._run_ids[story.id]
            return replace(base, reason=f"cannot be mapped to RDF: {type(exc).__name__}: {exc}")
        write.add(mapped, sha, replaces=old is not None)
        return replace(base, status="replaced" if old else "added", quads=len(mapped))

    def _same_bytes(self, base: Outcome, url: str) -> Outcome:
        """The outcome of a document whose bytes are the stored version's."""
        # Written whole by a write of this run that failed (kept by recovery): this is its
        # retry. Kept until another version comes: the retry may fail again.
        recovered = self._recovered.get(url)
        if recovered is None:
            return replace(base, status="unchanged")
        new, quads = recovered
        return replace(base, status="added" if new else "replaced", quads=quads)

    def _info(
        self, doc: Document, url: str, sha: str, old: str | None, gone_at: dt.datetime | None
    ) -> IngestInfo:
        """What the graph records of this ingest, with the stored versions before it (each
        withdrawn one with its withdrawal time)."""
        revisions: tuple[Revision, ...] = ()
        if old:
            chain = self.store.revisions(url, old)
            marks = self.store.withdrawn_versions(url)
            if gone_at is not None:
                marks[old] = gone_at
            # what each version said: kept on the revisions, and the one being replaced
            # read from its graph now (history compares versions with no archived body)
            said = version_contents(self.store, url)
            if old != sha and (content := graph_content(self.store, url, old)) is not None:
                said[old] = content.to_json()
            if old == sha:  # the same bytes back: the same raw document, ingested again
                chain = chain[1:]
            revisions = tuple(Revision(s, when, marks.get(s), said.get(s)) for s, when in chain)
        where = doc.location or doc.source
        return IngestInfo(sha, where, graph_time(doc.retrieved_at), len(doc.body), revisions)

    def _id_clash(self, story: Story) -> str | None:
        """Another story IRI with ``story``'s id: earlier in this run, or in the store."""
        ident = nfc(story.id)  # as stored: two spellings of one NFC id are one id
        first = self._run_ids.setdefault(ident, story.url)
        if first != story.url:
            return first
        if not self._stored_before:  # an empty store: only this run's stories can clash
            return None
        pattern = self.store.quads(None, _IDENTIFIER, ox.Literal(ident))
        for quad in pattern:
            subject = quad.subject
            if not isinstance(subject, ox.NamedNode) or subject != quad.graph_name:
                continue
            if subject.value != story.url:
                return subject.value
        return None


def _landed(futures: list[Future[None]], outcomes: list[Outcome]) -> Future[list[Outcome]]:
    """A future of ``outcomes`` once every write future has ended (the error of the first
    that failed). The writer runs jobs in order: when the last ends, all have."""
    result: Future[list[Outcome]] = Future()

    def end(_: object) -> None:
        errors = [e for e in (f.exception() for f in futures) if e is not None]
        if errors:
            result.set_exception(errors[0])
        else:
            result.set_result(outcomes)

    futures[-1].add_done_callback(end)
    return result
