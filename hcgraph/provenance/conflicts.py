"""The promise "claim ids belong to their manifest": claims cited under two manifests.

Counted on the derived *claim uses* (:mod:`hcgraph.mapping`: ``hc:citesClaimUnder`` links a
story to a claim under one manifest): one grouped query counts the stories per use of every
claim used under two or more manifests, and one more reads the citing parts of only the
stories that break the promise (the evidence).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from ..store import Store
from ._graph import batches, claim_id, manifest_id, rows, values
from .scope import AuditFinding, AuditScope

__all__ = ["conflicts"]

_CLAIM_PREFIX = "https://w3id.org/hcgraph/id/claim/"
# Stories per use of the claims %s picks: grouping on term ids needs no string decoding.
_USE_COUNTS = """
SELECT ?claim ?use ?m (COUNT(?s) AS ?n) WHERE { %s
  ?use hc:claim ?claim ; hc:manifest ?m .
  OPTIONAL { ?s hc:citesClaimUnder ?use }
} GROUP BY ?claim ?use ?m
"""
# Every claim used under two or more manifests; or every claim the stories bound by VALUES
# cite (those used once are dropped afterwards: a HAVING here made Oxigraph scan every use).
_CONFLICTING = (
    "{ SELECT ?claim WHERE { ?u hc:claim ?claim } GROUP BY ?claim HAVING (COUNT(?u) > 1) }"
)
_CITED_BY = """{ SELECT DISTINCT ?claim WHERE {
  %s ?story hc:citesClaimUnder ?cited . ?cited hc:claim ?claim
} }"""
# The parts of the stories citing the uses bound by VALUES (the evidence).
_PARTS_CITING = """
SELECT DISTINCT ?use ?story ?part WHERE { %s
  ?story hc:citesClaimUnder ?use .
  ?use hc:claim ?claim ; hc:manifest ?m .
  GRAPH ?story { ?c hc:citesClaim ?claim ; cito:hasCitedEntity ?m ; cito:hasCitingEntity ?part }
}
"""


def conflicts(scope: AuditScope) -> list[AuditFinding]:
    """Claims under two manifests: a claim belongs to the manifest most stories cite it
    under, and the stories citing it under another (every one, with no single majority)
    break the promise. A local scope: just the wanted stories' claims."""
    store = scope.store
    stories = values("story", set(scope.wanted)) if scope.local else ""
    uses, counts = _claim_uses(store, _CITED_BY % stories if scope.local else _CONFLICTING)
    owners, others = _owners(uses, counts)
    flagged: defaultdict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    found: list[AuditFinding] = []
    for use, story, part in _evidence(store, sorted(others), stories):
        claim, m = others[use]
        flagged[(story, claim)].append((part, manifest_id(m)))
    for (story, claim), cites in sorted(flagged.items()):
        owner_id = owners[claim]
        per_manifest = {
            manifest_id(m): counts[u] for u, m in sorted(uses[claim].items(), key=lambda um: um[1])
        }
        cites.sort()
        under = sorted({m for _, m in cites})
        found.append(AuditFinding(story, "claim-conflict",
            f"claim {claim_id(claim)} is cited here under manifest {', '.join(under)} "
            + (f"but belongs to {owner_id}" if owner_id else "and elsewhere under another"),
            {"claim_id": claim_id(claim), "owner": owner_id,
             "stories_per_manifest": per_manifest,
             "cited_here": [{"part": p, "manifest_id": m} for p, m in cites]}))  # fmt: skip
    return found


def _claim_uses(store: Store, claims: str) -> tuple[dict[str, dict[str, str]], dict[str, int]]:
    """Claim → use → manifest for the claims pattern ``claims`` picks that are used under
    two or more manifests, and use → how many stories cite it (one grouped query)."""
    uses: defaultdict[str, dict[str, str]] = defaultdict(dict)
    counts: dict[str, int] = {}
    for claim, use, m, n in rows(store, _USE_COUNTS % claims):
        if claim and use and m and claim.startswith(_CLAIM_PREFIX):
            uses[claim][use] = m
            counts[use] = int(n or 0)
    return {c: by_use for c, by_use in uses.items() if len(by_use) > 1}, counts


def _owners(
    uses: dict[str, dict[str, str]], counts: dict[str, int]
) -> tuple[dict[str, str | None], dict[str, tuple[str, str]]]:
    """Claim → the id of the manifest it belongs to (None: no single majority), and use → (claim,
    manifest) for every use that is not its claim's own (the stories citing it break the
    promise)."""
    owners: dict[str, str | None] = {}
    others: dict[str, tuple[str, str]] = {}
    for claim, by_use in sorted(uses.items()):
        first, second = sorted((counts[u] for u in by_use), reverse=True)[:2]
        owner = max(by_use, key=counts.__getitem__) if first > second else None
        owners[claim] = manifest_id(by_use[owner]) if owner else None
        others.update({u: (claim, m) for u, m in by_use.items() if u != owner})
    return owners, others


def _evidence(store: Store, uses: list[str], stories: str) -> Iterator[tuple[str, str, str]]:
    """(use, story, part) for the parts citing ``uses`` (in the ``VALUES ?story`` block
    ``stories``, when given), one query per :data:`~._graph.BATCH` uses."""
    for batch in batches(uses):
        for use, story, part in rows(store, _PARTS_CITING % f"{values('use', batch)} {stories}"):
            if use and story and part:
                yield use, story, part
