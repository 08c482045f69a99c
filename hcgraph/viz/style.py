"""How each node type looks: one palette for every map, and perceptual node sizes.

A (colour, shape) pair a type from a colour-blind-aware palette; a counted node's *area* is
proportional to its count.
"""

from __future__ import annotations

import base64
import hashlib
import math
from dataclasses import dataclass
from typing import Any

import networkx as nx

__all__ = [
    "COUNTED",
    "MAX_SIZE",
    "MIN_SIZE",
    "NodeStyle",
    "document_icon",
    "largest_count",
    "node_size",
    "styles_for",
]


@dataclass(frozen=True)
class NodeStyle:
    """A node type's look: fill colour, border colour, vis-network shape, default size."""

    color: str
    border: str
    shape: str
    size: int


_STYLES: dict[str, NodeStyle] = {
    "Story": NodeStyle("#1f6feb", "#0b3d91", "star", 16),
    "StoryGroup": NodeStyle("#58a6ff", "#0b3d91", "star", 18),
    "Section": NodeStyle("#0e9f9a", "#07605d", "triangle", 12),
    "Paragraph": NodeStyle("#8c959f", "#424a53", "dot", 9),
    "KeyFact": NodeStyle("#d4a72c", "#7d4e00", "triangleDown", 12),
    "Claim": NodeStyle("#8250df", "#512a97", "diamond", 9),
    "Manifest": NodeStyle("#f0883e", "#9a4a0f", "square", 12),
    "SourceDocument": NodeStyle("#db61a2", "#8a2564", "image", 12),
    "Publisher": NodeStyle("#2da44e", "#116329", "hexagon", 20),
    # Other types a graph from hcgraph.project.to_networkx may carry.
    "Citation": NodeStyle("#cf222e", "#82071e", "dot", 7),
    "RelatedStory": NodeStyle("#a5d6ff", "#388bfd", "triangle", 10),
    "UnresolvedQuestion": NodeStyle("#bc4c00", "#762c00", "triangleDown", 9),
    "Agent": NodeStyle("#1b7c83", "#0c4a50", "square", 10),
    "Edition": NodeStyle("#4d2d00", "#2e1a00", "diamond", 10),
    "Newsroom": NodeStyle("#0969da", "#033d8b", "hexagon", 12),
    "DecisionCard": NodeStyle("#a475f9", "#6639ba", "square", 9),
    "ReuseTerms": NodeStyle("#bf3989", "#772057", "diamond", 9),
    "SponsorNote": NodeStyle("#bf3989", "#772057", "triangle", 9),
    "Ingest": NodeStyle("#1b7c83", "#0c4a50", "star", 9),
    "RawDocument": NodeStyle("#4d2d00", "#2e1a00", "square", 8),
    "WriterRun": NodeStyle("#0969da", "#033d8b", "triangleDown", 9),
    "Correction": NodeStyle("#cf222e", "#82071e", "triangle", 9),
}
#: The largest counted node's size (vis-network radius) and the smallest any node gets.
MAX_SIZE = 48.0
MIN_SIZE = 5.0
_SPARE_COLOURS = (
    ("#cf222e", "#82071e"),
    ("#bc4c00", "#762c00"),
    ("#4d2d00", "#2e1a00"),
    ("#0969da", "#033d8b"),
    ("#a475f9", "#6639ba"),
    ("#1b7c83", "#0c4a50"),
    ("#bf3989", "#772057"),
)
_SPARE_SHAPES = ("dot", "diamond", "square", "triangle", "triangleDown", "hexagon", "star")


def document_icon(color: str, border: str) -> str:
    """A page-with-folded-corner icon as a ``data:`` SVG (allowed by the map's CSP)."""
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 16 16">'
        f'<path d="M3 1h7l3 3v11H3z" fill="{color}" stroke="{border}" stroke-width="0.8"/>'
        f'<path d="M10 1v3h3" fill="none" stroke="{border}" stroke-width="0.8"/></svg>'
    )
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def styles_for(types: list[str]) -> dict[str, NodeStyle]:
    """A style for each of ``types``: the fixed table, else a pair picked by the type's name."""
    unused = [(c, b, sh) for sh in _SPARE_SHAPES for c, b in _SPARE_COLOURS
              if (c, sh) not in {(s.color, s.shape) for s in _STYLES.values()}]  # fmt: skip
    out = {}
    for t in types:
        if t in _STYLES:
            out[t] = _STYLES[t]
        else:
            k = int(hashlib.sha256(t.encode()).hexdigest(), 16) % len(unused)
            color, border, shape = unused[k]
            out[t] = NodeStyle(color, border, shape, 9)
    return out


#: Node types whose size shows a count (``stories``).
COUNTED = ("Manifest", "Publisher", "StoryGroup")


def largest_count(graph: nx.DiGraph) -> int:
    """The largest ``stories`` count of a :data:`COUNTED` node (0: none)."""
    counted = [a for _n, a in graph.nodes(data=True) if a["type"] in COUNTED]
    return max((int(a.get("stories", 0) or 0) for a in counted), default=0)


def node_size(attrs: dict[str, Any], style: NodeStyle, max_count: int) -> float:
    """Counted nodes: area ∝ count, the map's ``max_count`` drawn at :data:`MAX_SIZE`."""
    if attrs["type"] not in COUNTED or max_count <= 0:
        return float(style.size)
    count = max(0, int(attrs.get("stories", 0) or 0))
    return round(max(MIN_SIZE, MAX_SIZE * math.sqrt(count / max_count)), 2)
