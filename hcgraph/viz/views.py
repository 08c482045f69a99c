"""The networkx projections behind the citation maps: one function per view.

Edges run from the citing thing to what it draws on (story → manifest → publisher); every
attribute is in docs/maps.md ("The projection is public API"). Manifest and publisher counts
(``stories``) are whole-store truths, the same under every view, ``top``, grouping and focus.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import networkx as nx
import pyoxigraph as ox

from ..errors import VizError
from ..store import Store
from .data import (
    HC,
    Q_SOME_STORIES,
    Q_STORY_CITES,
    Q_STORY_PARTS,
    Citations,
    ManifestRec,
    ReuseData,
    load_citations,
    load_reuse,
    load_story_manifests,
    load_story_record,
    nodes_of,
    short,
    value,
)
from .focus import Focus, MapOptions, resolve_focus
from .sources import PASSAGE_STORIES, load_passages
from .timeline import day_number

__all__ = [
    "CLAIM_STORIES",
    "OVERVIEW_STORIES",
    "STORY_GROUPS",
    "VIEWS",
    "citation_graph",
    "resolve_focus",
]

#: A reuse map of more stories than this (no focus, no grouping) is drawn as an overview:
#: manifests and publishers, each manifest's citing stories listed and drawn on a click.
OVERVIEW_STORIES = 20000
#: Past this many stories the reuse map skips the per-(story, manifest) count of distinct
#: claims (the ``claims`` edge attribute, the edge width): the costliest query.
CLAIM_STORIES = 5000

#: ``group_stories`` choices: fold stories into one node per newsroom, day, or both.
STORY_GROUPS = ("newsroom", "day", "newsroom-day")


def _complete(attrs: dict[str, Any]) -> dict[str, Any]:
    """Every documented attribute present (empty where unknown)."""
    out = {k: attrs.get(k, "") for k in ("type", "label", "title", "iri", "id", "date", "url")}
    out["newsrooms"] = tuple(attrs.get("newsrooms", ()))
    out["publishers"] = tuple(attrs.get("publishers", ()))
    if "stories" in attrs:
        out["stories"] = attrs["stories"]
    for key in ("uncited", "unsupported"):
        if attrs.get(key):
            out[key] = attrs[key]
    return out


def _group_key(kind: str, story: dict[str, Any]) -> tuple[str, str]:
    """A story's group under ``kind``: (its key, its name)."""
    room = story["newsrooms"][0] if story["newsrooms"] else "(no newsroom)"
    date = story["date"] or "(undated)"
    keys = {"newsroom": (room, room), "day": (date, date)}
    return keys.get(kind, (f"{room} {date}", f"{room} · {date}"))


def _reuse_graph(
    data: ReuseData, counts: Citations, *, stories: bool = True, claims: bool = True
) -> nx.DiGraph:
    """Stories (none for the overview) → manifests → publishers, counts from ``counts``;
    manifests no story cites stay."""
    graph = nx.DiGraph()
    if stories:
        for iri in sorted(data.stories):
            marks = {"uncited": data.uncited.get(iri, 0),
                     "unsupported": data.unsupported.get(iri, 0)}  # fmt: skip
            graph.add_node(iri, **_complete({**data.stories[iri].attrs(), **marks}))
    for iri in sorted(data.manifests):
        graph.add_node(iri, **_complete(data.manifests[iri].attrs(counts.manifest_count(iri))))
    reach = counts.reach()
    for iri in sorted(data.publishers):
        graph.add_node(iri, **_complete(data.publishers[iri].attrs(reach.get(iri, 0))))
    if stories:
        _add_cites(graph, data, counts, claims)
    for m, p in sorted(data.published_by):
        if m in graph:
            graph.add_edge(m, p, relation="publishedBy", weight=1)
    return graph


