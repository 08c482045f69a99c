"""The embedded, persistent RDF store: Oxigraph (pyoxigraph) under one directory.

The store only stores (quads in and out, SPARQL, the look-ups the ingest pipeline needs);
what to write is decided by :mod:`hcgraph.pipeline`. docs/graph.md lists its directory's files.
Each story lives in its own named graph, named by the story IRI; shared things are described
once in the graphs of :data:`~hcgraph.vocab.SHARED_GRAPHS`, so every triple is in exactly one
graph and the union (the default graph every query sees) is a set.

**Store format.** Every open of an on-disk store checks ``format.json`` first: an older format
or an unreadable marker is refused saying to run ``hcgraph rebuild`` (which builds this format
from the raw archive), a newer one saying to upgrade hcgraph. A store without a marker is
format 1 if it has the shared graphs (marked by its next writer), else the old layout, refused.
A change of the database's or the ledger's layout raises :data:`STORE_FORMAT`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import pyoxigraph as ox

from ._io import write_atomic
from .damage import damage_error
from .errors import (
    HcgraphError,
    OutputError,
    StoreBusyError,
    StoreDiskError,
    StoreError,
    StoreFormatError,
    first_line,
    visible,
)
from .iris import minted, named_node
from .ledger import Ledger
from .rdftext import in_graph, nfc
from .vocab import DCTERMS, GRAPH, HC, PREFIXES, PROV, SHARED_GRAPHS

__all__ = [
    "COMPACT_MIN_BYTES",
    "COMPACT_SHARE",
    "DEFAULT_STORE",
    "DISK_RESERVE",
    "STORE_FORMAT",
    "Store",
    "disk_reserve",
    "holder_of",
    "now_utc",
    "read_format",
    "source_date_epoch",
]

#: Where the commands keep the store unless given ``--store``.
DEFAULT_STORE = Path("output") / "store"
#: The format of the store directory this hcgraph reads and writes (``STORE/format.json``).
STORE_FORMAT = 1
_FORMAT_FILE = "format.json"
_REBUILD = "run hcgraph rebuild"

#: A run that wrote ends with a compaction (:meth:`Store.optimize`) when the tables written
#: since the last one are at least this share of all its tables...
COMPACT_SHARE = 0.10
#: ...and the tables hold at least this many bytes.
COMPACT_MIN_BYTES = 64 * 1024 * 1024
#: Free bytes a write leaves on the store's disk (``HCGRAPH_DISK_RESERVE`` overrides it):
#: room for the engine's own compactions, the ledger, the crawl frontier and report.
DISK_RESERVE = 256 * 1024 * 1024
_MARKER = "compacted.json"
_RAW_PREFIX = minted("raw", "")
_RAW_DOCUMENT = ox.NamedNode(str(HC.rawDocument))
_WAS_REVISION_OF = ox.NamedNode(str(PROV.wasRevisionOf))
_CREATED = ox.NamedNode(str(DCTERMS.created))
_SHA256 = ox.NamedNode(str(HC.sha256))
_ENDED = ox.NamedNode(str(PROV.endedAtTime))
_INVALIDATED = ox.NamedNode(str(PROV.invalidatedAtTime))
_SOURCE_LOCATION = ox.NamedNode(str(HC.sourceLocation))
_SHARED_PREFIX = str(GRAPH)
_Term = ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple
_Step = Callable[[ox.NamedNode], _Term | None]  # a raw-document node → the one it revised
# The union as triples: no DISTINCT needed, the union is a set (see the module docstring).
_UNION = "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }"


def source_date_epoch() -> dt.datetime | None:
    """``SOURCE_DATE_EPOCH`` as a UTC time when set (reproducible builds), else None."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    return dt.datetime.fromtimestamp(int(epoch), tz=dt.UTC) if epoch.isdigit() else None


def disk_reserve() -> int:
    """The free bytes a write must leave on the store's disk: ``HCGRAPH_DISK_RESERVE`` when
    set, else :data:`DISK_RESERVE`."""
    value = os.environ.get("HCGRAPH_DISK_RESERVE", "").strip()
    return int(value) if value.isdigit() else DISK_RESERVE


def now_utc() -> dt.datetime:
    """The ingest timestamp: now (whole seconds), or ``SOURCE_DATE_EPOCH`` when set."""
    return source_date_epoch() or dt.datetime.now(dt.UTC).replace(microsecond=0)


