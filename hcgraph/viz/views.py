"""The networkx projections behind the citation maps: one function per view.

``citation_graph(store, view, focus)`` returns a ``networkx.DiGraph`` whose edges run in the
provenance direction, from the citing thing to what it draws on (story → manifest →
publisher; paragraph → claim → manifest → source document → publisher). Views are built
with SPARQL aggregation over the store (``GROUP BY`` in Oxigraph), not by walking triples in
Python, so the reuse map of 10k stories takes about a second.

Views (registry ``VIEWS``):

``story``      one story's citation map: story → sections → paragraphs / key facts →
               claims → manifests → source documents → publishers (focus: the story).
``reuse``      the source-reuse map: stories → manifests → publishers, paragraphs and claims
               folded into weighted edges; a focus story / manifest / publisher keeps only
               its neighbourhood (the focus, its manifests, every story citing them).
``publisher``  one publisher (focus), every manifest it published and every story citing
               those manifests.
``all``        every typed node of the graph (``hcgraph.project.to_networkx`` collapsed to
               a DiGraph); refuses past ``max_nodes``; a focus keeps nodes within 2 hops.

Node attributes (every view):

``type``        ``Story``, ``StoryGroup``, ``Section``, ``Paragraph``, ``KeyFact``,
                ``Claim``, ``Manifest``, ``SourceDocument``, ``Publisher``, ``RelatedStory``
                (and in ``all`` any other type ``to_networkx`` gives)
``label``       a short label (≤ 48 characters)
``title``       the full headline, title, name or paragraph text ("" if none)
``iri``         the node's IRI (a ``urn:hcgraph:group:…`` name for a story group)
``id``          its identifier (story / manifest / claim id, publisher name) or ""
``date``        story publication date or source document date (``YYYY-MM-DD``) or ""
``url``         the story page or the source document's URL, or ""
``publishers``  sorted tuple of publisher names the node draws on (filter facet)
``newsrooms``   sorted tuple of newsroom ids the node belongs to or is cited from (facet)
``stories``     number of stories the node stands for or is cited by (Story: 1; Manifest:
                citing stories; Publisher: stories citing any of its manifests)

Edge attributes:

``relation``    ``cites`` (story → manifest), ``publishedBy`` (manifest → publisher),
                ``hasPart``, ``citesAsEvidence`` (paragraph/key fact → claim),
                ``derivedFrom`` (paragraph → manifest, a cite without claim ids),
                ``isPartOf`` (claim → manifest), ``hadPrimarySource``, ``wasAttributedTo``;
                in ``all``: the predicate CURIEs joined with ", "
``claims``      ``cites`` edges: number of distinct claims the story cites from the
                manifest (summed over a story group); the edge width in the map
``citations``   ``citesAsEvidence`` / ``derivedFrom`` edges: number of cite objects
``weight``      the drawn width's source value: ``claims`` where set, else 1

Graph attributes: ``view``, ``focus`` (the resolved focus IRI or None), ``title`` (a human
title for the map), ``note`` (what was folded or left out, or "").
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import pyoxigraph as ox

from ..errors import VizError
from ..project import to_networkx
from ..store import Store

__all__ = [
    "ALL_MAX_NODES",
    "STORY_GROUPS",
    "VIEWS",
    "citation_graph",
    "resolve_focus",
]

#: ``all`` refuses graphs with more nodes than this (the map would be unreadable and slow).
ALL_MAX_NODES = 2500
_LABEL = 48


# --- SPARQL --------------------------------------------------------------------------------
# What a story says about itself (its headline, parts, citations, links) is read from its own
# named graph (GRAPH ?s); manifests, claims, publishers and newsrooms are described once, in
# the shared graphs, and read from the union default graph (a set: no DISTINCT needed).

_Q_STORIES = """
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

# Paragraphs and claims folded into one weighted edge per (story, manifest): the distinct
# claims the story cites under that manifest (its citations); hc:citesManifest adds the pairs
# whose cites carry no claim ids.
_Q_CLAIMS = """
SELECT ?s ?m (COUNT(DISTINCT ?claim) AS ?n)
WHERE { GRAPH ?s { ?c hc:citesClaim ?claim ; cito:hasCitedEntity ?m } }
GROUP BY ?s ?m
"""
_Q_DERIVED = "SELECT ?s ?m WHERE { GRAPH ?s { ?s hc:citesManifest ?m } }"
_Q_STORY_IRIS = "SELECT ?s WHERE { GRAPH ?s { ?s a hc:Story } }"
_Q_PUBLISHED_BY = "SELECT ?s ?o WHERE { ?s dcterms:publisher ?o . ?s a hc:Manifest }"

