"""``audit``: does each story keep the promises its disclosure makes?

The real disclosure reads: *"every cited Manifest id exists and is recent, claim ids belong to
their Manifest, the story does not repeat a recent story, and each paragraph is supported by
the claims it cites"*. :func:`audit` checks those promises, and the declared summary fields,
on the graph, with evidence for every finding (:data:`~hcgraph.provenance.findings.CHECKS`
lists them).

For the whole store, all data is read with a few whole-store queries (no per-story round
trips). Up to :data:`LOCAL_MAX` named stories are looked up one by one instead, neighbours
included (the stories sharing a claim or sources), with the same answers. The cross-story
promises live in :mod:`~hcgraph.provenance.conflicts` and :mod:`~hcgraph.provenance.repeats`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import ProvenanceError
from ..iris import named_node
from ..store import Store
from ._graph import ManifestInfo, describe_manifests, manifest_id, publisher_name, rows
from .conflicts import conflicts
from .findings import (
    CHECKS,
    MAX_REPEAT_WINDOW,
    MAX_SOURCE_AGE,
    AuditFinding,
    AuditOptions,
    StoryFacts,
    manifest_ids,
)
from .repeats import repeats, repeats_local
from .support_audit import SupportFacts, checked_versions, support_facts
from .tracing import part_sort_key

#: Up to this many stories named, ``audit`` looks them (and their neighbours) up one by one
#: instead of reading the whole store.
LOCAL_MAX = 20

__all__ = ["CHECKS", "AuditFinding", "AuditOptions", "AuditReport", "StoryAudit", "audit"]


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
# The same for the whole store: each property one scan, left-joined by hash (the form above
# looks every property up per story: about 3x the CPU on the on-disk store at 10k stories).
_ALL_STORIES = "SELECT ?story ?headline ?published ?trust ?trustText ?count ?room WHERE {\n" + (
    "{ SELECT ?story WHERE { GRAPH ?story { ?story a hc:Story } } }\n"
    + "".join(
        f"OPTIONAL {{ {{ SELECT ?story ?{v} WHERE {{ GRAPH ?story {{ ?story {p} ?{v} }} }} }} }}\n"
        for p, v in (
            ("schema:headline", "headline"),
            ("schema:datePublished", "published"),
            ("hc:trust", "trust"),
            ("hc:trustText", "trustText"),
            ("hc:declaredSourceCount", "count"),
            ("hc:newsroom", "room"),
        )
    )
    + "}"
)
_LISTED = "SELECT ?story ?m WHERE { GRAPH ?story { ?story hc:listsManifest ?m } }"
_DECLARED_PUB = "SELECT ?story ?p WHERE { GRAPH ?story { ?story hc:declaredPublisher ?p } }"
_DECLARED_CITED = "SELECT ?story ?m WHERE { GRAPH ?story { ?story hc:declaredCitedManifest ?m } }"
# hc:citesManifest: the derived summary of the manifests the story's citations name.
_CITED_DIFF = (
    "SELECT ?story ?m WHERE { GRAPH ?story { ?story hc:citesManifest ?m "
    "MINUS { ?story hc:declaredCitedManifest ?m } } }",
    "SELECT ?story ?m WHERE { GRAPH ?story { ?story hc:declaredCitedManifest ?m "
    "MINUS { ?story hc:citesManifest ?m } } }",
)
_CITED = "SELECT ?story ?m WHERE { GRAPH ?story { ?story hc:citesManifest ?m } }"
_UNCITED = """
SELECT ?story ?para WHERE { GRAPH ?story {
  ?para a hc:Paragraph MINUS { ?para cito:citesAsEvidence ?claim }
} }
"""
_TEXT = "SELECT ?story ?para ?text WHERE { GRAPH ?story { ?para schema:text ?text } }"
_COUNT_STORIES = "SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { GRAPH ?s { ?s a hc:Story } }"
_ROOM_ID = "SELECT DISTINCT ?room ?id WHERE { ?room dcterms:identifier ?id }"
_SOURCES_RE = re.compile(r"(\d+)\s+sources?\b", re.IGNORECASE)


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
    #: verdicts of the support check: supported / unsupported / not-checkable pairs, or
    #: ``{"unchecked": 1}`` when no check ran on this version (``hcgraph manifests check``)
    support: dict[str, int] = field(default_factory=dict)

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
    def failing(self) -> list[StoryAudit]:
        """The scorecards of the stories that break a promise."""
        return [s for s in self.stories if s.findings]

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
                "stories_failing": len(self.failing),
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
                    "support": s.support,
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


def audit(
    store: Store, stories: Iterable[str] | None = None, options: AuditOptions | None = None
) -> AuditReport:
    """Audit ``stories`` (URLs; ``None`` = every current story: withdrawn ones only with
    ``options.include_withdrawn``) against their disclosure promises.

    Raises:
        ProvenanceError: a story URL given is not in the store, or an option is out of range.
    """
    opts = options or AuditOptions()
    if opts.max_source_age < 0 or opts.repeat_window < 0:
        raise ProvenanceError("--max-source-age and --repeat-window must be >= 0")
    if opts.repeat_window > MAX_REPEAT_WINDOW:
        raise ProvenanceError(f"--repeat-window must be at most {MAX_REPEAT_WINDOW} days")
    if opts.max_source_age > MAX_SOURCE_AGE:
        raise ProvenanceError(f"--max-source-age must be at most {MAX_SOURCE_AGE} days")
    if not 0 < opts.repeat_threshold <= 1:
        raise ProvenanceError("--repeat-threshold must be in (0, 1]")
    given = None if stories is None else list(dict.fromkeys(stories))
    local = given is not None and len(given) <= LOCAL_MAX
    data = _load(store, given if local else None)
    withdrawn = set() if opts.include_withdrawn else set(store.withdrawn_stories())
    if withdrawn and given is None:
        data = {url: s for url, s in data.items() if url not in withdrawn}
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
        conflicts(store, findings, set(wanted))
        repeats_local(store, data, opts, findings, lambda url: _load(store, [url])[url])
        total = int(next(rows(store, _COUNT_STORIES), ("0",))[0] or 0) - len(withdrawn)
    else:
        _uncited(store, findings)
        conflicts(store, findings)
        repeats(data, opts, findings)
        total = len(data)
    support, current = _support(store, wanted, local)
    for url, found in support.findings.items():
        findings[url].extend(found)
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
                support=support.for_story(url, url in current),
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


def _support(store: Store, wanted: list[str], local: bool) -> tuple[SupportFacts, set[str]]:
    """The recorded support verdicts, and which stories' checks read their current version."""
    from ..claims.graphing import support_graph
    from ..iris import minted

    facts = support_facts(store, wanted if local else None)
    checked = checked_versions(store)
    raw = dict(store.raw_documents())
    current = {
        url for url in wanted
        if url in raw and checked.get(support_graph(url)) == minted("raw", raw[url])
    }  # fmt: skip
    return facts, current