class Store:
    """hcgraph's store: a directory (created if missing; ``None``: a throw-away in-memory
    store) holding an Oxigraph database, its ledger and the archive. ``read_only`` takes no
    write lock, so another process (the Oxigraph server) may hold the database too;
    ``holder`` is what a second writer is told holds it (default: ``hcgraph COMMAND``);
    ``any_format`` skips the format check (for :func:`hcgraph.rebuilding.rebuild`).

    Raises:
        StoreBusyError: another writer holds the store (named, with its pid, when known).
        StoreDamagedError: the database is damaged (says how to rebuild it).
        StoreFormatError: the store is of another format than :data:`STORE_FORMAT`.
        StoreError: the directory cannot be opened otherwise (not a store, no permission).
    """

    def __init__(
        self,
        directory: Path | str | None = DEFAULT_STORE,
        *,
        read_only: bool = False,
        holder: str | None = None,
        any_format: bool = False,
    ):
        self.directory = Path(directory) if directory is not None else None
        self.read_only = read_only
        self._write_lock = threading.RLock()  # one write at a time (see _written)
        self._ledger: Ledger | None = None
        self._holder_file: Path | None = None
        if self.directory is None:
            self.ox = ox.Store()
            return
        marked = None if any_format else read_format(self.directory)
        self.ox = _open(self.directory, self.db_path, read_only)
        if not read_only:
            self._holder_file = _claim(self.directory, holder or _this_command())
        if not any_format and marked is None:
            self._mark_format()

    def _mark_format(self) -> None:
        """An unmarked store: refuse the old layout (graphs, but no agents graph), else mark
        it format 1 if writable."""
        assert self.directory is not None
        agents = ox.NamedNode(SHARED_GRAPHS["agents"])
        if not self.ox.contains_named_graph(agents) and next(self.ox.named_graphs(), None):
            self.close()
            raise StoreFormatError(
                f"{self.directory}: the store is in the old layout (story graphs repeating "
                f"shared descriptions), which this hcgraph no longer reads; {_REBUILD}"
            )
        if not self.read_only:
            marker = json.dumps({"format": STORE_FORMAT}).encode() + b"\n"
            try:
                write_atomic(self.directory / _FORMAT_FILE, marker)
            except HcgraphError as exc:  # an OutputError naming the file
                self.close()
                raise StoreError(str(exc)) from None

    # --- lifecycle ------------------------------------------------------------------------
    @property
    def db_path(self) -> Path:
        """The Oxigraph database directory inside the store."""
        if self.directory is None:
            raise StoreError("an in-memory store has no database path")
        return self.directory / "oxigraph"

    @property
    def ledger(self) -> Ledger:
        """The shared-description ledger (opened on first use; writable stores only)."""
        self._writable()
        if self._ledger is None:  # a failure to open it is a StoreError naming the file
            path = None if self.directory is None else self.directory / "ledger.sqlite"
            self._ledger = Ledger(path)
        return self._ledger

    def close(self) -> None:
        """Flush writes and release the database and its lock (also when the flush fails)."""
        try:
            if self._ledger is not None:
                ledger, self._ledger = self._ledger, None
                ledger.close()
        finally:
            self._release()

    def _release(self) -> None:
        """Flush and drop the Oxigraph database (an ``OSError`` becomes a StoreError)."""
        if getattr(self, "ox", None) is not None:
            try:
                if not self.read_only and self.directory is not None:
                    with self._written():
                        self.ox.flush()
            finally:
                # Before the lock goes: a writer that takes it next writes its own file.
                _unclaim(self._holder_file)
                self._holder_file = None
                del self.ox

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- reading --------------------------------------------------------------------------
    def graph_names(self) -> list[str]:
        """IRIs of all named graphs (story graphs and shared graphs), sorted."""
        return sorted(g.value for g in self.ox.named_graphs() if isinstance(g, ox.NamedNode))

    def story_graphs(self) -> list[str]:
        """IRIs of all story graphs, sorted."""
        return [g for g in self.graph_names() if not g.startswith(_SHARED_PREFIX)]

    def raw_documents(self) -> Iterator[tuple[str, str]]:
        """(story IRI, SHA-256 of its raw bytes) for every story graph."""
        for story, raw in self._on_stories(_RAW_DOCUMENT):
            yield story, raw.removeprefix(_RAW_PREFIX)

    def __len__(self) -> int:
        return len(self.ox)

    def quads(
        self,
        subject: ox.NamedNode | ox.BlankNode | ox.Triple | None = None,
        predicate: ox.NamedNode | None = None,
        obj: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple | None = None,
        graph: ox.NamedNode | ox.DefaultGraph | None = None,
    ) -> Iterator[ox.Quad]:
        """The quads matching a pattern (None matches anything), in the store's index order.

        A literal object is checked on each quad: pyoxigraph 0.5.13's on-disk look-up by a
        number whose encoding ends in the byte 0xFF (255, 511, 767, ...) also returns the
        quads of the next 255 numbers (its SPARQL answers are right)."""
        found = self.ox.quads_for_pattern(subject, predicate, obj, graph)
        if isinstance(obj, ox.Literal):
            return (quad for quad in found if quad.object == obj)
        return found

    def sorted_lines(self, graph: str, *, quads: bool = False) -> list[bytes]:
        """One graph as sorted N-Triples lines (or N-Quads with ``quads``): a stable form."""
        text = self.ox.dump(format=ox.RdfFormat.N_TRIPLES, from_graph=ox.NamedNode(graph)) or b""
        lines = text.splitlines(keepends=True)
        if quads:
            tail = b" <" + graph.encode() + b"> .\n"
            lines = [line[:-3] + tail for line in lines]
        lines.sort()
        return lines

    def graph_size(self, graph: str) -> int:
        """Number of quads in one named graph."""
        return sum(1 for _ in self.quads(graph=ox.NamedNode(graph)))

    def raw_sha256(self, story_url: str) -> str | None:
        """SHA-256 of the raw bytes the story's graph was built from, or None if absent."""
        raw = self._story_value(story_url, _RAW_DOCUMENT)
        return None if raw is None else raw.removeprefix(_RAW_PREFIX)

    def _story_value(self, story_url: str, predicate: ox.NamedNode) -> str | None:
        """The value of ``<story> predicate ?o`` in the story's own graph, or None."""
        st = named_node(story_url)  # None: not an IRI, so not stored
        value = None if st is None else self._object(st, predicate, st)
        return None if value is None else _value(value)

    def _object(self, s: ox.NamedNode, p: ox.NamedNode, g: ox.NamedNode) -> _Term | None:
        """The object of the first quad ``s p ?o g``, or None."""
        return next((q.object for q in self.ox.quads_for_pattern(s, p, None, g)), None)

    def _on_stories(self, predicate: ox.NamedNode) -> Iterator[tuple[str, str]]:
        """(story IRI, value) of ``<story> predicate ?o`` in every story's own graph."""
        for quad in self.ox.quads_for_pattern(None, predicate, None, None):
            if isinstance(quad.subject, ox.NamedNode) and quad.subject == quad.graph_name:
                yield quad.subject.value, _value(quad.object)

    def revision_chain(
        self, story_url: str, sha256: str
    ) -> list[tuple[str, dt.datetime, dt.datetime | None]]:
        """The stored story's version history, newest first: (sha256, retrieved, withdrawn)
        per version (withdrawn None: it was not). A SHA repeats where the story went back to
        earlier bytes (a revert); each withdrawal is read off its version's own node in the
        same walk, since a revert's versions share a SHA and, at one time, their times too."""
        g = ox.NamedNode(story_url)
        ended = self._object(ox.NamedNode(minted("ingest", sha256)), _ENDED, g)
        sha, when = sha256, now_utc() if ended is None else _time(ended)
        chain: list[tuple[str, dt.datetime, dt.datetime | None]] = []
        for node in self._revision_nodes(g, sha256):
            if chain:
                sha, created = self.raw_node_sha256(node, g), self._object(node, _CREATED, g)
                when = when if created is None else _time(created)
            gone = self._object(node, _INVALIDATED, g)
            chain.append((sha, when, None if gone is None else _time(gone)))
        return chain

    def _revision_nodes(
        self, g: ox.NamedNode, sha256: str, older: _Step | None = None
    ) -> Iterator[ox.NamedNode]:
        """The raw-document nodes of the chain from ``raw/<sha256>``, newest first, each
        followed by ``older`` of it (default: what it revised in ``g``); a loop (a store
        written before reverts) ends it."""
        node: _Term | None = ox.NamedNode(minted("raw", sha256))
        seen: set[ox.NamedNode] = set()  # nodes, not SHAs: a revert's SHA has a node of its own
        while isinstance(node, ox.NamedNode) and node not in seen:
            seen.add(node)
            yield node
            node = self._object(node, _WAS_REVISION_OF, g) if older is None else older(node)

    def withdrawn_at(self, story_url: str) -> dt.datetime | None:
        """When the stored story was withdrawn (404/410), or None (current, or not stored)."""
        when = self._story_value(story_url, _INVALIDATED)
        return None if when is None else dt.datetime.fromisoformat(when)

    def withdrawn_stories(self) -> dict[str, dt.datetime]:
        """Every withdrawn story: story IRI → when."""
        return {s: dt.datetime.fromisoformat(w) for s, w in self._on_stories(_INVALIDATED)}

    def raw_node_sha256(self, node: ox.NamedNode, g: ox.NamedNode) -> str:
        """The SHA-256 of a raw-document node: its ``hc:sha256`` (a revert's node has its
        own IRI), else the IRI's tail."""
        sha = self._object(node, _SHA256, g)
        return node.value.removeprefix(_RAW_PREFIX) if sha is None else _value(sha)

    def crawled_from(self, story_url: str) -> str | None:
        """The http(s) URL the stored version of ``story_url`` was crawled from, or None (not
        stored, or read from a local file): a local file replaces a crawled story only with
        ``--replace``."""
        sha = self.raw_sha256(story_url)
        if sha is None:
            return None
        ingest, g = ox.NamedNode(minted("ingest", sha)), ox.NamedNode(story_url)
        for quad in self.quads(ingest, _SOURCE_LOCATION, None, g):
            source = quad.object
            if isinstance(source, ox.Literal) and source.value.startswith(("http://", "https://")):
                return source.value
        return None

    def story_fetched_from(self, location: str) -> str | None:
        """The stored story whose ingest records ``location`` (a crawled URL or a file) as
        its ``hc:sourceLocation``, or None."""
        stored = ox.Literal(nfc(location))  # literals are stored NFC (rdftext.nfc)
        for quad in self.quads(None, _SOURCE_LOCATION, stored):
            graph = quad.graph_name
            if isinstance(graph, ox.NamedNode) and not graph.value.startswith(_SHARED_PREFIX):
                return graph.value
        return None

    def query(
        self,
        sparql: str,
        *,
        bindings: Mapping[str, ox.NamedNode | ox.Literal] | None = None,
        union: bool = True,
        allow_service: bool = False,
    ) -> Any:
        """Run SPARQL with hcgraph's prefixes predeclared; ``bindings`` are bound as RDF terms
        (never spliced into the text); with ``union`` the default graph is the union of all
        graphs; ``SERVICE`` is refused unless ``allow_service`` (:mod:`hcgraph.sparqlguard`).

        Raises:
            QueryError: the query uses ``SERVICE`` and ``allow_service`` is false.
        """
        if not allow_service:
            from .sparqlguard import check_no_service  # ~30 ms of regexes: not on the write path

            check_no_service(sparql)
        subs: dict[ox.Variable, ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple] = {
            ox.Variable(k): v for k, v in (bindings or {}).items()
        }
        return self.ox.query(
            sparql, prefixes=PREFIXES, use_default_graph_as_union=union, substitutions=subs or None
        )

    def union_triples(self) -> Iterator[ox.Triple]:
        """Every triple of the union, each once, in the store's index order (which depends only
        on the content: the same store gives the same order)."""
        return iter(self._union())

    def write_union(
        self, out: IO[bytes], fmt: ox.RdfFormat, prefixes: dict[str, str] | None = None
    ) -> None:
        """Serialise the union (a triples format) to ``out``, in the store's index order."""
        if prefixes is None:  # the engine serialises it itself: no Python per triple
            self._union().serialize(out, format=fmt)
        else:
            ox.serialize(self._union(), out, format=fmt, prefixes=prefixes)

    def _union(self) -> ox.QueryTriples:
        result = self.ox.query(_UNION)
        assert isinstance(result, ox.QueryTriples)
        return result

    def dump(
        self, out: IO[bytes], fmt: ox.RdfFormat, prefixes: dict[str, str] | None = None
    ) -> None:
        """The engine's own dump of every named graph (N-Quads, TriG)."""
        self.ox.dump(out, format=fmt, prefixes=prefixes)

    # --- writing --------------------------------------------------------------------------
    def load_nquads(self, data: bytes, small: int = 1 << 20) -> None:
        """Add N-Quads text (validated by hcgraph, so ``lenient``): under ``small`` bytes in
        one transaction (the bulk loader's fixed cost outweighs its speed there), else with
        the bulk loader, which releases the GIL but is not transactional (the writer repairs
        an interrupted load on the next open, :func:`hcgraph.writer.recover`)."""
        self._writable()
        if not data:
            return
        with self._written():
            if len(data) < small:
                self.ox.load(data, ox.RdfFormat.N_QUADS, lenient=True)
            else:
                self.ox.bulk_load(data, ox.RdfFormat.N_QUADS, lenient=True)

    def replace_graph(
        self, graph: str, ntriples: str, also: Mapping[str, str] | None = None
    ) -> tuple[int, int]:
        """Atomically make one graph's content hcgraph's N-Triples (escaped, validated terms
        only); ``also`` maps further graphs to N-Triples added in the same transaction.

        Only the difference is written: the graph's triples not in ``ntriples`` are deleted,
        those it lacks inserted. (A story's new version keeps every earlier version's triples:
        rewriting them all made ingesting a story's N-th version cost N versions' worth.)

        Returns:
            (triples deleted, triples inserted) in ``graph``.
        """
        others = dict(also or {})  # ``graph`` in it: added to its new content, as before
        ntriples = f"{ntriples}\n{others.pop(graph, '')}"
        with self._written():
            g = _graph_node(graph)
            new = {q.triple for q in ox.parse(ntriples, ox.RdfFormat.N_TRIPLES, lenient=True)}
            stored = {q.triple for q in self.ox.quads_for_pattern(None, None, None, g)}
            stale, added = stored - new, new - stored
            if any(map(_has_blank, stale)):  # a blank node cannot be deleted as data
                stale, added = stored, new
                update = f"DROP SILENT GRAPH {g} ;\n"
            else:
                update = (
                    f"DELETE DATA {{ GRAPH {g} {{\n{_ntriples(stale)}}} }} ;\n" if stale else ""
                )
            graphs = {graph: _ntriples(added)} if added else {}
            graphs.update(others)
            if graphs:
                text = "".join(f"GRAPH <{name}> {{\n{nt}}}\n" for name, nt in graphs.items())
                update += f"INSERT DATA {{ {text}}}"
            if update:
                self.ox.update(update.removesuffix(" ;\n"))
            return len(stale), len(added)

    def replace_graphs(self, graphs: Mapping[str, str]) -> None:
        """Replace several graphs' content (an empty body drops its graph) with one N-Quads
        load; not atomic (for graphs a caller can write again)."""
        if not graphs:
            return
        with self._written():
            for name in graphs:
                self.ox.remove_graph(ox.NamedNode(name))
        self.load_nquads("".join(in_graph(g, nt) for g, nt in graphs.items()).encode())

    def remove_graph(self, graph: str) -> None:
        """Drop one named graph."""
        with self._written():
            self.ox.remove_graph(ox.NamedNode(graph))

    def set_subject(self, graph: str, subject: str, ntriples: str) -> None:
        """Make ``ntriples`` the only triples about ``subject`` (an IRI) in ``graph``."""
        g, s = ox.NamedNode(graph), ox.NamedNode(subject)
        with self._written():
            for quad in list(self.ox.quads_for_pattern(s, None, None, g)):
                self.ox.remove(quad)
            if ntriples:
                self.ox.load(ntriples.encode(), ox.RdfFormat.N_TRIPLES, to_graph=g)

    def optimize(self) -> None:
        """Compact the on-disk database and record that it is (:meth:`compaction_due`)."""
        self._writable()
        if self.directory is not None:
            with self._written():
                self.ox.flush()  # else the memtable becomes a new table after it, on close
                self.ox.optimize()
            _write_marker(self.directory, self.db_path)

    def check_room(self, need: int, what: str) -> None:
        """Refuse a write of about ``need`` bytes that would leave less than
        :func:`disk_reserve` free: stopping before the disk is full keeps every story stored.

        Raises:
            StoreDiskError: not enough free space.
        """
        if self.directory is None or self.read_only:
            return
        try:
            free = shutil.disk_usage(self.directory).free
        except OSError:
            return  # not measurable here: the write itself reports a full disk
        reserve = disk_reserve()
        if free < need + reserve:
            raise StoreDiskError(
                f"{self.directory}: not enough free disk space for {what}: {free:,} bytes "
                f"free, they need about {need:,} plus the {reserve:,} bytes kept free "
                "(HCGRAPH_DISK_RESERVE); stopped before writing them, the stories already "
                "stored are kept"
            )

    def tables(self) -> tuple[int, int]:
        """(Bytes in the database's table files, bytes in those written since the last
        :meth:`optimize` on this database)."""
        if self.directory is None:
            return 0, 0
        marker = _read_marker(self.directory, self.db_path)
        total = fresh = 0
        with contextlib.suppress(OSError), os.scandir(self.db_path) as entries:
            for entry in entries:
                if not entry.name.endswith(".sst") or not entry.name[:-4].isdigit():
                    continue
                with contextlib.suppress(OSError):  # a compaction deleted it meanwhile
                    size = entry.stat().st_size
                    total += size
                    if int(entry.name[:-4]) > marker:  # file numbers only grow
                        fresh += size
        return total, fresh

    def compaction_due(self) -> bool:
        """True if the database is worth compacting now (docs/performance.md): its tables hold
        at least :data:`COMPACT_MIN_BYTES`, of which at least :data:`COMPACT_SHARE` were written
        since the last :meth:`optimize`, and the disk has room for the rewrite."""
        if self.directory is None or self.read_only:
            return False
        total, fresh = self.tables()
        if total < COMPACT_MIN_BYTES or fresh < COMPACT_SHARE * total:
            return False
        try:
            free = shutil.disk_usage(self.db_path).free
        except OSError:
            return False
        return free >= total + disk_reserve()  # the rewrite holds old and new tables a while

    @contextlib.contextmanager
    def _written(self) -> Iterator[None]:
        """Refuse a read-only store; a write error as StoreDiskError (``OSError``) or
        StoreError (refused data). Writes of several threads take turns: a write that reads
        first (:meth:`replace_graph`'s difference) sees no other write land before its own."""
        self._writable()
        try:
            with self._write_lock:
                yield
        except OSError as exc:
            raise StoreDiskError(f"{self.directory}: write failed: {first_line(exc)}") from exc
        except SyntaxError as exc:
            raise StoreError(f"{self.directory}: write failed: {first_line(exc)}") from exc

    def _writable(self) -> None:
        if self.read_only:
            raise StoreError(f"{self.directory}: store opened read-only")