_MANIFEST_BODY = """
  ?m a hc:Manifest .
  OPTIONAL { ?m dcterms:identifier ?id }
  OPTIONAL { ?m dcterms:title ?title }
  OPTIONAL { ?m dcterms:publisher ?pub OPTIONAL { ?pub schema:name ?pubname } }
  OPTIONAL { ?m prov:hadPrimarySource ?doc
             OPTIONAL { ?doc schema:url ?url } OPTIONAL { ?doc dcterms:issued ?issued } }
"""
# The manifests one story lists or cites (its own graph), described from the shared graph.
_Q_STORY_MANIFESTS = (
    "SELECT DISTINCT ?s ?m ?id ?title ?pub ?pubname ?doc ?url ?issued WHERE {"
    " GRAPH ?s { { ?s hc:listsManifest ?m } UNION { ?s hc:citesManifest ?m } }"
    + _MANIFEST_BODY
    + "}"
)

_Q_STORY_PARTS = """
SELECT ?s ?part ?type ?parent ?pos ?name ?text WHERE { GRAPH ?s {
  ?part dcterms:isPartOf ?parent ; a ?type .
  FILTER(?type IN (hc:Section, hc:Paragraph, hc:KeyFact))
  OPTIONAL { ?part schema:position ?pos }
  OPTIONAL { ?part schema:name ?name }
  OPTIONAL { ?part schema:text ?text }
} }
"""

_Q_STORY_CITES = """
SELECT ?s ?part ?m ?c ?claim ?cid WHERE {
  GRAPH ?s { ?c a hc:Citation ; cito:hasCitingEntity ?part ; cito:hasCitedEntity ?m . }
  OPTIONAL { GRAPH ?s { ?c hc:citesClaim ?claim } OPTIONAL { ?claim dcterms:identifier ?cid } }
}
"""

_Q_FIND_STORY = """
SELECT DISTINCT ?s ?v WHERE { GRAPH ?s { ?s a hc:Story .
  { ?s dcterms:identifier ?v } UNION { ?s hc:slug ?v } } } ORDER BY ?s
"""
_Q_IS_STORY = "ASK { GRAPH ?s { ?s a hc:Story } }"
_Q_FIND_MANIFEST = "SELECT DISTINCT ?m ?v WHERE { ?m a hc:Manifest ; dcterms:identifier ?v }"
_Q_IS_A = "ASK { ?x a ?t }"
_Q_FIND_PUBLISHER = "SELECT DISTINCT ?p ?v WHERE { ?p a hc:Publisher ; schema:name ?v }"
_Q_COUNT_NODES = "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x a ?t }"
# A node belongs to every story graph that types it or points to it (manifests, claims and
# publishers are typed once, in the shared graphs, and pointed to from story graphs).
_Q_GRAPH_MEMBERS = """
SELECT DISTINCT ?g ?x WHERE { GRAPH ?g { { ?x a ?t } UNION { ?y ?p ?x FILTER (isIRI(?x)) } } }
"""
_Q_GRAPH_FACETS = """
SELECT DISTINCT ?g ?pubname ?room WHERE {
  { GRAPH ?g { ?g hc:listsPublisher ?pub } ?pub schema:name ?pubname }
  UNION { GRAPH ?g { ?g hc:newsroom ?r } OPTIONAL { ?r dcterms:identifier ?rid }
          BIND(COALESCE(?rid, STR(?r)) AS ?room) }
}
"""
_Q_SOME_STORIES = "SELECT ?s ?slug WHERE { GRAPH ?s { ?s a hc:Story ; hc:slug ?slug } } LIMIT 3"

_HC = "https://w3id.org/hcgraph/ns#"


def _v(solution: Any, name: str) -> str:
    term = solution[name]
    return "" if term is None else str(term.value)


def _short(text: str, limit: int = _LABEL) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _date(text: str) -> str:
    return text[:10]


# --- focus -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Focus:
    """A resolved ``--focus``: what kind of node it names and its IRI."""

    kind: str  # "Story", "Manifest" or "Publisher"
    iri: str


