"""The filter facets of a map: the publishers each node draws on, the newsrooms it belongs to.

One algorithm per shape of graph (reuse: two hops story → manifest → publisher; a story's
trail: the publishers downstream of each node). Facets never change counts.
"""

from __future__ import annotations

from collections import defaultdict

import networkx as nx

__all__ = ["reuse_facets", "trail_facets"]

_CITERS = ("Story", "StoryGroup")


def reuse_facets(graph: nx.DiGraph) -> None:
    """Facets of a reuse graph: a story's publishers, a manifest's citing newsrooms."""
    nodes = graph.nodes
    pubs_of: dict[str, set[str]] = defaultdict(set)
    rooms_of: dict[str, set[str]] = defaultdict(set)
    for n, attrs in graph.nodes(data=True):
        rooms_of[n].update(attrs.get("newsrooms", ()))
        if attrs["type"] == "Publisher":
            pubs_of[n].add(attrs["id"])
    for m, p in graph.edges():
        if nodes[p]["type"] == "Publisher":
            pubs_of[m].add(nodes[p]["id"])
    for s, m in graph.edges():
        if nodes[s]["type"] in _CITERS:
            pubs_of[s].update(pubs_of[m])
            rooms_of[m].update(rooms_of[s])
    for m, p in graph.edges():
        if nodes[p]["type"] == "Publisher":
            rooms_of[p].update(rooms_of[m])
    for n, attrs in graph.nodes(data=True):
        attrs["publishers"] = tuple(sorted(pubs_of[n]))
        attrs["newsrooms"] = tuple(sorted(rooms_of[n]))


def trail_facets(graph: nx.DiGraph) -> None:
    """Publisher facet for a provenance trail: the publishers each node leads to."""
    pubs = {n: a["id"] for n, a in graph.nodes(data=True) if a["type"] == "Publisher"}
    reach = _reach(graph, pubs)
    for n, attrs in graph.nodes(data=True):
        attrs["publishers"] = tuple(sorted(reach[n]))


def _reach(graph: nx.DiGraph, pubs: dict[str, str]) -> dict[str, set[str]]:
    """Each node's reachable publishers: one reverse topological pass (a DAG, the usual
    trail), else each node's descendants."""
    reach: dict[str, set[str]] = {n: ({pubs[n]} if n in pubs else set()) for n in graph}
    if nx.is_directed_acyclic_graph(graph):
        for n in reversed(list(nx.topological_sort(graph))):
            for succ in graph.successors(n):
                reach[n] |= reach[succ]
    else:
        for n in graph:
            reach[n] = {pubs[d] for d in nx.descendants(graph, n) if d in pubs} | reach[n]
    return reach
