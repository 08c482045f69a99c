"""The promise "claim ids belong to their manifest": claims cited under two manifests.

A claim belongs to the manifest most stories cite it under; stories citing it under another
manifest break the promise (with no single majority, every story citing it does).

Counted on the derived *claim uses* (:mod:`hcgraph.mapping`): each story graph links the
story to every claim use it cites (``hc:citesClaimUnder``: a claim under one manifest,
described once in the sources graph by ``hc:claim`` and ``hc:manifest``). The stories citing
a claim under a manifest are then one index range, so the counts are exact and no citation
is walked except in the few stories that break the promise (for the evidence: which parts).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator

import pyoxigraph as ox

from ..store import Store
from ._graph import claim_id, manifest_id, rows
from .findings import AuditFinding

__all__ = ["conflicts"]

_CLAIM_PREFIX = "https://w3id.org/hcgraph/id/claim/"
# Claim uses of the claims used under two or more manifests (claim uses are stated once, in
# the sources graph: grouping on term ids needs no string decoding).
_CONFLICTING_USES = """
SELECT ?claim ?use ?m WHERE {
  { SELECT ?claim WHERE { ?u hc:claim ?claim } GROUP BY ?claim HAVING (COUNT(?u) > 1) }
  ?use hc:claim ?claim ; hc:manifest ?m .
}
"""
_CLAIM_USES = "SELECT ?claim ?use ?m WHERE { ?use hc:claim ?claim ; hc:manifest ?m }"
_STORY_CLAIMS = """
SELECT DISTINCT ?story ?claim WHERE {
  GRAPH ?story { ?story hc:citesClaimUnder ?use } ?use hc:claim ?claim
}
"""
# Stories per claim use, and the stories of the uses that are not their claim's own.
_USE_COUNTS = "SELECT ?use (COUNT(?s) AS ?n) WHERE {{ VALUES ?use {{ {} }} " \
    "?s hc:citesClaimUnder ?use }} GROUP BY ?use"  # fmt: skip
_USE_STORIES = "SELECT ?use ?s WHERE {{ VALUES ?use {{ {} }} ?s hc:citesClaimUnder ?use }}"
# The parts of one story citing a claim under a manifest (the evidence).
_PARTS_CITING = """
SELECT DISTINCT ?story ?claim ?m ?part WHERE { GRAPH ?story {
  ?c hc:citesClaim ?claim ; cito:hasCitedEntity ?m ; cito:hasCitingEntity ?part .
} }
"""
_BATCH = 500  # VALUES rows per query


def conflicts(
    store: Store, findings: defaultdict[str, list[AuditFinding]], only: set[str] | None = None
) -> None:
    """Claims under two manifests. The claim belongs to the manifest most stories cite it
    under; stories citing it under another manifest break the promise. With no single
    majority, every story citing the claim is flagged."""
    uses: defaultdict[str, dict[str, str]] = defaultdict(dict)  # claim → use → manifest
    if only is None:
        found: Iterable[tuple[str | None, ...]] = rows(store, _CONFLICTING_USES)
    else:  # only the claims these stories cite, each looked up by itself
        cited = {c for url in sorted(only)
                 for (c,) in rows(store, _STORY_CLAIMS, story=ox.NamedNode(url)) if c}  # fmt: skip
        found = (
            (claim, use, m)
            for claim in sorted(cited)
            for use, m in rows(store, _CLAIM_USES, claim=ox.NamedNode(claim))
        )
    for claim, use, m in found:
        if claim and use and m and claim.startswith(_CLAIM_PREFIX):
            uses[claim][use] = m
    conflicting = {c: u for c, u in uses.items() if len(u) > 1}
    counts = dict(_batched(store, _USE_COUNTS, [u for c in conflicting.values() for u in c]))
    others: dict[str, tuple[str, str]] = {}  # use → (claim, manifest), not the claim's own
    owners: dict[str, str | None] = {}
    for claim, by_use in sorted(conflicting.items()):
        ranked = sorted((int(counts.get(u, 0)) for u in by_use), reverse=True)
        owner = None
        if ranked[0] > ranked[1]:
            owner = max(by_use, key=lambda u: int(counts.get(u, 0)))
        owners[claim] = by_use[owner] if owner else None
        others.update({u: (claim, m) for u, m in by_use.items() if u != owner})
    flagged: defaultdict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for use, story in sorted(_batched(store, _USE_STORIES, sorted(others))):
        if only is not None and story not in only:
            continue
        claim, m = others[use]
        for (part,) in rows(store, _PARTS_CITING, story=ox.NamedNode(story),
                            claim=ox.NamedNode(claim), m=ox.NamedNode(m)):  # fmt: skip
            if part is not None:
                flagged[(story, claim)].append((part, manifest_id(m)))
    for (story, claim), cites in sorted(flagged.items()):
        owner_m = owners[claim]
        owner_id = manifest_id(owner_m) if owner_m else None
        per_manifest = {
            manifest_id(m): int(counts.get(u, 0))
            for u, m in sorted(conflicting[claim].items(), key=lambda um: um[1])
        }
        cites.sort()
        under = sorted({m for _, m in cites})
        findings[story].append(AuditFinding(story, "claim-conflict",
            f"claim {claim_id(claim)} is cited here under manifest {', '.join(under)} "
            + (f"but belongs to {owner_id}" if owner_id else "and elsewhere under another"),
            {"claim_id": claim_id(claim), "owner": owner_id,
             "stories_per_manifest": per_manifest,
             "cited_here": [{"part": p, "manifest_id": m} for p, m in cites]}))  # fmt: skip


def _batched(store: Store, template: str, uses: list[str]) -> Iterator[tuple[str, str]]:
    """Rows of ``template`` with its ``VALUES ?use`` filled, :data:`_BATCH` uses at a time
    (IRIs read back from the store, so they are valid in SPARQL text)."""
    for i in range(0, len(uses), _BATCH):
        values = " ".join(f"<{u}>" for u in uses[i : i + _BATCH])
        for a, b in rows(store, template.format(values)):
            if a is not None and b is not None:
                yield a, b
