"""``audit``: does each story keep the promises its disclosure makes?

The real disclosure reads: *"every cited Manifest id exists and is recent, claim ids belong to
their Manifest, the story does not repeat a recent story, and each paragraph is supported by
the claims it cites"*. :func:`audit` checks those promises, and the declared summary fields,
on the graph, with evidence for every finding (:data:`CHECKS` lists them).

All data is read with a few whole-store queries (no per-story round trips), so a 10k-story
corpus is audited in seconds; the corpus-wide checks (claim conflicts, repeats) always look at
the whole store, and ``stories`` only limits which stories are reported.

Repeats: stories within ``repeat_window`` days whose cited-manifest sets have Jaccard ≥
``repeat_threshold``. Candidate pairs come from prefix filtering (each set sorted rarest
manifest first; two sets with Jaccard ≥ t must share one of the first ``n - ⌈t·n⌉ + 1``), so
popular manifests do not make the check quadratic. The later story of a pair (by
``published_at``, then URL) is the one that repeats; the earlier one is named as evidence.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import ProvenanceError
from ..store import Store
from ._graph import (
    ManifestInfo,
    claim_id,
    describe_manifests,
    manifest_id,
    publisher_name,
    rows,
)
from .trace import part_sort_key

#: Up to this many stories named, ``audit`` looks them (and their neighbours) up one by one
#: instead of reading the whole store.
LOCAL_MAX = 20

__all__ = ["CHECKS", "AuditFinding", "AuditOptions", "AuditReport", "StoryAudit", "audit"]

#: check name → the promise it tests.
CHECKS: dict[str, str] = {
    "dangling-manifest": "every cited manifest exists",
    "source-too-old": "sources are recent",
    "source-after-story": "sources are recent",
    "claim-conflict": "claim ids belong to their manifest",
    "repeat": "the story does not repeat a recent story",
    "uncited-paragraph": "each paragraph is supported",
    "declared-publishers": "declared counts are true",
    "declared-source-count": "declared counts are true",
    "declared-cited-manifests": "declared counts are true",
    "trust-label": "trust label fits",
}

_STORIES = """
SELECT ?story ?headline ?published ?trust ?trustText ?count ?room WHERE { GRAPH ?story {
  ?story a hc:Story .
  OPTIONAL { ?story schema:headline ?headline }
  OPTIONAL { ?story schema:datePublished ?published }
  OPTIONAL { ?story hc:trust ?trust }
  OPTIONAL { ?story hc:trustText ?trustText }
  OPTIONAL { ?story hc:declaredSourceCount ?count }
  OPTIONAL { ?story hc:newsroom ?room }
} }
"""
_LISTED = "SELECT ?story ?m WHERE { GRAPH ?story { ?story hc:listsManifest ?m } }"
_DECLARED_PUB = "SELECT ?story ?p WHERE { GRAPH ?story { ?story hc:declaredPublisher ?p } }"
_DECLARED_CITED = "SELECT ?story ?m WHERE { GRAPH ?story { ?story hc:declaredCitedManifest ?m } }"
_CITED_DIFF = (
    "SELECT DISTINCT ?story ?m WHERE { GRAPH ?story { ?p prov:wasDerivedFrom ?m "
    "MINUS { ?story hc:declaredCitedManifest ?m } } }",
    "SELECT DISTINCT ?story ?m WHERE { GRAPH ?story { ?story hc:declaredCitedManifest ?m "
    "MINUS { ?p prov:wasDerivedFrom ?m } } }",
)
_CITED = "SELECT DISTINCT ?story ?m WHERE { GRAPH ?story { ?part prov:wasDerivedFrom ?m } }"
_UNCITED = """
SELECT ?story ?para WHERE { GRAPH ?story {
  ?para a hc:Paragraph MINUS { ?para cito:citesAsEvidence ?claim }
} }
"""
_TEXT = "SELECT ?story ?para ?text WHERE { GRAPH ?story { ?para schema:text ?text } }"
# Things described as part of two things (union graph: claim descriptions, wherever they
# live). Story parts have exactly one parent, so only claims come out; grouping on term ids
# needs no string decoding, and the few results are checked for the claim prefix in Python.
_CONFLICTS = """
SELECT ?claim WHERE { ?claim dcterms:isPartOf ?m }
GROUP BY ?claim HAVING (COUNT(DISTINCT ?m) > 1)
"""
_CLAIM_PREFIX = "https://w3id.org/hcgraph/id/claim/"
# Stories citing a claim under one manifest. Oxigraph joins in the order written, so each
# query comes in two orders: start from the claim or from the manifest, whichever has fewer
# citations (a rare claim under a popular manifest, or the reverse, is 100x faster so).
# Counts stop at _SPREAD_CAP + 1: enough to find the majority manifest.
_SPREAD_CAP = 50
_FIRST = {
    "claim": "?c hc:citesClaim ?claim . ?c cito:hasCitedEntity ?m .",
    "m": "?c cito:hasCitedEntity ?m . ?c hc:citesClaim ?claim .",
}
_CONFLICT_SPREAD = {
    k: "SELECT ?claim ?m (COUNT(*) AS ?n) WHERE { { SELECT DISTINCT ?claim ?m ?story WHERE { "
    f"GRAPH ?story {{ {v} }} }} LIMIT {_SPREAD_CAP + 1} }} }} GROUP BY ?claim ?m"
    for k, v in _FIRST.items()
}
_CONFLICT_CITES = {
    k: "SELECT DISTINCT ?claim ?m ?story ?part WHERE { GRAPH ?story { "
    f"{v} ?c cito:hasCitingEntity ?part . }} }}"
    for k, v in _FIRST.items()
}
_GRAPHS_STATING = (
    "SELECT DISTINCT ?claim ?m ?story WHERE { GRAPH ?story { ?claim dcterms:isPartOf ?m } }"
)
_GRAPHS_COUNT = (
    "SELECT ?claim ?m (COUNT(DISTINCT ?story) AS ?n) WHERE { GRAPH ?story { "
    "?claim dcterms:isPartOf ?m } } GROUP BY ?claim ?m"
)
_A_CITED_CLAIM = (
    "SELECT ?story ?claim WHERE { GRAPH ?story { ?p cito:citesAsEvidence ?claim } } LIMIT 1"
)
_STATES_MEMBERSHIP = "ASK { GRAPH ?story { ?claim dcterms:isPartOf ?m } }"
_PARTS_CITING = """
SELECT DISTINCT ?story ?claim ?m ?part WHERE { GRAPH ?story {
  ?c hc:citesClaim ?claim ; cito:hasCitedEntity ?m ; cito:hasCitingEntity ?part .
} }
"""
_CITATIONS_CAP = 2000
_CLAIM_CITATIONS = (
    "SELECT ?claim (COUNT(*) AS ?n) WHERE { { SELECT ?c ?claim WHERE { GRAPH ?g { "
    f"?c hc:citesClaim ?claim }} }} LIMIT {_CITATIONS_CAP} }} }} GROUP BY ?claim"
)
_MANIFEST_CITATIONS = (
    "SELECT ?m (COUNT(*) AS ?n) WHERE { { SELECT ?c ?m WHERE { GRAPH ?g { "
    f"?c cito:hasCitedEntity ?m }} }} LIMIT {_CITATIONS_CAP} }} }} GROUP BY ?m"
)
_STORY_CLAIMS = (
    "SELECT DISTINCT ?story ?claim WHERE { GRAPH ?story { ?part cito:citesAsEvidence ?claim } }"
)
_CLAIM_MANIFESTS = "SELECT DISTINCT ?claim ?m WHERE { ?claim dcterms:isPartOf ?m }"
_COUNT_STORIES = "SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { GRAPH ?s { ?s a hc:Story } }"
_MANIFEST_STORIES = (
    "SELECT DISTINCT ?m ?story WHERE { GRAPH ?story { ?part prov:wasDerivedFrom ?m } }"
)
_MANIFEST_SPREAD = (
    "SELECT ?m (COUNT(DISTINCT ?story) AS ?n) WHERE "
    "{ GRAPH ?story { ?part prov:wasDerivedFrom ?m } } GROUP BY ?m"
)
_ROOM_ID = "SELECT DISTINCT ?room ?id WHERE { ?room dcterms:identifier ?id }"
_SOURCES_RE = re.compile(r"(\d+)\s+sources?\b", re.IGNORECASE)


@dataclass(frozen=True)
class AuditOptions:
    """Thresholds of the audit (the CLI's ``--max-source-age`` etc.)."""

    max_source_age: int = 30
    repeat_window: int = 7
    repeat_threshold: float = 0.8


@dataclass(frozen=True)
class AuditFinding:
    """One broken promise, with its evidence (JSON-ready values)."""

    story: str
    check: str
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def promise(self) -> str:
        """The disclosure promise this finding breaks."""
        return CHECKS[self.check]


@dataclass
class StoryAudit:
    """One story's scorecard."""

    url: str
    headline: str
    newsroom: str
    published_at: str | None
    sources: int
    cited_manifests: int
    findings: list[AuditFinding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the story keeps every promise."""
        return not self.findings


@dataclass
class AuditReport:
    """The answer of :func:`audit`.

    Attributes:
        options: the thresholds used.
        stories: scorecards of the stories audited, by URL.
        source_ages: ``(story, manifest_id, days)`` for every listed manifest with both dates.
        publisher_citations: publisher → number of (story, manifest) citations.
        total_stories: stories in the store (the corpus the cross-story checks saw).
    """

    options: AuditOptions
    stories: list[StoryAudit]
    source_ages: list[tuple[str, str, int]]
    publisher_citations: dict[str, int]
    total_stories: int

    @property
    def findings(self) -> list[AuditFinding]:
        """Every finding, story by story."""
        return [f for s in self.stories for f in s.findings]

    @property
    def exit_code(self) -> int:
        """1 when any story breaks a promise, else 0 (gates a pipeline)."""
        return 1 if any(s.findings for s in self.stories) else 0

    def counts(self) -> dict[str, int]:
        """Findings per check (every check listed, zero included)."""
        counter = Counter(f.check for f in self.findings)
        return {name: counter.get(name, 0) for name in CHECKS}

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ``--format json`` output)."""
        return {
            "options": asdict(self.options),
            "summary": {
                "stories": len(self.stories),
                "stories_in_store": self.total_stories,
                "stories_failing": sum(1 for s in self.stories if s.findings),
                "findings": len(self.findings),
                "by_check": self.counts(),
            },
            "stories": [
                {
                    "url": s.url,
                    "headline": s.headline,
                    "newsroom": s.newsroom,
                    "published_at": s.published_at,
                    "sources": s.sources,
                    "cited_manifests": s.cited_manifests,
                    "ok": s.ok,
                    "findings": [
                        {
                            "check": f.check,
                            "promise": f.promise,
                            "message": f.message,
                            "evidence": f.evidence,
                        }
                        for f in s.findings
                    ],
                }
                for s in self.stories
            ],
        }

    def to_json(self) -> str:
        """The report as indented JSON."""
        return json.dumps(self.as_dict(), indent=2, ensure_ascii=False)


@dataclass
class _Story:
    url: str
    headline: str = ""
    published: dt.datetime | None = None
    published_text: str | None = None
    trust: str | None = None
    trust_text: str | None = None
    declared_count: int | None = None
    room: str | None = None
    listed: set[str] = field(default_factory=set)
    cited: set[str] = field(default_factory=set)
    declared_publishers: set[str] = field(default_factory=set)
    declared_cited: set[str] = field(default_factory=set)


def audit(
    store: Store, stories: Iterable[str] | None = None, options: AuditOptions | None = None
) -> AuditReport:
    """Audit ``stories`` (URLs; ``None`` = every story) against their disclosure promises.

    Raises:
        ProvenanceError: a story URL given is not in the store, or an option is out of range.
    """
    opts = options or AuditOptions()
    if opts.max_source_age < 0 or opts.repeat_window < 0:
        raise ProvenanceError("--max-source-age and --repeat-window must be >= 0")
    if not 0 < opts.repeat_threshold <= 1:
        raise ProvenanceError("--repeat-threshold must be in (0, 1]")
    given = None if stories is None else list(dict.fromkeys(stories))
    local = given is not None and len(given) <= LOCAL_MAX
    data = _load(store, given if local else None)
    wanted = sorted(data) if given is None else given
    missing = [u for u in wanted if u not in data]
    if missing:
        raise ProvenanceError(f"{missing[0]}: no such story in the store")
    manifests = describe_manifests(
        store, {m for s in data.values() for m in s.listed | s.cited} if local else None
    )
    rooms = _rooms(store, {s.room for s in data.values() if s.room})
    findings: defaultdict[str, list[AuditFinding]] = defaultdict(list)
    ages: list[tuple[str, str, int]] = []
    for s in data.values():
        _story_checks(s, manifests, opts, findings[s.url], ages)
    if local:
        _uncited(store, findings, wanted)
        _conflicts(store, findings, set(wanted))
        _repeats_local(store, data, opts, findings)
        total = int(next(rows(store, _COUNT_STORIES), ("0",))[0] or 0)
    else:
        _uncited(store, findings)
        _conflicts(store, findings)
        _repeats(data, opts, findings)
        total = len(data)
    pub_counts: Counter[str] = Counter()
    for s in data.values():
        for m in s.cited:
            for pub in manifests.get(m, ManifestInfo("", m)).publishers:
                pub_counts[pub] += 1
    cards = []
    for url in wanted:
        s = data[url]
        fs = sorted(findings.get(url, []), key=lambda f: (list(CHECKS).index(f.check), f.message))
        cards.append(
            StoryAudit(
                url=url,
                headline=s.headline,
                newsroom=rooms.get(s.room or "", s.room or ""),
                published_at=s.published_text,
                sources=len(s.listed),
                cited_manifests=len(s.cited),
                findings=fs,
            )
        )
    keep = set(wanted)
    return AuditReport(
        options=opts,
        stories=cards,
        source_ages=sorted(a for a in ages if a[0] in keep),
        publisher_citations=dict(pub_counts.most_common()),
        total_stories=total,
    )


def _each(store: Store, sparql: str, only: list[str] | None) -> Iterator[tuple[str | None, ...]]:
    """Rows of a ``?story``-first query: whole store, or story by story (bound)."""
    if only is None:
        yield from rows(store, sparql)
        return
    import pyoxigraph as ox

    for url in only:
        for row in rows(store, sparql, story=ox.NamedNode(url)):
            yield (url, *row)


def _load(store: Store, only: list[str] | None = None) -> dict[str, _Story]:
    data: dict[str, _Story] = {}
    for url, headline, published, trust, trust_text, count, room in _each(store, _STORIES, only):
        if url is None or url in data:
            continue
        s = _Story(url, headline or "", trust=trust, trust_text=trust_text, room=room)
        s.published_text = published
        if published:
            try:
                s.published = dt.datetime.fromisoformat(published)
            except ValueError:
                s.published = None
        s.declared_count = int(count) if count is not None and count.lstrip("-").isdigit() else None
        data[url] = s
    for query, attr in ((_LISTED, "listed"), (_CITED, "cited")):
        for url, m in _each(store, query, only):
            if url in data and m is not None:
                getattr(data[url], attr).add(m)
    # Declared cited ids: the whole store is compared in the engine (MINUS both ways), and
    # only the stories that differ are read in full.
    odd = only
    if only is None:
        odd = sorted({u for q in _CITED_DIFF for u, _ in rows(store, q) if u in data})
        for s in data.values():
            s.declared_cited = set(s.cited)
    odd = [u for u in odd or [] if u in data]
    for url in odd:
        data[url].declared_cited = set()
    for url, m in _each(store, _DECLARED_CITED, odd):
        if url in data and m is not None:
            data[url].declared_cited.add(m)
    for url, p in _each(store, _DECLARED_PUB, only):
        if url in data and p is not None:
            data[url].declared_publishers.add(publisher_name(p))
    return data


def _rooms(store: Store, rooms: set[str]) -> dict[str, str]:
    """Newsroom IRI → its identifier (per room: index lookups, no join over copies)."""
    import pyoxigraph as ox

    out: dict[str, str] = {}
    for room in sorted(rooms):
        for (ident,) in rows(store, _ROOM_ID, room=ox.NamedNode(room)):
            if ident:
                out[room] = min(out.get(room, ident), ident)
    return out


def _ids(iris: Iterable[str]) -> list[str]:
    return sorted(manifest_id(m) for m in iris)


def _story_checks(
    s: _Story,
    manifests: dict[str, ManifestInfo],
    opts: AuditOptions,
    out: list[AuditFinding],
    ages: list[tuple[str, str, int]],
) -> None:
    for m in sorted(s.cited - s.listed):
        out.append(AuditFinding(s.url, "dangling-manifest",
            f"cites manifest {manifest_id(m)}, which the story does not list",
            {"manifest_id": manifest_id(m), "listed": _ids(s.listed)}))  # fmt: skip
    day = s.published.astimezone(dt.UTC).date() if s.published else None
    for m in sorted(s.listed):
        info = manifests.get(m)
        source_day = info.published_date if info else None
        if day is None or source_day is None or info is None:
            continue
        lag = (day - source_day).days
        ages.append((s.url, info.manifest_id, lag))
        evidence = {"manifest_id": info.manifest_id, "title": info.title,
                    "source_url": info.source_url, "published_date": source_day.isoformat(),
                    "story_date": day.isoformat(), "age_days": lag}  # fmt: skip
        if lag > opts.max_source_age:
            out.append(AuditFinding(s.url, "source-too-old",
                f"source {info.manifest_id} is {lag} days older than the story "
                f"(limit {opts.max_source_age})", evidence))  # fmt: skip
        elif lag < 0:
            out.append(AuditFinding(s.url, "source-after-story",
                f"source {info.manifest_id} is dated {-lag} days after the story",
                evidence))  # fmt: skip
    listed_pubs = {p for m in s.listed for p in manifests.get(m, ManifestInfo("", m)).publishers}
    if s.declared_publishers != listed_pubs:
        out.append(AuditFinding(s.url, "declared-publishers",
            "declared publishers differ from the listed manifests' publishers: "
            + _delta(listed_pubs - s.declared_publishers, s.declared_publishers - listed_pubs),
            {"declared": sorted(s.declared_publishers), "derived": sorted(listed_pubs),
             "missing": sorted(listed_pubs - s.declared_publishers),
             "extra": sorted(s.declared_publishers - listed_pubs)}))  # fmt: skip
    if s.declared_count != len(s.listed):
        out.append(AuditFinding(s.url, "declared-source-count",
            f"declared source_count {s.declared_count} but {len(s.listed)} manifests are listed",
            {"declared": s.declared_count, "derived": len(s.listed)}))  # fmt: skip
    if s.declared_cited != s.cited:
        out.append(AuditFinding(s.url, "declared-cited-manifests",
            "declared cited_manifest_ids differ from the manifests the story cites: "
            + _delta(set(_ids(s.cited - s.declared_cited)), set(_ids(s.declared_cited - s.cited))),
            {"declared": _ids(s.declared_cited), "derived": _ids(s.cited),
             "missing": _ids(s.cited - s.declared_cited),
             "extra": _ids(s.declared_cited - s.cited)}))  # fmt: skip
    _trust(s, out)


def _delta(missing: set[str], extra: set[str]) -> str:
    parts = []
    if missing:
        parts.append("missing " + ", ".join(sorted(missing)))
    if extra:
        parts.append("not derived " + ", ".join(sorted(extra)))
    return "; ".join(parts)


def _trust(s: _Story, out: list[AuditFinding]) -> None:
    if not s.trust_text:
        return
    evidence = {"trust": s.trust, "trust_text": s.trust_text, "derived_sources": len(s.listed)}
    match = _SOURCES_RE.search(s.trust_text)
    if match and int(match.group(1)) != len(s.listed):
        out.append(AuditFinding(s.url, "trust-label",
            f"trust text says {match.group(1)} sources but {len(s.listed)} manifests are listed",
            evidence))  # fmt: skip
    word = s.trust_text.split("\u00b7")[0].strip().lower()
    if s.trust and word and word != s.trust.strip().lower():
        out.append(AuditFinding(s.url, "trust-label",
            f"trust text {word!r} disagrees with the trust label {s.trust!r}",
            evidence))  # fmt: skip


def _uncited(
    store: Store, findings: defaultdict[str, list[AuditFinding]], only: list[str] | None = None
) -> None:
    import pyoxigraph as ox

    found = sorted(
        _each(store, _UNCITED, only), key=lambda r: (r[0] or "", part_sort_key(r[1] or ""))
    )
    for url, para in found:
        if url is None or para is None:
            continue
        text = next(rows(store, _TEXT, story=ox.NamedNode(url), para=ox.NamedNode(para)), ("",))
        key = para.rsplit("#", 1)[-1]
        findings[url].append(AuditFinding(url, "uncited-paragraph",
            f"paragraph {key} cites no claim",
            {"paragraph": para, "text": text[0] or ""}))  # fmt: skip


def _conflicts(
    store: Store, findings: defaultdict[str, list[AuditFinding]], only: set[str] | None = None
) -> None:
    """Claims under two manifests. The claim belongs to the manifest most stories cite it
    under; stories citing it under another manifest break the promise. With no single
    majority, every story citing the claim is flagged. (Where claims are described only in
    a shared graph, counts stop at ``_SPREAD_CAP + 1``: two manifests above it are a tie.)"""
    import pyoxigraph as ox

    if only is None:
        claims = [c for (c,) in rows(store, _CONFLICTS) if c and c.startswith(_CLAIM_PREFIX)]
    else:  # only the claims these stories cite, each looked up by itself
        cited = {c for url in sorted(only) for (c,) in
                 rows(store, _STORY_CLAIMS, story=ox.NamedNode(url)) if c}  # fmt: skip
        claims = [
            c for c in sorted(cited)
            if len(list(rows(store, _CLAIM_MANIFESTS, claim=ox.NamedNode(c)))) > 1
        ]  # fmt: skip
    # Fast path: where a story graph that cites a claim under m also states "claim isPartOf
    # m" (today's layout), stories are counted by index lookups. Where claims are described
    # once in a shared graph instead, the citations themselves are counted.
    stated = bool(claims) and _states_membership(store)
    for claim in claims:
        node = ox.NamedNode(claim)
        manifests = [m for (m,) in rows(store, _CLAIM_MANIFESTS, claim=node) if m is not None]
        by_graph = {
            m: _count(store, _GRAPHS_COUNT, claim=node, m=ox.NamedNode(m))
            for m in (manifests if stated else [])
        }
        first = {m: _order(store, node, ox.NamedNode(m)) for m in ([] if stated else manifests)}
        spread = (
            by_graph
            if stated
            else {
                m: _count(store, _CONFLICT_SPREAD[first[m]], claim=node, m=ox.NamedNode(m))
                for m in manifests
            }
        )
        ranked = sorted(spread.values(), reverse=True)
        owner = None
        if len(ranked) == 1 or ranked[0] > ranked[1]:
            owner = max(spread, key=lambda m: spread[m])
        flagged: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
        for m in sorted(spread):
            if m == owner:
                continue
            if stated:
                urls = [u for (u,) in rows(store, _GRAPHS_STATING, claim=node, m=ox.NamedNode(m))]
                found: Iterable[tuple[str | None, ...]] = (
                    (u, part)
                    for u in urls
                    if u and (only is None or u in only)
                    for (part,) in _parts_citing(store, u, node, m)
                )
            else:
                found = rows(store, _CONFLICT_CITES[first[m]], claim=node, m=ox.NamedNode(m))
            for story, part in found:
                if story is not None and part is not None:
                    flagged[story].append((part, manifest_id(m)))
        owner_id = manifest_id(owner) if owner else None
        per_manifest = {manifest_id(m): n for m, n in sorted(spread.items())}
        for story, cites in sorted(flagged.items()):
            if only is not None and story not in only:
                continue
            cites.sort()
            under = sorted({m for _, m in cites})
            findings[story].append(AuditFinding(story, "claim-conflict",
                f"claim {claim_id(claim)} is cited here under manifest {', '.join(under)} "
                + (f"but belongs to {owner_id}" if owner_id else "and elsewhere under another"),
                {"claim_id": claim_id(claim), "owner": owner_id,
                 "stories_per_manifest": per_manifest,
                 "cited_here": [{"part": p, "manifest_id": m} for p, m in cites]}))  # fmt: skip


def _parts_citing(store: Store, story: str, claim: Any, m: str) -> Iterator[tuple[str | None, ...]]:
    import pyoxigraph as ox

    node = ox.NamedNode(story)
    yield from rows(store, _PARTS_CITING, story=node, claim=claim, m=ox.NamedNode(m))


def _states_membership(store: Store) -> bool:
    """True if story graphs state which manifest each claim they cite is part of."""
    import pyoxigraph as ox

    for story, claim in rows(store, _A_CITED_CLAIM):
        if story and claim:
            found = store.query(_STATES_MEMBERSHIP, bindings={
                "story": ox.NamedNode(story), "claim": ox.NamedNode(claim)})  # fmt: skip
            return bool(found)
    return False


def _order(store: Store, claim: Any, m: Any) -> str:
    """Which side to start a claim-under-manifest join from: the one with fewer citations."""
    claim_n = _count(store, _CLAIM_CITATIONS, claim=claim)
    return "claim" if claim_n <= _count(store, _MANIFEST_CITATIONS, m=m) else "m"


def _count(store: Store, sparql: str, **bindings: Any) -> int:
    """The single count a ``(COUNT(*) AS ?n)`` query returns (0 when no row)."""
    return int(next(rows(store, sparql, **bindings), ("0",))[-1] or 0)


def _repeats(
    data: dict[str, _Story], opts: AuditOptions, findings: defaultdict[str, list[AuditFinding]]
) -> None:
    t = opts.repeat_threshold
    usable = [s for s in data.values() if s.cited and s.published is not None]
    freq: Counter[str] = Counter(m for s in usable for m in s.cited)
    index: defaultdict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(usable):
        tokens = sorted(s.cited, key=lambda m: (freq[m], m))
        n = len(tokens)
        prefix = n - math.ceil(t * n - 1e-9) + 1
        for m in tokens[:prefix]:
            index[m].append(i)
    pairs: set[tuple[int, int]] = set()
    for members in index.values():
        for a_pos, a in enumerate(members):
            for b in members[a_pos + 1 :]:
                pairs.add((a, b) if a < b else (b, a))
    for a, b in sorted(pairs):
        found = _repeat(usable[a], usable[b], opts)
        if found is not None:
            findings[found.story].append(found)


def _repeat(sa: _Story, sb: _Story, opts: AuditOptions) -> AuditFinding | None:
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
         "shared_manifests": _ids(shared)})  # fmt: skip


