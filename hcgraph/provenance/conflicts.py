"""The promise "claim ids belong to their manifest": claims cited under two manifests.

A claim belongs to the manifest most stories cite it under; stories citing it under another
manifest break the promise (with no single majority, every story citing it does). Two ways
to count, chosen once per store by :func:`states_membership`: where each story graph states
"claim isPartOf manifest" for the claims it cites (today's layout), graphs are counted by
index lookups; where claims are described once in a shared graph (layout v2, issue 9), each
claim's citations are grouped by manifest in one query.
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
# Stories (and parts) citing a claim under one manifest: start from the claim's citations.
_CONFLICT_CITES = (
    "SELECT DISTINCT ?claim ?m ?story ?part WHERE { GRAPH ?story { "
    "?c hc:citesClaim ?claim . ?c cito:hasCitedEntity ?m . ?c cito:hasCitingEntity ?part . } }"
)
# Every manifest a claim is cited under, with the number of stories citing it so: one pass
# over the claim's own citations (bound ?claim: an index lookup), exact counts.
_CLAIM_SPREAD = (
    "SELECT ?claim ?m (COUNT(DISTINCT ?story) AS ?n) WHERE { GRAPH ?story { "
    "?c hc:citesClaim ?claim ; cito:hasCitedEntity ?m } } GROUP BY ?claim ?m"
)
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
_STORY_CLAIMS = (
    "SELECT DISTINCT ?story ?claim WHERE { GRAPH ?story { ?part cito:citesAsEvidence ?claim } }"
)
_CLAIM_MANIFESTS = "SELECT DISTINCT ?claim ?m WHERE { ?claim dcterms:isPartOf ?m }"


def conflicts(
    store: Store, findings: defaultdict[str, list[AuditFinding]], only: set[str] | None = None
) -> None:
    """Claims under two manifests. The claim belongs to the manifest most stories cite it
    under; stories citing it under another manifest break the promise. With no single
    majority, every story citing the claim is flagged."""
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
        spread = by_graph
        if not stated:
            spread = {m: 0 for m in manifests}
            spread.update({m: int(n) for m, n in rows(store, _CLAIM_SPREAD, claim=node) if m and n})
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
                found = rows(store, _CONFLICT_CITES, claim=node, m=ox.NamedNode(m))
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
