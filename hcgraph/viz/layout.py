"""Node positions computed ahead of time, so the browser never runs live physics.

One deterministic layout per view (:data:`LAYOUTS`); any other graph gets :func:`cluster_layout`.
"""

from __future__ import annotations

import math
import weakref
from collections import defaultdict
from collections.abc import Callable

import networkx as nx

from .data import part_order

__all__ = [
    "COMMUNITY_NODES",
    "LAYOUTS",
    "cluster_layout",
    "communities",
    "compute_layout",
    "force_reuse_layout",
    "ring_layout",
]

Positions = dict[str, tuple[float, float]]

_GOLDEN = math.pi * (3 - math.sqrt(5))  # the golden angle: even, gap-free spirals
_SPACING = 42.0  # pixels between neighbouring nodes in a spiral


def _spiral(k: int, spacing: float = _SPACING) -> tuple[float, float]:
    """Position ``k`` (0-based) of a sunflower spiral around the origin."""
    r = spacing * math.sqrt(k + 0.5)
    return r * math.cos(k * _GOLDEN), r * math.sin(k * _GOLDEN)


def _publisher_clusters(graph: nx.DiGraph) -> dict[str, list[str]]:
    """Publisher (``""``: none) → the manifests it published (first publisher by IRI)."""
    types = {n: a["type"] for n, a in graph.nodes(data=True)}
    clusters: dict[str, list[str]] = {n: [] for n, kind in types.items() if kind == "Publisher"}
    for n in (n for n, kind in types.items() if kind == "Manifest"):
        pubs = sorted(p for p in graph.successors(n) if types[p] == "Publisher")
        clusters.setdefault(pubs[0] if pubs else "", []).append(n)
    return clusters


#: Reuse maps of more nodes than this are laid out by community (the WebGL maps).
COMMUNITY_NODES = 1000
_COMMUNITIES: weakref.WeakKeyDictionary[nx.DiGraph, tuple[int, int, list[list[str]]]] = (
    weakref.WeakKeyDictionary()
)


def communities(graph: nx.DiGraph) -> list[list[str]]:
    """Louvain communities (seed 7) of the map's undirected graph, biggest first (ties by first
    member); cached per graph object while its size is unchanged."""
    cached = _COMMUNITIES.get(graph)
    if cached and cached[:2] == (graph.number_of_nodes(), graph.number_of_edges()):
        return cached[2]
    groups: list[list[str]] = []
    if graph.number_of_edges():
        und = nx.Graph()
        und.add_nodes_from(sorted(graph))
        und.add_weighted_edges_from(
            sorted((s, o, float(a.get("weight", 1) or 1)) for s, o, a in graph.edges(data=True))
        )
        found = nx.community.louvain_communities(und, weight="weight", seed=7)
        groups = sorted((sorted(c) for c in found), key=lambda c: (-len(c), c[0]))
    _COMMUNITIES[graph] = (graph.number_of_nodes(), graph.number_of_edges(), groups)
    return groups


def _community_clusters(graph: nx.DiGraph) -> list[list[str]]:
    """Each community's sources and publishers (publishers first, then the most cited)."""
    types = {n: a["type"] for n, a in graph.nodes(data=True)}
    weight = {n: int(a.get("stories", 1) or 0) for n, a in graph.nodes(data=True)}
    clusters = [
        sorted((n for n in c if types[n] != "Story"),
               key=lambda n: (types[n] != "Publisher", -weight[n], n))
        for c in communities(graph)
    ]  # fmt: skip
    return [c for c in clusters if c]


def cluster_layout(graph: nx.DiGraph) -> Positions:
    """Any other graph: its communities on a ring, each a spiral with its hubs in the middle."""
    degree = dict(graph.degree())
    groups = communities(graph) or [sorted(graph)]
    return _ring([sorted(c, key=lambda n: (-degree[n], n)) for c in groups if c])


