"""The fifth promise in ``audit``: "each paragraph is supported by the claims it cites".

Reads the verdicts the support check recorded (:mod:`hcgraph.claims.verdicts`, one support
graph per story): every *unsupported* (passage, claim) pair is a finding, with the sentence,
the claim's text and each mismatch's span as evidence; every story gets a tally of its
verdicts (supported, unsupported, not checkable), and ``unchecked`` when no check has run on
its current version (run ``hcgraph manifests check``). Pairs that cannot be checked are no
finding: a missing reply says nothing against the story.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import pyoxigraph as ox

from ..store import Store
from ..vocab import ID, SUPPORT_GRAPHS
from ._graph import claim_id
from .findings import AuditFinding

__all__ = ["SupportFacts", "support_facts"]

_VERDICTS = f"""
SELECT ?g ?v ?status ?passage ?claim ?reason ?sentence ?claimText ?m ?kind ?span ?claimSpan
       ?detail ?start ?end
WHERE {{ GRAPH ?g {{
  ?v hc:supportStatus ?status ; cito:hasCitingEntity ?passage ; cito:hasCitedEntity ?claim .
  OPTIONAL {{ ?v hc:reason ?reason }}
  OPTIONAL {{ ?v schema:claimReviewed ?sentence }}
  OPTIONAL {{
    ?v hc:mismatch ?m . ?m hc:mismatchKind ?kind ; hc:span ?span ; hc:claimSpan ?claimSpan ;
       <http://www.w3.org/2000/01/rdf-schema#comment> ?detail .
    OPTIONAL {{ ?m hc:spanStart ?start ; hc:spanEnd ?end }}
  }}
}} FILTER STRSTARTS(STR(?g), "{SUPPORT_GRAPHS}")
   OPTIONAL {{ ?claim prov:value ?claimText }} }}
"""
_CHECKED_RAW = f"""
SELECT ?g ?raw WHERE {{ GRAPH ?g {{ ?check a hc:SupportCheck ; prov:used ?raw }}
  FILTER (STRSTARTS(STR(?g), "{SUPPORT_GRAPHS}") && STRSTARTS(STR(?raw), "{ID}raw/")) }}
"""


class SupportFacts:
    """Per story: the verdict tally and the findings (unsupported pairs)."""

    def __init__(self) -> None:
        self.tally: dict[str, Counter[str]] = {}
        self.findings: dict[str, list[AuditFinding]] = {}

    def for_story(self, url: str, current: bool) -> dict[str, int]:
        """The story's tally, or ``{"unchecked": 1}`` when no check ran on this version."""
        counts = self.tally.get(url)
        if counts is None or not current:
            return {"unchecked": 1}
        return {k: counts.get(k, 0) for k in ("supported", "unsupported", "not-checkable")}


def _value(term: ox.NamedNode | ox.Literal | ox.BlankNode | None) -> str | None:
    return None if term is None else term.value


def support_facts(store: Store, stories: Iterable[str] | None = None) -> SupportFacts:
    """Read the recorded verdicts (of ``stories`` only, when given)."""
    wanted = None if stories is None else set(stories)
    facts = SupportFacts()
    pairs: dict[str, dict[str, Any]] = {}
    result = store.query(_VERDICTS)
    assert isinstance(result, ox.QuerySolutions)
    for row in result:
        passage = row["passage"].value
        story = passage.split("#", 1)[0]
        if wanted is not None and story not in wanted:
            continue
        verdict = row["v"].value
        pair = pairs.get(verdict)
        if pair is None:
            status = row["status"].value
            facts.tally.setdefault(story, Counter())[status] += 1
            if status != "unsupported":
                pairs[verdict] = {}
                continue
            pair = pairs[verdict] = {
                "story": story,
                "passage": passage,
                "claim_id": claim_id(row["claim"].value),
                "claim": _value(row["claimText"]) or "",
                "reason": _value(row["reason"]) or "",
                "sentence": _value(row["sentence"]) or "",
                "mismatches": {},
            }
        if not pair or row["m"] is None:
            continue
        pair["mismatches"][row["m"].value] = {
            "kind": row["kind"].value,
            "span": row["span"].value,
            "claim_span": row["claimSpan"].value,
            "detail": row["detail"].value,
            "start": int(row["start"].value) if row["start"] is not None else None,
            "end": int(row["end"].value) if row["end"] is not None else None,
        }
    for verdict in sorted(pairs):
        pair = pairs[verdict]
        if pair:
            _finding(facts, pair)
    return facts


def _finding(facts: SupportFacts, pair: dict[str, Any]) -> None:
    mismatches = [pair["mismatches"][k] for k in sorted(pair["mismatches"])]
    story, passage = pair["story"], pair["passage"]
    key = passage.rsplit("#", 1)[-1]
    first = mismatches[0]["detail"] if mismatches else pair["reason"]
    evidence = {
        "passage": passage,
        "claim_id": pair["claim_id"],
        "claim": pair["claim"],
        "sentence": pair["sentence"],
        "reason": pair["reason"],
        "spans": [{k: m[k] for k in ("kind", "span", "claim_span", "detail")} for m in mismatches],
    }
    message = f"{key} does not say what claim {pair['claim_id']} says: {first}"
    facts.findings.setdefault(story, []).append(
        AuditFinding(story, "unsupported-claim", message, evidence)
    )


def checked_versions(store: Store) -> dict[str, str]:
    """Support graph → the raw document IRI its check read."""
    result = store.query(_CHECKED_RAW)
    assert isinstance(result, ox.QuerySolutions)
    return {row["g"].value: row["raw"].value for row in result}
