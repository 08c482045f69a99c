"""The promises ``audit`` checks, each a function of the scope that returns its findings.

Per story: :func:`story_checks`, :func:`uncited`. Across stories: :func:`conflicts` (a claim
belongs to the manifest most stories cite it under), :func:`repeats`. Supported: the support
check's recorded verdicts (:func:`support_verdicts`).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from itertools import combinations
from typing import Any

import pyoxigraph as ox

from ..store import Store
from ..vocab import ID, SUPPORT_GRAPHS
from ._graph import ManifestInfo, batches, claim_id, count, manifest_id, rows, values
from .scope import VERDICTS, AuditFinding, AuditOptions, AuditScope, StoryFacts, each, manifest_ids
from .tracing import part_sort_key

__all__ = [
    "conflicts",
    "repeat",
    "repeats",
    "source_ages",
    "story_checks",
    "support_verdicts",
    "uncited",
]

_UNCITED = """
SELECT ?story ?para ?text WHERE { GRAPH ?story {
  ?para a hc:Paragraph MINUS { ?para cito:citesAsEvidence ?claim }
  OPTIONAL { ?para schema:text ?text }
} }
"""
Named = Callable[[str], str]
_SOURCES_RE = re.compile(r"(\d+)\s+sources?\b", re.IGNORECASE)


def story_checks(
    scope: AuditScope, manifests: dict[str, ManifestInfo], opts: AuditOptions
) -> list[AuditFinding]:
    """The promises one story keeps or breaks on its own, for every story read."""
    out: list[AuditFinding] = []
    for s in scope.facts.values():
        out += _dangling(s)
        out += _source_dates(s, manifests, opts)
        out += _declared(s, manifests)
        out += _trust(s)
    return out


def source_ages(
    scope: AuditScope, manifests: dict[str, ManifestInfo]
) -> list[tuple[str, str, int]]:
    """``(story, manifest_id, days)`` for every listed manifest with both dates."""
    return [
        (s.url, info.manifest_id, lag)
        for s in scope.facts.values()
        for info, lag, _ in _lags(s, manifests)
    ]


def _lags(
    s: StoryFacts, manifests: dict[str, ManifestInfo]
) -> Iterator[tuple[ManifestInfo, int, dict[str, Any]]]:
    """(manifest, days older than the story, evidence) per listed manifest with both dates."""
    day = s.published.astimezone(dt.UTC).date() if s.published else None
    for m in sorted(s.listed):
        info = manifests.get(m)
        source_day = info.published_date if info else None
        if day is None or source_day is None or info is None:
            continue
        lag = (day - source_day).days
        yield info, lag, {"manifest_id": info.manifest_id, "title": info.title,
                          "source_url": info.source_url, "published_date": source_day.isoformat(),
                          "story_date": day.isoformat(), "age_days": lag}  # fmt: skip


def _dangling(s: StoryFacts) -> Iterator[AuditFinding]:
    for m in sorted(s.cited - s.listed):
        yield AuditFinding(s.url, "dangling-manifest",
            f"cites manifest {manifest_id(m)}, which the story does not list",
            {"manifest_id": manifest_id(m), "listed": manifest_ids(s.listed)})  # fmt: skip


def _source_dates(
    s: StoryFacts, manifests: dict[str, ManifestInfo], opts: AuditOptions
) -> Iterator[AuditFinding]:
    for info, lag, evidence in _lags(s, manifests):
        if lag > opts.max_source_age:
            yield AuditFinding(s.url, "source-too-old",
                f"source {info.manifest_id} is {lag} days older than the story "
                f"(limit {opts.max_source_age})", evidence)  # fmt: skip
        elif lag < 0:
            yield AuditFinding(s.url, "source-after-story",
                f"source {info.manifest_id} is dated {-lag} days after the story",
                evidence)  # fmt: skip


def _declared(s: StoryFacts, manifests: dict[str, ManifestInfo]) -> Iterator[AuditFinding]:
    listed_pubs = {p for m in s.listed for p in manifests.get(m, ManifestInfo("", m)).publishers}
    if s.declared_publishers != listed_pubs:
        what = "declared publishers differ from the listed manifests' publishers"
        yield _differs(s, "declared-publishers", what, s.declared_publishers, listed_pubs)
    if s.declared_count != len(s.listed):
        yield AuditFinding(s.url, "declared-source-count",
            f"declared source_count {s.declared_count} but {len(s.listed)} manifests are listed",
            {"declared": s.declared_count, "derived": len(s.listed)})  # fmt: skip
    if s.declared_cited != s.cited:
        what = "declared cited_manifest_ids differ from the manifests the story cites"
        yield _differs(s, "declared-cited-manifests", what, s.declared_cited, s.cited, manifest_id)


def _differs(
    s: StoryFacts, check: str, what: str, declared: set[str], derived: set[str], name: Named = str
) -> AuditFinding:
    """A declared set that is not the derived one: what it misses, what it has extra."""
    missing, extra = sorted(map(name, derived - declared)), sorted(map(name, declared - derived))
    parts = [f"missing {', '.join(missing)}"] if missing else []
    if extra:
        parts.append(f"not derived {', '.join(extra)}")
    named = {"declared": sorted(map(name, declared)), "derived": sorted(map(name, derived))}
    evidence = {**named, "missing": missing, "extra": extra}
    return AuditFinding(s.url, check, f"{what}: {'; '.join(parts)}", evidence)


def _trust(s: StoryFacts) -> Iterator[AuditFinding]:
    if not s.trust_text:
        return
    evidence = {"trust": s.trust, "trust_text": s.trust_text, "derived_sources": len(s.listed)}
    match = _SOURCES_RE.search(s.trust_text)
    if match and int(match.group(1)) != len(s.listed):
        yield AuditFinding(s.url, "trust-label",
            f"trust text says {match.group(1)} sources but {len(s.listed)} manifests are listed",
            evidence)  # fmt: skip
    word = s.trust_text.split("\u00b7")[0].strip().lower()
    if s.trust and word and word != s.trust.strip().lower():
        yield AuditFinding(s.url, "trust-label",
            f"trust text {word!r} disagrees with the trust label {s.trust!r}",
            evidence)  # fmt: skip


def uncited(scope: AuditScope) -> list[AuditFinding]:
    """Paragraphs that cite no claim, with their text, in story and part order."""
    paras = each(scope.store, _UNCITED, scope.only)
    found = {(url, para): text or "" for url, para, text in paras if url and para}
    out = []
    for url, para in sorted(found, key=lambda key: (key[0], part_sort_key(key[1]))):
        message = f"paragraph {para.rsplit('#', 1)[-1]} cites no claim"
        evidence = {"paragraph": para, "text": found[url, para]}
        out.append(AuditFinding(url, "uncited-paragraph", message, evidence))
    return out


# --- claims under two manifests ------------------------------------------------------------
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
    """Claims under two manifests: a claim belongs to the manifest most stories cite it under
    (counted on the derived ``hc:citesClaimUnder`` uses); the stories citing it under another
    (every one, with no single majority) break the promise. A local scope: just the wanted
    stories' claims."""
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
    """Claim → the id of the manifest it belongs to (None: no single majority), and use →
    (claim, manifest) for every use that is not its claim's own."""
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


