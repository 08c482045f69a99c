"""The support verdicts as schema.org ``ClaimReview`` JSON-LD, the form fact-checkers publish.

One ``ClaimReview`` per ``hc:SupportVerdict`` in the store's support graphs, as Google's
ClaimReview structured data and ClaimsKG read it (``docs/graph.md`` tables the properties).
The output is a JSON array sorted by ``@id``, safe inside an HTML ``<script>`` element.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, BinaryIO
from urllib.parse import unquote

import pyoxigraph as ox

from .claims.graphing import STATUSES
from .htmltext import script_safe
from .provenance._graph import count, rows
from .store import Store
from .vocab import SUPPORT_GRAPHS

__all__ = ["CLAIMSKG_RATINGS", "claim_reviews", "count_verdicts", "empty_note", "write_claimreview"]

#: hcgraph's verdict status → the ClaimsKG normalised rating.
CLAIMSKG_RATINGS: dict[str, str] = {
    "supported": "TRUE",
    "unsupported": "FALSE",
    "not-checkable": "OTHER",
}
_PROV_SOFTWARE_AGENT = "http://www.w3.org/ns/prov#SoftwareAgent"

# The support graphs' prefix is our own constant (no user text is ever spliced into SPARQL).
_VERDICTS = """
SELECT ?g ?v ?status ?passage ?claim ?sentence ?reason ?agent WHERE {
  GRAPH ?g { ?v a hc:SupportVerdict ; hc:supportStatus ?status ; schema:itemReviewed ?passage ;
                cito:hasCitedEntity ?claim ; prov:wasGeneratedBy ?check .
             OPTIONAL { ?v schema:claimReviewed ?sentence }
             OPTIONAL { ?v hc:reason ?reason }
             OPTIONAL { ?check prov:wasAssociatedWith ?agent } }
  FILTER(STRSTARTS(STR(?g), "@SUPPORT@"))
}
""".replace("@SUPPORT@", SUPPORT_GRAPHS)

_PASSAGES = """
SELECT DISTINCT ?passage ?ptext WHERE {
  ?v a hc:SupportVerdict ; schema:itemReviewed ?passage . ?passage schema:text ?ptext
}
"""

_CLAIMS = """
SELECT ?claim ?ctext ?srcurl ?srctitle ?srcdate WHERE {
  ?claim prov:wasQuotedFrom ?reply .
  OPTIONAL { ?claim prov:value ?ctext }
  OPTIONAL { ?reply hc:statedSourceUrl ?srcurl }
  OPTIONAL { ?reply dcterms:title ?srctitle }
  OPTIONAL { ?reply hc:statedPublishedDate ?srcdate }
}
"""

_VERSIONS = (
    "SELECT ?agent ?version WHERE { ?agent a prov:SoftwareAgent ; schema:softwareVersion ?version }"
)

_STORY = """
SELECT ?story ?date ?headline WHERE {
  OPTIONAL { ?story schema:datePublished ?date }
  OPTIONAL { ?story schema:headline ?headline }
}
"""

_MISMATCHES = """
SELECT ?v ?m ?kind ?span ?cspan ?comment WHERE {
  GRAPH ?g { ?v a hc:SupportVerdict ; hc:mismatch ?m .
             ?m hc:mismatchKind ?kind .
             OPTIONAL { ?m hc:span ?span } OPTIONAL { ?m hc:claimSpan ?cspan }
             OPTIONAL { ?m rdfs:comment ?comment } }
  FILTER(STRSTARTS(STR(?g), "@SUPPORT@"))
}
""".replace("@SUPPORT@", SUPPORT_GRAPHS)


class _Row(dict[str, set[str]]):
    """One verdict's values: name → every value the query rows carried (they can differ in
    optional values); :meth:`one` gives the smallest (deterministic)."""

    def one(self, name: str) -> str | None:
        found = self.get(name)
        return min(found) if found else None


def _values(
    store: Store, sparql: str, key: str, bindings: dict[str, ox.NamedNode] | None = None
) -> dict[str, _Row]:
    """Every value of each other projected variable, per value of ``key``."""
    names = [w[1:] for w in sparql.split("WHERE", 1)[0].split() if w.startswith("?")]
    found: dict[str, _Row] = defaultdict(_Row)
    for row in store.query(sparql, bindings=bindings):  # ``key`` is bound in every row
        entry = found[row[key].value]
        for name in names:
            term = row[name] if name != key else None
            if term is not None:
                entry.setdefault(name, set()).add(str(term.value))
    return found


def _verdicts(store: Store) -> dict[str, _Row]:
    """Verdict IRI → its values, with what its passage, claim, agent and story add."""
    verdicts = {v: row for v, row in _values(store, _VERDICTS, "v").items() if row.one("claim")}
    passages = _values(store, _PASSAGES, "passage")
    claims = _values(store, _CLAIMS, "claim")
    versions = _values(store, _VERSIONS, "agent")
    stories: dict[str, _Row] = {}
    for row in verdicts.values():
        story = unquote(min(row["g"])[len(SUPPORT_GRAPHS) :])
        if story not in stories:
            bound = {"story": ox.NamedNode(story)}
            stories[story] = _values(store, _STORY, "story", bound)[story]
        row["story"] = {story}
        joined = [passages.get(min(row["passage"])), claims.get(min(row["claim"])), stories[story]]
        for found in joined + [versions.get(agent) for agent in row.get("agent", ())]:
            for name, values in (found or {}).items():
                row.setdefault(name, set()).update(values)
    return verdicts


def _mismatches(store: Store) -> dict[str, list[str]]:
    """Verdict IRI → one line per mismatch, in node order."""
    found: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for v, m, kind, span, cspan, comment in rows(store, _MISMATCHES):
        said = comment or f"{span or ''!r} in the passage, {cspan or ''!r} in the claim"
        found[v or ""].append((m or "", f"{kind}: {said}"))
    return {v: [text for _, text in sorted(set(items))] for v, items in found.items()}


def _drop_none(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without its ``None`` values, in the objects it holds too."""
    return {k: _drop_none(v) if type(v) is dict else v for k, v in data.items() if v is not None}