def _add_cites(graph: nx.DiGraph, data: ReuseData, counts: Citations, claims: bool) -> None:
    """The story → manifest ``cites`` edges (with their ``claims`` counts when ``claims``)."""
    for (s, m), n in sorted(data.cites.items()):
        if m not in graph:  # cited manifest with no description at all (should not happen)
            graph.add_node(m, **_complete(ManifestRec(m, "", "").attrs(counts.manifest_count(m))))
        if claims:
            graph.add_edge(s, m, relation="cites", claims=n, weight=max(1, n))
        else:
            graph.add_edge(s, m, relation="cites", weight=1)


def _keep_top(data: ReuseData, top: int, counts: Citations) -> str:
    """Keep the ``top`` manifests cited by most stories; returns the note."""
    cited = [m for m in counts.citers if counts.manifest_count(m)]
    keep = set(sorted(cited, key=lambda m: (-counts.manifest_count(m), m))[:top])
    dropped = len(set(data.manifests) - keep)
    data.keep_manifests(keep)
    citing = {s for s, _m in data.cites}
    gone = len(data.stories) - len(citing)
    data.stories = {k: v for k, v in data.stories.items() if k in citing}
    return (
        f"top {top} manifests by citing stories; {dropped} other manifests and "
        f"{gone} stories citing none of them left out"
    )


def _group(graph: nx.DiGraph, kind: str) -> str:
    """Fold the story nodes into one node per ``kind`` (a group → manifest edge's
    ``stories``: how many of its stories cite the manifest); returns the note."""
    stories = nodes_of(graph, "Story")
    groups: dict[str, dict[str, Any]] = {}
    citing: dict[tuple[str, str], int] = defaultdict(int)
    for s in stories:
        attrs = graph.nodes[s]
        gid, name = _group_key(kind, attrs)
        giri = "urn:hcgraph:group:" + hashlib.sha1(gid.encode()).hexdigest()[:16]
        group = groups.setdefault(giri, {"name": name, "stories": 0, "rooms": set(),
                                         "dates": set()})  # fmt: skip
        group["stories"] += 1
        group["rooms"].update(attrs["newsrooms"])
        group["dates"].update([attrs["date"]] if attrs["date"] else [])
        for m in graph.successors(s):
            citing[(giri, m)] += 1
    graph.remove_nodes_from(stories)
    for giri in sorted(groups):
        graph.add_node(giri, **_group_attrs(giri, groups[giri]))
    for (giri, m), n in sorted(citing.items()):
        graph.add_edge(giri, m, relation="cites", stories=n, weight=n)
    return f"{len(stories)} stories folded into {len(groups)} groups ({kind})"


def _group_attrs(giri: str, g: dict[str, Any]) -> dict[str, Any]:
    """A story group's node attributes (its date: the one day, or the first…last)."""
    dates = sorted(g["dates"])
    date = dates[0] if len(dates) == 1 else (f"{dates[0]}…{dates[-1]}" if dates else "")
    return _complete({
        "type": "StoryGroup", "iri": giri, "id": g["name"], "date": date,
        "title": f"{g['name']}: {g['stories']} stories",
        "label": short(f"{g['name']} ({g['stories']} stories)"),
        "newsrooms": tuple(sorted(g["rooms"])), "stories": g["stories"],
    })  # fmt: skip


def _drill(data: ReuseData, counts: Citations) -> dict[str, Any]:
    """The overview's drill-down: each story once, newest first (then by IRI), and each
    manifest's citers as indices into them (in the order the page lists them)."""
    order = sorted({s for citers in counts.citers.values() for s in citers if s in data.stories})
    order.sort(key=lambda s: data.stories[s].date, reverse=True)  # stable: IRI order kept
    index = {s: i for i, s in enumerate(order)}
    return {
        "stories": [(s, data.stories[s].title or data.stories[s].label, data.stories[s].date)
                    for s in order],
        "citers": {m: sorted(index[s] for s in counts.citers[m])
                   for m in sorted(data.manifests) if counts.citers.get(m)},
    }  # fmt: skip