# --- repeats --------------------------------------------------------------------------------
_MANIFEST_STORIES = (
    "SELECT DISTINCT ?m ?story WHERE { GRAPH ?story { ?part prov:wasDerivedFrom ?m } }"
)
_MANIFEST_SPREAD = (
    "SELECT ?m (COUNT(DISTINCT ?story) AS ?n) WHERE "
    "{ GRAPH ?story { ?part prov:wasDerivedFrom ?m } } GROUP BY ?m"
)


def repeats(scope: AuditScope, opts: AuditOptions) -> list[AuditFinding]:
    """The stories of the scope that repeat a recent story: every pair in the whole store,
    or each wanted story against its candidates (a local scope).

    Two stories within ``repeat_window`` days whose cited-manifest sets have Jaccard ≥
    ``repeat_threshold``: the later one (by ``published_at``, then URL) repeats the earlier.
    Candidates come from prefix filtering: with each set ordered rarest manifest first, two
    sets with Jaccard ≥ t share one of the first ``n - ⌈t·n⌉ + 1`` manifests of either."""
    if scope.local:
        return _repeats_local(scope, opts)
    usable = [s for s in scope.facts.values() if s.cited and s.published is not None]
    pairs = sorted(_candidate_pairs(usable, opts.repeat_threshold))
    return [f for a, b in pairs if (f := repeat(usable[a], usable[b], opts)) is not None]


def _prefix(tokens: list[str], t: float) -> list[str]:
    """The first ``n - ceil(t*n) + 1`` of ``tokens`` (see :func:`repeats`)."""
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


# --- support verdicts ----------------------------------------------------------------------
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


def _recorded(scope: AuditScope) -> tuple[dict[str, Counter[str]], list[AuditFinding]]:
    """The recorded verdicts (of the wanted stories only, in a local scope): each story's
    tally, and the finding of each unsupported pair."""
    tally: dict[str, Counter[str]] = {}
    pairs: dict[str, Pair | None] = {}  # verdict → its unsupported pair (None: not one)
    for row in rows(scope.store, _VERDICTS):
        story = (row[2] or "").split("#", 1)[0]
        if not scope.local or story in scope.wanted:
            _add_row(tally, pairs, story, row)
    return tally, [_finding(*pair) for _, pair in sorted(pairs.items()) if pair is not None]


def _add_row(
    tally: dict[str, Counter[str]], pairs: dict[str, Pair | None], story: str, row: Row
) -> None:
    """One row: a verdict's first row is tallied (and opens its pair, when unsupported);
    every row of an unsupported pair adds its mismatch."""
    verdict, status = row[0] or "", row[1] or ""
    if verdict not in pairs:
        tally.setdefault(story, Counter())[status] += 1
        pairs[verdict] = (row, {}) if status == "unsupported" else None
    if (pair := pairs[verdict]) is not None and (m := row[7]) is not None:
        pair[1][m] = dict(zip(_SPAN_KEYS, row[8:], strict=True))


def _finding(row: Row, mismatches: dict[str, dict[str, str | None]]) -> AuditFinding:
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
    return AuditFinding(story, "unsupported-claim", message, evidence)


def support_verdicts(scope: AuditScope) -> tuple[list[AuditFinding], dict[str, dict[str, int]]]:
    """A finding per *unsupported* (passage, claim) pair, its mismatches the evidence, and each
    wanted story's tally of its verdicts (``{"unchecked": 1}``: no check ran on its current
    version)."""
    from ..claims.graphing import support_graph
    from ..iris import minted

    tally, findings = _recorded(scope)
    checked = {g: raw for g, raw in rows(scope.store, _CHECKED_RAW) if g and raw}  # graph → raw
    raw = dict(scope.store.raw_documents())
    tallies: dict[str, dict[str, int]] = {}
    for url in scope.wanted:
        current = url in raw and checked.get(support_graph(url)) == minted("raw", raw[url])
        counts = tally.get(url) if current else None
        tallies[url] = {"unchecked": 1} if counts is None else {k: counts[k] for k in VERDICTS}
    return findings, tallies
