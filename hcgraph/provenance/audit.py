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
from collections.abc import Iterable
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
_CITED = "SELECT DISTINCT ?story ?m WHERE { GRAPH ?story { ?part prov:wasDerivedFrom ?m } }"
_UNCITED = """
SELECT ?story ?para WHERE { GRAPH ?story {
  ?para a hc:Paragraph MINUS { ?para cito:citesAsEvidence ?claim }
} }
"""
_TEXT = "SELECT ?story ?para ?text WHERE { GRAPH ?story { ?para schema:text ?text } }"
# Claims described as part of two manifests (union graph: the claim descriptions, wherever
# they live). STRSTARTS keeps story parts (also dcterms:isPartOf) out; the prefix is ours.
_CONFLICTS = """
SELECT ?claim WHERE {
  ?claim dcterms:isPartOf ?m .
  FILTER(STRSTARTS(STR(?claim), "https://w3id.org/hcgraph/id/claim/"))
} GROUP BY ?claim HAVING (COUNT(DISTINCT ?m) > 1)
"""
_CONFLICT_SPREAD = """
SELECT ?claim ?m (COUNT(DISTINCT ?story) AS ?n) WHERE { GRAPH ?story {
  ?c hc:citesClaim ?claim ; cito:hasCitedEntity ?m .
} } GROUP BY ?claim ?m
"""
_CONFLICT_CITES = """
SELECT DISTINCT ?claim ?m ?story ?part WHERE { GRAPH ?story {
  ?c hc:citesClaim ?claim ; cito:hasCitedEntity ?m ; cito:hasCitingEntity ?part .
} }
"""
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
    data = _load(store)
    wanted = sorted(data) if stories is None else list(dict.fromkeys(stories))
    missing = [u for u in wanted if u not in data]
    if missing:
        raise ProvenanceError(f"{missing[0]}: no such story in the store")
    manifests = describe_manifests(store)
    rooms = _rooms(store, {s.room for s in data.values() if s.room})
    findings: defaultdict[str, list[AuditFinding]] = defaultdict(list)
    ages: list[tuple[str, str, int]] = []
    for s in data.values():
        _story_checks(s, manifests, opts, findings[s.url], ages)
    _uncited(store, findings)
    _conflicts(store, findings)
    _repeats(data, opts, findings)
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
        source_ages=[a for a in ages if a[0] in keep],
        publisher_citations=dict(pub_counts.most_common()),
        total_stories=len(data),
    )


def _load(store: Store) -> dict[str, _Story]:
    data: dict[str, _Story] = {}
    for url, headline, published, trust, trust_text, count, room in rows(store, _STORIES):
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
    for query, attr in ((_LISTED, "listed"), (_CITED, "cited"),
                        (_DECLARED_CITED, "declared_cited")):  # fmt: skip
        for url, m in rows(store, query):
            if url in data and m is not None:
                getattr(data[url], attr).add(m)
    for url, p in rows(store, _DECLARED_PUB):
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


def _uncited(store: Store, findings: defaultdict[str, list[AuditFinding]]) -> None:
    import pyoxigraph as ox

    found = sorted(rows(store, _UNCITED), key=lambda r: (r[0] or "", part_sort_key(r[1] or "")))
    for url, para in found:
        if url is None or para is None:
            continue
        text = next(rows(store, _TEXT, story=ox.NamedNode(url), para=ox.NamedNode(para)), ("",))
        key = para.rsplit("#", 1)[-1]
        findings[url].append(AuditFinding(url, "uncited-paragraph",
            f"paragraph {key} cites no claim",
            {"paragraph": para, "text": text[0] or ""}))  # fmt: skip


def _conflicts(store: Store, findings: defaultdict[str, list[AuditFinding]]) -> None:
    """Claims under two manifests. The claim belongs to the manifest most stories cite it
    under; stories citing it under another manifest break the promise. With no single
    majority, every story citing the claim is flagged."""
    import pyoxigraph as ox

    for (claim,) in rows(store, _CONFLICTS):
        if claim is None:
            continue
        node = ox.NamedNode(claim)
        spread = {
            m: int(n or 0) for m, n in rows(store, _CONFLICT_SPREAD, claim=node) if m is not None
        }
        ranked = sorted(spread.values(), reverse=True)
        owner = None
        if len(ranked) == 1 or ranked[0] > ranked[1]:
            owner = max(spread, key=lambda m: spread[m])
        flagged: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
        for m in sorted(spread):
            if m == owner:
                continue
            for story, part in rows(store, _CONFLICT_CITES, claim=node, m=ox.NamedNode(m)):
                if story is not None and part is not None:
                    flagged[story].append((part, manifest_id(m)))
        owner_id = manifest_id(owner) if owner else None
        per_manifest = {manifest_id(m): n for m, n in sorted(spread.items())}
        for story, cites in sorted(flagged.items()):
            cites.sort()
            under = sorted({m for _, m in cites})
            findings[story].append(AuditFinding(story, "claim-conflict",
                f"claim {claim_id(claim)} is cited here under manifest {', '.join(under)} "
                + (f"but belongs to {owner_id}" if owner_id else "and elsewhere under another"),
                {"claim_id": claim_id(claim), "owner": owner_id,
                 "stories_per_manifest": per_manifest,
                 "cited_here": [{"part": p, "manifest_id": m} for p, m in cites]}))  # fmt: skip


def _repeats(
    data: dict[str, _Story], opts: AuditOptions, findings: defaultdict[str, list[AuditFinding]]
) -> None:
    t = opts.repeat_threshold
    window = dt.timedelta(days=opts.repeat_window)
    usable = [s for s in data.values() if s.cited and s.published is not None]
    freq: Counter[str] = Counter(m for s in usable for m in s.cited)
    index: defaultdict[str, list[int]] = defaultdict(list)
    ordered: list[list[str]] = []
    for i, s in enumerate(usable):
        tokens = sorted(s.cited, key=lambda m: (freq[m], m))
        ordered.append(tokens)
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
        sa, sb = usable[a], usable[b]
        assert sa.published is not None and sb.published is not None
        if abs(sa.published - sb.published) > window:
            continue
        shared = sa.cited & sb.cited
        jaccard = len(shared) / len(sa.cited | sb.cited)
        if jaccard + 1e-12 < t:
            continue
        early, late = sorted((sa, sb), key=lambda s: (s.published, s.url))
        assert early.published is not None and late.published is not None
        days = (late.published - early.published).total_seconds() / 86400
        findings[late.url].append(AuditFinding(late.url, "repeat",
            f"repeats {early.url} ({days:.1f} days earlier, Jaccard {jaccard:.2f} "
            "of cited manifests)",
            {"earlier_story": early.url, "earlier_headline": early.headline,
             "jaccard": round(jaccard, 4), "days_apart": round(days, 3),
             "shared_manifests": _ids(shared)}))  # fmt: skip
