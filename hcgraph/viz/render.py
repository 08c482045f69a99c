"""Turn a citation-graph projection into one self-contained, safe HTML file.

vis-network (canvas) or sigma.js (WebGL) pages, vendored scripts inlined, under a CSP that
forbids every network load and allows only the page's inline scripts by hash
(docs/security.md); the graph goes in as escaped JSON, untrusted text as text, bidi shown.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import networkx as nx
from jinja2 import Environment, PackageLoader, select_autoescape

from .._io import write_atomic
from .._version import __version__
from ..errors import OutputError, VizError
from ..htmltext import script_safe, visible_bidi, with_script_hashes
from .data import LABEL, index_of, short
from .layout import Positions, communities, compute_layout
from .style import NodeStyle, document_icon, largest_count, node_size, styles_for

__all__ = [
    "D3_HIERARCHY_VERSION",
    "GL_NODES",
    "GRAPHOLOGY_VERSION",
    "RENDERERS",
    "SIGMA_VERSION",
    "VIS_NETWORK_VERSION",
    "VIS_SHA256",
    "MapInfo",
    "cluster_name",
    "render_map",
    "safe_json",
    "visible_bidi",
    "write_map",
]

VIS_NETWORK_VERSION = "10.1.5"
VIS_SHA256 = "b427322ad953d70ab75d1b798ebb8349863502f244e02de3e12a4ab7dfeddf2c"
SIGMA_VERSION = "3.0.2"
SIGMA_SHA256 = "be6f790da9c1856765b1c430de3b1aac50433223361870edb3097a9868218a88"
GRAPHOLOGY_VERSION = "0.26.0"
GRAPHOLOGY_SHA256 = "dc337efa23903f61e064c8e7e7f93a429e6855dccfc2458802b4ed30c621c087"
D3_HIERARCHY_VERSION = "3.1.3"
D3_HIERARCHY_SHA256 = "971f374ce9fdbec711eb2358003e2bb755bff22ec6852dc5ebd59f987270db64"
#: ``auto`` draws maps of more than this many nodes with WebGL, smaller ones on a canvas.
GL_NODES = 1000
#: The page renderers: ``auto``, ``webgl`` (sigma.js + graphology), ``canvas`` (vis-network).
RENDERERS = ("auto", "webgl", "canvas")
#: Beyond this many edges, edges are hidden while dragging/zooming to keep panning smooth.
_BIG = 3000
#: The ranking panel's top sources and publishers; their labels are drawn at every zoom.
TOP_N = 10


def safe_json(value: Any) -> str:
    """JSON that is safe inside an HTML ``<script>`` element: no ``<``, ``>``, ``&``, U+2028/9;
    plain ASCII (lone surrogates and control characters escaped too)."""
    return script_safe(json.dumps(value, ensure_ascii=True, separators=(",", ":")))


@cache
def _vendored(name: str, sha256: str) -> str:
    """A vendored bundle from ``static/``, checked against its recorded sha256, inlinable."""
    data = resources.files("hcgraph.viz").joinpath(f"static/{name}").read_bytes()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise VizError(f"hcgraph/viz/static/{name} does not match its recorded sha256")
    text = data.decode("utf-8")
    # Drop the source-map comment so no browser ever asks for the .map file.
    text = re.sub(r"\n?//# sourceMappingURL=\S+\s*$", "\n", text)
    if "</script" in text.lower() or "<!--" in text:
        raise VizError(f"vendored {name} contains '</script' or '<!--'; cannot inline it")
    return text


@cache
def _env() -> Environment:
    """One autoescaping environment for every page (a zipped package works too)."""
    return Environment(
        loader=PackageLoader("hcgraph.viz", "."),
        autoescape=select_autoescape(default=True),
        keep_trailing_newline=True,
    )


def _http(url: str) -> str:
    """Only http(s) links reach the page (a ``javascript:`` URL in the data stays text)."""
    return url if url.lower().startswith(("http://", "https://")) else ""


@dataclass(frozen=True)
class MapInfo:
    """What :func:`write_map` wrote."""

    path: Path
    view: str
    nodes: int
    edges: int
    bytes: int


def _options(styles: dict[str, Any], edges: int) -> dict[str, Any]:
    big = edges > _BIG
    edge_color = {"color": "#9aa4b2", "highlight": "#24292f", "hover": "#57606a", "inherit": False}
    return {
        "autoResize": True,
        "physics": {"enabled": False},
        "layout": {"improvedLayout": False, "randomSeed": 7},
        "interaction": {
            "hover": not big,
            "tooltipDelay": 150,
            "hideEdgesOnDrag": big,
            "hideEdgesOnZoom": big,
            "keyboard": False,
            "multiselect": False,
        },
        "edges": {
            "smooth": False,
            "arrows": {"to": {"enabled": True, "scaleFactor": 0.45}},
            "color": edge_color,
            "selectionWidth": 1.5,
        },
        "nodes": {
            "borderWidth": 1,
            "font": {
                "size": 13,
                "face": "DejaVu Sans, Arial, sans-serif",
                "strokeWidth": 3,
                "strokeColor": "#ffffff",
            },
            "scaling": {"label": {"drawThreshold": 6}},
        },
        "groups": {t: _group(s) for t, s in styles.items()},
    }


def _group(style: NodeStyle) -> dict[str, Any]:
    group: dict[str, Any] = {
        "shape": style.shape,
        "color": {"background": style.color, "border": style.border,
                  "highlight": {"background": style.color, "border": "#24292f"},
                  "hover": {"background": style.color, "border": "#24292f"}},
    }  # fmt: skip
    if style.shape == "image":
        group["image"] = document_icon(style.color, style.border)
    return group


def build_payload(graph: nx.DiGraph, positions: Positions | None = None) -> dict[str, Any]:
    """The page's data: nodes, edges, options, facets, ranking, drill-down and ``meta``."""
    from .quality import connected_closeness  # numpy: loaded only when a map is drawn

    positions = positions if positions is not None else compute_layout(graph)
    meta = page_meta(graph, graph.graph.get("view", ""))
    meta["layoutQuality"] = connected_closeness(graph, positions)
    drill = graph.graph.get("drill")
    types, publishers, newsrooms = _facets(graph)
    ranking = _ranking(graph)
    styles = styles_for(types)
    legend = [{"type": t, "color": styles[t].color, "border": styles[t].border,
               "shape": styles[t].shape} for t in types]  # fmt: skip
    return {
        "nodes": _node_rows(graph, positions, styles, publishers, newsrooms),
        "edges": _edge_rows(graph),
        "options": _options(styles, graph.number_of_edges()),
        "legend": legend,
        "publishers": [visible_bidi(p) for p in publishers],
        "ranking": ranking,
        "drill": _drill_payload(drill) if drill else None,
        "always": _always_labelled(graph, ranking),
        "newsrooms": [visible_bidi(r) for r in newsrooms],
        "meta": meta,
    }


