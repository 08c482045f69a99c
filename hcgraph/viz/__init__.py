"""Interactive citation maps: networkx projections → precomputed layout → one safe HTML file.

``draw_map`` is what ``hcgraph viz`` runs; the modules are in docs/maps.md ("Code layout").
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..store import Store
from .layout import compute_layout
from .notebook import MapDisplay, show_map, to_pyvis
from .render import RENDERERS, MapInfo, render_map, write_map
from .views import OVERVIEW_STORIES, STORY_GROUPS, VIEWS, citation_graph, resolve_focus

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
    renderer: str = "auto",
    **options: Any,
) -> MapInfo:
    """Project (``options``: ``top``, ``group_stories``, ``overview``, ``include_withdrawn``, as
    for ``citation_graph``), lay out, render and write one map; returns what was written.

    Raises:
        VizError: unknown view, unresolvable focus, or an output file that cannot be
            written.
    """
    graph = citation_graph(store, view, focus, **options)
    path = out if out is not None else default_map_path(view, focus)
    return write_map(graph, path, renderer=renderer)
