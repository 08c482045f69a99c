"""Counts that describe a store: stories, triples, and nodes per type."""

from __future__ import annotations

from typing import Any

from .damage import damage_message
from .errors import StoreDamagedError
from .project import node_type
from .store import Store

__all__ = ["graph_stats"]

_TYPE_COUNTS = """
SELECT ?s (GROUP_CONCAT(STR(?t); separator=" ") AS ?types)
WHERE { ?s a ?t } GROUP BY ?s
"""
# Every triple lives in exactly one graph, so the union default graph is a set: counting its
# solutions counts distinct triples, no DISTINCT needed.
_TRIPLES = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
_RELATED = "SELECT (COUNT(DISTINCT ?r) AS ?n) WHERE { ?s dcterms:relation ?r }"


def graph_stats(store: Store, *, include_withdrawn: bool = False) -> dict[str, Any]:
    """Stories, quads, distinct triples, related links and node counts per hcgraph type (as
    the maps count them); ``withdrawn`` when some are, and with ``include_withdrawn`` they
    count among ``stories`` too."""
    per_type: dict[str, int] = {}
    for row in store.query(_TYPE_COUNTS):
        if row["types"] is None:  # GROUP_CONCAT is always bound: only damage leaves it empty
            why = "a typed node came back without its types"
            directory = store.directory or "(in memory)"
            raise StoreDamagedError(damage_message(directory, why, where="the type counts"))
        kind = node_type(set(row["types"].value.split()))
        per_type[kind] = per_type.get(kind, 0) + 1
    triples = int(next(iter(store.query(_TRIPLES)))["n"].value)
    related = int(next(iter(store.query(_RELATED)))["n"].value)
    withdrawn = len(store.withdrawn_stories())
    out = {
        "stories": len(store.story_graphs()) - (0 if include_withdrawn else withdrawn),
        "quads": len(store),
        "triples": triples,
        "related_links": related,
        "nodes": dict(sorted(per_type.items())),
    }
    if withdrawn:  # only then: the output of a store without withdrawals stays as it was
        out["withdrawn"] = withdrawn
    return out
