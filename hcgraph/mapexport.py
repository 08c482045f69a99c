"""The reuse map for other tools: VOSviewer JSON and a dynamic GEXF for Gephi's timeline.

Both hold the reuse map's network with every story drawn, its counts, Louvain communities as
clusters, layout and each node's *start* day (rules in ``docs/graph.md``). Same store, same bytes.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
import xml.etree.ElementTree as ET
from typing import Any, BinaryIO

import networkx as nx

from ._version import __version__
from .htmltext import visible_bidi
from .rdftext import XML_FORBIDDEN
from .store import Store

__all__ = [
    "reuse_network",
    "start_dates",
    "vosviewer_network",
    "write_dynamic_gexf",
    "write_vosviewer",
]

#: VOSviewer numbers clusters 1 … 1000: communities past the 999th share the last one.
MAX_CLUSTERS = 1000
GEXF_NS = "http://gexf.net/1.3"
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_NODE_ATTRS = (("type", "string"), ("iri", "string"), ("url", "string"),
               ("date", "string"), ("stories", "integer"), ("community", "integer"))  # fmt: skip


def reuse_network(store: Store) -> nx.DiGraph:
    """The reuse map's graph with every current story drawn (no overview, no folding)."""
    from .viz.views import citation_graph  # the viz package is loaded only when used

    return citation_graph(store, "reuse", overview=False)


def _day(text: str) -> dt.date | None:
    """A ``YYYY-MM-DD`` day, or None for anything else (empty, a range, year 0)."""
    if not _DAY.fullmatch(text):
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


def start_dates(graph: nx.DiGraph) -> dict[str, dt.date | None]:
    """Each node's start day (None: from the beginning; rules in ``docs/graph.md``)."""
    from .viz.data import nodes_of

    start: dict[str, dt.date | None] = {}
    for kind in ("Story", "Manifest", "Publisher"):  # each kind's citers come before it
        for n in nodes_of(graph, kind):
            start[n] = _start(graph, n, kind, start)
    return start


def _start(
    graph: nx.DiGraph, n: str, kind: str, start: dict[str, dt.date | None]
) -> dt.date | None:
    """A story's day; else the earliest of its own day and its citers' starts (None: a citer
    is undated, or no day is known)."""
    own = _day(graph.nodes[n]["date"]) if kind != "Publisher" else None
    if kind == "Story":
        return own
    days = [start[c] for c in graph.predecessors(n) if c in start]
    known = [d for d in (*days, own) if d is not None]
    return None if None in days or not known else min(known)


def _strength(graph: nx.DiGraph, source: str) -> int:
    """Citing stories a link from ``source`` carries: 1 for a story, else its count (≥ 1)."""
    attrs = graph.nodes[source]
    return 1 if attrs["type"] == "Story" else max(1, int(attrs.get("stories", 0) or 0))


def _clusters(graph: nx.DiGraph) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """Node → cluster number (1 …, at most :data:`MAX_CLUSTERS`) and the named clusters."""
    from .viz.layout import communities
    from .viz.render import cluster_name

    groups = communities(graph) or ([sorted(graph)] if len(graph) else [])
    number: dict[str, int] = {}
    named: list[dict[str, Any]] = []
    for k, members in enumerate(groups, start=1):
        cluster = min(k, MAX_CLUSTERS)
        number.update(dict.fromkeys(members, cluster))
        if k < MAX_CLUSTERS:
            named.append({"cluster": cluster, "label": cluster_name(graph, members)["label"]})
        elif k == MAX_CLUSTERS:
            rest = f"{len(groups) - k + 1} smaller communities"
            named.append({"cluster": cluster, "label": rest})
    return number, named


def _label(graph: nx.DiGraph, n: str) -> str:
    return str(graph.nodes[n].get("label") or n)


def _decimal_year(day: dt.date) -> float:
    """2026-07-02 → 2026.5: a date as a number VOSviewer can colour by (and show)."""
    first = dt.date(day.year, 1, 1)
    length = (dt.date(day.year + 1, 1, 1) - first).days if day.year < 9999 else 365
    return round(day.year + (day - first).days / length, 4)


def _description(attrs: dict[str, Any], day: dt.date | None) -> str:
    """The item's info panel (HTML in VOSviewer): every value escaped, so text stays text, and
    the title's bidi controls shown, not obeyed (as its label and the map show them)."""
    parts = [f"<b>{html.escape(attrs['type'])}</b>"]
    if attrs.get("title"):
        parts.append(html.escape(visible_bidi(attrs["title"])))
    if day is not None:
        parts.append(f"Date: {day.isoformat()}")
    parts.append(f"Citing stories: {int(attrs.get('stories', 0) or 0)}")
    parts.append(html.escape(attrs["iri"]))
    return "<br>".join(parts)