def read_format(directory: Path) -> int | None:
    """The format ``directory/format.json`` names (None: no marker), checked to be
    :data:`STORE_FORMAT`.

    Raises:
        StoreFormatError: another format, or a marker that names none.
    """
    path = directory / _FORMAT_FILE
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the store format: {first_line(exc)}") from None
    try:
        value = json.loads(text).get("format")
    except (ValueError, AttributeError):
        value = None
    if type(value) is not int:
        raise StoreFormatError(f"{directory}: unknown store format in {path.name}; {_REBUILD}")
    if value > STORE_FORMAT:  # a rebuild would turn it into this older format: upgrade
        raise StoreFormatError(
            f"{directory}: store format {value}, written by a newer hcgraph; this hcgraph"
            f" reads format {STORE_FORMAT} only: upgrade hcgraph (pip install -U hcgraph)"
            " to use this store"
        )
    if value != STORE_FORMAT:
        raise StoreFormatError(
            f"{directory}: store format {value} (an older one); this hcgraph reads format "
            f"{STORE_FORMAT} only: {_REBUILD}"
        )
    return value


def _this_command() -> str:
    """What this process is, for a second writer: ``hcgraph ingest``, else the program."""
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    if not program or program.startswith("-"):  # python -c, an interactive interpreter
        return "python"
    if program == "hcgraph" or Path(sys.argv[0]).parts[-2:] == ("hcgraph", "__main__.py"):
        command = next((a for a in sys.argv[1:] if not a.startswith("-")), "")
        return f"hcgraph {command}".strip()
    return program


