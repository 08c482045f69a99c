"""Connected-closeness on tiny graphs with answers worked by hand, and the force layout of
the reuse map: deterministic, every node placed, and better by that score than the ring."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator

import networkx as nx
import pytest

from hcgraph import Store, citation_graph, ingest_bytes
from hcgraph.viz import force, quality, render_map
from hcgraph.viz.layout import compute_layout, ring_layout
from hcgraph.viz.quality import connected_closeness
from hcsample.corpus import generate_corpus


def _graph(edges: list[tuple[str, str]], nodes: str = "") -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_edges_from(edges)
    return g


def test_a_path_on_a_line_scores_one_third() -> None:
    # Edges a-b, b-c (length 1); pairs 1, 1, 2: at δ = 1, E = 2/2 and P = 2/3.
    g = _graph([("a", "b"), ("b", "c")])
    pos = {"a": (0.0, 0.0), "b": (1.0, 0.0), "c": (2.0, 0.0)}
    assert connected_closeness(g, pos) == pytest.approx(1 / 3, abs=1e-4)


def test_two_far_apart_edges_score_two_thirds() -> None:
    # Edges a-b and c-d of length 1, 100 apart: pairs 1, 1, 99, 100, 100, 101 → 1 - 2/6.
    g = _graph([("a", "b"), ("c", "d")])
    pos = {"a": (0.0, 0.0), "b": (1.0, 0.0), "c": (100.0, 0.0), "d": (101.0, 0.0)}
    assert connected_closeness(g, pos) == pytest.approx(2 / 3, abs=1e-4)


def test_the_same_graph_drawn_badly_scores_lower() -> None:
    # The same two edges drawn across each other: a-b and c-d both 100 long, a near c.
    g = _graph([("a", "b"), ("c", "d")])
    pos = {"a": (0.0, 0.0), "b": (100.0, 0.0), "c": (1.0, 0.0), "d": (101.0, 0.0)}
    good = {"a": (0.0, 0.0), "b": (1.0, 0.0), "c": (100.0, 0.0), "d": (101.0, 0.0)}
    bad = connected_closeness(g, pos)
    assert bad is not None and bad < (connected_closeness(g, good) or 0)
    # Pairs a-c 1, b-d 1, b-c 99, a-b 100, c-d 100, a-d 101: at δ = 100, E = 1 and
    # P = 5/6 (below 100, E = 0).
    assert bad == pytest.approx(1 / 6, abs=1e-4)


def test_a_complete_graph_scores_zero_whatever_the_layout() -> None:
    # Every pair is an edge: E(δ) = P(δ) for every δ.
    g = nx.complete_graph(5, create_using=nx.DiGraph)
    pos = {n: (float(n * n), float(n % 2)) for n in g}
    assert connected_closeness(g, pos) == 0.0


def test_directions_and_self_loops_count_once_or_not_at_all() -> None:
    g = _graph([("a", "b"), ("b", "a"), ("b", "c"), ("c", "c")])
    pos = {"a": (0.0, 0.0), "b": (1.0, 0.0), "c": (2.0, 0.0)}
    assert connected_closeness(g, pos) == pytest.approx(1 / 3, abs=1e-4)


def test_nothing_to_measure_is_none() -> None:
    assert connected_closeness(_graph([], "a"), {"a": (0.0, 0.0)}) is None
    assert connected_closeness(_graph([], "ab"), {"a": (0.0, 0.0), "b": (1.0, 0.0)}) is None
    # An edge to a node without a position does not count.
    assert connected_closeness(_graph([("a", "b")], "c"), {"a": (0, 0), "c": (1, 1)}) is None


def test_sampled_pairs_are_seeded_and_near_the_exact_score(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    g = nx.relabel_nodes(nx.grid_2d_graph(20, 20), lambda n: f"{n[0]:02}-{n[1]:02}")
    pos = {n: (float(n[:2]), float(n[3:])) for n in g}
    exact = connected_closeness(g, pos)  # 79,800 pairs: all measured
    monkeypatch.setattr(quality, "PAIRS", 20_000)
    sampled = connected_closeness(g, pos)
    assert sampled == connected_closeness(g, pos)  # the same sample every time
    assert exact is not None and sampled is not None
    assert abs(sampled - exact) < 0.02 and exact > 0.9


def _two_cliques() -> nx.DiGraph:
    """Two 8-cliques joined by one edge, each node's neighbours drawn across the circle."""
    g = nx.DiGraph()
    for side in "ab":
        g.add_edges_from((f"{side}{i}", f"{side}{j}") for i in range(8) for j in range(i + 1, 8))
    g.add_edge("a0", "b0")
    return g