def page_meta(graph: nx.DiGraph, view: str) -> dict[str, Any]:
    """What every map page says about itself: view, focus, title, note and size."""
    return {
        "view": view,
        "focus": graph.graph.get("focus") or "",
        "title": visible_bidi(graph.graph.get("title", "")),
        "note": visible_bidi(graph.graph.get("note", "")),
        "nodes": graph.number_of_nodes(),
        "edges": graph.number_of_edges(),
    }


def _facets(graph: nx.DiGraph) -> tuple[list[str], list[str], list[str]]:
    """The map's node types (the overview's drawn-on-demand stories too), publishers, newsrooms."""
    attrs = [a for _n, a in graph.nodes(data=True)]
    types = {a["type"] for a in attrs} | ({"Story"} if graph.graph.get("drill") else set())
    publishers = {p for a in attrs for p in a.get("publishers", ())}
    newsrooms = {r for a in attrs for r in a.get("newsrooms", ())}
    return sorted(types), sorted(publishers), sorted(newsrooms)


def _always_labelled(graph: nx.DiGraph, ranking: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The nodes whose labels are placed first: the focus, then the ranking's sources and
    publishers interleaved (so the top publishers find a free place)."""
    src, pub = ranking["sources"], ranking["publishers"]
    always = [
        r["id"] for k in range(max(len(src), len(pub))) for r in src[k : k + 1] + pub[k : k + 1]
    ]
    focus = graph.graph.get("focus") or ""
    if focus in graph and focus not in always:
        always.insert(0, focus)
    return always


def _node_rows(
    graph: nx.DiGraph,
    positions: Positions,
    styles: dict[str, NodeStyle],
    publishers: list[str],
    newsrooms: list[str],
) -> list[dict[str, Any]]:
    """One row a node, in node order; the page script builds the plain-text tooltip and
    the details panel from the extra keys. Sizes show counts, but in the story trail."""
    max_count = 0 if graph.graph.get("view") == "story" else largest_count(graph)
    pub_ix, room_ix = index_of(publishers), index_of(newsrooms)
    rows = []
    for n in sorted(graph):
        a = graph.nodes[n]
        style = styles[a["type"]]
        x, y = positions.get(n, (0.0, 0.0))
        row = dict(
            id=n,
            label=visible_label(a["label"] or n),
            shape=style.shape,
            group=a["type"],
            x=x,
            y=y,
            size=node_size(a, style, max_count),
            t=visible_bidi(a.get("title", "")),
            d=a.get("date", ""),
            i=visible_bidi(a.get("id", "")),  # shown (tooltip, details): an id is any text
            u=_http(a.get("url", "")),
            s=int(a.get("stories", 0) or 0),
            p=[pub_ix[p] for p in a.get("publishers", ())],
            r=[room_ix[r] for r in a.get("newsrooms", ())],
        )
        for key, attr in (("g", "uncited"), ("v", "unsupported")):
            if a.get(attr):
                row[key] = int(a[attr])
        rows.append(row)
    return rows


_EDGE_KEYS = (("claims", "c"), ("stories", "n"), ("citations", "k"))


def _edge_rows(graph: nx.DiGraph) -> list[dict[str, Any]]:
    """One row an edge, in (source, target) order; optional counts only where present."""
    edges: list[dict[str, Any]] = []
    for k, (s, o, a) in enumerate(sorted(graph.edges(data=True), key=lambda e: (e[0], e[1]))):
        width = min(10, max(1, int(a.get("weight", 1) or 1)))
        row = {"from": s, "to": o, "id": k, "width": width, "rel": a.get("relation", "")}
        edges.append(row | {short: a[key] for key, short in _EDGE_KEYS if a.get(key) is not None})
    return edges


def _drill_payload(drill: dict[str, Any]) -> dict[str, Any]:
    """The overview's story table, compact: ``[iri-or-"", headline, date]`` rows."""
    return {
        "stories": [
            [_http(iri), visible_bidi(title), date] for iri, title, date in drill["stories"]
        ],
        "citers": drill["citers"],
    }


def _ranking(graph: nx.DiGraph) -> dict[str, list[dict[str, Any]]]:
    """The top :data:`TOP_N` manifests and publishers by distinct citing stories (ties by
    label, then IRI)."""

    def top(kind: str) -> list[dict[str, Any]]:
        rows = [(n, a) for n, a in graph.nodes(data=True) if a["type"] == kind]
        rows.sort(key=lambda r: (-int(r[1].get("stories", 0) or 0), r[1]["label"], r[0]))
        return [{"id": n, "label": visible_label(a["label"] or n),
                 "count": int(a.get("stories", 0) or 0)} for n, a in rows[:TOP_N]]  # fmt: skip

    return {"sources": top("Manifest"), "publishers": top("Publisher")}


def pick_renderer(graph: nx.DiGraph, renderer: str = "auto") -> str:
    """``webgl`` or ``canvas``: ``auto`` is WebGL past :data:`GL_NODES` nodes, but not for an
    overview (vis-network's DataSet takes the stories drawn on demand)."""
    if renderer not in RENDERERS:
        raise VizError(f"unknown renderer {renderer!r}: choose one of {', '.join(RENDERERS)}")
    if renderer != "auto":
        return renderer
    return "canvas" if graph.graph.get("drill") or graph.number_of_nodes() <= GL_NODES else "webgl"


def render_map(
    graph: nx.DiGraph, positions: Positions | None = None, *, renderer: str = "auto"
) -> str:
    """The whole map as one HTML string, deterministic; ``renderer`` as for
    :func:`pick_renderer`."""
    from .sources import sources_payload
    from .timeline import time_payload

    view = graph.graph.get("view", "")
    if view in ("sources", "time") and renderer != "auto":
        raise VizError(f"the {view} view has one renderer: drop --renderer")
    if view == "sources":  # circles packed by the vendored d3-hierarchy
        d3_js = _vendored("d3-hierarchy.min.js", D3_HIERARCHY_SHA256)
        payload = sources_payload(graph)
        return render_page(
            "template_sources.html", payload, d3_version=D3_HIERARCHY_VERSION, d3_js=d3_js
        )
    if view == "time":  # a 2D canvas: no vendored script
        return render_page("template_time.html", time_payload(graph))
    payload = build_payload(graph, positions)
    if pick_renderer(graph, renderer) == "canvas":
        vis_js = _vendored("vis-network.min.js", VIS_SHA256)
        return render_page("template.html", payload, vis_version=VIS_NETWORK_VERSION, vis_js=vis_js)
    gl_payload(graph, payload)
    return render_page(
        "template_gl.html",
        payload,
        sigma_version=SIGMA_VERSION,
        graphology_version=GRAPHOLOGY_VERSION,
        sigma_js=_vendored("sigma.min.js", SIGMA_SHA256),
        graphology_js=_vendored("graphology.umd.min.js", GRAPHOLOGY_SHA256),
    )


def render_page(name: str, payload: dict[str, Any], **scripts: str) -> str:
    """Template ``name`` rendered with ``payload`` as safe JSON and the CSP's script hashes."""
    template = _env().get_template(name)
    html = template.render(
        title=payload["meta"]["title"] or "hcgraph citation map",
        meta=payload["meta"],
        version=__version__,
        data_json=safe_json(payload),
        **scripts,
    )
    return with_script_hashes(html)


#: The WebGL page's node columns (the keys of :func:`_node_rows`' rows; ``group`` as an index
#: into the legend).
_GL_NODE_KEYS = ("id", "label", "group", "x", "y", "t", "d", "i", "u", "s", "p", "r", "g", "v", "c")


def gl_payload(graph: nx.DiGraph, payload: dict[str, Any]) -> None:
    """The WebGL page's payload, in place: nodes and edges as columns, ``clusters`` named,
    biggest first; what the WebGL page does not read dropped."""
    payload.pop("options", None)
    clusters = communities(graph)
    payload["nodes"] = _gl_columns(payload["nodes"], payload["legend"], clusters)
    position = index_of(payload["nodes"]["id"])
    edges = payload["edges"]
    payload["edges"] = {
        "from": [position[e["from"]] for e in edges],
        "to": [position[e["to"]] for e in edges],
        "width": [e["width"] for e in edges],
    }
    payload["clusters"] = [cluster_name(graph, members) for members in clusters]
    payload["colour"] = "cluster" if len(clusters) > 1 else "type"


def _gl_columns(
    rows: list[dict[str, Any]], legend: list[dict[str, Any]], clusters: list[list[str]]
) -> dict[str, list[Any]]:
    """The node rows as :data:`_GL_NODE_KEYS` columns, with each node's cluster (``c``);
    ``group`` an index into ``legend``, ``g`` and ``v`` 0 where absent."""
    cluster_of = {n: k for k, members in enumerate(clusters) for n in members}
    types = index_of(row["type"] for row in legend)
    columns: dict[str, list[Any]] = {key: [] for key in _GL_NODE_KEYS}
    for row in rows:
        row.update(c=cluster_of.get(row["id"], -1), group=types[row["group"]])
        for key in _GL_NODE_KEYS:
            columns[key].append(row.get(key, 0))
    return columns


def cluster_name(graph: nx.DiGraph, members: list[str]) -> dict[str, Any]:
    """A cluster's name (its most-cited source or publisher) and size."""

    def weight(n: str) -> tuple[int, str]:
        a = graph.nodes[n]
        return (-1 if a["type"] == "Story" else int(a.get("stories", 0) or 0), n)

    lead = max(members, key=weight)
    return {"label": visible_label(graph.nodes[lead]["label"] or lead), "size": len(members)}


def visible_label(text: str, limit: int = LABEL) -> str:
    """A label as drawn: bidi controls made visible *first*, then cut to ``limit``."""
    return short(visible_bidi(text), limit) if text else text


def write_map(
    graph: nx.DiGraph,
    out: Path | str,
    positions: Positions | None = None,
    *,
    renderer: str = "auto",
) -> MapInfo:
    """Render ``graph`` and write it to ``out`` atomically (parent directories created)."""
    path = Path(out)
    html = render_map(graph, positions, renderer=renderer).encode("utf-8")
    try:
        write_atomic(path, html)
    except OutputError as exc:
        raise VizError(f"cannot write the map: {exc}") from None
    return MapInfo(path, str(graph.graph.get("view", "")), graph.number_of_nodes(),
                   graph.number_of_edges(), len(html))  # fmt: skip
