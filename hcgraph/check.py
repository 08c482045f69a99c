"""``hcgraph check``: SHACL structure plus the integrity queries, as one report per story.

What: :func:`check` runs the SHACL shapes (:mod:`hcgraph.shacl`) and the saved integrity
queries (:data:`INTEGRITY_CHECKS`) over a store and returns a :class:`CheckReport` of
:class:`Finding` objects, grouped by story. A finding is a ``violation`` (the story breaks a
promise: structure, citations, declared fields) or a ``warning`` (worth knowing, not wrong:
a related story that is simply not ingested yet).

Why: the publisher promises that every cited manifest exists, claim ids belong to their
manifest and every paragraph is supported by what it cites; ``check`` makes those promises
testable in CI (exit 1 on violations).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from .errors import CheckError
from .queries import run_query
from .shacl import ShaclResult, load_shapes
from .shacl import validate as validate_shapes
from .store import Store

__all__ = ["INTEGRITY_CHECKS", "CheckReport", "Finding", "check"]


@dataclass(frozen=True)
class Finding:
    """One problem found in one story.

    Attributes:
        story: the story IRI the problem belongs to.
        check: ``shacl`` or the name of the integrity query that found it.
        severity: ``violation`` or ``warning``.
        focus: the node at fault (paragraph, key fact, manifest, …) as an IRI or id.
        message: one readable sentence.
    """

    story: str
    check: str
    severity: str
    focus: str
    message: str


Describe = Callable[[dict[str, Any]], tuple[str, str]]


def _uncited(row: dict[str, Any]) -> tuple[str, str]:
    return row["paragraph"], f"paragraph {row['section']}.{row['position']} cites nothing"


def _unsupported(row: dict[str, Any]) -> tuple[str, str]:
    return row["key_fact"], (
        f"key fact {row['position']} cites claims no paragraph cites:"
        f" {row['unsupported_claim_ids']}"
    )


def _dangling(row: dict[str, Any]) -> tuple[str, str]:
    problem, manifest = row["problem"], row["manifest_id"]
    if problem == "cited-unlisted":
        return manifest, f"cites manifest {manifest}, which manifests[] does not list"
    if problem == "listed-uncited":
        return manifest, f"lists manifest {manifest} but never cites it"
    return row["claim_id"], (
        f"cites claim {row['claim_id']} under manifest {manifest}; {row['detail'] or ''}"
    ).rstrip("; ")


def _declared(row: dict[str, Any]) -> tuple[str, str]:
    return row["field"], (
        f"declared {row['field']} [{row['declared'] or ''}] but the content says"
        f" [{row['derived'] or ''}]"
    )


def _related(row: dict[str, Any]) -> tuple[str, str]:
    return row["related"], f"related story {row['related']} is not in the graph"


def _duplicate_id(row: dict[str, Any]) -> tuple[str, str]:
    return row["id"], f"id {row['id']} is also the id of {row['other']}"


#: Integrity query name → (severity, row → (focus, message)).
INTEGRITY_CHECKS: dict[str, tuple[str, Describe]] = {
    "uncited-paragraphs": ("violation", _uncited),
    "unsupported-key-facts": ("violation", _unsupported),
    "dangling-citations": ("violation", _dangling),
    "declared-vs-derived": ("violation", _declared),
    "related-not-ingested": ("warning", _related),
    "duplicate-ids": ("violation", _duplicate_id),
}


@dataclass
class CheckReport:
    """The outcome of :func:`check`.

    Attributes:
        findings: every finding, sorted by story, check, focus.
        stories: number of story graphs in the store.
        shacl_graphs_validated: story graphs pySHACL validated.
        seconds: wall time per part (``shacl`` and each integrity query).
    """

    findings: list[Finding] = field(default_factory=list)
    stories: int = 0
    shacl_graphs_validated: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def violations(self) -> int:
        """How many findings are violations."""
        return sum(1 for f in self.findings if f.severity == "violation")

    @property
    def warnings(self) -> int:
        """How many findings are warnings (or SHACL infos)."""
        return len(self.findings) - self.violations

    @property
    def ok(self) -> bool:
        """True when there is no violation (warnings allowed)."""
        return self.violations == 0

    def by_story(self) -> dict[str, list[Finding]]:
        """Findings grouped by story IRI, stories sorted."""
        grouped: dict[str, list[Finding]] = {}
        for finding in self.findings:
            grouped.setdefault(finding.story, []).append(finding)
        return dict(sorted(grouped.items()))

    def counts(self) -> dict[str, dict[str, int]]:
        """check name → severity → number of findings."""
        out: dict[str, dict[str, int]] = {}
        for f in self.findings:
            per = out.setdefault(f.check, {})
            per[f.severity] = per.get(f.severity, 0) + 1
        return dict(sorted(out.items()))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: summary, then findings grouped by story."""
        return {
            "ok": self.ok,
            "stories": self.stories,
            "stories_with_findings": len(self.by_story()),
            "violations": self.violations,
            "warnings": self.warnings,
            "shacl_graphs_validated": self.shacl_graphs_validated,
            "counts": self.counts(),
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
            "findings": {
                story: [{k: v for k, v in asdict(f).items() if k != "story"} for f in items]
                for story, items in self.by_story().items()
            },
        }


def _shacl_finding(result: ShaclResult) -> Finding:
    where = f" ({result.path})" if result.path else ""
    value = f" [value: {result.value}]" if result.value else ""
    severity = "violation" if result.severity == "violation" else "warning"
    return Finding(result.story, "shacl", severity, result.focus, f"{result.message}{where}{value}")


def check(
    store: Store,
    *,
    shacl: bool = True,
    integrity: Iterable[str] | None = None,
    shacl_mode: str = "fast",
    shapes_path: str | None = None,
) -> CheckReport:
    """Run SHACL and the integrity queries over ``store``.

    Args:
        store: the store to check.
        shacl: run the SHACL shapes.
        integrity: integrity query names to run (default: all of :data:`INTEGRITY_CHECKS`).
        shacl_mode: ``fast`` or ``full`` (see :mod:`hcgraph.shacl`).
        shapes_path: a shapes file to use instead of the packaged ``shapes.ttl``.

    Raises:
        CheckError: the shapes cannot be loaded or validation fails to run.
    """
    report = CheckReport(stories=len(store.story_graphs()))
    findings: list[Finding] = []
    if shacl:
        started = time.perf_counter()
        results, report.shacl_graphs_validated = validate_shapes(
            store, load_shapes(shapes_path), mode=shacl_mode
        )
        findings.extend(_shacl_finding(r) for r in results)
        report.seconds["shacl"] = time.perf_counter() - started
    names = list(INTEGRITY_CHECKS) if integrity is None else list(integrity)
    unknown = [n for n in names if n not in INTEGRITY_CHECKS]
    if unknown:
        known = ", ".join(INTEGRITY_CHECKS)
        raise CheckError(f"unknown integrity check {unknown[0]!r}; known: {known}")
    for name in names:
        severity, describe = INTEGRITY_CHECKS[name]
        started = time.perf_counter()
        for row in run_query(store, name).records():
            focus, message = describe(row)
            findings.append(Finding(str(row["story"]), name, severity, str(focus), message))
        report.seconds[name] = time.perf_counter() - started
    report.findings = sorted(set(findings), key=lambda f: (f.story, f.check, f.focus, f.message))
    return report