def _named(text: str) -> ox.NamedNode | None:
    if not text.startswith(("http://", "https://", "urn:")):
        return None
    try:
        return ox.NamedNode(text)
    except ValueError:
        return None


def resolve_focus(store: Store, focus: str) -> Focus:
    """Find the story (URL, id, slug), manifest (id, IRI) or publisher (name, IRI) ``focus``
    names, in that order.

    Raises:
        VizError: nothing matches, or an id/slug matches several stories.
    """
    text = focus.strip()
    for candidate in (text, text + "/"):
        node = _named(candidate)
        if node is not None and store.query(_Q_IS_STORY, bindings={"s": node}):
            return Focus("Story", node.value)
    found = [sol["s"].value for sol in store.query(_Q_FIND_STORY, bindings={"v": ox.Literal(text)})]
    if len(found) > 1:
        raise VizError(f"--focus {text!r} matches {len(found)} stories; give the story URL")
    if found:
        return Focus("Story", found[0])
    node = _named(text)
    for kind in ("Manifest", "Publisher"):
        if node is not None and store.query(
            _Q_IS_A, bindings={"x": node, "t": ox.NamedNode(_HC + kind)}
        ):
            return Focus(kind, node.value)
    lit = {"v": ox.Literal(text)}
    for kind, query, var in (
        ("Manifest", _Q_FIND_MANIFEST, "m"),
        ("Publisher", _Q_FIND_PUBLISHER, "p"),
    ):
        hits = sorted(sol[var].value for sol in store.query(query, bindings=lit))
        if hits:
            return Focus(kind, hits[0])
    raise VizError(
        f"--focus {text!r}: no story (URL, id or slug), manifest (id) or publisher (name) "
        "by that name in the store"
    )


# --- reuse data (shared by reuse and publisher views) ----------------------------------------
@dataclass
class _Reuse:
    stories: dict[str, dict[str, Any]] = field(default_factory=dict)
    manifests: dict[str, dict[str, Any]] = field(default_factory=dict)
    publishers: dict[str, dict[str, Any]] = field(default_factory=dict)
    cites: dict[tuple[str, str], int] = field(default_factory=dict)
    published_by: set[tuple[str, str]] = field(default_factory=set)


def _manifest_rows(store: Store, data: _Reuse, query: str, bindings: dict[str, Any]) -> None:
    for sol in store.query(query, bindings=bindings):
        iri = sol["m"].value
        node = data.manifests.get(iri)
        if node is None:
            mid = _v(sol, "id")
            title = _v(sol, "title")
            node = data.manifests[iri] = {
                "type": "Manifest",
                "iri": iri,
                "id": mid,
                "title": title,
                "label": _short(title or f"manifest {mid}"),
                "date": _date(_v(sol, "issued")),
                "url": _v(sol, "url"),
                "doc": _v(sol, "doc"),
            }
        else:
            # A second source document / title for the same manifest id: keep the first.
            node["title"] = node["title"] or _v(sol, "title")
            node["url"] = node["url"] or _v(sol, "url")
            node["date"] = node["date"] or _date(_v(sol, "issued"))
        pub = _v(sol, "pub")
        if pub:
            name = _v(sol, "pubname") or pub.rsplit("/", 1)[-1]
            data.publishers.setdefault(
                pub,
                {"type": "Publisher", "iri": pub, "id": name, "title": name,
                 "label": _short(name), "date": "", "url": ""},
            )  # fmt: skip
            data.published_by.add((iri, pub))


def _pairs(store: Store, predicate: str) -> dict[str, str]:
    """Subject → object (first, sorted) for one predicate over the union of all graphs.

    One predicate per query: each is one index scan (the union is a set, so no DISTINCT),
    and joining the lookups in Python keeps the cost linear.
    """
    out: dict[str, str] = {}
    # No ORDER BY: sorting in Oxigraph cost seconds; the smallest value wins instead.
    for sol in store.query(f"SELECT ?s ?o WHERE {{ ?s {predicate} ?o }}"):
        s, o = sol["s"].value, sol["o"].value
        if s not in out or o < out[s]:
            out[s] = o
    return out


def _typed(store: Store, cls: str) -> list[str]:
    return [sol["x"].value for sol in store.query(f"SELECT ?x WHERE {{ ?x a {cls} }}")]