def _ring(clusters: list[list[str]], hubs: list[str] | None = None) -> Positions:
    """Each cluster a sunflower spiral around its hub (``hubs``; none: its first member in the
    centre), the spirals edge to edge on a ring with gaps for stories (one: at the origin)."""
    radii = [_SPACING * (1.5 + math.sqrt(len(c) + 4)) for c in clusters]
    pos: Positions = {}
    circumference = sum(2 * r + 2 * _SPACING for r in radii)
    ring = max(circumference / (2 * math.pi), max(radii) * 1.2) if len(clusters) > 1 else 0.0
    angle = 0.0
    for i, (members, radius) in enumerate(zip(clusters, radii, strict=True)):
        hub = hubs[i] if hubs else ""
        half = (radius + _SPACING) / ring if ring else 0.0
        angle += half
        cx, cy = ring * math.cos(angle), ring * math.sin(angle)
        angle += half
        if hub:
            pos[hub] = (cx, cy)
        # A hub's members start a few turns out: it and its biggest ones do not overlap.
        _sunflower(pos, members, cx, cy, start=3 if hub else 0)
    return pos


def _sunflower(pos: Positions, members: list[str], cx: float, cy: float, start: int) -> None:
    """Place ``members`` on a spiral around (cx, cy) from position ``start`` (0: the centre)."""
    for k, n in enumerate(members, start=start):
        dx, dy = _spiral(k) if k else (0.0, 0.0)
        pos[n] = (cx + dx, cy + dy)


def ring_layout(graph: nx.DiGraph) -> Positions:
    """The force layout's start: publishers on a ring, each with its manifests in a spiral
    (most-cited nearest; past :data:`COMMUNITY_NODES` nodes, communities instead of
    publishers); every story at the weighted centre of what it cites."""
    clusters = _community_clusters(graph) if len(graph) > COMMUNITY_NODES else []
    if clusters:
        pos = _ring(clusters)
    else:
        stories_of = {n: a.get("stories", 1) for n, a in graph.nodes(data=True)}
        by_pub = _publisher_clusters(graph)
        order = sorted(by_pub, key=lambda p: (-sum(stories_of[m] for m in by_pub[p]), p))
        spirals = [sorted(by_pub[p], key=lambda m: (-stories_of[m], m)) for p in order]
        pos = _ring(spirals, order)
    _place_citers(graph, pos)
    return pos


def force_reuse_layout(graph: nx.DiGraph) -> Positions:
    """The reuse map: ForceAtlas2 from :func:`ring_layout`, at the ring's spread."""
    from .force import force_layout  # numpy and scipy: loaded only when a map is laid out

    return force_layout(graph, ring_layout(graph))


def _place_citers(graph: nx.DiGraph, pos: Positions) -> None:
    """Put every unplaced node at the weighted centre of what it points to, spread out."""
    crowd: dict[tuple[int, int], int] = defaultdict(int)
    cell = _SPACING * 0.75
    for n in sorted(graph):
        if n in pos:
            continue
        total = sx = sy = 0.0
        for t in graph.successors(n):
            if t in pos:
                w = float(graph.edges[n, t].get("weight", 1))
                sx, sy, total = sx + w * pos[t][0], sy + w * pos[t][1], total + w
        x, y = (sx / total, sy / total) if total else (0.0, 0.0)
        # Several stories citing the same manifests would land on one point: give each a
        # place on a small spiral around it, nudged off the manifest itself.
        key = (round(x / cell), round(y / cell))
        crowd[key] += 1
        dx, dy = _spiral(crowd[key], _SPACING * 0.6)
        pos[n] = (x + dx, y + dy)


_TRAIL = {
    "Story": 0,
    "Section": 1,
    "Paragraph": 2,
    "KeyFact": 2,
    "Claim": 3,
    "Manifest": 4,
    "SourceDocument": 5,
    "Publisher": 6,
}


def layered_layout(
    graph: nx.DiGraph, column_gap: float = 260.0, row_gap: float = 46.0
) -> Positions:
    """Columns by node type (the provenance trail), rows ordered by the parents' rows."""
    columns: dict[int, list[str]] = defaultdict(list)
    for n, attrs in graph.nodes(data=True):
        columns[_TRAIL.get(attrs["type"], max(_TRAIL.values()) + 1)].append(n)
    row: dict[str, float] = {}
    pos: Positions = {}
    for col in sorted(columns):
        members = columns[col]

        def key(n: str) -> tuple[float, str]:
            parents = [row[p] for p in graph.predecessors(n) if p in row]
            return (sum(parents) / len(parents) if parents else 0.0, n)

        # Story parts keep document order (s1-p1, s1-p2, …, kf1, …).
        members.sort(key=(lambda n: (part_order(n), n)) if col in (1, 2) else key)
        height = (len(members) - 1) * row_gap
        for i, n in enumerate(members):
            row[n] = float(i)
            pos[n] = (col * column_gap, i * row_gap - height / 2)
    return pos


