"""The support check over the store: every cited claim of every passage, judged and recorded.

Each paragraph and key fact (a *passage*) is checked against the claims it cites
(:func:`~hcgraph.claims.support.check_text`) with the claim texts the replies gave; a claim
without text is *not checkable*, with the reason. Verdicts go to one support graph per story,
whose check records what it read, so a story is checked again only when one of those changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..iris import minted
from ..provenance._graph import claim_id, manifest_id, rows
from ..store import Store
from ..vocab import SUPPORT_GRAPHS
from .graphing import (
    RATINGS_GRAPH,
    STATUSES,
    PairVerdict,
    ratings_ntriples,
    reply_iri,
    support_graph,
    verdicts_ntriples,
)
from .replies import ReplyState, reply_states
from .support import METHOD_VERSION, check_text

__all__ = ["Passage", "SupportReport", "check_support", "passages", "verdicts_for"]

#: Stories whose support graphs are written in one transaction.
BATCH = 200


@dataclass
class Passage:
    """A paragraph or key fact: its IRI, its text and the claims it cites, in order."""

    iri: str
    text: str
    cites: list[tuple[str, str]] = field(default_factory=list)  # (manifest id, claim id)


@dataclass
class SupportReport:
    """What :func:`check_support` did."""

    checked: int = 0  # stories checked (their support graph written)
    unchanged: int = 0  # stories whose verdicts still stand
    dropped: int = 0  # support graphs removed because their story is gone
    counts: Counter[str] = field(default_factory=Counter)  # verdicts written, by status
    reasons: Counter[str] = field(default_factory=Counter)  # those not supported, by reason

    def add(self, verdicts: list[PairVerdict]) -> None:
        """Count one checked story's verdicts."""
        self.checked += 1
        for v in verdicts:
            self.counts[v.status] += 1
            if v.reason:
                self.reasons[f"{v.status}: {v.reason}"] += 1

    def lines(self) -> list[str]:
        """The summary the CLI prints."""
        pairs = sum(self.counts.values())
        out = [
            f"support    {self.checked} stories checked, {self.unchanged} unchanged"
            + (f", {self.dropped} dropped (story gone)" if self.dropped else ""),
        ]
        if pairs:
            out.append(
                f"verdicts   {pairs} (passage, claim) pairs: "
                + ", ".join(f"{self.counts[s]} {s}" for s in STATUSES)
            )
        for reason, n in sorted(self.reasons.items(), key=lambda kv: (-kv[1], kv[0])):
            out.append(f"  {n:>6}  {reason}")
        return out


_PASSAGES = """
SELECT ?story ?passage ?text ?m ?c WHERE { GRAPH ?story {
  ?act a hc:Citation ; cito:hasCitingEntity ?passage ; cito:hasCitedEntity ?m ;
       schema:position ?k ; hc:citesClaim ?c .
  ?passage schema:text ?text .
} } ORDER BY ?story ?passage ?k ?c
"""
_CHECKS = f"""
SELECT ?g ?used ?version WHERE {{ GRAPH ?g {{
  ?check a hc:SupportCheck ; <http://www.w3.org/2002/07/owl#versionInfo> ?version .
  OPTIONAL {{ {{ ?check prov:used ?used }} UNION {{ ?check prov:wasInformedBy ?used }} }}
}} FILTER STRSTARTS(STR(?g), "{SUPPORT_GRAPHS}") }}
"""


def passages(store: Store) -> dict[str, dict[str, Passage]]:
    """Story → passage IRI → :class:`Passage`, for every passage that cites a claim."""
    found: dict[str, dict[str, Passage]] = {}
    for story, passage, text, m, c in rows(store, _PASSAGES):
        assert story and passage and text is not None and m and c  # none is optional
        by_passage = found.setdefault(story, {})
        item = by_passage.get(passage)
        if item is None:
            item = by_passage[passage] = Passage(passage, text)
        pair = (manifest_id(m), claim_id(c))
        if pair not in item.cites:
            item.cites.append(pair)
    return found


