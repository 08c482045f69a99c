"""The promise "the story does not repeat a recent story".

Two stories within ``repeat_window`` days whose cited-manifest sets have Jaccard ≥
``repeat_threshold``: the later one (by ``published_at``, then URL) repeats the earlier one.
Candidates come from prefix filtering: with each set ordered rarest manifest first, two sets
with Jaccard ≥ t share one of the first ``n - ⌈t·n⌉ + 1`` manifests of either.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter, defaultdict
from itertools import combinations

import pyoxigraph as ox

from ..store import Store
from ._graph import count, rows
from .scope import AuditFinding, AuditOptions, AuditScope, StoryFacts, manifest_ids

__all__ = ["repeat", "repeats"]

_MANIFEST_STORIES = (
    "SELECT DISTINCT ?m ?story WHERE { GRAPH ?story { ?part prov:wasDerivedFrom ?m } }"
)
_MANIFEST_SPREAD = (
    "SELECT ?m (COUNT(DISTINCT ?story) AS ?n) WHERE "
    "{ GRAPH ?story { ?part prov:wasDerivedFrom ?m } } GROUP BY ?m"
)


def repeats(scope: AuditScope, opts: AuditOptions) -> list[AuditFinding]:
    """The stories of the scope that repeat a recent story: every pair in the whole store,
    or each wanted story against its candidates (a local scope)."""
    if scope.local:
        return _repeats_local(scope, opts)
    usable = [s for s in scope.facts.values() if s.cited and s.published is not None]
    pairs = sorted(_candidate_pairs(usable, opts.repeat_threshold))
    return [f for a, b in pairs if (f := repeat(usable[a], usable[b], opts)) is not None]


def _prefix(tokens: list[str], t: float) -> list[str]:
    """The first ``n - ceil(t*n) + 1`` of ``tokens`` (see the module docstring)."""
    n = len(tokens)
    return tokens[: n - math.ceil(t * n - 1e-9) + 1]


def _candidate_pairs(usable: list[StoryFacts], t: float) -> set[tuple[int, int]]:
    """Index pairs of stories sharing a manifest among their rarest-first prefixes."""
    freq: Counter[str] = Counter(m for s in usable for m in s.cited)
    index: defaultdict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(usable):
        for m in _prefix(sorted(s.cited, key=lambda m: (freq[m], m)), t):
            index[m].append(i)
    # Each list holds its stories once, in index order: its pairs are (smaller, larger).
    return {pair for members in index.values() for pair in combinations(members, 2)}


def repeat(sa: StoryFacts, sb: StoryFacts, opts: AuditOptions) -> AuditFinding | None:
    """The finding if one of two stories repeats the other, else None."""
    if sa.published is None or sb.published is None or not sa.cited or not sb.cited:
        return None
    if abs(sa.published - sb.published) > dt.timedelta(days=opts.repeat_window):
        return None
    shared = sa.cited & sb.cited
    jaccard = len(shared) / len(sa.cited | sb.cited)
    if jaccard + 1e-12 < opts.repeat_threshold:
        return None
    early, late = sorted((sa, sb), key=lambda s: (s.published, s.url))
    assert early.published is not None and late.published is not None
    days = (late.published - early.published).total_seconds() / 86400
    return AuditFinding(late.url, "repeat",
        f"repeats {early.url} ({days:.1f} days earlier, Jaccard {jaccard:.2f} "
        "of cited manifests)",
        {"earlier_story": early.url, "earlier_headline": early.headline,
         "jaccard": round(jaccard, 4), "days_apart": round(days, 3),
         "shared_manifests": manifest_ids(shared)})  # fmt: skip


def _repeats_local(scope: AuditScope, opts: AuditOptions) -> list[AuditFinding]:
    """Repeats of the wanted stories only, each against its candidates."""
    t = opts.repeat_threshold
    others: dict[str, StoryFacts] = {}
    out: list[AuditFinding] = []
    for s in list(scope.facts.values()):
        if not s.cited or s.published is None:
            continue
        for url in sorted(_candidates(scope.store, s, t)):
            if url not in others:
                others[url] = scope.story(url)
            found = repeat(s, others[url], opts)
            if found is not None and found.story == s.url:
                out.append(found)
    return out


def _candidates(store: Store, s: StoryFacts, t: float) -> set[str]:
    """The other stories citing one of ``s``'s prefix manifests (rarest in the store first)."""
    spread = {m: count(store, _MANIFEST_SPREAD, m=ox.NamedNode(m)) for m in s.cited}
    return {
        url
        for m in _prefix(sorted(s.cited, key=lambda m: (spread[m], m)), t)
        for (url,) in rows(store, _MANIFEST_STORIES, m=ox.NamedNode(m))
        if url and url != s.url
    }
