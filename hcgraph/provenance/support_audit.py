"""The fifth promise in ``audit``: "each paragraph is supported by the claims it cites".

Reads the support check's recorded verdicts (:mod:`hcgraph.claims.verdicts`): each
*unsupported* (passage, claim) pair is a finding, with its mismatches as evidence; each story
gets a tally of its verdicts, or ``unchecked`` when no check ran on its current version.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import pyoxigraph as ox

from ..store import Store
from ..vocab import ID, SUPPORT_GRAPHS
from ._graph import claim_id
from .scope import AuditFinding

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
    pairs: dict[str, dict[str, Any]] = {}  # verdict → its unsupported pair ({}: not one)
    result = store.query(_VERDICTS)
    assert isinstance(result, ox.QuerySolutions)
    for row in result:
        story = row["passage"].value.split("#", 1)[0]
        if wanted is None or story in wanted:
            _add_row(facts, pairs, story, row)
    for verdict in sorted(pairs):
        if pairs[verdict]:
            _finding(facts, pairs[verdict])
    return facts


def _add_row(
    facts: SupportFacts, pairs: dict[str, dict[str, Any]], story: str, row: ox.QuerySolution
) -> None:
    """One row: a verdict's first row is tallied (and opens its pair, when unsupported);
    every row of an unsupported pair adds its mismatch."""
    verdict = row["v"].value
    if verdict not in pairs:
        status = row["status"].value
        facts.tally.setdefault(story, Counter())[status] += 1
        pairs[verdict] = _pair(story, row) if status == "unsupported" else {}
    pair = pairs[verdict]
    if pair and row["m"] is not None:
        pair["mismatches"][row["m"].value] = {
            "kind": row["kind"].value,
            "span": row["span"].value,
            "claim_span": row["claimSpan"].value,
            "detail": row["detail"].value,
            "start": _int(row["start"]),
            "end": _int(row["end"]),
        }


def _pair(story: str, row: ox.QuerySolution) -> dict[str, Any]:
    return {
        "story": story,
        "passage": row["passage"].value,
        "claim_id": claim_id(row["claim"].value),
        "claim": _value(row["claimText"]) or "",
        "reason": _value(row["reason"]) or "",
        "sentence": _value(row["sentence"]) or "",
        "mismatches": {},
    }


def _int(term: ox.NamedNode | ox.Literal | ox.BlankNode | None) -> int | None:
    return None if term is None else int(term.value)


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
