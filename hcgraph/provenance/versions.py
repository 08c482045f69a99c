"""``history``: how did a story change?

Versions come from the raw archive (every fetch; a ``304`` re-confirms the body it names) and
the graph (the raw document's ``prov:wasRevisionOf`` chain), merged by SHA-256 in order (a
story that goes back to earlier bytes has that version again, later: a revert); withdrawals
from ``prov:invalidatedAtTime`` and two 404/410 answers in a row. :func:`diff_stories` lists
what changed between consecutive versions, from the archived body or what the graph kept
(:mod:`hcgraph.version_content`).
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import pyoxigraph as ox

from ..archive import Archive
from ..errors import HcgraphError, ProvenanceError
from ..errors import one_line as _v
from ..iris import named_node
from ..mdtext import md_cell, md_code, md_text, md_url
from ..model import Story, parse_story
from ..store import Store
from ..version_content import Content, from_graph, from_story
from ._graph import rows

__all__ = [
    "Change",
    "History",
    "Version",
    "diff_content",
    "diff_stories",
    "history",
    "render_markdown",
    "render_table",
]

_CHAIN = """
SELECT ?story ?raw ?sha ?created ?ended ?loc ?said ?gone ?older WHERE { GRAPH ?story {
  ?story hc:rawDocument ?current .
  ?current prov:wasRevisionOf* ?raw .
  OPTIONAL { ?raw hc:sha256 ?sha }
  OPTIONAL { ?raw dcterms:created ?created }
  OPTIONAL { ?raw hc:versionContent ?said }
  OPTIONAL { ?raw prov:invalidatedAtTime ?gone }
  OPTIONAL { ?raw prov:wasRevisionOf ?older }
  OPTIONAL { ?ingest prov:used ?raw ; prov:endedAtTime ?ended .
             OPTIONAL { ?ingest hc:sourceLocation ?loc } }
} }
"""
_RAW = "https://w3id.org/hcgraph/id/raw/"
_NOT_JSON = ("changes", "content", "chain_position")  # changes are written after the rest


@dataclass
class Version:
    """One version of the story: a body, from when it came until another replaced it. A
    story that goes back to earlier bytes (a revert) has that body as a new version: two
    versions may share a ``sha256``.

    ``fetches`` counts the archive records naming its bytes (200s and 304s); ``sources``
    are where they came from (fetch URL or file); ``in_graph`` is ``current``, ``revision``
    or ``None`` (archive only); ``changes`` are from the previous version; ``withdrawn``
    lists when the story was withdrawn while this was its version, oldest first.
    """

    sha256: str
    first_seen: str | None = None
    last_seen: str | None = None
    fetches: int = 0
    sources: list[str] = field(default_factory=list)
    in_graph: str | None = None
    archived: bool = False
    changes: list[Change] = field(default_factory=list)
    withdrawn: list[str] = field(default_factory=list)
    content: Content | None = field(default=None, repr=False)
    chain_position: int = field(default=-1, repr=False)  # in the revision chain, oldest 0

    def withdrawn_at(self, when: str | None) -> None:
        """File one withdrawal (an ISO time) under this version, once."""
        if when and when not in self.withdrawn:
            insort(self.withdrawn, when)

    def fetched(self, when: str, source: str, story: Story) -> None:
        """One archived fetch of these bytes."""
        if not self.archived:
            self.content, self.archived = from_story(story), True
        self.fetches += 1
        self.first_seen = min(filter(None, [self.first_seen, when]))
        self.last_seen = max(filter(None, [self.last_seen, when]))
        self._source(source)

    def recorded(self, when: str | None, source: str | None) -> None:
        """An ingest the graph records (the archive's fetch times win where known)."""
        if when and not self.first_seen:
            self.first_seen = self.last_seen = _iso(dt.datetime.fromisoformat(when))
        self._source(source)

    def _source(self, source: str | None) -> None:
        if source and source not in self.sources:
            self.sources.append(source)

    def summary(self) -> str:
        """The changes counted by kind: ``1 paragraph edited, 2 citation added``."""
        counts = Counter(c.kind for c in self.changes)  # kinds in first-change order
        return ", ".join(f"{n} {k}" for k, n in counts.items())


@dataclass(frozen=True)
class Change:
    """One difference between two versions: ``kind`` (e.g. ``paragraph edited``), ``what``
    (a paragraph key, manifest or claim id) and details (old/new text, word diff)."""

    kind: str
    what: str
    old: str | None = None
    new: str | None = None
    diff: str | None = None


@dataclass
class History:
    """Every version of one story hcgraph has seen, oldest first; ``withdrawn_at``: when
    the story was withdrawn, while it is (None: it is current)."""

    url: str
    versions: list[Version]
    withdrawn_at: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``--format json``)."""
        versions = [
            {
                "version": i,
                **{k: x for k, x in vars(v).items() if k not in _NOT_JSON},
                "changes": [{k: x for k, x in vars(c).items() if x is not None} for c in v.changes],
            }
            for i, v in enumerate(self.versions, 1)
        ]
        return {"url": self.url, "withdrawn_at": self.withdrawn_at, "versions": versions}

    def to_json(self) -> str:
        """The history as indented JSON."""
        return json.dumps(self.as_dict(), indent=2, ensure_ascii=False)


def history(store: Store, story_url: str) -> History:
    """Every version of ``story_url`` (the story's page, not ``index.json``) from the store's
    raw archive and graph, with changes.

    Raises:
        ProvenanceError: neither the graph nor the archive knows the story.
    """
    url = story_url.strip().split("#", 1)[0].removesuffix("index.json")
    versions: list[Version] = []
    if store.directory is not None:
        versions = _from_archive(Archive(store.directory / "archive"), url)
    withdrawn_at = _from_graph(store, url, versions)
    if not versions:
        raise ProvenanceError(f"{story_url}: no version of this story in the store or archive")
    # The graph's chain is authoritative for order where it exists: newest is current.
    ordered = sorted(
        versions,
        key=lambda v: (v.in_graph == "current", v.first_seen or "", v.chain_position, v.sha256),
    )
    for prev, cur in pairwise(ordered):
        cur.changes = _compare(prev, cur)
    return History(url, ordered, withdrawn_at)


_UNKNOWN = (
    "the store holds only the SHA-256 and time of version {sha}: its body is not in the"
    " archive and its text was not kept when it was replaced"
)


def _compare(prev: Version, cur: Version) -> list[Change]:
    if prev.content is not None and cur.content is not None:
        return diff_content(prev.content, cur.content)
    unknown = prev if prev.content is None else cur
    return [Change("not compared", _UNKNOWN.format(sha=unknown.sha256[:12]))]


def _from_archive(arc: Archive, url: str) -> list[Version]:
    """A version per run of fetches of one body: bytes seen before, after others, are a
    version again (a revert)."""
    versions: list[Version] = []
    parsed: dict[str, Story | None] = {}
    gone: set[str] = set()  # fetch URLs whose last answer was 404/410
    latest: Version | None = None  # the version the last good fetch saw
    for rec in arc.records():
        if not (rec.url.startswith(url) or rec.final_url.startswith(url)):
            continue
        if rec.error is None and rec.status in (404, 410):
            if rec.url in gone and latest is not None:  # confirmed: the crawler withdrew it
                latest.withdrawn_at(_iso(rec.time))
            gone.add(rec.url)
            continue
        gone.discard(rec.url)
        if rec.sha256 and (story := _story_of(arc, rec.sha256, rec.url, url, parsed)):
            latest = _run_of(versions, latest, rec.sha256)
            latest.fetched(_iso(rec.time), rec.fetch_url, story)
    return versions


def _run_of(versions: list[Version], latest: Version | None, sha: str) -> Version:
    """The version a good fetch of ``sha`` belongs to: the latest one, or a new one."""
    if latest is None or latest.sha256 != sha:
        latest = Version(sha)
        versions.append(latest)
    return latest


def _story_of(
    arc: Archive, sha: str, fetched_from: str, url: str, parsed: dict[str, Story | None]
) -> Story | None:
    """The story of an archived body, when it is ``url``'s (each body parsed once)."""
    if sha not in parsed:
        try:
            story: Story | None = parse_story(arc.get_body(sha), fetched_from)
        except HcgraphError:
            story = None
        parsed[sha] = story if story is not None and story.url == url else None
    return parsed[sha]


def _from_graph(store: Store, url: str, versions: list[Version]) -> str | None:
    """Versions from the graph, each matched to the archive's version of its bytes (in
    order) or added; when the story is withdrawn now, since when."""
    story = named_node(url)  # None: not an IRI (a slug, a space), so not in the graph
    current = store.raw_sha256(url)
    if story is None or current is None:
        return None
    now = store.withdrawn_at(url)
    since = None if now is None else _iso(now)
    chain = _chain(store, story, current)
    runs = _Runs(versions)
    for pos, node in reversed(list(enumerate(chain))):  # newest first: current is the latest
        v = runs.take(node.sha)
        v.chain_position = pos  # ties of time: the chain decides
        if pos == len(chain) - 1:  # a store written before reverts may mark it (a loop)
            v.in_graph, gone = "current", since or node.gone
        else:
            v.in_graph, gone = "revision", node.gone
        if v.content is None:  # not archived: what the graph keeps of it
            v.content = _graph_content(store, url, v.in_graph == "current", node.said)
        for when, loc in node.ingests:
            v.recorded(when, loc)
        v.withdrawn_at(gone)
    return since


class _Runs:
    """The archive's versions, each matched to one graph version at most, newest first (a
    graph version the archive lacks, e.g. an ingested file's, is older than a crawl's)."""

    def __init__(self, versions: list[Version]) -> None:
        self.versions = versions
        self.left: dict[str, list[int]] = {}  # SHA-256 → its archived versions not matched
        for i, v in enumerate(versions):
            self.left.setdefault(v.sha256, []).append(i)
        self.last = len(versions)  # the archived version matched last

    def take(self, sha: str) -> Version:
        """The latest archived version of ``sha`` before the last one matched (else any:
        the archive may lack some); a new version when the archive has none left."""
        same = self.left.get(sha, [])
        if not same:
            self.versions.append(Version(sha))
            return self.versions[-1]
        # newest first, the match is mostly the last left: no scan of the others
        self.last = same.pop((bisect_left(same, self.last) or len(same)) - 1)
        return self.versions[self.last]


@dataclass
class _Node:
    """One raw document of the revision chain, as the graph holds it."""

    sha: str
    said: str | None = None
    gone: str | None = None
    older: str | None = None
    ingests: list[tuple[str | None, str | None]] = field(default_factory=list)  # (when, from)

    def row(self, older: str | None, when: str | None, source: str | None) -> None:
        """One solution of the chain query: the node it revised (the least, should there be
        two), and an ingest."""
        if older is not None and (self.older is None or older < self.older):
            self.older = older
        if (when, source) not in self.ingests:
            self.ingests.append((when, source))


def _chain(store: Store, story: ox.NamedNode, current: str) -> list[_Node]:
    """The raw documents of the story's revision chain from ``raw/<current>``, oldest first,
    walked as ingest walks it (``Store._revision_nodes``) over one query's nodes (a revert's
    bytes come back on a node of their own; a loop, from before that, ends the walk). A store
    written before reverts may hide a branch behind its loop: each SHA off the walk comes
    first, once, as that code listed it."""
    nodes = _nodes(store, story)

    def older(node: ox.NamedNode) -> ox.NamedNode | None:
        """What ``node`` revised; a blank node or a literal (no IRI) ends the walk, as it
        ends ingest's."""
        return named_node(nodes[node.value].older or "") if node.value in nodes else None

    walk = [
        nodes[n.value] for n in store._revision_nodes(story, current, older) if n.value in nodes
    ]
    off: dict[str, _Node] = {}
    walked = {n.sha for n in walk}
    for _iri, node in sorted(nodes.items()):
        if node.sha not in walked:
            off.setdefault(node.sha, node)
    return [*off.values(), *walk[::-1]]


def _nodes(store: Store, story: ox.NamedNode) -> dict[str, _Node]:
    """The story's raw documents by IRI: SHA-256, kept text, withdrawal, the one it revised
    and when and from where it was ingested."""
    nodes: dict[str, _Node] = {}
    for raw, sha, created, ended, loc, said, gone, older in rows(store, _CHAIN, story=story):
        if raw is None or not (sha := sha or raw.removeprefix(_RAW)):
            continue
        withdrawn = gone and _iso(dt.datetime.fromisoformat(gone))
        nodes.setdefault(raw, _Node(sha, said, withdrawn)).row(older, ended or created, loc)
    return nodes


def _graph_content(store: Store, url: str, current: bool, said: str | None) -> Content | None:
    """What the graph keeps of a version: the story graph, or the text kept on a revision."""
    if current:
        return from_graph(store, url)
    return Content.from_json(said) if said else None


def _iso(value: dt.datetime) -> str:
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def word_diff(old: str, new: str) -> str:
    """``[-removed-]{+added+}`` word diff of two texts."""
    a, b = old.split(), new.split()
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.extend(a[i1:i2])
            continue
        if i2 > i1:
            out.append("[-" + " ".join(a[i1:i2]) + "-]")
        if j2 > j1:
            out.append("{+" + " ".join(b[j1:j2]) + "+}")
    return " ".join(out)


def diff_stories(old: Story, new: Story) -> list[Change]:
    """What changed from ``old`` to ``new`` (:func:`diff_content` of their contents)."""
    return diff_content(from_story(old), from_story(new))


def diff_content(old: Content, new: Content) -> list[Change]:
    """What changed from one version's :class:`~hcgraph.version_content.Content` to the next:
    headline and dek (word diffs), paragraphs edited, removed and added, citations and
    sources added and removed, corrections added."""
    return [
        *_diff_text(old, new),
        *_diff_paragraphs(old.paragraphs, new.paragraphs),
        *_diff_sources(old, new),
        *_diff_corrections(old, new),
    ]


def _diff_text(old: Content, new: Content) -> list[Change]:
    """Headline and dek changes, word by word."""
    texts = (("headline", old.headline, new.headline), ("dek", old.dek, new.dek))
    return [
        Change(f"{name} changed", name, a, b, word_diff(a, b)) for name, a, b in texts if a != b
    ]


def _diff_paragraphs(a: Sequence[tuple[str, str]], b: Sequence[tuple[str, str]]) -> list[Change]:
    """Paragraphs edited (aligned by text), removed and added."""
    changes: list[Change] = []
    matcher = difflib.SequenceMatcher(None, [t for _, t in a], [t for _, t in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        olds, news = a[i1:i2], b[j1:j2]
        if op == "replace":
            for (_, ta), (kb, tb) in zip(olds, news, strict=False):
                changes.append(Change("paragraph edited", kb, ta, tb, word_diff(ta, tb)))
            olds, news = olds[len(news) :], news[len(olds) :]
        changes += [Change("paragraph removed", k, t, None) for k, t in olds]
        changes += [Change("paragraph added", k, None, t) for k, t in news]
    return changes


def _diff_sources(old: Content, new: Content) -> list[Change]:
    """Citations and sources added or removed."""
    ca, cb = old.citations, new.citations
    ma, mb = dict(old.sources), dict(new.sources)
    return [
        *(Change("citation added", f"{m}/{c}") for m, c in sorted(cb - ca)),
        *(Change("citation removed", f"{m}/{c}") for m, c in sorted(ca - cb)),
        *(Change("source added", m, None, mb[m] or None) for m in sorted(mb.keys() - ma.keys())),
        *(Change("source removed", m, ma[m] or None, None) for m in sorted(ma.keys() - mb.keys())),
    ]


def _diff_corrections(old: Content, new: Content) -> list[Change]:
    seen = set(old.corrections)
    return [
        Change("correction added", date or "-", None, text or None)
        for date, text in new.corrections
        if (date, text) not in seen
    ]


_COLUMNS = ("#", "first seen", "last seen", "sha256", "fetches", "in graph", "withdrawn", "changes")
_RIGHT = ("#", "fetches")
_NO_WRAP = ("#", "sha256", "fetches")


def _rows(h: History, when: Callable[[str | None], str]) -> Iterator[list[str]]:
    """The versions table's cells (unescaped), times written by ``when``."""
    for i, v in enumerate(h.versions, 1):
        withdrawn = ", ".join(when(w) for w in v.withdrawn) or "-"
        seen = [when(v.first_seen), when(v.last_seen)]
        state = [v.sha256[:12], str(v.fetches), v.in_graph or "archive only"]
        yield [str(i), *seen, *state, withdrawn, v.summary()]


def _describe(c: Change, code: Callable[[str], str], text: Callable[[str], str]) -> str:
    """One change as ``kind what: detail``, through a view's escapes."""
    if c.kind == "not compared":
        return f"not compared: {text(c.what)}"
    detail = c.diff or c.new or c.old or ""
    return f"{c.kind} {code(c.what)}" + (f": {text(detail)}" if detail else "")


def render_table(h: History) -> list[Any]:
    """Rich renderables for a terminal: the versions as a table, then each version's changes
    from the one before; the story's text escaped (:func:`~hcgraph.errors.visible`)."""
    from rich.table import Column, Table
    from rich.text import Text

    columns = [
        Column(c, justify="right" if c in _RIGHT else "left", no_wrap=c in _NO_WRAP)
        for c in _COLUMNS
    ]
    table = Table(*columns, title=Text(f"history of {_v(h.url)}"))
    for row in _rows(h, _short):
        table.add_row(*(Text(_v(cell)) for cell in row))
    out: list[Any] = [table]
    if h.withdrawn_at:
        out.append(Text(f"withdrawn since {_short(h.withdrawn_at)} (its URL answered "
                        "404/410; the graph is kept)", style="bold"))  # fmt: skip
    for i, v in enumerate(h.versions, 1):
        if v.changes:
            out.append(Text(f"version {i - 1} -> {i}", style="bold"))
            out += [Text("  " + _describe(c, _v, _v)) for c in v.changes]
    return out


def _short(when: str | None) -> str:
    """An ISO time to the second, for the table (JSON keeps the full precision)."""
    return when[:19].replace("T", " ") if when else "-"


def render_markdown(h: History) -> str:
    """The history as Markdown: the versions table, then each version's changes; the
    story's text escaped for Markdown (:mod:`hcgraph.mdtext`)."""
    align = ("---:" if col in _RIGHT else "---" for col in _COLUMNS)
    lines = [
        f"# History of {md_url(h.url)}",
        "",
        f"| {' | '.join(_COLUMNS)} |",
        f"| {' | '.join(align)} |",
    ]
    lines += [f"| {' | '.join(map(md_cell, row))} |" for row in _rows(h, lambda w: w or "-")]
    if h.withdrawn_at:
        lines += ["", f"Withdrawn since {h.withdrawn_at} (its URL answered 404/410)."]
    for i, v in enumerate(h.versions, 1):
        if v.changes:
            lines += ["", f"## Version {i - 1} → {i}", ""]
            lines += [f"- {_describe(c, md_code, md_text)}" for c in v.changes]
    return "\n".join(lines) + "\n"
