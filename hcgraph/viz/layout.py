"""Node positions computed ahead of time, so the browser never runs live physics.

pyvis's default path turns vis-network's physics on and lets the browser settle the graph;
past ~1,500 nodes that takes minutes (pyvis #204, #160). hcgraph places every node in
Python instead and switches physics off: the page is stable on its first frame and nodes
stay draggable.

- ``reuse``: an *anchored* layout in O(nodes + edges). Publishers sit on a
  ring, each with its manifests in a sunflower spiral around it (most-cited nearest the
  centre); every story sits at the weighted centre of the manifests it cites, spread in its
  own small spiral when several land on one spot. Stories that draw on several publishers
  therefore sit between their clusters, which is exactly what a reuse map should show.
- ``reuse`` past :data:`COMMUNITY_NODES` nodes: the same, with Louvain communities (seeded)
  in place of publishers: each community's sources and publishers in one spiral, the
  communities on the ring, stories at the weighted centre of what they cite; so the map's
  default colouring (by community) shows as regions.
- ``publisher``: the focus publisher in the centre, its manifests on a ring around it
  (most-cited first), the citing stories (or story groups) grouped by the set of its
  manifests they cite: a group citing one sits just outside it, a group citing several
  inside the ring between them; each group a small spiral, by newsroom, then date.
- ``story``: a layered (left → right) provenance trail: story, sections, paragraphs and key
  facts, claims, manifests, source documents, publishers; each column ordered by the mean
  position of its parents so edges cross little.
- any other graph (no such ``view``): :func:`cluster_layout`, its Louvain communities
  (seeded) as spirals on a ring, each community's best-connected nodes in its middle.

All layouts are deterministic: same graph, same positions.
"""

from __future__ import annotations

import math
import weakref
from collections import defaultdict
from collections.abc import Callable

import networkx as nx

__all__ = [
    "COMMUNITY_NODES",
    "LAYOUTS",
    "cluster_layout",
    "communities",
    "community_layout",
    "compute_layout",
]

Positions = dict[str, tuple[float, float]]

_GOLDEN = math.pi * (3 - math.sqrt(5))  # the golden angle: even, gap-free spirals
_SPACING = 42.0  # pixels between neighbouring nodes in a spiral


def _spiral(k: int, spacing: float = _SPACING) -> tuple[float, float]:
    """Position ``k`` (0-based) of a sunflower spiral centred on the origin."""
    if k == 0:
        return 0.0, 0.0
    r = spacing * math.sqrt(k + 0.5)
    return r * math.cos(k * _GOLDEN), r * math.sin(k * _GOLDEN)


def anchored_layout(graph: nx.DiGraph) -> Positions:
    """Publishers on a ring with their manifests around them; stories at their sources."""
    types = {n: a["type"] for n, a in graph.nodes(data=True)}
    stories_of = {n: a.get("stories", 1) for n, a in graph.nodes(data=True)}
    clusters: dict[str, list[str]] = defaultdict(list)  # publisher (or "") → manifests
    for n, kind in types.items():
        if kind == "Manifest":
            pubs = sorted(p for p in graph.successors(n) if types[p] == "Publisher")
            clusters[pubs[0] if pubs else ""].append(n)
    for n, kind in types.items():
        if kind == "Publisher" and n not in clusters:
            clusters[n] = []
    order = sorted(clusters, key=lambda p: (-sum(stories_of[m] for m in clusters[p]), p))
    pos = _ring([sorted(clusters[p], key=lambda m: (-stories_of[m], m)) for p in order], order)
    _place_citers(graph, pos, types)
    return pos


#: Reuse maps of more nodes than this are laid out by community (the WebGL maps).
COMMUNITY_NODES = 1000
_COMMUNITIES: weakref.WeakKeyDictionary[nx.DiGraph, tuple[int, int, list[list[str]]]] = (
    weakref.WeakKeyDictionary()
)


def communities(graph: nx.DiGraph) -> list[list[str]]:
    """Louvain communities (networkx, seed 7) of the map's undirected graph, biggest first.

    Deterministic: same graph, same communities, in the same order (ties by first member).
    Computed once per graph object (layout and page share it) while its size is unchanged.
    """
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


def community_layout(graph: nx.DiGraph) -> Positions:
    """Communities on a ring, each one's sources and publishers in a spiral; stories after."""
    types = {n: a["type"] for n, a in graph.nodes(data=True)}
    weight = {n: int(a.get("stories", 1) or 0) for n, a in graph.nodes(data=True)}
    clusters = [
        sorted((n for n in c if types[n] != "Story"),
               key=lambda n: (types[n] != "Publisher", -weight[n], n))
        for c in communities(graph)
    ]  # fmt: skip
    clusters = [c for c in clusters if c]
    if not clusters:
        return anchored_layout(graph)
    pos = _ring(clusters)
    _place_citers(graph, pos, types)
    return pos


def cluster_layout(graph: nx.DiGraph) -> Positions:
    """Any other graph: its communities on a ring, each a spiral with its hubs in the middle.

    Pure Python: no numpy or scipy (networkx's spring layout needs both, and changes
    algorithm at 500 nodes), 11-50 times faster than it at 200-3,000 nodes.
    """
    degree = dict(graph.degree())
    groups = communities(graph) or [sorted(graph)]
    return _ring([sorted(c, key=lambda n: (-degree[n], n)) for c in groups if c])


