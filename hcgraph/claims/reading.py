"""What the graph holds about claims, for the commands that show it (``trace``, the maps):
the claims' texts from the manifest replies, and one story's recorded support verdicts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import pyoxigraph as ox

from ..iris import minted, named_node
from ..provenance._graph import claim_id
from ..store import Store
from .graphing import support_graph

__all__ = ["Recorded", "claim_texts", "story_verdicts"]

#: Per batch of claims (a ``VALUES`` block).
BATCH = 500

_TEXTS = "SELECT ?c ?text WHERE { %s ?c prov:wasQuotedFrom ?reply ; prov:value ?text }"
_VERDICTS = """
SELECT ?g ?part ?c ?status ?reason ?detail WHERE { GRAPH ?g {
  ?v cito:hasCitingEntity ?part ; cito:hasCitedEntity ?c ; hc:supportStatus ?status .
  OPTIONAL { ?v hc:reason ?reason }
  OPTIONAL { ?v hc:mismatch ?m . ?m <http://www.w3.org/2000/01/rdf-schema#comment> ?detail }
} }
"""


class Recorded(NamedTuple):
    """One recorded verdict: its status, its reason ("" when supported) and the first
    mismatch's line for people ("" when none)."""

    status: str
    reason: str
    detail: str


def claim_texts(store: Store, claim_ids: Iterable[str]) -> dict[str, str]:
    """Claim id → its text, for the claims a fetched reply gives a text."""
    ids = sorted(set(claim_ids))
    out: dict[str, str] = {}
    for start in range(0, len(ids), BATCH):
        terms = (named_node(minted("claim", c)) for c in ids[start : start + BATCH])
        block = "VALUES ?c { " + " ".join(str(t) for t in terms if t is not None) + " }"
        result = store.query(_TEXTS % block)
        assert isinstance(result, ox.QuerySolutions)
        for row in result:
            out.setdefault(claim_id(row["c"].value), row["text"].value)
    return out


def story_verdicts(store: Store, story: str) -> dict[tuple[str, str], Recorded]:
    """(passage IRI, claim id) → the verdict recorded in ``story``'s support graph."""
    graph = named_node(support_graph(story))
    if graph is None:
        return {}
    seen: dict[tuple[str, str], Recorded] = {}
    result = store.query(_VERDICTS, bindings={"g": graph})
    assert isinstance(result, ox.QuerySolutions)
    for row in result:
        key = (row["part"].value, claim_id(row["c"].value))
        reason, detail = row["reason"], row["detail"]
        found = Recorded(row["status"].value, reason.value if reason else "",
                         detail.value if detail else "")  # fmt: skip
        if key not in seen or (found.detail and not seen[key].detail):
            seen[key] = found
    return dict(sorted(seen.items()))
