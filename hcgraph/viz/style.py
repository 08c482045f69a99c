"""How each node type looks: one colour and one shape per type, and node sizes.

Colours are from a colour-blind-aware palette and every type has a distinct (colour, shape)
pair; the main types of each view also have distinct shapes, so the map reads in greyscale.
Types without an entry (the ``all`` view shows every type) get the next unused pair.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from typing import Any

__all__ = ["NodeStyle", "document_icon", "node_size", "styles_for"]


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
    "RelatedStory": NodeStyle("#a5d6ff", "#388bfd", "dot", 10),
    "Section": NodeStyle("#0e9f9a", "#07605d", "triangle", 12),
    "Paragraph": NodeStyle("#8c959f", "#57606a", "dot", 9),
    "KeyFact": NodeStyle("#d4a72c", "#7d4e00", "triangleDown", 12),
    "Claim": NodeStyle("#8250df", "#512a97", "diamond", 9),
    "Manifest": NodeStyle("#f0883e", "#9a4a0f", "square", 12),
    "SourceDocument": NodeStyle("#db61a2", "#8a2564", "image", 12),
    "Publisher": NodeStyle("#2da44e", "#116329", "hexagon", 20),
}
_SPARE_COLOURS = (
    ("#6e7781", "#32383f"),
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
    """A style for each of ``types``: the fixed table, then unused (colour, shape) pairs."""
    out = {t: _STYLES[t] for t in types if t in _STYLES}
    used = {(s.color, s.shape) for s in _STYLES.values()}
    pairs = ((c, b, sh) for sh in _SPARE_SHAPES for c, b in _SPARE_COLOURS if (c, sh) not in used)
    for t in sorted(set(types) - set(out)):
        color, border, shape = next(pairs)
        out[t] = NodeStyle(color, border, shape, 9)
    return out


def node_size(attrs: dict[str, Any], style: NodeStyle) -> int:
    """Manifests and publishers grow with the number of stories citing them."""
    stories = int(attrs.get("stories", 1) or 1)
    if attrs["type"] == "Manifest":
        return min(36, style.size + round(4 * math.sqrt(stories - 1)))
    if attrs["type"] in ("Publisher", "StoryGroup"):
        return min(44, style.size + round(2 * math.sqrt(stories)))
    return style.size