def _each(store: Store, sparql: str, only: list[str] | None) -> Iterator[tuple[str | None, ...]]:
    """Rows of a ``?story``-first query: whole store, or story by story (bound)."""
    if only is None:
        yield from rows(store, sparql)
        return
    for url in only:
        node = named_node(url)
        if node is None:  # not an IRI: no rows, so the caller reports no such story
            continue
        for row in rows(store, sparql, story=node):
            yield (url, *row)


def _load(store: Store, only: list[str] | None = None) -> dict[str, StoryFacts]:
    data: dict[str, StoryFacts] = {}
    stories = _STORIES if only is not None else _ALL_STORIES
    for url, headline, published, trust, trust_text, count, room in _each(store, stories, only):
        if url is None or url in data:
            continue
        s = StoryFacts(url, headline or "", trust=trust, trust_text=trust_text, room=room)
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


def _story_checks(
    s: StoryFacts,
    manifests: dict[str, ManifestInfo],
    opts: AuditOptions,
    out: list[AuditFinding],
    ages: list[tuple[str, str, int]],
) -> None:
    for m in sorted(s.cited - s.listed):
        out.append(AuditFinding(s.url, "dangling-manifest",
            f"cites manifest {manifest_id(m)}, which the story does not list",
            {"manifest_id": manifest_id(m), "listed": manifest_ids(s.listed)}))  # fmt: skip
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
        missing = manifest_ids(s.cited - s.declared_cited)
        extra = manifest_ids(s.declared_cited - s.cited)
        out.append(AuditFinding(s.url, "declared-cited-manifests",
            "declared cited_manifest_ids differ from the manifests the story cites: "
            + _delta(set(missing), set(extra)),
            {"declared": manifest_ids(s.declared_cited), "derived": manifest_ids(s.cited),
             "missing": missing, "extra": extra}))  # fmt: skip
    _trust(s, out)


def _delta(missing: set[str], extra: set[str]) -> str:
    parts = []
    if missing:
        parts.append("missing " + ", ".join(sorted(missing)))
    if extra:
        parts.append("not derived " + ", ".join(sorted(extra)))
    return "; ".join(parts)


def _trust(s: StoryFacts, out: list[AuditFinding]) -> None:
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
