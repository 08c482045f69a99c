"""What the citation maps read from the store: SPARQL queries and loaders of typed records.

Every count comes from here, over the whole store before any folding: a manifest's is the
number of distinct stories citing it (``hc:citesManifest``), a publisher's (its *reach*) the
number citing any of its manifests. A story is read from its own graph, the rest from the union.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import networkx as nx
import pyoxigraph as ox

from ..store import Store
from ..vocab import SUPPORT_GRAPHS

__all__ = [
    "HC",
    "Citations",
    "ManifestRec",
    "PublisherRec",
    "ReuseData",
    "StoryRec",
    "load_citations",
    "load_reuse",
    "load_story_record",
    "nodes_of",
    "short",
]

HC = "https://w3id.org/hcgraph/ns#"
LABEL = 48

Q_STORIES = """
SELECT ?s ?id ?headline ?date ?slug ?room WHERE { GRAPH ?s {
  ?s a hc:Story .
  OPTIONAL { ?s dcterms:identifier ?id }
  OPTIONAL { ?s schema:headline ?headline }
  OPTIONAL { ?s schema:datePublished ?date }
  OPTIONAL { ?s hc:slug ?slug }
}
  OPTIONAL { GRAPH ?s { ?s hc:newsroom ?r }
             OPTIONAL { ?r dcterms:identifier ?rid } OPTIONAL { ?r schema:name ?rname } }
  BIND(COALESCE(?rid, ?rname, STR(?r)) AS ?room)
}
"""
#: Per (story, manifest): the distinct claims the story cites under that manifest.
Q_CLAIMS = """
SELECT ?s ?m (COUNT(DISTINCT ?claim) AS ?n)
WHERE { GRAPH ?s { ?c hc:citesClaim ?claim ; cito:hasCitedEntity ?m } }
GROUP BY ?s ?m
"""
#: Every (story, manifest it cites): the basis of every count on every map.
Q_CITES = "SELECT ?s ?m WHERE { GRAPH ?s { ?s hc:citesManifest ?m } }"
#: Every (story, manifest it lists or cites): the stories a manifest is on the maps for.
Q_REFERS = """
SELECT ?s ?m WHERE { GRAPH ?s { { ?s hc:listsManifest ?m } UNION { ?s hc:citesManifest ?m } } }
"""
Q_STORY_IRIS = "SELECT ?s WHERE { GRAPH ?s { ?s a hc:Story } }"
Q_PUBLISHED_BY = "SELECT ?s ?o WHERE { ?s dcterms:publisher ?o . ?s a hc:Manifest }"

#: The manifests one story lists or cites (its own graph), described from the shared graph.
Q_STORY_MANIFESTS = """
SELECT DISTINCT ?s ?m ?id ?title ?pub ?pubname ?doc ?url ?issued WHERE {
  GRAPH ?s { { ?s hc:listsManifest ?m } UNION { ?s hc:citesManifest ?m } }
  ?m a hc:Manifest .
  OPTIONAL { ?m dcterms:identifier ?id }
  OPTIONAL { ?m dcterms:title ?title }
  OPTIONAL { ?m dcterms:publisher ?pub OPTIONAL { ?pub schema:name ?pubname } }
  OPTIONAL { ?m prov:hadPrimarySource ?doc
             OPTIONAL { ?doc schema:url ?url } OPTIONAL { ?doc dcterms:issued ?issued } }
}
"""
Q_STORY_PARTS = """
SELECT ?s ?part ?type ?parent ?pos ?name ?text WHERE { GRAPH ?s {
  ?part dcterms:isPartOf ?parent ; a ?type .
  FILTER(?type IN (hc:Section, hc:Paragraph, hc:KeyFact))
  OPTIONAL { ?part schema:position ?pos }
  OPTIONAL { ?part schema:name ?name }
  OPTIONAL { ?part schema:text ?text }
} }
"""
Q_STORY_CITES = """
SELECT ?s ?part ?m ?c ?claim ?cid WHERE {
  GRAPH ?s { ?c a hc:Citation ; cito:hasCitingEntity ?part ; cito:hasCitedEntity ?m . }
  OPTIONAL { GRAPH ?s { ?c hc:citesClaim ?claim } OPTIONAL { ?claim dcterms:identifier ?cid } }
}
"""
#: Per story: its paragraphs and key facts, and those cited (5x faster than FILTER NOT EXISTS).
Q_PARTS = """
SELECT ?s (COUNT(?part) AS ?n)
WHERE { GRAPH ?s { { ?part a hc:Paragraph } UNION { ?part a hc:KeyFact } } }
GROUP BY ?s
"""
Q_CITED_PARTS = """
SELECT ?s (COUNT(DISTINCT ?part) AS ?n) WHERE { GRAPH ?s { ?c cito:hasCitingEntity ?part } }
GROUP BY ?s
"""
#: Per story: the (passage, claim) pairs its support graph finds unsupported.
Q_UNSUPPORTED = f"""
SELECT ?g (COUNT(?v) AS ?n) WHERE {{ GRAPH ?g {{ ?v hc:supportStatus "unsupported" }}
  FILTER STRSTARTS(STR(?g), "{SUPPORT_GRAPHS}") }} GROUP BY ?g