def _reuse_view(store: Store, focus: Focus | None, opts: MapOptions) -> nx.DiGraph:
    overview = _is_overview(store, focus, opts)
    # Claims per (story, manifest) are edge widths: skipped when no such edge is drawn.
    claims = not overview and opts.group_stories is None
    claims = claims and len(store.story_graphs()) <= CLAIM_STORIES
    data = load_reuse(store, claims=claims, include_withdrawn=opts.include_withdrawn)
    counts = data.citations()
    notes = [_keep_top(data, opts.top, counts)] if opts.top is not None else []
    graph = _reuse_graph(data, counts, stories=not overview, claims=claims)
    if overview:
        graph.graph["drill"] = _drill(data, counts)
        notes.append(
            f"overview: {len(data.stories)} stories not drawn; click a source to list its "
            "citing stories and draw them (--stories-all draws every story)"
        )
    title = "Source reuse across all stories"
    if focus is not None:
        graph = _focused(graph, focus)
        title = f"Source reuse around {graph.nodes[focus.iri]['label']}"
    if opts.group_stories is not None:
        notes.append(_group(graph, opts.group_stories))
    _reuse_facets(graph)
    graph.graph.update(view="reuse", focus=focus.iri if focus else None, title=title,
                       note="; ".join(notes))  # fmt: skip
    return graph


def _is_overview(store: Store, focus: Focus | None, opts: MapOptions) -> bool:
    """Whether the reuse map is the overview (asked for with a focus or grouping: an error)."""
    plain = focus is None and opts.group_stories is None
    if opts.overview is None:
        return plain and len(store.story_graphs()) > OVERVIEW_STORIES
    if opts.overview and not plain:
        raise VizError("the overview draws no stories: drop --focus / --group-stories")
    return opts.overview


def _focused(graph: nx.DiGraph, focus: Focus) -> nx.DiGraph:
    """The part of the reuse ``graph`` around ``focus``: the focus, the manifests it
    reaches, their publishers, and every story citing them."""
    if focus.iri not in graph:  # a story is left out as withdrawn, a source as cited only so
        why = "withdrawn" if focus.kind == "Story" else "only withdrawn stories cite it"
        raise VizError(
            f"--focus {focus.iri} is not in this map (left out by --top, or {why}: "
            "--include-withdrawn draws them)"
        )
    # A publisher's manifests point to it; a story points to its manifests.
    step = {"Publisher": graph.predecessors, "Story": graph.successors}.get(focus.kind)
    manifests = set(step(focus.iri)) if step else {focus.iri}
    keep = {focus.iri} | manifests
    for m in manifests:
        keep.update(graph.predecessors(m))
        keep.update(graph.successors(m))
    return graph.subgraph(keep).copy()


def _sources_view(store: Store, focus: Focus | None, opts: MapOptions) -> nx.DiGraph:
    """The reuse graph of every story with the citing ``passages`` (``hcgraph.viz.sources``);
    ``focus`` is selected when the page opens."""
    data = load_reuse(store, claims=False, include_withdrawn=opts.include_withdrawn)
    counts = data.citations()
    notes = [_keep_top(data, opts.top, counts)] if opts.top is not None else []
    graph = _reuse_graph(data, counts, claims=False)
    passages = load_passages(store, data)
    if len(passages) < len(data.cites):
        notes.append(
            f"passages of the newest {PASSAGE_STORIES} citing stories of each source "
            f"({len(passages)} of {len(data.cites)} story-source pairs); the others linked"
        )
    graph.graph.update(view="sources", focus=focus.iri if focus else None, note="; ".join(notes),
                       title="Publishers → sources → stories", passages=passages)  # fmt: skip
    return graph


def _time_view(store: Store, focus: Focus | None, opts: MapOptions) -> nx.DiGraph:
    """The reuse graph of every story for the time axis; ``focus`` (a story or a source)
    is selected when the page opens."""
    data = load_reuse(store, claims=False, include_withdrawn=opts.include_withdrawn)
    graph = _reuse_graph(data, data.citations(), claims=False)
    undated = Counter(
        a["type"] for _n, a in graph.nodes(data=True) if day_number(a["date"]) is None
    )
    names = (("Story", "stories"), ("Manifest", "sources"))
    notes = [f"{undated[k]} undated {name} not placed" for k, name in names if undated[k]]
    graph.graph.update(view="time", focus=focus.iri if focus else None, note="; ".join(notes),
                       title="Stories and their sources in time")  # fmt: skip
    return graph