def vosviewer_network(store: Store) -> dict[str, Any]:
    """The VOSviewer JSON document (a dict) of the store's reuse network."""
    from .viz.layout import compute_layout
    from .viz.render import visible_label

    graph = reuse_network(store)
    nodes = sorted(graph)
    ids = {n: i for i, n in enumerate(nodes, start=1)}
    cluster, named = _clusters(graph)
    start = start_dates(graph)
    pos = compute_layout(graph)
    items = []
    for n in nodes:
        attrs, day = graph.nodes[n], start[n]
        item: dict[str, Any] = {
            "id": ids[n], "label": visible_label(_label(graph, n)),
            "x": pos[n][0], "y": -pos[n][1],  # the map's y grows downwards, VOSviewer's up
            "cluster": cluster[n],
            "weights": {"Citing stories": int(attrs.get("stories", 0) or 0)},
            # no Date score for an undated node (VOSviewer reads it as null)
            "scores": {} if day is None else {"Date": _decimal_year(day)},
            "description": _description(attrs, day),
        }  # fmt: skip
        url = attrs.get("url", "")
        if url.startswith(("https://", "http://")):  # no javascript: or data: links
            item["url"] = url
        items.append(item)
    links = [
        {"source_id": ids[s], "target_id": ids[t], "strength": _strength(graph, s)}
        for s, t in sorted(graph.edges())
    ]
    return {
        "network": {"items": items, "links": links, "clusters": named},
        "config": {"terminology": {
            "item": "node", "items": "nodes", "link": "citation", "links": "citations",
            "cluster": "community", "clusters": "communities",
            "link_strength": "citing stories", "total_link_strength": "total citing stories",
        }},
        "info": {"title": graph.graph.get("title", ""), "description": html.escape(
            "hcgraph's reuse map: stories, the manifests they cite and their publishers; "
            "size: citing stories; colour: community, or Date (a decimal year)."
        )},
    }  # fmt: skip


def write_vosviewer(store: Store, out: BinaryIO) -> None:
    """The reuse network as a VOSviewer JSON file (UTF-8)."""
    text = json.dumps(vosviewer_network(store), ensure_ascii=False, indent=1)
    out.write(text.encode() + b"\n")


def _text(value: object) -> str:
    """A value XML 1.0 can hold (its forbidden characters become U+FFFD)."""
    return XML_FORBIDDEN.sub("\ufffd", str(value))


def write_dynamic_gexf(store: Store, out: BinaryIO) -> None:
    """The reuse network as a dynamic GEXF 1.3: ``start`` dates for Gephi's timeline."""
    graph = reuse_network(store)
    cluster, _named = _clusters(graph)
    start = start_dates(graph)
    root = ET.Element("gexf", {"xmlns": GEXF_NS, "version": "1.3"})
    meta = ET.SubElement(root, "meta")
    ET.SubElement(meta, "creator").text = f"hcgraph {__version__}"
    ET.SubElement(meta, "description").text = _text(graph.graph.get("title", ""))
    g = ET.SubElement(root, "graph", {"mode": "dynamic", "timeformat": "date",
                                      "defaultedgetype": "directed"})  # fmt: skip
    for cls, declared in (("node", _NODE_ATTRS), ("edge", (("relation", "string"),))):
        attributes = ET.SubElement(g, "attributes", {"class": cls})
        for i, (title, kind) in enumerate(declared):
            ET.SubElement(attributes, "attribute", {"id": str(i), "title": title, "type": kind})
    nodes = ET.SubElement(g, "nodes", {"count": str(len(graph))})
    for n in sorted(graph):
        a = graph.nodes[n]
        row = (a["type"], a["iri"], a.get("url", ""), a.get("date", ""),
               int(a.get("stories", 0) or 0), cluster[n])  # fmt: skip
        _gexf_item(nodes, "node", {"id": _text(n), "label": _text(_label(graph, n))}, start[n], row)
    edges = ET.SubElement(g, "edges", {"count": str(graph.number_of_edges())})
    for i, (s, t) in enumerate(sorted(graph.edges())):
        attrs = {"id": f"e{i}", "source": _text(s), "target": _text(t),
                 "weight": str(_strength(graph, s))}  # fmt: skip
        _gexf_item(edges, "edge", attrs, start[s], (graph.edges[s, t]["relation"],))
    ET.indent(root)
    ET.ElementTree(root).write(out, encoding="utf-8", xml_declaration=True)
    out.write(b"\n")


def _gexf_item(
    parent: ET.Element, tag: str, attrs: dict[str, str], day: dt.date | None, row: tuple[Any, ...]
) -> None:
    """A GEXF node or edge: its ``start`` day (if known) and its non-empty attribute values."""
    item = ET.SubElement(parent, tag, attrs)
    if day is not None:
        item.set("start", day.isoformat())
    values = ET.SubElement(item, "attvalues")
    for i, v in enumerate(row):
        if v != "":
            ET.SubElement(values, "attvalue", {"for": str(i), "value": _text(v)})