def _identity(db_path: Path) -> str:
    """The database's identity (RocksDB's ``IDENTITY``: new for every new database)."""
    try:
        return (db_path / "IDENTITY").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _write_marker(directory: Path, db_path: Path) -> None:
    """Record in ``compacted.json`` the highest table file number of a database just
    compacted (best effort)."""
    numbers = [int(p.stem) for p in db_path.glob("*.sst") if p.stem.isdigit()]
    marker = {"identity": _identity(db_path), "table": max(numbers, default=0)}
    with contextlib.suppress(OutputError):
        write_atomic(directory / _MARKER, json.dumps(marker).encode(), durable=False)


def _read_marker(directory: Path, db_path: Path) -> int:
    """The highest table file number at the last compaction of this database (0: never)."""
    try:
        marker = json.loads((directory / _MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    if not isinstance(marker, dict) or marker.get("identity") != _identity(db_path):
        return 0  # another database (rebuilt, replaced): its numbers mean nothing here
    table = marker.get("table")
    return table if isinstance(table, int) else 0


def _claim(directory: Path, command: str) -> Path | None:
    """Record in ``writer.json`` that this process holds the store (best effort)."""
    path = directory / "writer.json"
    claim = json.dumps({"pid": os.getpid(), "command": command}).encode()
    try:
        write_atomic(path, claim, durable=False)
    except OutputError:
        return None
    return path


def _unclaim(path: Path | None) -> None:
    """Remove the ``writer.json`` this process wrote (not one a later writer wrote)."""
    if path is not None and _holder(path)[0] == os.getpid():
        with contextlib.suppress(OSError):
            path.unlink()


def _holder(path: Path) -> tuple[int | None, object]:
    """The pid (None: unreadable) and command a ``writer.json`` records."""
    try:
        claim = json.loads(path.read_text(encoding="utf-8"))
        pid, command = claim.get("pid"), claim.get("command")
    except (OSError, ValueError, AttributeError):
        return None, None
    return (pid if isinstance(pid, int) else None), command


def holder_of(directory: Path) -> str | None:
    """What live process holds ``directory``'s store for writing (``hcgraph crawl, pid 123``),
    if it recorded itself; else ``None``."""
    pid, command = _holder(directory / "writer.json")
    if pid is None:
        return None
    try:
        os.kill(pid, 0)  # signal 0: only "does it exist?"
    except ProcessLookupError:
        return None  # a writer that died: its file is stale
    except OSError:
        pass  # exists, another user's
    label = command if isinstance(command, str) and command else "a process"
    return f"{visible(label)}, pid {pid}"


def _busy(directory: Path) -> StoreBusyError:
    holder = holder_of(directory)
    who = f"by {holder}" if holder else "by another process (it holds the store's write lock)"
    return StoreBusyError(
        f"{directory}: the store is in use {who}; wait for it to finish, or stop it",
        holder,
    )


def _open(directory: Path, db_path: Path, read_only: bool) -> ox.Store:
    """Open the database in ``db_path`` (created unless ``read_only``)."""
    try:
        if not read_only:
            db_path.mkdir(parents=True, exist_ok=True)
            return ox.Store(str(db_path))
        if not db_path.exists():
            raise StoreError(f"{directory}: no store here (run 'hcgraph ingest' first)")
        return ox.Store.read_only(str(db_path))
    except OSError as exc:
        if "LOCK" in str(exc):  # RocksDB's "While lock file: …/LOCK": another writer
            raise _busy(directory) from None
        raise StoreError(f"{directory}: cannot open the store: {first_line(exc)}") from exc
    except RuntimeError as exc:  # the engine's "Corruption: …" (an overwritten CURRENT)
        raise damage_error(directory, exc) from None


def _graph_node(iri: str) -> ox.NamedNode:
    """``iri`` as a node; not an IRI: a SyntaxError, as the engine's parser raised for it."""
    try:
        return ox.NamedNode(iri)
    except ValueError as exc:
        raise SyntaxError(f"not an IRI: {exc}") from None


def _has_blank(term: ox.Triple) -> bool:
    """True if the triple holds a blank node, also inside a triple term."""
    return any(
        isinstance(t, ox.BlankNode) or (isinstance(t, ox.Triple) and _has_blank(t))
        for t in (term.subject, term.object)
    )


def _ntriples(triples: Iterable[ox.Triple]) -> str:
    """Triples as (canonical) N-Triples text."""
    return (ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES) or b"").decode()


def _value(term: _Term) -> str:
    """The lexical value of a term (a quoted triple has none: empty string)."""
    return "" if isinstance(term, ox.Triple) else term.value


def _time(term: _Term) -> dt.datetime:
    return dt.datetime.fromisoformat(_value(term))