def _reuse_data(store: Store) -> _Reuse:
    """Stories, manifests, publishers and weighted story → manifest edges, by aggregation."""
    data = _Reuse()
    ident = _pairs(store, "dcterms:identifier")
    headline = _pairs(store, "schema:headline")
    date = _pairs(store, "schema:datePublished")
    slug = _pairs(store, "hc:slug")
    room_of = _pairs(store, "hc:newsroom")
    for iri in sorted(sol["s"].value for sol in store.query(_Q_STORY_IRIS)):
        room = room_of.get(iri, "")
        room = ident.get(room, room)
        title = headline.get(iri, "")
        data.stories[iri] = {
            "type": "Story", "iri": iri, "id": ident.get(iri, ""), "title": title,
            "label": _short(title or slug.get(iri, "") or iri), "date": _date(date.get(iri, "")),
            "url": iri, "newsrooms": (room,) if room else (),
        }  # fmt: skip
    titles = _pairs(store, "dcterms:title")
    source = _pairs(store, "prov:hadPrimarySource")
    url = _pairs(store, "schema:url")
    issued = _pairs(store, "dcterms:issued")
    for iri in _typed(store, "hc:Manifest"):
        mid, title, doc = ident.get(iri, ""), titles.get(iri, ""), source.get(iri, "")
        data.manifests[iri] = {
            "type": "Manifest", "iri": iri, "id": mid, "title": title,
            "label": _short(title or f"manifest {mid}"), "date": _date(issued.get(doc, "")),
            "url": url.get(doc, ""), "doc": doc,
        }  # fmt: skip
    names = _pairs(store, "schema:name")
    for sol in store.query(_Q_PUBLISHED_BY):
        m, pub = sol["s"].value, sol["o"].value
        name = names.get(pub) or pub.rsplit("/", 1)[-1]
        data.publishers.setdefault(
            pub, {"type": "Publisher", "iri": pub, "id": name, "title": name,
                  "label": _short(name), "date": "", "url": ""},
        )  # fmt: skip
        data.published_by.add((m, pub))
    for sol in store.query(_Q_DERIVED):
        data.cites[(sol["s"].value, sol["m"].value)] = 0
    for sol in store.query(_Q_CLAIMS):
        data.cites[(sol["s"].value, sol["m"].value)] = int(sol["n"].value)
    data.cites = {k: v for k, v in data.cites.items() if k[0] in data.stories}
    return data


def _facets(graph: nx.DiGraph) -> None:
    """Fill the ``publishers`` / ``newsrooms`` facets and ``stories`` counts of a reuse graph."""
    pubs_of: dict[str, set[str]] = defaultdict(set)
    rooms_of: dict[str, set[str]] = defaultdict(set)
    for m, p in graph.edges():
        if graph.nodes[p]["type"] == "Publisher":
            pubs_of[m].add(graph.nodes[p]["id"])
    for n, attrs in graph.nodes(data=True):
        rooms_of[n].update(attrs.get("newsrooms", ()))
    cited_by: dict[str, int] = defaultdict(int)
    for s, m in graph.edges():
        if graph.nodes[s]["type"] in ("Story", "StoryGroup"):
            pubs_of[s].update(pubs_of[m])
            rooms_of[m].update(rooms_of[s])
            cited_by[m] += graph.nodes[s].get("stories", 1)
    for m, p in graph.edges():
        if graph.nodes[p]["type"] == "Publisher":
            rooms_of[p].update(rooms_of[m])
    pub_stories: dict[str, set[str]] = defaultdict(set)
    for s, m in graph.edges():
        if graph.nodes[s]["type"] in ("Story", "StoryGroup"):
            for p in graph.successors(m):
                if graph.nodes[p]["type"] == "Publisher":
                    pub_stories[p].add(s)
    for n, attrs in graph.nodes(data=True):
        kind = attrs["type"]
        if kind == "Publisher":
            pubs_of[n].add(attrs["id"])
            attrs["stories"] = sum(graph.nodes[s].get("stories", 1) for s in pub_stories[n])
        elif kind == "Manifest":
            attrs["stories"] = cited_by[n]
        else:
            attrs.setdefault("stories", 1)
        attrs["publishers"] = tuple(sorted(pubs_of[n]))
        attrs["newsrooms"] = tuple(sorted(rooms_of[n]))