"""
Q_SOME_STORIES = "SELECT ?s ?slug WHERE { GRAPH ?s { ?s a hc:Story ; hc:slug ?slug } } LIMIT 3"


def value(solution: Any, name: str) -> str:
    """A solution's value for ``name`` as text ("" when unbound)."""
    term = solution[name]
    return "" if term is None else str(term.value)


def short(text: str, limit: int = LABEL) -> str:
    """One line of at most ``limit`` characters (an ellipsis marks a cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def nodes_of(graph: nx.DiGraph, kind: str) -> list[str]:
    """A map graph's nodes of type ``kind``, sorted."""
    return sorted(n for n, a in graph.nodes(data=True) if a["type"] == kind)


def index_of(items: Iterable[str]) -> dict[str, int]:
    """Each item → its position (the index a page's rows refer to it by)."""
    return {item: k for k, item in enumerate(items)}


def part_order(iri: str) -> tuple[int, ...]:
    """``…#s2-p10`` → (0, 2, 10); key facts ``…#kf3`` → (1, 3): document order."""
    frag = iri.rsplit("#", 1)[-1]
    return (1 if frag.startswith("kf") else 0, *map(int, re.findall(r"\d+", frag)))


def day(text: str) -> str:
    """``YYYY-MM-DD`` from an ``xsd:date`` or ``xsd:dateTime`` lexical form."""
    return text[:10]


@dataclass
class StoryRec:
    """A story: IRI (its canonical URL), id, headline, date and newsroom ("" if none)."""

    iri: str
    id: str
    title: str
    label: str
    date: str
    newsroom: str

    def attrs(self) -> dict[str, Any]:
        """The node attributes of the story in a map (one story stands for itself)."""
        return {"type": "Story", "iri": self.iri, "id": self.id, "title": self.title,
                "label": self.label, "date": self.date, "url": self.iri,
                "newsrooms": (self.newsroom,) if self.newsroom else (), "stories": 1}  # fmt: skip


@dataclass
class ManifestRec:
    """A manifest and its source document (``doc``: IRI, ``url``, ``date`` issued)."""

    iri: str
    id: str
    title: str
    date: str = ""
    url: str = ""
    doc: str = ""

    def attrs(self, stories: int) -> dict[str, Any]:
        """Node attributes; ``stories`` is the number of distinct stories citing it."""
        label = short(self.title or f"manifest {self.id or self.iri.rsplit('/', 1)[-1]}")
        return {"type": "Manifest", "iri": self.iri, "id": self.id, "title": self.title,
                "label": label, "date": self.date, "url": self.url,
                "stories": stories}  # fmt: skip


@dataclass
class PublisherRec:
    """A publisher (``source_name``) and its IRI."""

    iri: str
    name: str

    def attrs(self, reach: int) -> dict[str, Any]:
        """Node attributes; ``reach`` is the number of stories citing any of its manifests."""
        return {"type": "Publisher", "iri": self.iri, "id": self.name, "title": self.name,
                "label": short(self.name), "date": "", "url": "", "stories": reach}  # fmt: skip


@dataclass
class Citations:
    """Who cites what, over the whole store: the source of every count on every map."""

    citers: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    published_by: set[tuple[str, str]] = field(default_factory=set)

    def manifest_count(self, manifest: str) -> int:
        """Distinct stories citing ``manifest``."""
        return len(self.citers.get(manifest, ()))

    def reach(self) -> dict[str, int]:
        """Publisher IRI → distinct stories citing at least one of its manifests."""
        stories: dict[str, set[str]] = defaultdict(set)
        for m, p in self.published_by:
            stories[p] |= self.citers.get(m, set())
        return {p: len(s) for p, s in stories.items()}