def publisher_layout(graph: nx.DiGraph) -> Positions:
    """The focus publisher in the centre, its manifests on a ring, and one small sunflower
    for the stories citing the same set of them (outside a lone one, inside the ring between
    several)."""
    focus = graph.graph.get("focus")
    pos: Positions = {focus: (0.0, 0.0)} if focus in graph else {}
    stories_of = {n: a.get("stories", 0) for n, a in graph.nodes(data=True)}
    manifests = sorted(
        (n for n, a in graph.nodes(data=True) if a["type"] == "Manifest"),
        key=lambda m: (-(stories_of[m] or 0), m),
    )
    citing = _citing_groups(graph, set(manifests), set(pos))
    angle_of, inner = _manifest_ring(manifests, citing, pos)

    def room(n: str) -> tuple[str, str, str]:
        a = graph.nodes[n]
        return (a["newsrooms"][0] if a.get("newsrooms") else "~", a.get("date", ""), n)

    step = _SPACING * 0.7
    for cited, members in sorted(citing.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        ax, ay = _group_centre([angle_of[m] for m in cited], inner, step * math.sqrt(len(members)))
        for k, n in enumerate(sorted(members, key=room)):
            dx, dy = _spiral(k, step)
            pos[n] = (ax + dx, ay + dy)
    return pos


def _citing_groups(
    graph: nx.DiGraph, ring: set[str], placed: set[str]
) -> dict[tuple[str, ...], list[str]]:
    """The nodes off the ``ring`` and not ``placed``, grouped by the ring nodes they cite."""
    citing: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for n in graph:
        if n not in ring and n not in placed:
            citing[tuple(sorted(m for m in graph.successors(n) if m in ring))].append(n)
    return citing


def _manifest_ring(
    manifests: list[str], citing: dict[tuple[str, ...], list[str]], pos: Positions
) -> tuple[dict[str, float], float]:
    """Place ``manifests`` on a ring, each arc as wide as its one-manifest group needs;
    returns their angles and the ring's radius."""
    widths = [max(1.0, math.sqrt(len(citing.get((m,), ())))) for m in manifests]
    total = sum(widths) or 1.0
    inner = max(4 * _SPACING, total * _SPACING * 1.4 / (2 * math.pi))
    angle_of: dict[str, float] = {}
    at = 0.0
    for m, w in zip(manifests, widths, strict=True):
        angle_of[m] = 2 * math.pi * (at + w / 2) / total
        at += w
        pos[m] = (inner * math.cos(angle_of[m]), inner * math.sin(angle_of[m]))
    return angle_of, inner


def _group_centre(angles: list[float], inner: float, spread: float) -> tuple[float, float]:
    """Where a group citing manifests at ``angles`` sits: outside its one manifest, inside
    the ring at their circular mean (nearer the centre the more), or beyond it for none."""
    if not angles:
        return inner + 4 * _SPACING, 0.0
    angle = math.atan2(sum(map(math.sin, angles)), sum(map(math.cos, angles)))
    if len(angles) == 1:
        r = inner + 2 * _SPACING + spread
    else:
        r = inner * max(0.25, 0.85 - 0.15 * (len(angles) - 2))
    return r * math.cos(angle), r * math.sin(angle)


#: View name → layout function.
LAYOUTS: dict[str, Callable[[nx.DiGraph], Positions]] = {
    "story": layered_layout,
    "reuse": force_reuse_layout,
    "publisher": publisher_layout,
}


def compute_layout(graph: nx.DiGraph) -> Positions:
    """Positions for every node, by the graph's ``view`` (graph attribute); rounded to 0.1 px."""
    layout = LAYOUTS.get(graph.graph.get("view", ""), cluster_layout)
    return {n: (round(x, 1), round(y, 1)) for n, (x, y) in layout(graph).items()}
