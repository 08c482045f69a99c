"""The ``sources`` view: publisher → source → story as a circle packing (issue 40).

A reader asking "which publishers feed these stories, and through which sources?" gets a
hierarchy: one circle per publisher holding one circle per source (manifest) it published,
a source's area proportional to the distinct stories citing it. The page packs the circles
with the vendored d3-hierarchy (``d3.pack``; 5,000 sources pack in milliseconds in the
browser, see bench/RESULTS.md) and draws them as SVG. A click on a source lists the stories
citing it, newest first, each with the text of its citing paragraphs, and packs those
stories as small circles inside the source.

The graph is the reuse graph (stories → manifests → publishers, counts over the whole
store) with one more graph attribute, ``passages``: ``{(story, manifest): [(part IRI,
plain text), …]}``, the paragraphs and key facts of the story citing the manifest. The text
of the newest :data:`PASSAGE_STORIES` citing stories of each source is kept, each passage cut
to :data:`PASSAGE_CHARS` characters, up to :data:`PASSAGE_BUDGET` characters in all (sources
with most citers first); the others are listed with a link to the story.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import networkx as nx

from ..store import Store
from .data import ReuseData, load_reuse, short
from .focus import Focus

__all__ = [
    "PASSAGE_BUDGET",
    "PASSAGE_CHARS",
    "PASSAGE_STORIES",
    "render_sources",
    "sources_payload",
    "sources_view",
]

#: Citing stories per source whose passages the page carries (the newest first).
PASSAGE_STORIES = 12
#: Each passage is cut to this many characters (an ellipsis marks the cut).
PASSAGE_CHARS = 480
#: Passage text in one page, in characters, at most (10k stories: ~60 MB of paragraphs).
PASSAGE_BUDGET = 3_000_000

#: Per (story, manifest): the story's parts citing it, space-separated (one row per pair:
#: a quarter of the rows of one per citation, 10k stories: 45k rows, ~4 CPU s).
Q_PASSAGES = """
SELECT ?s ?m (GROUP_CONCAT(DISTINCT STR(?part); SEPARATOR=" ") AS ?parts)
WHERE { GRAPH ?s { ?c cito:hasCitingEntity ?part ; cito:hasCitedEntity ?m } } GROUP BY ?s ?m
"""
#: Every text, over the union graph (one index scan; typing the parts cost three times as
#: much); the passages needed are picked in Python.
Q_PART_TEXTS = "SELECT ?part ?text WHERE { ?part schema:text ?text }"
NO_PUBLISHER = "(no publisher)"


def _part_key(iri: str) -> tuple[int, ...]:
    """``…#s2-p10`` → (2, 10), key facts (``#kf3``) after the sections: document order."""
    frag = iri.rsplit("#", 1)[-1]
    nums = tuple(int(n) for n in re.findall(r"\d+", frag))
    return ((1 << 20,) if frag.startswith("kf") else ()) + nums


def _plain(text: str) -> str:
    """A passage as the page shows it: Markdown marks stripped, one paragraph, cut."""
    from ..claims.plaintext import plain

    return short(plain(text).text, PASSAGE_CHARS)


def load_passages(
    store: Store, data: ReuseData, citers: dict[str, list[str]]
) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """The citing passages of the newest :data:`PASSAGE_STORIES` citers of each source
    (``citers``: manifest → stories, newest first), within :data:`PASSAGE_BUDGET`."""
    parts: dict[tuple[str, str], set[str]] = defaultdict(set)
    for sol in store.query(Q_PASSAGES):
        s, m = sol["s"].value, sol["m"].value
        if (s, m) in data.cites:  # not a support graph's verdicts (they cite claims)
            parts[(s, m)].update(sol["parts"].value.split())
    wanted: dict[tuple[str, str], set[str]] = {}
    for m, stories in citers.items():
        for s in stories[:PASSAGE_STORIES]:
            if parts.get((s, m)):
                wanted[(s, m)] = parts[(s, m)]
    needed = {p for ps in wanted.values() for p in ps}
    texts = {}
    for sol in store.query(Q_PART_TEXTS):
        p = sol["part"].value
        if p in needed and p not in texts:
            texts[p] = _plain(sol["text"].value)
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    used = 0
    for m in sorted(citers, key=lambda m: (-len(citers[m]), m)):
        for s in citers[m][:PASSAGE_STORIES]:
            rows = [(p, texts.get(p, "")) for p in sorted(wanted.get((s, m), ()), key=_part_key)]
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