def verdicts_for(passage: Passage, replies: dict[str, ReplyState]) -> Iterator[PairVerdict]:
    """The verdict on each claim ``passage`` cites (``replies``:
    :func:`~hcgraph.claims.replies.reply_states`)."""
    checkable: list[tuple[str, str]] = []
    where: dict[str, str] = {}
    for mid, cid in passage.cites:
        state = replies.get(mid)
        reason = _not_checkable(state, cid)
        if reason:
            yield PairVerdict(passage.iri, mid, cid, "not-checkable", reason)
            continue
        assert state is not None
        text = state.claims[cid]
        assert text is not None
        checkable.append((cid, text))
        where.setdefault(cid, mid)
    if not checkable:
        return
    for verdict in check_text(passage.text, checkable):
        yield PairVerdict(
            passage.iri,
            where[verdict.claim_id],
            verdict.claim_id,
            "supported" if verdict.supported else "unsupported",
            verdict.reason,
            verdict.sentence,
            verdict.overlap,
            verdict.mismatches,
        )


def _not_checkable(state: ReplyState | None, cid: str) -> str:
    if state is None:
        return "manifest-not-fetched"
    if state.status == "not-found":
        return "manifest-not-found"
    if state.status != "fetched":
        return "reply-not-understood"
    if state.claims.get(cid) is None:
        return "claim-text-missing"
    return ""


def check_support(
    store: Store, stories: Iterable[str] | None = None, *, force: bool = False
) -> SupportReport:
    """Check every story's passages (or only ``stories``) and record the verdicts.

    A story is skipped when its support graph was made by this method version from the same
    raw document and the same replies (``force``: check anyway).
    """
    report = SupportReport()
    replies = reply_states(store)
    raw = dict(store.raw_documents())
    found = passages(store)
    held = _held_checks(store)
    if stories is None:
        report.dropped = _drop_orphans(store, held, raw)
    pending: dict[str, str] = {}
    for story in sorted(set(raw) if stories is None else set(stories) & set(raw)):
        used, informed, key = _inputs(found.get(story, {}), replies, raw[story])
        if not force and held.get(support_graph(story)) == key:
            report.unchanged += 1
            continue
        verdicts = [v for p in found.get(story, {}).values() for v in verdicts_for(p, replies)]
        report.add(verdicts)
        pending[support_graph(story)] = verdicts_ntriples(
            story, raw[story], used, verdicts, informed
        )
        if len(pending) >= BATCH:
            store.replace_graphs(pending)
            pending = {}
    if report.checked:
        pending[RATINGS_GRAPH] = ratings_ntriples()
    store.replace_graphs(pending)
    return report


def _inputs(
    found: dict[str, Passage], replies: dict[str, ReplyState], raw: str
) -> tuple[frozenset[str], frozenset[str], tuple[str, frozenset[str]]]:
    """What one story's check depends on: the replies read (SHA-256), the fetches whose
    answer had no reply (a 404), and with the raw document the key a held check must match."""
    cited = {mid for p in found.values() for mid, _ in p.cites}
    states = [replies[mid] for mid in cited & replies.keys()]
    used = frozenset(s.sha256 for s in states if s.sha256 is not None)
    informed = frozenset(s.fetch for s in states if s.sha256 is None and s.fetch)
    expected = {reply_iri(sha) for sha in used} | informed | {minted("raw", raw)}
    return used, informed, (METHOD_VERSION, frozenset(expected))


def _drop_orphans(
    store: Store, held: dict[str, tuple[str, frozenset[str]]], raw: dict[str, str]
) -> int:
    """Drop the support graphs whose story left the store; how many."""
    current = {support_graph(s) for s in raw}
    gone = [g for g in held if g not in current]
    store.replace_graphs(dict.fromkeys(gone, ""))
    return len(gone)


def _held_checks(store: Store) -> dict[str, tuple[str, frozenset[str]]]:
    """Support graph → (method version, what its check used)."""
    held: dict[str, tuple[str, set[str]]] = {}
    for graph, used, version in rows(store, _CHECKS):
        assert graph and version  # bound in every solution
        _, uses = held.setdefault(graph, (version, set()))
        if used is not None:
            uses.add(used)
    return {graph: (version, frozenset(used)) for graph, (version, used) in held.items()}