def _ring(clusters: list[list[str]], hubs: list[str] | None = None) -> Positions:
    """Each cluster a sunflower spiral of its members around its hub (``hubs``, one a cluster;
    none, or ``""``: its first member in the centre), the spirals edge to edge around a ring,
    with a gap for stories in between (one cluster: at the origin)."""
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
        for k, n in enumerate(members, start=3 if hub else 0):
            dx, dy = _spiral(k)
            pos[n] = (cx + dx, cy + dy)
    return pos


def _reuse_layout(graph: nx.DiGraph) -> Positions:
    """Anchored on publishers; past :data:`COMMUNITY_NODES` nodes, on communities."""
    if graph.number_of_nodes() > COMMUNITY_NODES:
        return community_layout(graph)
    return anchored_layout(graph)


def _place_citers(graph: nx.DiGraph, pos: Positions, types: dict[str, str]) -> None:
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
        k = crowd[key] + 1
        crowd[key] = k
        dx, dy = _spiral(k, _SPACING * 0.6)
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

        # Story parts keep document order (their IRIs sort s1-p1, s1-p2, …, kf1, …).
        members.sort(key=(lambda n: (_part_order(n), n)) if col in (1, 2) else key)
        height = (len(members) - 1) * row_gap
        for i, n in enumerate(members):
            row[n] = float(i)
            pos[n] = (col * column_gap, i * row_gap - height / 2)
    return pos


def _part_order(iri: str) -> tuple[int, ...]:
    """``…#s2-p10`` → (0, 2, 10); key facts ``…#kf3`` → (1, 3): document order."""
    frag = iri.rsplit("#", 1)[-1]
    digits = [int(x) for x in "".join(c if c.isdigit() else " " for c in frag).split()]
    return (1 if frag.startswith("kf") else 0, *digits)


def publisher_layout(graph: nx.DiGraph) -> Positions:
    """The focus publisher in the centre, its manifests on a ring, the citing stories grouped.

    Stories (or story groups) citing the same set of the publisher's manifests form one
    group, drawn as a small sunflower: a group citing one manifest sits just outside it
    (biggest groups first, so the ring reads as "who is cited by how many"); a group citing
    several sits inside the ring at the circular mean of their angles, nearer the centre the
    more it cites. One ring of stories per manifest order was a solid disc at 1k+ stories.
    """
    focus = graph.graph.get("focus")
    kinds: dict[str, list[str]] = defaultdict(list)
    for n, attrs in graph.nodes(data=True):
        kinds[attrs["type"]].append(n)
    pos: Positions = {}
    if focus in graph:
        pos[focus] = (0.0, 0.0)
    stories_of = {n: a.get("stories", 0) or 0 for n, a in graph.nodes(data=True)}
    manifests = sorted(kinds["Manifest"], key=lambda m: (-stories_of[m], m))
    angle_of: dict[str, float] = {}
    citing: dict[tuple[str, ...], list[str]] = defaultdict(list)
    ring = set(manifests)
    for n in graph:
        if n not in ring and n not in pos:
            citing[tuple(sorted(m for m in graph.successors(n) if m in ring))].append(n)
    # A manifest's arc is as wide as its single-manifest group needs.
    alone = {m: len(citing.get((m,), ())) for m in manifests}
    widths = [max(1.0, math.sqrt(alone[m])) for m in manifests]
    total = sum(widths) or 1.0
    inner = max(4 * _SPACING, total * _SPACING * 1.4 / (2 * math.pi))
    at = 0.0
    for m, w in zip(manifests, widths, strict=True):
        angle = 2 * math.pi * (at + w / 2) / total
        at += w
        angle_of[m] = angle
        pos[m] = (inner * math.cos(angle), inner * math.sin(angle))

    def room(n: str) -> tuple[str, str, str]:
        a = graph.nodes[n]
        return (a["newsrooms"][0] if a.get("newsrooms") else "~", a.get("date", ""), n)

    step = _SPACING * 0.7
    for cited, members in sorted(citing.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        members.sort(key=room)
        if cited:
            cx = sum(math.cos(angle_of[m]) for m in cited)
            cy = sum(math.sin(angle_of[m]) for m in cited)
            angle = math.atan2(cy, cx)
        else:
            angle = 0.0
        spread = step * math.sqrt(len(members))
        if len(cited) == 1:
            r = inner + 2 * _SPACING + spread
        elif cited:
            r = inner * max(0.25, 0.85 - 0.15 * (len(cited) - 2))
        else:
            r = inner + 4 * _SPACING
        ax, ay = r * math.cos(angle), r * math.sin(angle)
        for k, n in enumerate(members):
            d = step * math.sqrt(k + 0.5)
            t = k * _GOLDEN
            pos[n] = (ax + d * math.cos(t), ay + d * math.sin(t))
    return pos


#: View name → layout function.
LAYOUTS: dict[str, Callable[[nx.DiGraph], Positions]] = {
    "story": layered_layout,
    "reuse": _reuse_layout,
    "publisher": publisher_layout,
}


def compute_layout(graph: nx.DiGraph) -> Positions:
    """Positions for every node, by the graph's ``view`` (graph attribute); rounded to 0.1 px."""
    layout = LAYOUTS.get(graph.graph.get("view", ""), cluster_layout)
    return {n: (round(x, 1), round(y, 1)) for n, (x, y) in layout(graph).items()}