def _publisher_view(store: Store, focus: Focus | None, opts: MapOptions) -> nx.DiGraph:
    if focus is None or focus.kind != "Publisher":
        raise VizError(
            "--view publisher needs --focus PUBLISHER (a publisher name such as 'arxiv', "
            "or its IRI)"
        )
    graph = _reuse_view(store, focus, replace(opts, top=None, overview=None))
    # Another publisher of a shared manifest would pull the rings apart.
    others = [n for n, a in graph.nodes(data=True) if a["type"] == "Publisher" and n != focus.iri]
    graph.remove_nodes_from(others)
    name = graph.nodes[focus.iri]["id"]
    graph.graph.update(
        view="publisher", title=f"Publisher {name}: its manifests and the stories citing them"
    )
    return graph


def _only_story(store: Store) -> Focus:
    stories = store.story_graphs()
    if len(stories) == 1:
        return Focus("Story", stories[0])
    examples = ", ".join(value(sol, "slug") for sol in store.query(Q_SOME_STORIES))
    raise VizError(
        f"--view story needs --focus STORY (URL, id or slug): the store has {len(stories)} "
        f"stories" + (f", e.g. {examples}" if examples else "")
    )


def _story_view(store: Store, focus: Focus | None, opts: MapOptions) -> nx.DiGraph:
    focus = focus or _only_story(store)
    if focus.kind != "Story":
        raise VizError(f"--view story needs a story to focus on; {focus.iri} is a {focus.kind}")
    s = ox.NamedNode(focus.iri)
    story = load_story_record(store, s)
    if story is None:
        raise VizError(f"{s.value}: not a story in the store")
    graph = nx.DiGraph()
    graph.add_node(focus.iri, **_complete(story.attrs()))
    _add_story_parts(graph, store, s)
    data = ReuseData()
    load_story_manifests(store, s, data)
    cite_count, claim_in = _add_story_claims(graph, store, s, data)
    _add_story_sources(graph, store, data, opts.include_withdrawn)
    for (part, target), cites in sorted(cite_count.items()):
        if part not in graph:
            continue
        relation = "citesAsEvidence" if graph.nodes[target]["type"] == "Claim" else "derivedFrom"
        graph.add_edge(part, target, relation=relation, citations=len(cites), weight=len(cites))
    for claim, m in claim_in:
        graph.add_edge(claim, m, relation="isPartOf", weight=1)
    nx.set_node_attributes(graph, graph.nodes[focus.iri]["newsrooms"], "newsrooms")  # the story's
    _mark_uncited(graph, {part for part, _target in cite_count})
    _mark_support(graph, store, focus.iri)
    _publisher_facet(graph)
    graph.graph.update(view="story", focus=focus.iri, title=f"Citation map: {story.label}",
                       note="")  # fmt: skip
    return graph


def _add_story_parts(graph: nx.DiGraph, store: Store, s: ox.NamedNode) -> None:
    """The story's sections, paragraphs and key facts, each linked from its parent."""
    parts = sorted(
        store.query(Q_STORY_PARTS, bindings={"s": s}),
        key=lambda sol: (sol["parent"].value, int(value(sol, "pos") or 0), sol["part"].value),
    )
    for sol in parts:
        part, kind = sol["part"].value, sol["type"].value.removeprefix(HC)
        text = value(sol, "name") or value(sol, "text")
        frag = part.rsplit("#", 1)[-1]
        label = short(f"{frag}: {text}" if text else frag, 40)
        attrs = {"type": kind, "iri": part, "id": frag, "title": text, "label": label}
        graph.add_node(part, **_complete(attrs))
    for sol in parts:
        part, parent = sol["part"].value, sol["parent"].value
        if parent in graph:
            graph.add_edge(parent, part, relation="hasPart", weight=1)