def _complete(attrs: dict[str, Any]) -> dict[str, Any]:
    out = {k: attrs.get(k, "") for k in ("type", "label", "title", "iri", "id", "date", "url")}
    out["newsrooms"] = tuple(attrs.get("newsrooms", ()))
    out["publishers"] = tuple(attrs.get("publishers", ()))
    if "stories" in attrs:
        out["stories"] = attrs["stories"]
    return out


def _reuse_graph(data: _Reuse) -> nx.DiGraph:
    graph = nx.DiGraph()
    for table in (data.stories, data.manifests, data.publishers):
        for iri in sorted(table):
            graph.add_node(iri, **_complete(table[iri]))
    for (s, m), claims in sorted(data.cites.items()):
        if m not in graph:  # cited manifest with no description at all (should not happen)
            graph.add_node(m, **_complete({"type": "Manifest", "iri": m, "label": _short(m)}))
        graph.add_edge(s, m, relation="cites", claims=claims, weight=max(1, claims))
    for m, p in sorted(data.published_by):
        if m in graph:
            graph.add_edge(m, p, relation="publishedBy", weight=1)
    # Manifests no story cites (listed but uncited) stay: they are part of the reuse picture.
    return graph


def _group_key(kind: str) -> Callable[[dict[str, Any]], tuple[str, str]]:
    def key(story: dict[str, Any]) -> tuple[str, str]:
        room = story["newsrooms"][0] if story["newsrooms"] else "(no newsroom)"
        day = story["date"] or "(undated)"
        if kind == "newsroom":
            return room, room
        if kind == "day":
            return day, day
        return f"{room} {day}", f"{room} · {day}"

    return key


#: ``group_stories`` choices: fold stories into one node per newsroom, day, or both.
STORY_GROUPS: dict[str, str] = {
    "newsroom": "one node per newsroom",
    "day": "one node per publication day",
    "newsroom-day": "one node per newsroom and day",
}


def _fold(data: _Reuse, top: int | None, group_stories: str | None) -> tuple[_Reuse, list[str]]:
    """Apply ``top`` (keep the N manifests cited by most stories) and story grouping."""
    notes: list[str] = []
    if top is not None:
        count: dict[str, int] = defaultdict(int)
        for _s, m in data.cites:
            count[m] += 1
        keep = set(sorted(count, key=lambda m: (-count[m], m))[:top])
        dropped = len(data.manifests) - len(keep & set(data.manifests))
        data.cites = {k: v for k, v in data.cites.items() if k[1] in keep}
        data.manifests = {k: v for k, v in data.manifests.items() if k in keep}
        data.published_by = {(m, p) for m, p in data.published_by if m in keep}
        used = {p for _m, p in data.published_by}
        data.publishers = {p: v for p, v in data.publishers.items() if p in used}
        citing = {s for s, _m in data.cites}
        gone = len(data.stories) - len(citing)
        data.stories = {k: v for k, v in data.stories.items() if k in citing}
        notes.append(
            f"top {top} manifests by citing stories; {dropped} other manifests and "
            f"{gone} stories citing none of them left out"
        )
    if group_stories is not None:
        if group_stories not in STORY_GROUPS:
            raise VizError(
                f"unknown story grouping {group_stories!r}; choose from {', '.join(STORY_GROUPS)}"
            )
        key = _group_key(group_stories)
        groups: dict[str, dict[str, Any]] = {}
        member: dict[str, str] = {}
        for iri in sorted(data.stories):
            story = data.stories[iri]
            gid, name = key(story)
            giri = "urn:hcgraph:group:" + hashlib.sha1(gid.encode()).hexdigest()[:16]
            group = groups.setdefault(
                giri,
                {"type": "StoryGroup", "iri": giri, "id": name, "title": name, "date": "",
                 "url": "", "newsrooms": set(), "stories": 0, "dates": set()},
            )  # fmt: skip
            group["stories"] += 1
            group["newsrooms"].update(story["newsrooms"])
            if story["date"]:
                group["dates"].add(story["date"])
            member[iri] = giri
        for group in groups.values():
            group["newsrooms"] = tuple(sorted(group["newsrooms"]))
            dates = sorted(group.pop("dates"))
            group["date"] = (
                dates[0] if len(dates) == 1 else (f"{dates[0]}…{dates[-1]}" if dates else "")
            )
            group["label"] = _short(f"{group['title']} ({group['stories']} stories)")
            group["title"] = f"{group['title']}: {group['stories']} stories"
        folded: dict[tuple[str, str], int] = defaultdict(int)
        for (s, m), claims in data.cites.items():
            folded[(member[s], m)] += claims
        notes.append(
            f"{len(data.stories)} stories folded into {len(groups)} groups ({group_stories})"
        )
        data.stories, data.cites = groups, dict(folded)
    return data, notes


