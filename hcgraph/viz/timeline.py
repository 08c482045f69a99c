"""The ``time`` view (placeholder while it is written)."""

from __future__ import annotations

from typing import Any

import networkx as nx

from ..errors import VizError
from ..store import Store
from .focus import Focus


def time_view(store: Store, focus: Focus | None, **_: Any) -> nx.DiGraph:
    raise VizError("not yet")


def render_time(graph: nx.DiGraph) -> str:
    raise VizError("not yet")
