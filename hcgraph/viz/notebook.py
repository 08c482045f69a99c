"""Citation maps in notebooks: a pyvis ``Network`` that works offline, and hcgraph's own map.

:func:`to_pyvis` (pyvis: the optional extra ``hcgraph[pyvis]``) and :func:`show_map`, shown
inline in a sandboxed ``<iframe srcdoc>``; docs/maps.md describes both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

import networkx as nx
from markupsafe import Markup

from .._io import write_atomic
from ..errors import VizError
from ..htmltext import script_safe, with_script_hashes
from ..store import Store
from .layout import compute_layout
from .render import VIS_SHA256, _vendored, render_map, visible_bidi
from .style import COUNTED, largest_count, node_size, styles_for
from .views import citation_graph

if TYPE_CHECKING:
    from pyvis.network import Network

__all__ = ["PYVIS_TEMPLATE", "MapDisplay", "node_title", "show_map", "to_pyvis"]

#: The template of :func:`to_pyvis` pages: pyvis's variables, every resource inline; no CDN,
#: no Bootstrap, no ``innerHTML`` popup (titles stay plain text), no DOT-string mode.
PYVIS_TEMPLATE = (Path(__file__).parent / "pyvis.html").read_text(encoding="utf-8")


def _script_json(value: Any) -> Markup:
    """pyvis's options JSON made safe inside ``<script>`` (``<``, ``>``, ``&``, U+2028, U+2029
    escaped)."""
    return Markup(script_safe(value if isinstance(value, str) else json.dumps(value)))


def _iframe(html: str, height: str, title: str) -> str:
    """``html`` as a sandboxed ``<iframe srcdoc>`` (scripts run; no same-origin access, no
    top navigation, no forms, no popups)."""
    return (f'<iframe srcdoc="{escape(html, quote=True)}" sandbox="allow-scripts" '
            f'title="{escape(title, quote=True)}" '
            f'style="width:100%;height:{escape(height, quote=True)};border:1px solid #ddd">'
            "</iframe>")  # fmt: skip


@cache
def _network_class() -> type[Network]:
    """pyvis's ``Network`` rendering with :data:`PYVIS_TEMPLATE` (defined on first use)."""
    try:
        from jinja2 import ChoiceLoader, DictLoader, Environment, FileSystemLoader
        from pyvis.network import Network
    except ImportError:  # pragma: no cover - depends on the environment
        raise VizError("to_pyvis needs pyvis: pip install 'hcgraph[pyvis]'") from None

    class OfflineNetwork(Network):  # type: ignore[misc]
        """A ``pyvis.network.Network`` whose pages need no network (see the module)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["cdn_resources"] = "in_line"  # write_html copies no lib/ folder
            super().__init__(*args, **kwargs)
            ours = DictLoader({"hcgraph.html": PYVIS_TEMPLATE})
            loader = ChoiceLoader([ours, FileSystemLoader(self.template_dir)])  # + pyvis's lib/
            env = Environment(loader=loader, autoescape=True)
            env.globals["hcgraph_vis_js"] = _vendored("vis-network.min.js", VIS_SHA256)
            env.filters["hcgraph_json"] = _script_json
            self.templateEnv = env
            self.path = "hcgraph.html"
            self.template = env.get_template(self.path)  # also for notebook=True

        def generate_html(self, name: str = "index.html", local: bool = True,
                          notebook: bool = False) -> str:  # fmt: skip
            """pyvis's page, offline (every resource inline) with its CSP's script hashes."""
            self.html = with_script_hashes(str(super().generate_html(name, local, notebook)))
            return str(self.html)

        def _repr_html_(self) -> str:
            """Inline display as a notebook cell's value."""
            return _iframe(self.generate_html(), str(self.height), "citation map (pyvis)")

    return OfflineNetwork


@dataclass
class MapDisplay:
    """hcgraph's own map page (``html``) for a notebook: shows itself inline in a frame
    ``height`` high (``_repr_html_``), or :meth:`save` writes it as ``hcgraph viz`` would."""

    html: str
    height: str = "720px"
    title: str = "citation map"

    def _repr_html_(self) -> str:
        return _iframe(self.html, self.height, self.title)

    def save(self, path: Path | str) -> Path:
        """Write the page to ``path`` atomically; return the path."""
        target = Path(path)
        write_atomic(target, self.html.encode("utf-8"))
        return target


def show_map(
    graph_or_store: nx.DiGraph | Store,
    view: str = "reuse",
    focus: str | None = None,
    *,
    height: str = "720px",
    **options: Any,
) -> MapDisplay:
    """hcgraph's own map of a view, shown inline in a notebook; arguments as for
    :func:`to_pyvis`.

    Raises:
        VizError: ``citation_graph`` refused (unknown view, unresolvable focus).
    """
    graph = _projection(graph_or_store, view, focus, options)
    title = str(graph.graph.get("title") or "citation map")
    return MapDisplay(render_map(graph), height=height, title=title)


def _projection(
    graph_or_store: nx.DiGraph | Store, view: str, focus: str | None, options: dict[str, Any]
) -> nx.DiGraph:
    """The graph given, or the ``view`` of the store given."""
    if isinstance(graph_or_store, nx.DiGraph):
        return graph_or_store
    return citation_graph(graph_or_store, view, focus, **options)


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
    """A view as a ``pyvis.network.Network`` (directed, physics off, positions set), whose
    pages (``write_html``, ``show``, ``generate_html``, inline display) work offline.

    Args:
        graph_or_store: a projection from :func:`~hcgraph.viz.views.citation_graph`, or a store
            whose ``view`` to project (``focus`` and ``options`` as for ``citation_graph``).

    Raises:
        VizError: pyvis is not installed, or ``citation_graph`` refused.
    """
    network = _network_class()
    graph = _projection(graph_or_store, view, focus, options)
    positions = compute_layout(graph)
    styles = styles_for(sorted({a["type"] for _n, a in graph.nodes(data=True)}))
    top = largest_count(graph)
    net = network(directed=True, height="800px", width="100%")
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