@dataclass
class ReuseData:
    """Stories, manifests, publishers and the weighted story → manifest citations."""

    stories: dict[str, StoryRec] = field(default_factory=dict)
    manifests: dict[str, ManifestRec] = field(default_factory=dict)
    publishers: dict[str, PublisherRec] = field(default_factory=dict)
    #: (story, manifest) → distinct claims the story cites from it (0: cites without ids).
    cites: dict[tuple[str, str], int] = field(default_factory=dict)
    published_by: set[tuple[str, str]] = field(default_factory=set)
    #: story → its paragraphs and key facts citing nothing (stories with none are absent).
    uncited: dict[str, int] = field(default_factory=dict)
    #: story → its (passage, claim) pairs the support check found unsupported (none: absent).
    unsupported: dict[str, int] = field(default_factory=dict)

    def citations(self) -> Citations:
        """The whole-store citation index (call before folding anything away)."""
        out = Citations(published_by=set(self.published_by))
        for s, m in self.cites:
            out.citers[m].add(s)
        return out

    def keep_manifests(self, keep: set[str]) -> None:
        """Drop every manifest not in ``keep``, its citations and the publishers left with
        no manifest."""
        self.cites = {k: v for k, v in self.cites.items() if k[1] in keep}
        self.manifests = {k: v for k, v in self.manifests.items() if k in keep}
        self.published_by = {(m, p) for m, p in self.published_by if m in keep}
        used = {p for _m, p in self.published_by}
        self.publishers = {p: v for p, v in self.publishers.items() if p in used}


def _pairs(store: Store, predicate: str, cls: str = "") -> dict[str, str]:
    """Subject (of class ``cls``, if given: a smaller scan) → its smallest object for one
    predicate over the union graph; one index scan each, joined in Python (linear)."""
    typed = f"a {cls} ; " if cls else ""
    out: dict[str, str] = {}
    for sol in store.query(f"SELECT ?s ?o WHERE {{ ?s {typed}{predicate} ?o }}"):
        s, o = sol["s"].value, sol["o"].value
        if s not in out or o < out[s]:
            out[s] = o
    return out


def load_publishers(store: Store, data: ReuseData) -> None:
    """Every manifest → publisher link and the publishers' names into ``data``."""
    names = _pairs(store, "schema:name", "hc:Publisher")
    for sol in store.query(Q_PUBLISHED_BY):
        m, pub = sol["s"].value, sol["o"].value
        if pub not in data.publishers:
            data.publishers[pub] = PublisherRec(pub, names.get(pub) or pub.rsplit("/", 1)[-1])
        data.published_by.add((m, pub))


def _story_iris(store: Store, gone: set[str]) -> list[str]:
    """The stories a map draws: every one but the withdrawn stories ``gone``."""
    return sorted({sol["s"].value for sol in store.query(Q_STORY_IRIS)} - gone)


def _leave_out_withdrawn_only(store: Store, data: ReuseData, gone: set[str]) -> None:
    """Drop the manifests only the withdrawn stories ``gone`` list or cite (and publishers
    left with none): the map the store would draw without them."""
    current: set[str] = set()
    withdrawn_only: set[str] = set()
    for sol in store.query(Q_REFERS):
        (withdrawn_only if sol["s"].value in gone else current).add(sol["m"].value)
    drop = withdrawn_only - current
    if drop:
        data.keep_manifests(set(data.manifests) - drop)


def load_reuse(store: Store, *, claims: bool = True, include_withdrawn: bool = False) -> ReuseData:
    """Stories, manifests, publishers and weighted story → manifest edges (withdrawn stories
    and what only they cite left out unless ``include_withdrawn``); ``claims=False`` skips
    the costliest query, the claims per (story, manifest)."""
    data = ReuseData()
    gone = set() if include_withdrawn else set(store.withdrawn_stories())
    ident = _pairs(store, "dcterms:identifier")
    _load_stories(store, data, ident, _story_iris(store, gone))
    _load_manifests(store, data, ident)
    load_publishers(store, data)
    for sol in store.query(Q_CITES):
        data.cites[(sol["s"].value, sol["m"].value)] = 0
    for sol in store.query(Q_CLAIMS) if claims else ():
        data.cites[(sol["s"].value, sol["m"].value)] = int(sol["n"].value)
    data.cites = {k: v for k, v in data.cites.items() if k[0] in data.stories}
    if gone:  # only then: a store without withdrawals draws exactly what it did
        _leave_out_withdrawn_only(store, data, gone)
    _load_marks(store, data)
    return data