def test_force_layout_is_deterministic_and_pulls_cliques_together() -> None:
    g = _two_cliques()
    nodes = sorted(g)
    # A bad start: the two cliques interleaved around one circle.
    order = [n for pair in zip(nodes[:8], nodes[8:], strict=True) for n in pair]
    start = {n: (100 * math.cos(k / 2.55), 100 * math.sin(k / 2.55)) for k, n in enumerate(order)}
    pos = force.force_layout(g, start)
    assert pos == force.force_layout(nx.DiGraph(g), dict(start))
    assert set(pos) == set(g) and all(map(math.isfinite, (c for p in pos.values() for c in p)))
    before, after = connected_closeness(g, start), connected_closeness(g, pos)
    assert before is not None and after is not None and after > before + 0.2


@pytest.fixture(scope="module")
def reuse(cstore_small: Store) -> nx.DiGraph:
    return citation_graph(cstore_small, "reuse", overview=False)


@pytest.fixture(scope="module")
def cstore_small() -> Iterator[Store]:
    with Store(None) as st:
        stories = generate_corpus(150, seed=13).stories
        docs = [(json.dumps(s).encode(), f"s{i}") for i, s in enumerate(stories)]
        assert not ingest_bytes(st, docs).failures
        yield st


def test_reuse_map_is_the_force_layout_and_scores_above_the_ring(reuse: nx.DiGraph) -> None:
    pos = compute_layout(reuse)
    assert pos == compute_layout(nx.DiGraph(reuse))  # same graph, same positions
    assert set(pos) == set(reuse)
    ring = ring_layout(reuse)
    assert pos != {n: (round(x, 1), round(y, 1)) for n, (x, y) in ring.items()}
    forced, fixed = connected_closeness(reuse, pos), connected_closeness(reuse, ring)
    assert forced is not None and fixed is not None and forced > fixed


def test_every_map_page_carries_its_score(reuse: nx.DiGraph) -> None:
    score = connected_closeness(reuse, compute_layout(reuse))
    for renderer in ("canvas", "webgl"):
        html = render_map(reuse, renderer=renderer)
        assert f'"layoutQuality":{score}' in html
        shown = re.search(r'id="layout-quality"[^>]*>layout quality ([0-9.]+)<', html)
        assert shown and float(shown.group(1)) == pytest.approx(score, abs=5e-4)


def test_force_layout_of_edgeless_or_tiny_graphs_keeps_the_start() -> None:
    start = {"a": (1.0, 2.0), "b": (3.0, 4.0), "c": (5.0, 6.0)}
    assert force.force_layout(_graph([], "abc"), start) == start
    assert force.force_layout(_graph([("a", "b")]), start) == {k: start[k] for k in "ab"}


def test_force_layout_keeps_separate_components_on_the_map() -> None:
    # Two triangles and a lone node: gravity holds them, nothing flies off or collapses.
    g = _graph([("a", "b"), ("b", "c"), ("c", "a"), ("d", "e"), ("e", "f"), ("f", "d")], "g")
    start = {n: (10.0 * k, 5.0 * (k % 3)) for k, n in enumerate("abcdefg")}
    pos = force.force_layout(g, start)
    xs = [c for p in pos.values() for c in p]
    assert all(map(math.isfinite, xs))
    spread = max(xs) - min(xs)
    assert 0 < spread < 1000
    assert len({(round(x), round(y)) for x, y in pos.values()}) == 7