# --- views -----------------------------------------------------------------------------------
def _reuse_view(
    store: Store,
    focus: Focus | None,
    *,
    top: int | None = None,
    group_stories: str | None = None,
    **_: Any,
) -> nx.DiGraph:
    data, notes = _fold(_reuse_data(store), top, group_stories)
    graph = _reuse_graph(data)
    title = "Source reuse across all stories"
    if focus is not None:
        if focus.iri not in graph:
            raise VizError(f"--focus {focus.iri} is not in this map (left out by --top?)")
        keep = _reuse_neighbourhood(graph, focus)
        graph = graph.subgraph(keep).copy()
        title = f"Source reuse around {graph.nodes[focus.iri]['label']}"
    _facets(graph)
    graph.graph.update(view="reuse", focus=focus.iri if focus else None, title=title,
                       note="; ".join(notes))  # fmt: skip
    return graph


def _reuse_neighbourhood(graph: nx.DiGraph, focus: Focus) -> set[str]:
    """The focus, the manifests it reaches, their publishers, and every story citing them."""
    if focus.kind == "Publisher":
        manifests = set(graph.predecessors(focus.iri))
    elif focus.kind == "Manifest":
        manifests = {focus.iri}
    else:
        manifests = set(graph.successors(focus.iri))
    keep = {focus.iri} | manifests
    for m in manifests:
        keep.update(graph.predecessors(m))
        keep.update(graph.successors(m))
    return keep


def _publisher_view(store: Store, focus: Focus | None, **kw: Any) -> nx.DiGraph:
    if focus is None or focus.kind != "Publisher":
        raise VizError(
            "--view publisher needs --focus PUBLISHER (a publisher name such as 'arxiv', "
            "or its IRI)"
        )
    kw.pop("top", None)
    graph = _reuse_view(store, focus, **kw)
    name = graph.nodes[focus.iri]["id"]
    graph.graph.update(
        view="publisher", title=f"Publisher {name}: its manifests and the stories citing them"
    )
    return graph


def _only_story(store: Store) -> Focus:
    stories = store.story_graphs()
    if len(stories) == 1:
        return Focus("Story", stories[0])
    examples = ", ".join(_v(sol, "slug") for sol in store.query(_Q_SOME_STORIES))
    raise VizError(
        f"--view story needs --focus STORY (URL, id or slug): the store has {len(stories)} "
        f"stories" + (f", e.g. {examples}" if examples else "")
    )


