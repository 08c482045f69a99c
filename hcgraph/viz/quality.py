"""How much a map's layout says about its graph: connected-closeness (Jacomy 2023).

M. Jacomy, JGAA 27(5), 341-404 (2023); docs/maps.md: the maximum over a distance δ of
E(δ) - P(δ), the share of edges no longer than δ less the share of node pairs no farther apart.
"""

from __future__ import annotations

from collections import defaultdict

import networkx as nx
import numpy as np

from .layout import Positions

__all__ = ["PAIRS", "connected_closeness", "pair_weights"]

#: Node pairs measured: every pair up to this many, else this many sampled (seeded).
PAIRS = 400_000


def connected_closeness(graph: nx.Graph, positions: Positions, *, seed: int = 7) -> float | None:
    """The layout's connected-closeness in [0, 1], rounded to 4 places (edges once per node
    pair, self-loops not counted); None with fewer than two placed nodes or no edge."""
    nodes = sorted(n for n in graph if n in positions)
    if len(nodes) < 2:
        return None
    pairs = sorted(pair_weights(graph, {n: k for k, n in enumerate(nodes)}))
    edges = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    if not len(edges):
        return None
    xy = np.array([positions[n] for n in nodes], dtype=np.float64)
    edge_len = np.sort(_lengths(xy, edges[:, 0], edges[:, 1]))
    pair_len = np.sort(_pair_lengths(xy, seed))
    # E - P only rises at an edge length (E steps up there; P never falls): the maximum
    # is at one of them.
    e_share = np.searchsorted(edge_len, edge_len, side="right") / len(edge_len)
    p_share = np.searchsorted(pair_len, edge_len, side="right") / len(pair_len)
    return round(max(0.0, float(np.max(e_share - p_share))), 4)


def pair_weights(graph: nx.Graph, index: dict[str, int]) -> dict[tuple[int, int], float]:
    """Each undirected pair of indexed nodes joined by an edge once, as ``(i, j)``, ``i < j``:
    the weights of both directions summed (self-loops left out)."""
    weight: dict[tuple[int, int], float] = defaultdict(float)
    for s, o, a in graph.edges(data=True):
        if s != o and s in index and o in index:
            i, j = index[s], index[o]
            weight[(min(i, j), max(i, j))] += float(a.get("weight", 1) or 1)
    return weight


def _lengths(xy: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Euclidean distances between the points ``i`` and ``j`` (index arrays)."""
    d = xy[i] - xy[j]
    return np.asarray(np.hypot(d[:, 0], d[:, 1]))


def _pair_lengths(xy: np.ndarray, seed: int) -> np.ndarray:
    """Distances of every node pair, or of :data:`PAIRS` pairs drawn with ``seed``."""
    n = len(xy)
    if n * (n - 1) // 2 <= PAIRS:
        i, j = np.triu_indices(n, k=1)
        return _lengths(xy, i, j)
    rng = np.random.default_rng(seed)
    i = rng.integers(0, n, PAIRS)
    j = (i + rng.integers(1, n, PAIRS)) % n  # never i itself
    return _lengths(xy, i, j)
