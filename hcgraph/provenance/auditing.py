"""``audit``: does each story keep the promises its disclosure makes?

:func:`audit` runs the checks (:data:`~hcgraph.provenance.scope.CHECKS`, written in
:mod:`~hcgraph.provenance.promises`), with evidence for every finding; :func:`render_summary`
and :func:`render_markdown` are the report's terminal and Markdown views.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from itertools import chain
from typing import Any

import pyoxigraph as ox

from ..errors import ProvenanceError, visible
from ..mdtext import md_text, md_url
from ..store import Store
from ._graph import ManifestInfo, describe_manifests, rows
from .promises import conflicts, repeats, source_ages, story_checks, support_verdicts, uncited
from .scope import (
    CHECKS,
    MAX_REPEAT_WINDOW,
    MAX_SOURCE_AGE,
    VERDICTS,
    AuditFinding,
    AuditOptions,
    AuditScope,
    StoryFacts,
    open_scope,
)

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

_ROOM_ID = "SELECT DISTINCT ?room ?id WHERE { ?room dcterms:identifier ?id }"


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
    unsupported, support = support_verdicts(scope)
    found: defaultdict[str, list[AuditFinding]] = defaultdict(list)
    for f in chain(
        story_checks(scope, manifests, opts),
        uncited(scope),
        conflicts(scope),
        repeats(scope, opts),
        unsupported,
    ):
        found[f.story].append(f)
    rooms = _rooms(store, {s.room for s in scope.facts.values() if s.room})
    cards = [_card(scope.facts[url], found[url], rooms, support[url]) for url in scope.wanted]
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
    s: StoryFacts, found: list[AuditFinding], rooms: dict[str, str], support: dict[str, int]
) -> StoryAudit:
    """One story's scorecard, its findings in check order."""
    order = list(CHECKS)
    return StoryAudit(
        url=s.url,
        headline=s.headline,
        newsroom=rooms.get(s.room or "", s.room or ""),
        published_at=s.published_text,
        sources=len(s.listed),
        cited_manifests=len(s.cited),
        findings=sorted(found, key=lambda f: (order.index(f.check), f.message)),
        support=support,
    )


def _publisher_citations(scope: AuditScope, manifests: dict[str, ManifestInfo]) -> dict[str, int]:
    """Publisher → (story, manifest) citations over the scope's facts, most cited first."""
    counts: Counter[str] = Counter()
    for s in scope.facts.values():
        for m in s.cited:
            counts.update(manifests.get(m, ManifestInfo("", m)).publishers)
    return dict(counts.most_common())


def _rooms(store: Store, rooms: set[str]) -> dict[str, str]:
    """Newsroom IRI → its identifier (per room: index lookups, no join over copies)."""
    out: dict[str, str] = {}
    for room in sorted(rooms):
        for (ident,) in rows(store, _ROOM_ID, room=ox.NamedNode(room)):
            if ident:
                out[room] = min(out.get(room, ident), ident)
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
    parts = [f"{total[k]} {k}" for k in VERDICTS]
    unchecked = total["unchecked"]
    tail = f"; {unchecked} stories unchecked (hcgraph manifests check)" if unchecked else ""
    return "support check: (passage, claim) pairs " + ", ".join(parts) + tail


def render_summary(report: AuditReport, limit: int = 20) -> list[Any]:
    """Rich renderables: findings per check, then the failing stories (first ``limit``);
    story text and URLs through :func:`~hcgraph.errors.visible`."""
    from rich.table import Column, Table
    from rich.text import Text

    failing = report.failing
    head = Text(_tally(report), style="bold green" if not failing else "bold red")
    count = Column("findings", justify="right")
    checks = Table("promise", "check", count, title="findings per check")
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