def _story_view(store: Store, focus: Focus | None, **_: Any) -> nx.DiGraph:
    focus = focus or _only_story(store)
    if focus.kind != "Story":
        raise VizError(f"--view story needs a story to focus on; {focus.iri} is a {focus.kind}")
    s = ox.NamedNode(focus.iri)
    bind = {"s": s}
    story = _story_nodes_one(store, s)
    room = story["newsrooms"]
    graph = nx.DiGraph()
    graph.add_node(focus.iri, **_complete(story))
    parts = sorted(
        store.query(_Q_STORY_PARTS, bindings=bind),
        key=lambda sol: (sol["parent"].value, int(_v(sol, "pos") or 0), sol["part"].value),
    )
    for sol in parts:
        part, kind = sol["part"].value, sol["type"].value.removeprefix(_HC)
        text = _v(sol, "name") or _v(sol, "text")
        frag = part.rsplit("#", 1)[-1]
        graph.add_node(part, **_complete({
            "type": kind, "iri": part, "id": frag, "title": text,
            "label": _short(f"{frag}: {text}" if text else frag, 40), "newsrooms": room,
        }))  # fmt: skip
    for sol in parts:
        part, parent = sol["part"].value, sol["parent"].value
        if parent in graph:
            graph.add_edge(parent, part, relation="hasPart", weight=1)
    data = _Reuse()
    _manifest_rows(store, data, _Q_STORY_MANIFESTS, bind)
    claim_in: dict[tuple[str, str], None] = {}
    cite_count: dict[tuple[str, str], set[str]] = defaultdict(set)
    for sol in store.query(_Q_STORY_CITES, bindings=bind):
        part, m, cite = sol["part"].value, sol["m"].value, sol["c"].value
        if m not in data.manifests:
            data.manifests[m] = {"type": "Manifest", "iri": m, "id": m.rsplit("/", 1)[-1],
                                 "label": _short("manifest " + m.rsplit("/", 1)[-1])}  # fmt: skip
        claim = _v(sol, "claim")
        if not claim:
            cite_count[(part, m)].add(cite)
            continue
        cid = _v(sol, "cid") or claim.rsplit("/", 1)[-1]
        if claim not in graph:
            graph.add_node(claim, **_complete({
                "type": "Claim", "iri": claim, "id": cid, "title": f"claim {cid}",
                "label": f"claim …{cid[-6:]}", "newsrooms": room,
            }))  # fmt: skip
        cite_count[(part, claim)].add(cite)
        claim_in[(claim, m)] = None
    for iri in sorted(data.manifests):
        graph.add_node(iri, **_complete({**data.manifests[iri], "newsrooms": room}))
        doc = data.manifests[iri].get("doc")
        if doc:
            attrs = data.manifests[iri]
            host = attrs["url"].split("//", 1)[-1].split("/", 1)[0] if attrs["url"] else ""
            graph.add_node(doc, **_complete({
                "type": "SourceDocument", "iri": doc, "id": attrs["id"], "title": attrs["title"],
                "label": _short(host or doc.rsplit("/", 1)[-1], 40), "date": attrs["date"],
                "url": attrs["url"], "newsrooms": room,
            }))  # fmt: skip
            graph.add_edge(iri, doc, relation="hadPrimarySource", weight=1)
    for pub in sorted(data.publishers):
        graph.add_node(pub, **_complete({**data.publishers[pub], "newsrooms": room}))
    for m, p in sorted(data.published_by):
        doc = data.manifests[m].get("doc")
        # The trail reads manifest → source document → publisher (prov:wasAttributedTo).
        graph.add_edge(doc or m, p, relation="wasAttributedTo" if doc else "publishedBy", weight=1)
    for (part, target), cites in sorted(cite_count.items()):
        if part not in graph:
            continue
        relation = "citesAsEvidence" if graph.nodes[target]["type"] == "Claim" else "derivedFrom"
        graph.add_edge(part, target, relation=relation, citations=len(cites), weight=len(cites))
    for claim, m in claim_in:
        graph.add_edge(claim, m, relation="isPartOf", weight=1)
    _trail_facets(graph)
    graph.graph.update(view="story", focus=focus.iri, title=f"Citation map: {story['label']}",
                       note="")  # fmt: skip
    return graph


def _story_nodes_one(store: Store, s: ox.NamedNode) -> dict[str, Any]:
    for sol in store.query(_Q_STORIES, bindings={"s": s}):
        headline = _v(sol, "headline")
        room = _v(sol, "room")
        return {"type": "Story", "iri": s.value, "id": _v(sol, "id"), "title": headline,
                "label": _short(headline or _v(sol, "slug") or s.value),
                "date": _date(_v(sol, "date")), "url": s.value,
                "newsrooms": (room,) if room else (), "stories": 1}  # fmt: skip
    raise VizError(f"{s.value}: not a story in the store")


def _trail_facets(graph: nx.DiGraph) -> None:
    """Publisher facet for a provenance trail: the publishers each node leads to."""
    pubs = {n: a["id"] for n, a in graph.nodes(data=True) if a["type"] == "Publisher"}
    order = list(nx.topological_sort(graph)) if nx.is_directed_acyclic_graph(graph) else []
    reach: dict[str, set[str]] = {n: ({pubs[n]} if n in pubs else set()) for n in graph}
    if order:
        for n in reversed(order):
            for succ in graph.successors(n):
                reach[n] |= reach[succ]
    else:
        for n in graph:
            reach[n] = {pubs[d] for d in nx.descendants(graph, n) if d in pubs} | reach[n]
    for n, attrs in graph.nodes(data=True):
        attrs["publishers"] = tuple(sorted(reach[n]))


