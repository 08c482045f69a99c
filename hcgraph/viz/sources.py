"""The ``sources`` view: publisher → source → story as a circle packing.

The page is in docs/maps.md. The graph is the reuse graph with one more attribute,
``passages``: ``{(story, manifest): [(part IRI, plain text), …]}``, the story's parts citing
the manifest, within the limits below (sources with most citers first).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import networkx as nx

from ..store import Store
from .data import ReuseData, index_of, nodes_of, part_order, short
from .render import _http, page_meta, visible_bidi, visible_label

__all__ = [
    "PASSAGE_BUDGET",
    "PASSAGE_CHARS",
    "PASSAGE_STORIES",
    "load_passages",
    "sources_payload",
]

#: Citing stories per source whose passages the page carries (the newest first).
PASSAGE_STORIES = 12
#: Each passage is cut to this many characters (an ellipsis marks the cut).
PASSAGE_CHARS = 480
#: Passage text in one page, in characters, at most (10k stories: ~60 MB of paragraphs).
PASSAGE_BUDGET = 3_000_000

#: Per (story, manifest): the story's parts citing it, space-separated (one row per pair).
Q_PASSAGES = """
SELECT ?s ?m (GROUP_CONCAT(DISTINCT STR(?part); SEPARATOR=" ") AS ?parts)
WHERE { GRAPH ?s { ?c cito:hasCitingEntity ?part ; cito:hasCitedEntity ?m } } GROUP BY ?s ?m
"""
#: Every text over the union graph, picked in Python (typing the parts cost 3x as much).
Q_PART_TEXTS = "SELECT ?part ?text WHERE { ?part schema:text ?text }"
NO_PUBLISHER = "(no publisher)"

Passages = dict[tuple[str, str], list[tuple[str, str]]]


def _wanted_parts(
    store: Store, data: ReuseData, citers: dict[str, list[str]]
) -> dict[tuple[str, str], set[str]]:
    """(story, source) → its citing parts, for the newest :data:`PASSAGE_STORIES` citers."""
    parts: dict[tuple[str, str], set[str]] = defaultdict(set)
    for sol in store.query(Q_PASSAGES):
        s, m = sol["s"].value, sol["m"].value
        if (s, m) in data.cites:  # not a support graph's verdicts (they cite claims)
            parts[(s, m)].update(sol["parts"].value.split())
    return {
        (s, m): parts[(s, m)]
        for m, stories in citers.items()
        for s in stories[:PASSAGE_STORIES]
        if parts.get((s, m))
    }


def _part_texts(store: Store, needed: set[str]) -> dict[str, str]:
    """Each of the ``needed`` parts' first text as the page shows it: Markdown marks
    stripped, one paragraph, cut."""
    from ..claims.plaintext import plain

    texts: dict[str, str] = {}
    for sol in store.query(Q_PART_TEXTS):
        p = sol["part"].value
        if p in needed and p not in texts:
            texts[p] = short(plain(sol["text"].value).text, PASSAGE_CHARS)
    return texts


def load_passages(store: Store, data: ReuseData) -> Passages:
    """The citing passages of the newest :data:`PASSAGE_STORIES` citers of each source,
    within :data:`PASSAGE_BUDGET` (sources with most citers first)."""
    citers = _newest_first(data)
    wanted = _wanted_parts(store, data, citers)
    texts = _part_texts(store, {p for ps in wanted.values() for p in ps})
    out: Passages = {}
    used = 0
    for m in sorted(citers, key=lambda m: (-len(citers[m]), m)):
        for s in citers[m][:PASSAGE_STORIES]:
            rows = [(p, texts.get(p, "")) for p in sorted(wanted.get((s, m), ()), key=part_order)]
            size = sum(len(t) for _p, t in rows)
            if rows and used + size <= PASSAGE_BUDGET:
                out[(s, m)] = rows
                used += size
    return out


def _newest_first(data: ReuseData) -> dict[str, list[str]]:
    """Manifest → its citing stories, newest first (then by IRI)."""
    citers: dict[str, list[str]] = defaultdict(list)
    for s, m in sorted(data.cites):
        citers[m].append(s)
    for stories in citers.values():
        stories.sort(key=lambda s: data.stories[s].date, reverse=True)  # stable: IRI order
    return dict(citers)


def sources_payload(graph: nx.DiGraph) -> dict[str, Any]:
    """The page's data: publishers, their sources, the citing stories and their passages.

    ``sources`` rows: ``[iri, label, title, url, date, publisher index, citing stories,
    manifest id]``; ``citers[k]``: source k's ``[story index, [passage index, …]]`` rows,
    newest story first; ``stories`` rows: ``[url, headline, date, newsroom, unsupported]``;
    ``passages`` rows: ``[part IRI, text]``; ``publishers`` rows: ``[label, name, reach,
    IRI]``, the largest reach first. Text is made safe where the page writes it (textContent).
    """
    nodes = graph.nodes
    pubs = sorted(  # the largest reach first, then by label
        nodes_of(graph, "Publisher"),
        key=lambda p: (-int(nodes[p].get("stories", 0)), nodes[p]["label"]),
    )
    pub_ix = index_of(pubs)
    stories = nodes_of(graph, "Story")
    stories.sort(key=lambda s: nodes[s]["date"], reverse=True)  # newest first, then IRI order
    manifests = nodes_of(graph, "Manifest")
    sources = [_source_row(graph, m, pub_ix) for m in manifests]
    citers, passage_rows = _citer_rows(graph, manifests, stories)
    publishers = [[visible_label(nodes[p]["label"] or p), visible_bidi(nodes[p]["title"]),
                   int(nodes[p].get("stories", 0)), p] for p in pubs]  # fmt: skip
    if any(row[5] == len(pubs) for row in sources):
        publishers.append([NO_PUBLISHER, NO_PUBLISHER, 0, "urn:hcgraph:no-publisher"])
    return {
        "publishers": publishers,
        "sources": sources,
        "citers": citers,
        "stories": [_story_row(nodes[s]) for s in stories],
        "passages": passage_rows,
        "meta": page_meta(graph, "sources"),
    }


def _source_row(graph: nx.DiGraph, m: str, pub_ix: dict[str, int]) -> list[Any]:
    """A source as the page lists it (no publisher: one past the publishers)."""
    a = graph.nodes[m]
    owners = sorted(p for p in graph.successors(m) if p in pub_ix)
    publisher = pub_ix[owners[0]] if owners else len(pub_ix)
    return [m, visible_label(a["label"] or m), visible_bidi(a["title"]), _http(a["url"]),
            a["date"], publisher, int(a.get("stories", 0)), a["id"]]  # fmt: skip


def _citer_rows(
    graph: nx.DiGraph, manifests: list[str], stories: list[str]
) -> tuple[list[list[list[Any]]], list[list[str]]]:
    """Each source's ``[story index, [passage index, …]]`` rows, and the passage rows."""
    passages: Passages = graph.graph.get("passages", {})
    index = index_of(stories)
    citers: list[list[list[Any]]] = []
    passage_rows: list[list[str]] = []
    for m in manifests:
        rows: list[list[Any]] = []
        for k in sorted(index[s] for s in graph.predecessors(m) if s in index):
            first = len(passage_rows)
            texts = passages.get((stories[k], m), ())
            passage_rows += [[_http(p), visible_bidi(t)] for p, t in texts]
            rows.append([k, list(range(first, len(passage_rows)))])
        citers.append(rows)
    return citers, passage_rows


def _story_row(a: dict[str, Any]) -> list[Any]:
    """A story as the page lists it (see :func:`sources_payload`)."""
    return [_http(a["url"]), visible_bidi(a["title"] or a["label"]), a["date"],
            ", ".join(a["newsrooms"]), int(a.get("unsupported", 0) or 0)]  # fmt: skip