def _load_stories(store: Store, data: ReuseData, ident: dict[str, str], iris: list[str]) -> None:
    """The records of the stories ``iris``."""
    headline = _pairs(store, "schema:headline")
    date = _pairs(store, "schema:datePublished")
    room_of = _pairs(store, "hc:newsroom")
    # The slug labels only a story without a headline: skip its scan when none lacks one.
    slug = _pairs(store, "hc:slug") if any(i not in headline for i in iris) else {}
    for iri in iris:
        room = room_of.get(iri, "")
        title = headline.get(iri, "")
        data.stories[iri] = StoryRec(
            iri, ident.get(iri, ""), title, short(title or slug.get(iri, "") or iri),
            day(date.get(iri, "")), ident.get(room, room),
        )  # fmt: skip


def _load_manifests(store: Store, data: ReuseData, ident: dict[str, str]) -> None:
    """Every manifest's record, with its source document's URL and date."""
    titles = _pairs(store, "dcterms:title")
    source = _pairs(store, "prov:hadPrimarySource")
    url = _pairs(store, "schema:url", "hc:SourceDocument")
    issued = _pairs(store, "dcterms:issued")
    for sol in store.query("SELECT ?x WHERE { ?x a hc:Manifest }"):
        iri = sol["x"].value
        doc = source.get(iri, "")
        data.manifests[iri] = ManifestRec(
            iri, ident.get(iri, ""), titles.get(iri, ""), day(issued.get(doc, "")),
            url.get(doc, ""), doc,
        )  # fmt: skip


def _load_marks(store: Store, data: ReuseData) -> None:
    """Each story's uncited paragraphs and key facts, and its unsupported (part, claim) pairs."""
    cited = {sol["s"].value: int(sol["n"].value) for sol in store.query(Q_CITED_PARTS)}
    for sol in store.query(Q_PARTS):
        s = sol["s"].value
        left = int(sol["n"].value) - cited.get(s, 0)
        if s in data.stories and left > 0:
            data.uncited[s] = left
    for sol in store.query(Q_UNSUPPORTED):
        story = unquote(sol["g"].value[len(SUPPORT_GRAPHS) :])
        if story in data.stories:
            data.unsupported[story] = int(sol["n"].value)


def load_citations(store: Store, *, include_withdrawn: bool = False) -> Citations:
    """The whole-store citation index alone (withdrawn stories left out unless asked)."""
    out = Citations()
    gone = set() if include_withdrawn else set(store.withdrawn_stories())
    stories = set(_story_iris(store, gone))
    for sol in store.query(Q_CITES):
        s = sol["s"].value
        if s in stories:
            out.citers[sol["m"].value].add(s)
    for sol in store.query(Q_PUBLISHED_BY):
        out.published_by.add((sol["s"].value, sol["o"].value))
    return out


def load_story_record(store: Store, s: ox.NamedNode) -> StoryRec | None:
    """One story's record, or None when ``s`` is not a story in the store."""
    for sol in store.query(Q_STORIES, bindings={"s": s}):
        headline = value(sol, "headline")
        return StoryRec(
            s.value, value(sol, "id"), headline,
            short(headline or value(sol, "slug") or s.value), day(value(sol, "date")),
            value(sol, "room"),
        )  # fmt: skip
    return None


def load_story_manifests(store: Store, s: ox.NamedNode, data: ReuseData) -> None:
    """The manifests one story lists or cites, and their publishers, into ``data``."""
    for sol in store.query(Q_STORY_MANIFESTS, bindings={"s": s}):
        iri = sol["m"].value
        rec = data.manifests.get(iri)
        if rec is None:
            data.manifests[iri] = ManifestRec(
                iri, value(sol, "id"), value(sol, "title"), day(value(sol, "issued")),
                value(sol, "url"), value(sol, "doc"),
            )  # fmt: skip
        else:
            # A second source document / title for the same manifest id: keep the first.
            rec.title = rec.title or value(sol, "title")
            rec.url = rec.url or value(sol, "url")
            rec.date = rec.date or day(value(sol, "issued"))
        pub = value(sol, "pub")
        if pub:
            name = value(sol, "pubname") or pub.rsplit("/", 1)[-1]
            data.publishers.setdefault(pub, PublisherRec(pub, name))
            data.published_by.add((iri, pub))
