"""``audit``: does each story keep the promises its disclosure makes?

:func:`audit` checks the promises (cited manifests exist and are recent, claim ids belong to
their manifest, no repeat of a recent story, each paragraph supported) and the declared summary
fields, with evidence for every finding (:data:`~hcgraph.provenance.scope.CHECKS`); the
cross-story checks are in :mod:`~hcgraph.provenance.conflicts` and
:mod:`~hcgraph.provenance.repeats`, the support verdicts in
:mod:`~hcgraph.provenance.support_audit`. :func:`render_summary` and :func:`render_markdown`
are the report's terminal and Markdown views.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from itertools import chain
from typing import Any

from ..errors import ProvenanceError, visible
from ..mdtext import md_text, md_url
from ..store import Store
from ._graph import ManifestInfo, describe_manifests, manifest_id, rows
from .conflicts import conflicts
from .repeats import repeats
from .scope import (
    CHECKS,
    MAX_REPEAT_WINDOW,
    MAX_SOURCE_AGE,
    AuditFinding,
    AuditOptions,
    AuditScope,
    StoryFacts,
    manifest_ids,
    open_scope,
)
from .support_audit import SupportFacts, checked_versions, support_facts
from .tracing import part_sort_key

__all__ = [
    "CHECKS",
    "AuditFinding",
    "AuditOptions",
    "AuditReport",
    "StoryAudit",
    "audit",
    "render_markdown",
    "render_summary",
    "support_line",
]

_UNCITED = """
SELECT ?story ?para ?text WHERE { GRAPH ?story {
  ?para a hc:Paragraph MINUS { ?para cito:citesAsEvidence ?claim }
  OPTIONAL { ?para schema:text ?text }
} }
"""
_ROOM_ID = "SELECT DISTINCT ?room ?id WHERE { ?room dcterms:identifier ?id }"
Named = Callable[[str], str]
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
    """The answer of :func:`audit`: the thresholds used, the scorecards by URL, ``(story,
    manifest_id, days)`` for every listed manifest with both dates, publisher → (story,
    manifest) citations, and the stories in the store (what the cross-story checks saw)."""

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
        summary = {
            "stories": len(self.stories),
            "stories_in_store": self.total_stories,
            "stories_failing": len(self.failing),
            "findings": len(self.findings),
            "by_check": self.counts(),
        }
        stories = [_card_dict(s) for s in self.stories]
        return {"options": asdict(self.options), "summary": summary, "stories": stories}

    def to_json(self) -> str:
        """The report as indented JSON."""
        return json.dumps(self.as_dict(), indent=2, ensure_ascii=False)


def _card_dict(s: StoryAudit) -> dict[str, Any]:
    """A scorecard's JSON: its fields, ``ok``, then each finding with its promise."""
    card = {f.name: getattr(s, f.name) for f in fields(s) if f.name != "findings"}
    findings = [
        {"check": f.check, "promise": f.promise, "message": f.message, "evidence": f.evidence}
        for f in s.findings
    ]
    return {**card, "ok": s.ok, "findings": findings}


def audit(
    store: Store, stories: Iterable[str] | None = None, options: AuditOptions | None = None
) -> AuditReport:
    """Audit ``stories`` (URLs; ``None`` = every current story: withdrawn ones only with
    ``options.include_withdrawn``) against their disclosure promises.

    Raises:
        ProvenanceError: a story URL given is not in the store, or an option is out of range.
    """
    opts = _checked(options or AuditOptions())
    scope = open_scope(store, stories, opts.include_withdrawn)
    manifests = describe_manifests(store, scope.manifests() if scope.local else None)
    support, current = _support(scope)
    found: defaultdict[str, list[AuditFinding]] = defaultdict(list)
    for f in chain(
        story_checks(scope, manifests, opts),
        uncited(scope),
        conflicts(scope),
        repeats(scope, opts),
        *support.findings.values(),
    ):
        found[f.story].append(f)
    rooms = _rooms(store, {s.room for s in scope.facts.values() if s.room})
    cards = [_card(scope, url, found, rooms, support.for_story(url, url in current))
             for url in scope.wanted]  # fmt: skip
    keep = set(scope.wanted)
    return AuditReport(
        options=opts,
        stories=cards,
        source_ages=sorted(a for a in source_ages(scope, manifests) if a[0] in keep),
        publisher_citations=_publisher_citations(scope, manifests),
        total_stories=scope.total,
    )


def _checked(opts: AuditOptions) -> AuditOptions:
    """``opts``, its thresholds checked (a usage error for each out of range)."""
    if opts.max_source_age < 0 or opts.repeat_window < 0:
        raise ProvenanceError("--max-source-age and --repeat-window must be >= 0")
    if opts.repeat_window > MAX_REPEAT_WINDOW:
        raise ProvenanceError(f"--repeat-window must be at most {MAX_REPEAT_WINDOW} days")
    if opts.max_source_age > MAX_SOURCE_AGE:
        raise ProvenanceError(f"--max-source-age must be at most {MAX_SOURCE_AGE} days")
    if not 0 < opts.repeat_threshold <= 1:
        raise ProvenanceError("--repeat-threshold must be in (0, 1]")
    return opts