def _add_story_claims(
    graph: nx.DiGraph, store: Store, s: ox.NamedNode, data: ReuseData
) -> tuple[dict[tuple[str, str], set[str]], dict[tuple[str, str], None]]:
    """The claims the story's parts cite; returns the citations per (part, claim, or
    manifest for a citation with no claim) and the (claim, manifest) pairs."""
    claim_in: dict[tuple[str, str], None] = {}
    cite_count: dict[tuple[str, str], set[str]] = defaultdict(set)
    for sol in store.query(Q_STORY_CITES, bindings={"s": s}):
        part, m, cite = sol["part"].value, sol["m"].value, sol["c"].value
        if m not in data.manifests:
            data.manifests[m] = ManifestRec(m, m.rsplit("/", 1)[-1], "")
        claim = value(sol, "claim")
        if not claim:
            cite_count[(part, m)].add(cite)
            continue
        cid = value(sol, "cid") or claim.rsplit("/", 1)[-1]
        if claim not in graph:
            title, label = f"claim {cid}", f"claim …{cid[-6:]}"
            attrs = {"type": "Claim", "iri": claim, "id": cid, "title": title, "label": label}
            graph.add_node(claim, **_complete(attrs))
        cite_count[(part, claim)].add(cite)
        claim_in[(claim, m)] = None
    return cite_count, claim_in


def _add_story_sources(
    graph: nx.DiGraph, store: Store, data: ReuseData, include_withdrawn: bool
) -> None:
    """The cited manifests, their source documents and publishers, counted store-wide."""
    counts = load_citations(store, include_withdrawn=include_withdrawn)
    reach = counts.reach()
    for iri in sorted(data.manifests):
        rec = data.manifests[iri]
        graph.add_node(iri, **_complete(rec.attrs(counts.manifest_count(iri))))
        if rec.doc:
            host = rec.url.split("//", 1)[-1].split("/", 1)[0] if rec.url else ""
            graph.add_node(rec.doc, **_complete({
                "type": "SourceDocument", "iri": rec.doc, "id": rec.id, "title": rec.title,
                "label": short(host or rec.doc.rsplit("/", 1)[-1], 40), "date": rec.date,
                "url": rec.url}))  # fmt: skip
            graph.add_edge(iri, rec.doc, relation="hadPrimarySource", weight=1)
    for pub in sorted(data.publishers):
        graph.add_node(pub, **_complete(data.publishers[pub].attrs(reach.get(pub, 0))))
    for m, p in sorted(data.published_by):
        doc = data.manifests[m].doc
        # The trail reads manifest → source document → publisher (prov:wasAttributedTo).
        graph.add_edge(doc or m, p, relation="wasAttributedTo" if doc else "publishedBy", weight=1)


def _mark_uncited(graph: nx.DiGraph, cited: set[str]) -> None:
    """Mark (``uncited=1``) every paragraph and key fact that cites nothing (not in ``cited``)."""
    for part, attrs in graph.nodes(data=True):
        if attrs["type"] in ("Paragraph", "KeyFact") and part not in cited:
            attrs["uncited"] = 1


def _mark_support(graph: nx.DiGraph, store: Store, story: str) -> None:
    """Claims get their text as title; a part the support check found not saying what a
    claim says gets ``unsupported`` (how many) and a ✗, and the claim's title says why."""
    from ..claims.graphing import claim_texts

    claims = {a["id"]: n for n, a in graph.nodes(data=True) if a["type"] == "Claim"}
    for cid, text in claim_texts(store, claims).items():
        graph.nodes[claims[cid]]["title"] = f"claim {cid}: {text}"
    for part, by_claim in sorted(_unsupported(graph, store, story, claims).items()):
        attrs = graph.nodes[part]
        attrs["unsupported"] = len(by_claim)
        attrs["label"] = "✗ " + attrs["label"]
        for claim, detail in sorted(by_claim.items()):
            edge = graph.edges.get((part, claim))
            if edge is not None:
                edge["unsupported"] = 1
            title = graph.nodes[claim]["title"]
            graph.nodes[claim]["title"] = f"{title} — not said as cited in {attrs['id']}: {detail}"


