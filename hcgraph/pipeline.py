"""The one ingest pipeline: documents in → parse → identity → revisions → map → write.

``hcgraph ingest``, ``crawl`` and ``rebuild`` hand :class:`Document` objects to a
:class:`Pipeline`, which gives back one :class:`Outcome` per document, in order. A bad body
fails alone; a story crawled under another URL is a duplicate, identical bytes a no-op,
changed bytes a revision. The :class:`~hcgraph.writer.Writer` writes each batch on its own
thread while the caller maps the next.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import hashlib
import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace

import pyoxigraph as ox

from .errors import NotAStoryError, StoryError
from .mapping import IngestInfo, Revision, map_story, withdrawal_nquads
from .model import Story, parse_story
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
#: Bytes a story takes in the store per byte of its JSON, rounded up for the tables a
#: compaction writes before it deletes the ones it merges.
STORE_BYTES_PER_BYTE = 16
#: Bytes the crawl archive takes per story besides its body (its fetch record, ~930 bytes).
ARCHIVE_BYTES_PER_STORY = 1024
_IDENTIFIER = ox.NamedNode(str(DCTERMS.identifier))
#: Allocations between two young-generation collections while a batch is prepared (Python's
#: 700 runs the cycle collector often over containers reference counting frees anyway).
GC_YOUNG = 10_000


class _FewerCollections:
    """While any batch is being prepared (on any thread), collect the young generation every
    :data:`GC_YOUNG` allocations."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._saved = gc.get_threshold()

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._saved = gc.get_threshold()
                if self._saved[0]:  # 0: automatic collection is off, and stays off
                    gc.set_threshold(max(GC_YOUNG, self._saved[0]), *self._saved[1:])
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    gc.set_threshold(*self._saved)


_fewer_collections = _FewerCollections()


@dataclass(frozen=True)
class Document:
    """One raw story document to ingest: ``source`` (file path or URL) is where the bytes
    came from, ``retrieved_at`` when (None: now), ``key`` the crawl frontier URL fetched for
    it (None for files), ``location`` the ``hc:sourceLocation`` when not ``source`` (a
    relative path). ``withdrawn``: no body, but the withdrawal of the story stored from
    ``source`` (or ``key``) at ``retrieved_at``."""

    body: bytes
    source: str
    retrieved_at: dt.datetime | None = None
    key: str | None = None
    location: str | None = None
    withdrawn: bool = False


