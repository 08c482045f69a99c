"""The promise "claim ids belong to their manifest": claims cited under two manifests.

A claim belongs to the manifest most stories cite it under; stories citing it under another
manifest break the promise (with no single majority, every story citing it does). Two ways
to count, chosen once per store by :func:`states_membership`: where each story graph states
"claim isPartOf manifest" for the claims it cites (today's layout), graphs are counted by
index lookups; where claims are described once in a shared graph, the citations themselves
are counted (capped: enough to find the majority).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

import pyoxigraph as ox

from ..store import Store
from ._graph import claim_id, count, manifest_id, rows
from .findings import AuditFinding

__all__ = ["conflicts", "states_membership"]

# Things described as part of two things (union graph: claim descriptions, wherever they
# live). Story parts have exactly one parent, so only claims come out; grouping on term ids
# needs no string decoding, and the few results are checked for the claim prefix in Python.
_CONFLICTS = """
SELECT ?claim WHERE { ?claim dcterms:isPartOf ?m }
GROUP BY ?claim HAVING (COUNT(DISTINCT ?m) > 1)
"""
_CLAIM_PREFIX = "https://w3id.org/hcgraph/id/claim/"
# Stories citing a claim under one manifest. Oxigraph joins in the order written, so each
# query comes in two orders: start from the claim or from the manifest, whichever has fewer
# citations (a rare claim under a popular manifest, or the reverse, is 100x faster so).
# Counts stop at _SPREAD_CAP + 1: enough to find the majority manifest.
_SPREAD_CAP = 50
_FIRST = {
    "claim": "?c hc:citesClaim ?claim . ?c cito:hasCitedEntity ?m .",
    "m": "?c cito:hasCitedEntity ?m . ?c hc:citesClaim ?claim .",
}
_CONFLICT_SPREAD = {
    k: "SELECT ?claim ?m (COUNT(*) AS ?n) WHERE { { SELECT DISTINCT ?claim ?m ?story WHERE { "
    f"GRAPH ?story {{ {v} }} }} LIMIT {_SPREAD_CAP + 1} }} }} GROUP BY ?claim ?m"
    for k, v in _FIRST.items()
}
_CONFLICT_CITES = {
    k: "SELECT DISTINCT ?claim ?m ?story ?part WHERE { GRAPH ?story { "
    f"{v} ?c cito:hasCitingEntity ?part . }} }}"
    for k, v in _FIRST.items()
}
_GRAPHS_STATING = (
    "SELECT DISTINCT ?claim ?m ?story WHERE { GRAPH ?story { ?claim dcterms:isPartOf ?m } }"
)
_GRAPHS_COUNT = (
    "SELECT ?claim ?m (COUNT(DISTINCT ?story) AS ?n) WHERE { GRAPH ?story { "
    "?claim dcterms:isPartOf ?m } } GROUP BY ?claim ?m"
)
_A_CITED_CLAIM = (
    "SELECT ?story ?claim WHERE { GRAPH ?story { ?p cito:citesAsEvidence ?claim } } LIMIT 1"
)
_STATES_MEMBERSHIP = "ASK { GRAPH ?story { ?claim dcterms:isPartOf ?m } }"
_PARTS_CITING = """
SELECT DISTINCT ?story ?claim ?m ?part WHERE { GRAPH ?story {
  ?c hc:citesClaim ?claim ; cito:hasCitedEntity ?m ; cito:hasCitingEntity ?part .
} }
"""
_CITATIONS_CAP = 2000
_CLAIM_CITATIONS = (
    "SELECT ?claim (COUNT(*) AS ?n) WHERE { { SELECT ?c ?claim WHERE { GRAPH ?g { "
    f"?c hc:citesClaim ?claim }} }} LIMIT {_CITATIONS_CAP} }} }} GROUP BY ?claim"
)
_MANIFEST_CITATIONS = (
    "SELECT ?m (COUNT(*) AS ?n) WHERE { { SELECT ?c ?m WHERE { GRAPH ?g { "
    f"?c cito:hasCitedEntity ?m }} }} LIMIT {_CITATIONS_CAP} }} }} GROUP BY ?m"
)
_STORY_CLAIMS = (
    "SELECT DISTINCT ?story ?claim WHERE { GRAPH ?story { ?part cito:citesAsEvidence ?claim } }"
)
_CLAIM_MANIFESTS = "SELECT DISTINCT ?claim ?m WHERE { ?claim dcterms:isPartOf ?m }"


def conflicts(
    store: Store, findings: defaultdict[str, list[AuditFinding]], only: set[str] | None = None
) -> None:
    """Claims under two manifests. The claim belongs to the manifest most stories cite it
    under; stories citing it under another manifest break the promise. With no single
    majority, every story citing the claim is flagged. (Where claims are described only in
    a shared graph, counts stop at ``_SPREAD_CAP + 1``: two manifests above it are a tie.)"""
    if only is None:
        claims = [c for (c,) in rows(store, _CONFLICTS) if c and c.startswith(_CLAIM_PREFIX)]
    else:  # only the claims these stories cite, each looked up by itself
        cited = {c for url in sorted(only) for (c,) in
                 rows(store, _STORY_CLAIMS, story=ox.NamedNode(url)) if c}  # fmt: skip
        claims = [
            c for c in sorted(cited)
            if len(list(rows(store, _CLAIM_MANIFESTS, claim=ox.NamedNode(c)))) > 1
        ]  # fmt: skip
    # Fast path: where a story graph that cites a claim under m also states "claim isPartOf
    # m" (today's layout), stories are counted by index lookups. Where claims are described
    # once in a shared graph instead, the citations themselves are counted.
    stated = bool(claims) and states_membership(store)
    for claim in claims:
        node = ox.NamedNode(claim)
        manifests = [m for (m,) in rows(store, _CLAIM_MANIFESTS, claim=node) if m is not None]
        by_graph = {
            m: count(store, _GRAPHS_COUNT, claim=node, m=ox.NamedNode(m))
            for m in (manifests if stated else [])
        }
        first = {m: _order(store, node, ox.NamedNode(m)) for m in ([] if stated else manifests)}
        spread = (
            by_graph
            if stated
            else {
                m: count(store, _CONFLICT_SPREAD[first[m]], claim=node, m=ox.NamedNode(m))
                for m in manifests
            }
        )
        ranked = sorted(spread.values(), reverse=True)
        owner = None
        if len(ranked) == 1 or ranked[0] > ranked[1]:
            owner = max(spread, key=lambda m: spread[m])
        flagged: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
        for m in sorted(spread):
            if m == owner:
                continue
            if stated:
                urls = [u for (u,) in rows(store, _GRAPHS_STATING, claim=node, m=ox.NamedNode(m))]
                found: Iterable[tuple[str | None, ...]] = (
                    (u, part)
                    for u in urls
                    if u and (only is None or u in only)
                    for (part,) in _parts_citing(store, u, node, m)
                )
            else:
                found = rows(store, _CONFLICT_CITES[first[m]], claim=node, m=ox.NamedNode(m))
            for story, part in found:
                if story is not None and part is not None:
                    flagged[story].append((part, manifest_id(m)))
        owner_id = manifest_id(owner) if owner else None
        per_manifest = {manifest_id(m): n for m, n in sorted(spread.items())}
        for story, cites in sorted(flagged.items()):
            if only is not None and story not in only:
                continue
            cites.sort()
            under = sorted({m for _, m in cites})
            findings[story].append(AuditFinding(story, "claim-conflict",
                f"claim {claim_id(claim)} is cited here under manifest {', '.join(under)} "
                + (f"but belongs to {owner_id}" if owner_id else "and elsewhere under another"),
                {"claim_id": claim_id(claim), "owner": owner_id,
                 "stories_per_manifest": per_manifest,
                 "cited_here": [{"part": p, "manifest_id": m} for p, m in cites]}))  # fmt: skip


def _parts_citing(store: Store, story: str, claim: Any, m: str) -> Iterator[tuple[str | None, ...]]:
    node = ox.NamedNode(story)
    yield from rows(store, _PARTS_CITING, story=node, claim=claim, m=ox.NamedNode(m))


def states_membership(store: Store) -> bool:
    """True if story graphs state which manifest each claim they cite is part of."""
    for story, claim in rows(store, _A_CITED_CLAIM):
        if story and claim:
            found = store.query(_STATES_MEMBERSHIP, bindings={
                "story": ox.NamedNode(story), "claim": ox.NamedNode(claim)})  # fmt: skip
            return bool(found)
    return False


def _order(store: Store, claim: Any, m: Any) -> str:
    """Which side to start a claim-under-manifest join from: the one with fewer citations."""
    claim_n = count(store, _CLAIM_CITATIONS, claim=claim)
    return "claim" if claim_n <= count(store, _MANIFEST_CITATIONS, m=m) else "m"