def _unsupported(
    graph: nx.DiGraph, store: Store, story: str, claims: dict[str, str]
) -> dict[str, dict[str, str]]:
    """Part → {claim node → what differs}, for the support check's unsupported verdicts."""
    from ..claims.graphing import story_verdicts

    bad: dict[str, dict[str, str]] = defaultdict(dict)
    for (part, cid), verdict in story_verdicts(store, story).items():
        claim = claims.get(cid)
        if verdict.status == "unsupported" and part in graph and claim is not None:
            bad[part].setdefault(claim, verdict.detail)
    return bad


def _reuse_facets(graph: nx.DiGraph) -> None:
    """Filter facets (``publishers``, ``newsrooms``): a story's publishers, a manifest's and a
    publisher's citing newsrooms."""
    _publisher_facet(graph)
    rooms = {n: set(attrs["newsrooms"]) for n, attrs in graph.nodes(data=True)}
    for n in nodes_of(graph, "Manifest") + nodes_of(graph, "Publisher"):  # citers first
        rooms[n].update(*(rooms[c] for c in graph.predecessors(n)))
    for n, attrs in graph.nodes(data=True):
        attrs["newsrooms"] = tuple(sorted(rooms[n]))


def _publisher_facet(graph: nx.DiGraph) -> None:
    """The ``publishers`` facet: the publishers each node leads to (itself included)."""
    reach: dict[str, set[str]] = defaultdict(set)
    for p, attrs in graph.nodes(data=True):
        if attrs["type"] == "Publisher":
            for n in nx.ancestors(graph, p) | {p}:
                reach[n].add(attrs["id"])
    for n, attrs in graph.nodes(data=True):
        attrs["publishers"] = tuple(sorted(reach[n]))


#: View name → builder ``(store, focus, options) -> DiGraph``.
VIEWS: dict[str, Callable[[Store, Focus | None, MapOptions], nx.DiGraph]] = {
    "story": _story_view,
    "reuse": _reuse_view,
    "publisher": _publisher_view,
    "sources": _sources_view,
    "time": _time_view,
}


def citation_graph(
    store: Store,
    view: str = "reuse",
    focus: str | None = None,
    *,
    top: int | None = None,
    group_stories: str | None = None,
    overview: bool | None = None,
    include_withdrawn: bool = False,
) -> nx.DiGraph:
    """The networkx projection behind a citation map (attributes in docs/maps.md).

    Args:
        store: the store to read.
        view: a key of :data:`VIEWS`.
        focus: what :func:`~hcgraph.viz.focus.resolve_focus` resolves; required for
            ``publisher``, and for ``story`` when the store holds more than one story.
        top: reuse, sources: keep only the N manifests cited by the most stories.
        group_stories: reuse, publisher: one of :data:`STORY_GROUPS`.
        overview: reuse: manifests and publishers only, each one's citing stories in the
            ``drill`` graph attribute; ``None``: past :data:`OVERVIEW_STORIES` stories
            with no focus and no grouping.
        include_withdrawn: draw withdrawn stories too.

    Raises:
        VizError: unknown view or unresolvable focus.
    """
    builder = VIEWS.get(view)
    if builder is None:
        raise VizError(f"unknown view {view!r}; choose from {', '.join(VIEWS)}")
    if top is not None and top < 1:
        raise VizError("--top must be at least 1")
    if group_stories is not None and group_stories not in STORY_GROUPS:
        raise VizError(
            f"unknown story grouping {group_stories!r}; choose from {', '.join(STORY_GROUPS)}"
        )
    resolved = resolve_focus(store, focus) if focus else None
    return builder(store, resolved, MapOptions(top, group_stories, overview, include_withdrawn))
