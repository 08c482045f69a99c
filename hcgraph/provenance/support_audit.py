"""The fifth promise in ``audit``: "each paragraph is supported by the claims it cites".

Reads the support check's recorded verdicts (:mod:`hcgraph.claims.verdicts`): each
*unsupported* (passage, claim) pair is a finding, with its mismatches as evidence; each story
gets a tally of its verdicts, or ``unchecked`` when no check ran on its current version.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..store import Store
from ..vocab import ID, SUPPORT_GRAPHS
from ._graph import claim_id, rows
from .scope import AuditFinding

__all__ = ["SupportFacts", "support_facts"]

Row = tuple[str | None, ...]
#: A verdict's first row and its mismatches (by IRI: kind, span, claim_span, detail).
Pair = tuple[Row, dict[str, dict[str, str | None]]]
_SPAN_KEYS = ("kind", "span", "claim_span", "detail")  # ?kind ?span ?claimSpan ?detail

_VERDICTS = f"""
SELECT ?v ?status ?passage ?claim ?reason ?sentence ?claimText ?m ?kind ?span ?claimSpan ?detail
WHERE {{ GRAPH ?g {{
  ?v hc:supportStatus ?status ; cito:hasCitingEntity ?passage ; cito:hasCitedEntity ?claim .
  OPTIONAL {{ ?v hc:reason ?reason }}
  OPTIONAL {{ ?v schema:claimReviewed ?sentence }}
  OPTIONAL {{
    ?v hc:mismatch ?m . ?m hc:mismatchKind ?kind ; hc:span ?span ; hc:claimSpan ?claimSpan ;
       <http://www.w3.org/2000/01/rdf-schema#comment> ?detail .
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


def support_facts(store: Store, stories: Iterable[str] | None = None) -> SupportFacts:
    """Read the recorded verdicts (of ``stories`` only, when given)."""
    wanted = None if stories is None else set(stories)
    facts = SupportFacts()
    pairs: dict[str, Pair | None] = {}  # verdict → its unsupported pair (None: not one)
    for row in rows(store, _VERDICTS):
        story = (row[2] or "").split("#", 1)[0]
        if wanted is None or story in wanted:
            _add_row(facts, pairs, story, row)
    for verdict in sorted(pairs):
        if (pair := pairs[verdict]) is not None:
            _finding(facts, *pair)
    return facts


def _add_row(facts: SupportFacts, pairs: dict[str, Pair | None], story: str, row: Row) -> None:
    """One row: a verdict's first row is tallied (and opens its pair, when unsupported);
    every row of an unsupported pair adds its mismatch."""
    verdict, status = row[0] or "", row[1] or ""
    if verdict not in pairs:
        facts.tally.setdefault(story, Counter())[status] += 1
        pairs[verdict] = (row, {}) if status == "unsupported" else None
    if (pair := pairs[verdict]) is not None and (m := row[7]) is not None:
        pair[1][m] = dict(zip(_SPAN_KEYS, row[8:], strict=True))


def _finding(facts: SupportFacts, row: Row, mismatches: dict[str, dict[str, str | None]]) -> None:
    """The finding of one unsupported pair, its mismatches (in order) as evidence."""
    _, _, passage, claim, reason, sentence, text, *_ = row
    assert passage is not None and claim is not None
    story, key = passage.split("#", 1)[0], passage.rsplit("#", 1)[-1]
    spans = [mismatches[m] for m in sorted(mismatches)]
    evidence = {
        "passage": passage,
        "claim_id": claim_id(claim),
        "claim": text or "",
        "sentence": sentence or "",
        "reason": reason or "",
        "spans": spans,
    }
    first = spans[0]["detail"] if spans else reason or ""
    message = f"{key} does not say what claim {claim_id(claim)} says: {first}"
    facts.findings.setdefault(story, []).append(
        AuditFinding(story, "unsupported-claim", message, evidence)
    )


def checked_versions(store: Store) -> dict[str, str]:
    """Support graph → the raw document IRI its check read."""
    return {g: raw for g, raw in rows(store, _CHECKED_RAW) if g and raw}