@dataclass(frozen=True)
class Outcome:
    """What happened to one :class:`Document`.

    ``status``: ``added``, ``replaced``, ``unchanged``, or ``withdrawn``; ``duplicate_of``:
    the crawl URL the story was already stored under; ``reason``/``json_path``: why a body is
    not a valid story; ``id_clash``/``repeat_of``: another story IRI with the same ``id``, an
    earlier source of this run with the same ``url`` (reported, not refused).
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


def _outcome(doc: Document, story: Story) -> Outcome:
    """The outcome of a parsed story: its related links, edition and newsroom pages."""
    links = story.links
    pages = (("edition", links.edition), ("newsroom", links.newsroom)) if links else ()
    related = tuple(r.url for r in story.related)
    index = tuple((kind, url) for kind, url in pages if url)
    return Outcome(doc.source, doc.key, story.url, story.id, related, index_links=index)


def graph_time(when: dt.datetime | None) -> dt.datetime:
    """The retrieval time recorded in the graph: whole seconds, UTC (``SOURCE_DATE_EPOCH``
    when set, now when unknown)."""
    if when is None or source_date_epoch() is not None:
        return now_utc()
    return when.astimezone(dt.UTC).replace(microsecond=0)


class Pipeline:
    """Parse, dedupe and map documents, and hand them to a :class:`~hcgraph.writer.Writer`.

    ``crawl_claims`` (crawl mode): story IRI → (crawl URL, story id) this crawl stored; a
    story reached again under another URL is a duplicate, not stored. ``protect_crawled``
    refuses a document replacing a story crawled from its own URL (a file names its own
    ``url``; ``hcgraph ingest --replace`` lifts it).
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
        """Process a stream of documents; outcomes come back in order, batch by batch, once
        mapped. The stories are stored when the iteration ends, which raises what a write
        raised."""
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
        """Parse, dedupe and map one batch, and queue its write; the future gives its outcomes
        once its stories have landed, or raises what the write raised."""
        outcomes, futures = self._submit(list(documents))
        return _landed(futures, outcomes)

    def process(self, documents: Sequence[Document]) -> list[Outcome]:
        """Process one batch and wait until it is written."""
        return self.submit(documents).result()

    def close(self, *, compact: bool = True) -> None:
        """Finish the writes in flight and stop the writer; with ``compact``, compact the
        store if that is due."""
        self.writer.close(compact=compact)

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(compact=exc_type is None)  # after an error: that error, not a compaction

    # --- one batch ----------------------------------------------------------------------
    def _submit(self, documents: list[Document]) -> tuple[list[Outcome], list[Future[None]]]:
        """The batch's outcomes, and the futures of its writes (more than one when a story
        comes twice: the later version replaces the earlier)."""
        with _fewer_collections():
            self._check_room(documents)
            self._take_failures()
            outcomes: list[Outcome] = []
            futures: list[Future[None]] = []
            write, urls = Batch(), set[str]()
            for doc in documents:
                if doc.withdrawn:
                    if write:
                        futures.append(self.writer.submit(write))
                        write, urls = Batch(), set[str]()
                    outcomes.append(self._withdraw(doc, write, urls))
                    continue
                parsed = self._parse(doc)
                if isinstance(parsed, Outcome):
                    outcomes.append(parsed)
                    continue
                if parsed.url in urls:  # the same story twice in this batch
                    futures.append(self.writer.submit(write))
                    write, urls = Batch(), set[str]()
                outcomes.append(self._story(doc, parsed, write))
                urls.add(parsed.url)
            futures.append(self.writer.submit(write))
            return outcomes, futures

    def _story(self, doc: Document, story: Story, write: Batch) -> Outcome:
        """Prepare one parsed story (once the write of its stored version, to be read, ended)."""
        if self.writer.writing(story.url):
            self.writer.wait()
            self._take_failures()
        outcome = self._prepare(doc, story, write)
        if self.crawl and outcome.ok:  # only a stored story owns its url and id
            self.by_story[story.url] = doc.key or doc.source
            self.by_id.setdefault(story.id, story.url)
        return outcome

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

    def _withdraw(self, doc: Document, write: Batch, urls: set[str]) -> Outcome:
        """Mark the story ``doc`` names withdrawn (unless it is already): its marker joins
        ``write``. Everything before it lands first, so a story this run stored is found."""
        self.writer.wait()
        self._take_failures()
        story_url = self._stored_from(doc)
        base = Outcome(doc.source, doc.key, story_url, withdrawal=True)
        if story_url is None:
            return base
        urls.add(story_url)
        if self.store.withdrawn_at(story_url) is None and story_url not in write.withdrawn:
            marker = withdrawal_nquads(story_url, graph_time(doc.retrieved_at))
            write.withdrawn[story_url] = marker  # only the marker joins the story's graph
        return replace(base, status="withdrawn")

    def _check_room(self, documents: list[Document]) -> None:
        """Stop before a batch that may not fit on the store's disk: :data:`STORE_BYTES_PER_BYTE`
        per byte of JSON, and in crawl mode the archive's share of the next batch."""
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
            dup = self._duplicate_of(story, doc.key or doc.source)
            if dup is not None:
                return replace(_outcome(doc, story), duplicate_of=dup)
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
        sha = hashlib.sha256(doc.body).hexdigest()
        old, gone_at = self._stored_version(story.url)
        repeat = self._run_urls.get(story.url)
        if repeat is None:
            self._run_urls[story.url] = doc.source
        new_id = story.id not in self._run_ids
        base = replace(_outcome(doc, story), id_clash=self._id_clash(story), repeat_of=repeat)
        # A withdrawn story that comes back is current again: a new graph (without the
        # marker), as a revision of the withdrawn version, even with the same bytes.
        if old == sha and gone_at is None:
            return self._same_bytes(base, story.url)
        self._recovered.pop(story.url, None)
        refused = self._crawled(base, story.url) if old and self.protect_crawled else None
        if refused is not None:
            return refused
        try:
            mapped = map_story(story, self._info(doc, story.url, sha, old, gone_at))
        except Exception as exc:  # a story that trips the mapping fails alone, not the run
            self._unclaim(story, repeat is None, new_id)
            return replace(base, reason=f"cannot be mapped to RDF: {type(exc).__name__}: {exc}")
        write.add(mapped, sha, replaces=old is not None)
        return replace(base, status="replaced" if old else "added", quads=len(mapped))

    def _stored_version(self, url: str) -> tuple[str | None, dt.datetime | None]:
        """The stored version's raw SHA-256 and withdrawal time (None: not stored, current)."""
        old = self.store.raw_sha256(url) if url in self._stored else None
        self._stored.add(url)
        return old, (self.store.withdrawn_at(url) if old else None)

    def _crawled(self, base: Outcome, url: str) -> Outcome | None:
        """The refusal of a file that would replace a story crawled from its URL, if it was."""
        origin = self.store.crawled_from(url)
        if origin is None:
            return None
        reason = (
            f"{url} was crawled from {origin}; a local file replaces a crawled "
            "story only with --replace"
        )
        return replace(base, reason=reason, json_path="url", problems=(("url", reason),))

    def _unclaim(self, story: Story, new_url: bool, new_id: bool) -> None:
        """Forget this run's claim on a story that never reached the store."""
        if new_url:
            self._run_urls.pop(story.url, None)
        if new_id:
            del self._run_ids[story.id]

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
        """What the graph records of this ingest, with the stored versions before it."""
        revisions: tuple[Revision, ...] = ()
        if old:
            # each version's withdrawal, off its own node: a revert's bytes are not withdrawn
            chain = self.store.revision_chain(url, old)
            if gone_at is not None:
                chain[0] = (*chain[0][:2], gone_at)
            # what each version said: kept on the revisions, and the one being replaced
            # read from its graph now (history compares versions with no archived body)
            said = version_contents(self.store, url)
            if old != sha and (content := graph_content(self.store, url, old)) is not None:
                said[old] = content.to_json()
            if old == sha:  # the same bytes back: the same raw document, ingested again
                chain = chain[1:]
            revisions = tuple(Revision(s, when, w, said.get(s)) for s, when, w in chain)
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
        url = story.url
        for quad in self.store.quads(None, _IDENTIFIER, ox.Literal(ident)):
            other = quad.subject  # a story's id is stated in its own graph
            if isinstance(other, ox.NamedNode) and other == quad.graph_name and other.value != url:
                return other.value
        return None


def _landed(futures: list[Future[None]], outcomes: list[Outcome]) -> Future[list[Outcome]]:
    """A future of ``outcomes`` once every write future has ended (the writer runs jobs in
    order), or the error of the first that failed."""
    result: Future[list[Outcome]] = Future()

    def end(_: object) -> None:
        errors = [e for e in (f.exception() for f in futures) if e is not None]
        if errors:
            result.set_exception(errors[0])
        else:
            result.set_result(outcomes)

    futures[-1].add_done_callback(end)
    return result