def _all_view(
    store: Store, focus: Focus | None, *, max_nodes: int = ALL_MAX_NODES, **_: Any
) -> nx.DiGraph:
    count = int(next(iter(store.query(_Q_COUNT_NODES)))["n"].value)
    if focus is None and count > max_nodes:
        raise VizError(
            f"--view all: the graph has {count} nodes, over the limit of {max_nodes}; "
            "draw --view reuse (add --top N or --group-stories for big graphs), or --focus "
            "one story"
        )
    multi = to_networkx(store, max_label=_LABEL)
    graph = nx.DiGraph()
    for n, attrs in multi.nodes(data=True):
        graph.add_node(n, **_complete({
            "type": attrs["type"], "iri": n, "title": attrs["text"], "label": attrs["label"],
            "url": n if attrs["type"] in ("Story", "RelatedStory", "SourceDocument") else "",
        }))  # fmt: skip
    for s, o, attrs in multi.edges(data=True):
        old = graph.get_edge_data(s, o)
        rel = attrs["predicate"] if old is None else f"{old['relation']}, {attrs['predicate']}"
        graph.add_edge(s, o, relation=rel, weight=1)
    _graph_facets(store, graph)
    title = "Every node of the graph"
    if focus is not None:
        keep = nx.ego_graph(graph.to_undirected(as_view=True), focus.iri, radius=2).nodes
        graph = graph.subgraph(keep).copy()
        title = f"Every node within 2 hops of {graph.nodes[focus.iri]['label']}"
        if len(graph) > max_nodes:
            raise VizError(
                f"--view all --focus: {len(graph)} nodes within 2 hops, over the limit of "
                f"{max_nodes}; draw --view story or --view reuse instead"
            )
    graph.graph.update(view="all", focus=focus.iri if focus else None, title=title, note="")
    return graph


def _graph_facets(store: Store, graph: nx.DiGraph) -> None:
    """Facets for ``all``: the publishers and newsroom of every story graph a node is in."""
    pubs: dict[str, set[str]] = defaultdict(set)
    rooms: dict[str, set[str]] = defaultdict(set)
    for sol in store.query(_Q_GRAPH_FACETS):
        g = sol["g"].value
        if sol["pubname"] is not None:
            pubs[g].add(sol["pubname"].value)
        if sol["room"] is not None:
            rooms[g].add(sol["room"].value)
    node_pubs: dict[str, set[str]] = defaultdict(set)
    node_rooms: dict[str, set[str]] = defaultdict(set)
    for sol in store.query(_Q_GRAPH_MEMBERS):
        g, x = sol["g"].value, sol["x"].value
        node_pubs[x] |= pubs[g]
        node_rooms[x] |= rooms[g]
    for n, attrs in graph.nodes(data=True):
        attrs["publishers"] = tuple(sorted(node_pubs.get(n, ())))
        attrs["newsrooms"] = tuple(sorted(node_rooms.get(n, ())))


#: View name → builder ``(store, focus, **options) -> DiGraph``.
VIEWS: dict[str, Callable[..., nx.DiGraph]] = {
    "story": _story_view,
    "reuse": _reuse_view,
    "publisher": _publisher_view,
    "all": _all_view,
}


def citation_graph(
    store: Store,
    view: str = "reuse",
    focus: str | None = None,
    *,
    top: int | None = None,
    group_stories: str | None = None,
    max_nodes: int = ALL_MAX_NODES,
) -> nx.DiGraph:
    """The networkx projection behind a citation map (attributes in the module docstring).

    Args:
        store: the store to read.
        view: ``story``, ``reuse``, ``publisher`` or ``all``.
        focus: a story URL / id / slug, a manifest id, or a publisher name (see
            :func:`resolve_focus`); required for ``publisher``, and for ``story`` when the
            store holds more than one story.
        top: reuse view: keep only the N manifests cited by the most stories.
        group_stories: reuse/publisher views: fold stories into one node per ``newsroom``,
            ``day`` or ``newsroom-day``.
        max_nodes: ``all`` refuses graphs with more nodes than this.

    Raises:
        VizError: unknown view, unresolvable focus, or a graph too large for ``all``.
    """
    builder = VIEWS.get(view)
    if builder is None:
        raise VizError(f"unknown view {view!r}; choose from {', '.join(VIEWS)}")
    if top is not None and top < 1:
        raise VizError("--top must be at least 1")
    resolved = resolve_focus(store, focus) if focus else None
    return builder(store, resolved, top=top, group_stories=group_stories, max_nodes=max_nodes)