def sources_view(
    store: Store,
    focus: Focus | None,
    *,
    top: int | None = None,
    include_withdrawn: bool = False,
    **_: Any,
) -> nx.DiGraph:
    """The reuse graph of every story, with the citing passages (``passages``) attached.

    ``focus`` (a source or publisher) is selected when the page opens; ``top`` keeps the
    ``top`` sources cited by most stories.
    """
    from .views import _keep_top, _reuse_graph

    data = load_reuse(store, claims=False, include_withdrawn=include_withdrawn)
    counts = data.citations()
    note = _keep_top(data, top, counts) if top is not None else ""
    graph = _reuse_graph(data, counts, claims=False)
    citers = _newest_first(data)
    passages = load_passages(store, data, citers)
    kept = len(passages)
    pairs = len(data.cites)
    if kept < pairs:
        extra = (f"passages of the newest {PASSAGE_STORIES} citing stories of each source"
                 f" ({kept} of {pairs} story-source pairs); the others linked")  # fmt: skip
        note = f"{note}; {extra}" if note else extra
    graph.graph.update(view="sources", focus=focus.iri if focus else None, note=note,
                       title="Publishers → sources → stories", passages=passages)  # fmt: skip
    return graph


def sources_payload(graph: nx.DiGraph) -> dict[str, Any]:
    """The page's data: publishers, their sources, the citing stories and their passages.

    ``sources`` rows: ``[iri, label, title, url, date, publisher index, citing stories,
    manifest id]``; ``citers[k]``: source k's ``[story index, [passage index, …]]`` rows,
    newest story first; ``stories`` rows: ``[url, headline, date, newsroom]``; ``passages``
    rows: ``[part IRI, text]``; ``publishers`` rows: ``[label, name, reach, IRI]``, the
    largest reach first. Text is made safe where the page writes it (textContent).
    """
    from .render import _http, page_meta, visible_bidi, visible_label

    nodes = graph.nodes
    pubs = sorted(n for n in graph if nodes[n]["type"] == "Publisher")
    pubs.sort(key=lambda p: (-int(nodes[p].get("stories", 0)), nodes[p]["label"]))
    pub_ix = {p: k for k, p in enumerate(pubs)}
    stories = sorted(n for n in graph if nodes[n]["type"] == "Story")
    stories.sort(key=lambda s: nodes[s]["date"], reverse=True)  # newest first, then IRI order
    story_ix = {s: k for k, s in enumerate(stories)}
    manifests = sorted(n for n in graph if nodes[n]["type"] == "Manifest")
    passages: dict[tuple[str, str], list[tuple[str, str]]] = graph.graph.get("passages", {})
    passage_rows: list[list[str]] = []
    sources, citers = [], []
    no_pub = len(pubs)
    for m in manifests:
        a = nodes[m]
        owners = sorted(p for p in graph.successors(m) if p in pub_ix)
        sources.append([m, visible_label(a["label"] or m), visible_bidi(a["title"]),
                        _http(a["url"]), a["date"], pub_ix[owners[0]] if owners else no_pub,
                        int(a.get("stories", 0)), a["id"]])  # fmt: skip
        rows = []
        citing = sorted(story_ix[s] for s in graph.predecessors(m) if s in story_ix)
        for s in (stories[k] for k in citing):
            ixs = []
            for part, text in passages.get((s, m), ()):
                ixs.append(len(passage_rows))
                passage_rows.append([_http(part), visible_bidi(text)])
            rows.append([story_ix[s], ixs])
        citers.append(rows)
    publishers = [[visible_label(nodes[p]["label"] or p), visible_bidi(nodes[p]["title"]),
                   int(nodes[p].get("stories", 0)), p] for p in pubs]  # fmt: skip
    if any(row[5] == no_pub for row in sources):
        publishers.append([NO_PUBLISHER, NO_PUBLISHER, 0, "urn:hcgraph:no-publisher"])
    return {
        "publishers": publishers,
        "sources": sources,
        "citers": citers,
        "stories": [_story_row(nodes[s]) for s in stories],
        "passages": passage_rows,
        "meta": page_meta(graph, "sources"),
    }


def _story_row(a: dict[str, Any]) -> list[str]:
    """A story as the page lists it: ``[url, headline, date, newsrooms]``."""
    from .render import _http, visible_bidi

    return [_http(a["url"]), visible_bidi(a["title"] or a["label"]), a["date"],
            ", ".join(a["newsrooms"])]  # fmt: skip


def render_sources(graph: nx.DiGraph) -> str:
    """The sources view as one self-contained page (vendored d3-hierarchy, CSP by hash)."""
    from .render import D3_HIERARCHY_SHA256, D3_HIERARCHY_VERSION, _vendored, render_page

    return render_page(
        "template_sources.html",
        sources_payload(graph),
        d3_version=D3_HIERARCHY_VERSION,
        d3_js=_vendored("d3-hierarchy.min.js", D3_HIERARCHY_SHA256),
    )
