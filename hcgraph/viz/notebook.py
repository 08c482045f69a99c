"""pyvis for notebook users: a citation map as a ``pyvis.network.Network``.

hcgraph's own maps use a vendored vis-network and its own page (offline, CSP-locked, with
the ranking and provenance panels). A notebook user who wants pyvis's API instead (restyle
with ``net.set_options`` / ``net.toggle_physics``, then ``net.show()`` or
``net.generate_html()``) gets the same view from :func:`to_pyvis`: the same nodes, edges,
plain-text titles, palette, sizes and precomputed positions (physics off).

pyvis is an optional extra (``pip install hcgraph[pyvis]``); nothing else in hcgraph needs
it. pyvis's ``add_node`` scans a list of node ids, so a map of many thousands of nodes
takes a while to build: draw big maps with :func:`hcgraph.viz.draw_map`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import networkx as nx

from ..errors import VizError
from ..store import Store
from .layout import compute_layout
from .render import visible_bidi
from .style import COUNTED, node_size, styles_for
from .views import citation_graph

if TYPE_CHECKING:
    from pyvis.network import Network

__all__ = ["node_title", "to_pyvis"]


def node_title(attrs: dict[str, Any]) -> str:
    """A node's plain-text tooltip: type, text, date, id, publishers and count."""
    lines = [attrs["type"], attrs.get("title") or attrs.get("label", "")]
    if attrs.get("date"):
        lines.append(f"date: {attrs['date']}")
    if attrs.get("id"):
        lines.append(f"id: {attrs['id']}")
    pubs = attrs.get("publishers", ())
    if pubs and attrs["type"] != "Publisher":
        lines.append("publishers: " + ", ".join(pubs))
    if attrs["type"] in COUNTED:
        lines.append(f"stories: {attrs.get('stories', 0)}")
    return visible_bidi("\n".join(lines))


def to_pyvis(
    graph_or_store: nx.DiGraph | Store,
    view: str = "reuse",
    focus: str | None = None,
    **options: Any,
) -> Network:
    """A view as a ``pyvis.network.Network`` (directed, physics off, positions set).

    Args:
        graph_or_store: a projection from :func:`hcgraph.viz.citation_graph`, or a store
            to project (then ``view``, ``focus`` and ``options`` go to ``citation_graph``).
        view: the view to project from a store.
        focus: the focus, as for ``citation_graph``.
        **options: ``top``, ``group_stories``, ``overview``.

    Raises:
        VizError: pyvis is not installed, or ``citation_graph`` refused.
    """
    try:
        from pyvis.network import Network
    except ImportError:  # pragma: no cover - depends on the environment
        raise VizError("to_pyvis needs pyvis: pip install 'hcgraph[pyvis]'") from None
    if isinstance(graph_or_store, nx.DiGraph):
        graph = graph_or_store
    else:
        graph = citation_graph(graph_or_store, view, focus, **options)
    positions = compute_layout(graph)
    styles = styles_for(sorted({a["type"] for _n, a in graph.nodes(data=True)}))
    counts = [int(a.get("stories", 0) or 0) for _n, a in graph.nodes(data=True)
              if a["type"] in COUNTED]  # fmt: skip
    top = max(counts, default=0)
    net = Network(directed=True, height="800px", width="100%")
    for n in sorted(graph):
        a = graph.nodes[n]
        style = styles[a["type"]]
        x, y = positions.get(n, (0.0, 0.0))
        net.add_node(
            n,
            label=visible_bidi(a["label"] or n),
            title=node_title(a),
            shape="square" if style.shape == "image" else style.shape,
            color={"background": style.color, "border": style.border},
            size=node_size(a, style, top),
            group=a["type"],
            x=x,
            y=y,
        )
    for s, o, a in sorted(graph.edges(data=True), key=lambda e: (e[0], e[1])):
        net.add_edge(s, o, title=a.get("relation", ""), width=min(10, int(a.get("weight", 1))))
    net.toggle_physics(False)
    return net