def _review(row: _Row, verdict: str, mismatches: list[str]) -> Any:
    story, status, passage, claim = (min(row[k]) for k in ("story", "status", "passage", "claim"))
    date, source_url, text = row.one("date"), row.one("srcurl"), row.one("ptext")
    sentence = row.one("sentence") or text or ""
    value = STATUSES.get(status)
    reason = row.one("reason")
    body = None
    if reason or mismatches:
        body = "; ".join([f"{status}: {reason or ''}".rstrip(": "), *mismatches])
    article = {
        "@id": story,
        "@type": "NewsArticle",
        "url": story,
        "headline": row.one("headline"),
        "datePublished": date,
    }
    source = {
        "@type": "CreativeWork",
        "url": source_url,
        "name": row.one("srctitle"),
        "datePublished": row.one("srcdate"),
    }
    return _drop_none(
        {
            "@context": "https://schema.org",
            "@id": verdict,
            "@type": "ClaimReview",
            "url": passage,
            "claimReviewed": sentence,
            "itemReviewed": {
                "@type": "Claim",
                "text": sentence,
                "datePublished": date,
                "appearance": [
                    _drop_none(
                        {
                            "@id": passage,
                            "@type": "CreativeWork",
                            "url": passage,
                            "text": text,
                            "isPartOf": article,
                        }
                    )
                ],
                "firstAppearance": {"@id": passage},
            },
            "isBasedOn": {
                "@id": claim,
                "@type": "Claim",
                "identifier": claim.rsplit("/", 1)[-1],
                "text": row.one("ctext"),
                "firstAppearance": None if source_url is None else source,
            },
            "reviewRating": {
                "@type": "Rating",
                "alternateName": CLAIMSKG_RATINGS.get(status, "OTHER"),
                "name": status,
                "ratingValue": value,
                "bestRating": None if value is None else 1,
                "worstRating": None if value is None else 0,
            },
            "reviewBody": body,
            "author": {
                "@id": row.one("agent"),
                "@type": ["Organization", "SoftwareApplication", _PROV_SOFTWARE_AGENT],
                "name": "hcgraph",
                "softwareVersion": row.one("version"),
                "url": "https://w3id.org/hcgraph",
            },
            "datePublished": date,
        }
    )


def claim_reviews(store: Store) -> list[dict[str, Any]]:
    """Every support verdict in the store as a schema.org ``ClaimReview`` (JSON-LD objects,
    sorted by ``@id``); ``[]`` when no check has run."""
    rows = _verdicts(store)
    mismatches = _mismatches(store)
    return [_review(rows[v], v, mismatches.get(v, [])) for v in sorted(rows)]


def count_verdicts(store: Store) -> int:
    """How many (passage, claim) verdicts the store holds (one ClaimReview each)."""
    query = (
        "SELECT (COUNT(DISTINCT ?v) AS ?n) WHERE { GRAPH ?g { ?v a hc:SupportVerdict } "
        f'FILTER(STRSTARTS(STR(?g), "{SUPPORT_GRAPHS}")) }}'
    )
    return count(store, query)


def write_claimreview(store: Store, out: BinaryIO) -> None:
    """Write :func:`claim_reviews` as a JSON array, one review per line (UTF-8, keys sorted,
    deterministic; :func:`~hcgraph.htmltext.script_safe`, to sit in a ``<script>``)."""
    reviews = claim_reviews(store)
    out.write(b"[\n" if reviews else b"[]\n")
    for i, review in enumerate(reviews, 1):
        line = json.dumps(review, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        out.write(script_safe(line).encode("utf-8") + (b",\n" if i < len(reviews) else b"\n]\n"))


def empty_note(store: Store) -> str | None:
    """The note ``hcgraph export`` prints when there is nothing to review."""
    if count_verdicts(store):
        return None
    return (
        "note: the store holds no support verdicts, so the ClaimReview list is empty "
        "(run `hcgraph manifests fetch` to read the cited manifests and check the stories)"
    )
