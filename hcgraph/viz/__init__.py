"""Interactive citation maps: networkx projections → precomputed layout → one safe HTML file.

- :mod:`hcgraph.viz.data`: the SPARQL queries and loaders of typed records (every count).
- :mod:`hcgraph.viz.focus`: what ``--focus`` names.
- :mod:`hcgraph.viz.views`: ``citation_graph(store, view, focus)``, the projections (public
  API; node and edge attributes documented there).
- :mod:`hcgraph.viz.facets`: the publisher / newsroom filter facets of each view.
- :mod:`hcgraph.viz.notebook`: ``to_pyvis`` (a view as a ``pyvis.network.Network`` whose
  pages work offline) and ``show_map`` (hcgraph's own map inline in a notebook).
- :mod:`hcgraph.viz.layout`: positions computed in Python (no live physics in the browser).
- :mod:`hcgraph.viz.sources`, :mod:`hcgraph.viz.timeline`: the ``sources`` (circle packing)
  and ``time`` (date axis) views, each drawn by a page of its own.
- :mod:`hcgraph.viz.render`: the self-contained HTML (vendored vis-network for small maps,
  sigma.js + graphology on WebGL for big ones; CSP, escaped JSON).

``draw_map`` is what ``hcgraph viz`` runs.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..store import Store
from .layout import compute_layout
from .notebook import MapDisplay, show_map, to_pyvis
from .render import RENDERERS, MapInfo, render_map, write_map
from .views import (
    OVERVIEW_STORIES,
    STORY_GROUPS,
    VIEWS,
    citation_graph,
    resolve_focus,
)

__all__ = [
    "OVERVIEW_STORIES",
    "RENDERERS",
    "STORY_GROUPS",
    "VIEWS",
    "MapDisplay",
    "MapInfo",
    "citation_graph",
    "compute_layout",
    "default_map_path",
    "draw_map",
    "render_map",
    "resolve_focus",
    "show_map",
    "to_pyvis",
    "write_map",
]


def default_map_path(view: str, focus: str | None, directory: Path = Path("output")) -> Path:
    """``output/map.html`` for the plain reuse map, else ``output/map-VIEW[-FOCUS].html``."""
    if view == "reuse" and not focus:
        return directory / "map.html"
    name = f"map-{view}"
    if focus:
        tail = focus.rstrip("/").rsplit("/", 1)[-1] or focus
        slug = re.sub(r"[^a-z0-9]+", "-", tail.lower()).strip("-")[:48]
        name += f"-{slug or 'focus'}"
    return directory / f"{name}.html"


def draw_map(
    store: Store,
    view: str = "reuse",
    focus: str | None = None,
    out: Path | str | None = None,
    *,
    top: int | None = None,
    group_stories: str | None = None,
    overview: bool | None = None,
    renderer: str = "auto",
    include_withdrawn: bool = False,
) -> MapInfo:
    """Project, lay out, render and write one map; returns what was written (withdrawn
    stories left out unless ``include_withdrawn``).

    Raises:
        VizError: unknown view, unresolvable focus, or an output file that cannot be
            written.
    """
    graph = citation_graph(store, view, focus, top=top, group_stories=group_stories,
                           overview=overview, include_withdrawn=include_withdrawn)  # fmt: skip
    path = out if out is not None else default_map_path(view, focus)
    return write_map(graph, path, renderer=renderer)