def _repeats_local(
    store: Store,
    data: dict[str, _Story],
    opts: AuditOptions,
    findings: defaultdict[str, list[AuditFinding]],
) -> None:
    """Repeats of the given stories only: a story with Jaccard >= t to ``s`` shares one of
    the first ``n - ceil(t*n) + 1`` of ``s``'s manifests in any order; rarest first keeps the
    candidate lists short."""
    import pyoxigraph as ox

    t = opts.repeat_threshold
    others: dict[str, _Story] = {}
    for s in list(data.values()):
        if not s.cited or s.published is None:
            continue
        spread = {m: int(next(rows(store, _MANIFEST_SPREAD, m=ox.NamedNode(m)), ("0",))[0] or 0)
                  for m in s.cited}  # fmt: skip
        tokens = sorted(s.cited, key=lambda m: (spread[m], m))
        n = len(tokens)
        candidates = {
            url
            for m in tokens[: n - math.ceil(t * n - 1e-9) + 1]
            for (url,) in rows(store, _MANIFEST_STORIES, m=ox.NamedNode(m))
            if url and url != s.url
        }
        for url in sorted(candidates):
            if url not in others:
                others[url] = data.get(url) or _load(store, [url])[url]
            found = _repeat(s, others[url], opts)
            if found is not None and found.story == s.url:
                findings[s.url].append(found)