def _card(
    scope: AuditScope,
    url: str,
    found: dict[str, list[AuditFinding]],
    rooms: dict[str, str],
    support: dict[str, int],
) -> StoryAudit:
    """One story's scorecard, its findings in check order."""
    s = scope.facts[url]
    order = list(CHECKS)
    return StoryAudit(
        url=url,
        headline=s.headline,
        newsroom=rooms.get(s.room or "", s.room or ""),
        published_at=s.published_text,
        sources=len(s.listed),
        cited_manifests=len(s.cited),
        findings=sorted(found.get(url, []), key=lambda f: (order.index(f.check), f.message)),
        support=support,
    )


def _publisher_citations(scope: AuditScope, manifests: dict[str, ManifestInfo]) -> dict[str, int]:
    """Publisher → (story, manifest) citations over the scope's facts, most cited first."""
    counts: Counter[str] = Counter()
    for s in scope.facts.values():
        for m in s.cited:
            counts.update(manifests.get(m, ManifestInfo("", m)).publishers)
    return dict(counts.most_common())


def _support(scope: AuditScope) -> tuple[SupportFacts, set[str]]:
    """The recorded support verdicts, and which stories' checks read their current version."""
    from ..claims.graphing import support_graph
    from ..iris import minted

    facts = support_facts(scope.store, scope.wanted if scope.local else None)
    checked = checked_versions(scope.store)
    raw = dict(scope.store.raw_documents())
    current = {
        url for url in scope.wanted
        if url in raw and checked.get(support_graph(url)) == minted("raw", raw[url])
    }  # fmt: skip
    return facts, current


def _rooms(store: Store, rooms: set[str]) -> dict[str, str]:
    """Newsroom IRI → its identifier (per room: index lookups, no join over copies)."""
    import pyoxigraph as ox

    out: dict[str, str] = {}
    for room in sorted(rooms):
        for (ident,) in rows(store, _ROOM_ID, room=ox.NamedNode(room)):
            if ident:
                out[room] = min(out.get(room, ident), ident)
    return out


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
    found = {(url, para): text or "" for url, para, text in scope.each(_UNCITED) if url and para}
    out = []
    for url, para in sorted(found, key=lambda key: (key[0], part_sort_key(key[1]))):
        message = f"paragraph {para.rsplit('#', 1)[-1]} cites no claim"
        evidence = {"paragraph": para, "text": found[url, para]}
        out.append(AuditFinding(url, "uncited-paragraph", message, evidence))
    return out


# --- views: terminal and Markdown ----------------------------------------------------------


def _tally(report: AuditReport) -> str:
    """ "K of N stories keep every promise; F findings in M stories"."""
    failing = len(report.failing)
    return (
        f"{len(report.stories) - failing} of {len(report.stories)} stories keep every "
        f"promise; {len(report.findings)} findings in {failing} stories"
    )


def support_line(report: AuditReport) -> str:
    """One line of support verdicts over the stories audited."""
    total: Counter[str] = Counter()
    for s in report.stories:
        total.update(s.support)
    parts = [f"{total[k]} {k}" for k in ("supported", "unsupported", "not-checkable")]
    unchecked = total["unchecked"]
    tail = f"; {unchecked} stories unchecked (hcgraph manifests check)" if unchecked else ""
    return "support check: (passage, claim) pairs " + ", ".join(parts) + tail


def render_summary(report: AuditReport, limit: int = 20) -> list[Any]:
    """Rich renderables: findings per check, then the failing stories (first ``limit``);
    story text and URLs through :func:`~hcgraph.errors.visible`."""
    from rich.table import Table
    from rich.text import Text

    failing = report.failing
    head = Text(_tally(report), style="bold green" if not failing else "bold red")
    checks = Table(title="findings per check")
    checks.add_column("promise")
    checks.add_column("check")
    checks.add_column("findings", justify="right")
    for name, n in report.counts().items():
        checks.add_row(CHECKS[name], name, str(n), style="red" if n else None)
    out: list[Any] = [head, checks, Text(support_line(report))]
    if failing:
        out.append(Text(f"stories breaking a promise (first {min(limit, len(failing))}):",
                        style="bold"))  # fmt: skip
        for s in failing[:limit]:
            out.append(Text(visible(s.url, one_line=True), style="cyan"))
            out += [Text(f"  {f.check}: {visible(f.message, one_line=True)}") for f in s.findings]
    return out


def render_markdown(report: AuditReport) -> str:
    """The report as Markdown: summary table, then each failing story's findings."""
    o = report.options
    lines = [
        "# hcgraph audit",
        "",
        f"{_tally(report)} (max source age {o.max_source_age} days, repeat window "
        f"{o.repeat_window} days, repeat threshold {o.repeat_threshold}).",
        "",
        "| promise | check | findings |",
        "| --- | --- | ---: |",
    ]
    lines += [f"| {CHECKS[k]} | `{k}` | {n} |" for k, n in report.counts().items()]
    lines += ["", support_line(report) + "."]
    for s in report.failing:
        lines += ["", f"## {md_text(s.headline or s.url)}", "", md_url(s.url), ""]
        lines += [f"- **{f.check}**: {md_text(f.message)}" for f in s.findings]
    return "\n".join(lines) + "\n"
