"""``hcgraph check``: SHACL structure plus the integrity queries, as one report per story.

:func:`check` runs the SHACL shapes (:mod:`hcgraph.shacl`) and the saved integrity queries
(:data:`INTEGRITY_CHECKS`); findings about shared things are filed under their shared graph.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from .errors import CheckError
from .queries import run_query
from .shacl import ShaclResult, candidates, candidates_at, load_shapes
from .shacl import validate as validate_shapes
from .store import Store
from .vocab import GRAPH

__all__ = ["INTEGRITY_CHECKS", "CheckReport", "Finding", "check"]


@dataclass(frozen=True)
class Finding:
    """One problem found in one story (``story``: its IRI, or a shared graph's for a shared
    thing), by ``check`` (``shacl`` or an integrity query's name), about ``focus`` (the node
    at fault, an IRI or id); ``severity`` is ``violation`` or ``warning``."""

    story: str
    check: str
    severity: str
    focus: str
    message: str


Describe = Callable[[dict[str, Any]], tuple[str, str]]


def _template(focus: str, text: str) -> Describe:
    """A row → (``focus`` column, ``text`` formatted with the row; unbound reads as empty)."""

    def describe(row: dict[str, Any]) -> tuple[str, str]:
        values = {k: "" if v is None else v for k, v in row.items()}
        return values[focus], text.format_map(values)

    return describe


_DANGLING = {
    "cited-unlisted": _template("manifest_id", "cites manifest {manifest_id}, which manifests[] "
                                "does not list"),
    "listed-uncited": _template("manifest_id", "lists manifest {manifest_id} but never cites it"),
    "claim-conflict": _template("claim_id", "cites claim {claim_id} under manifest {manifest_id}; "
                                "{detail}"),
}  # fmt: skip


def _dangling(row: dict[str, Any]) -> tuple[str, str]:
    focus, message = _DANGLING[row["problem"]](row)
    return focus, message.rstrip("; ")


#: Integrity query name → (severity, row → (focus, message)).
INTEGRITY_CHECKS: dict[str, tuple[str, Describe]] = {
    "uncited-paragraphs": (
        "violation", _template("paragraph", "paragraph {section}.{position} cites nothing")),
    "unsupported-key-facts": ("violation", _template("key_fact",
        "key fact {position} cites claims no paragraph cites: {unsupported_claim_ids}")),
    "dangling-citations": ("violation", _dangling),
    "declared-vs-derived": ("violation", _template("field",
        "declared {field} [{declared}] but the content says [{derived}]")),
    "related-not-ingested": (
        "warning", _template("related", "related story {related} is not in the graph")),
    "manifest-conflicts": ("violation", _template("manifest",
        "stories give manifest {manifest_id} {count} different {property}s: {values}")),
    "duplicate-ids": ("violation", _template("id", "id {id} is also the id of {other}")),
    "unsupported-paragraphs": ("violation", _template("passage",
        "does not say what claim {claim_id} says ({reason}): {detail}")),
    "reply-conflicts": ("violation", _template("manifest",
        "manifest {manifest_id}'s reply states its {property} as {stated!r}, a story lists "
        "{listed!r}")),
}  # fmt: skip


@dataclass
class CheckReport:
    """The outcome of :func:`check`: findings sorted by story, check, focus; the graphs
    pySHACL validated; wall seconds per part (``shacl`` and each integrity query)."""

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

    def stories_with_findings(self) -> int:
        """How many story graphs (not shared graphs) have a finding."""
        return len(self.by_story()) - self.shared_graphs_with_findings()

    def shared_graphs_with_findings(self) -> int:
        """How many shared graphs (``graph/sources``, ``graph/publishers``…) have a finding."""
        return sum(1 for name in self.by_story() if name.startswith(str(GRAPH)))

    def counts(self) -> dict[str, dict[str, int]]:
        """check name → severity → number of findings."""
        out: dict[str, Counter[str]] = defaultdict(Counter)
        for f in self.findings:
            out[f.check][f.severity] += 1
        return {check: dict(out[check]) for check in sorted(out)}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: summary, then findings grouped by story."""
        return {
            "ok": self.ok,
            "stories": self.stories,
            "stories_with_findings": self.stories_with_findings(),
            "shared_graphs_with_findings": self.shared_graphs_with_findings(),
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


#: The SHACL pre-selection is dealt into ``SHARES`` parts: ``WORKERS`` processes take all
#: but ``LOCAL_SHARE`` of them while this one runs the integrity queries.
WORKERS = 1
SHARES = 4
LOCAL_SHARE = 1


@contextmanager
def _workers(store: Store, shapes_path: str | None, wanted: bool) -> Iterator[list[Any]]:
    """The SHACL pre-selection's worker shares, run beside the integrity queries (Oxigraph
    holds the GIL); none for an in-memory store, when not ``wanted`` or none can start."""
    pool: Any = None
    futures: list[Any] = []
    if wanted and store.directory is not None:
        try:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            pool = ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("spawn"))
            futures = [
                pool.submit(candidates_at, str(store.directory), shapes_path, (i, SHARES))
                for i in range(SHARES - LOCAL_SHARE)
            ]
        except (OSError, RuntimeError):
            futures = []
    try:
        yield futures
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _preselect(store: Store, shapes: Any, futures: list[Any]) -> tuple[dict[str, set[str]], bool]:
    """The SHACL pre-selection, the rest of it here (all of it without workers, or when one
    broke), and whether the workers did their shares."""
    if not futures:
        return candidates(store, shapes), False
    parts = [candidates(store, shapes, (i, SHARES)) for i in range(SHARES - LOCAL_SHARE, SHARES)]
    try:
        parts += [future.result() for future in futures]
    except Exception:  # a broken worker: pre-select here instead
        return candidates(store, shapes), False
    merged: dict[str, set[str]] = {}
    for part in parts:
        for graph, focus in part.items():
            merged.setdefault(graph, set()).update(focus)
    return merged, True


def check(
    store: Store,
    *,
    shacl: bool = True,
    integrity: Iterable[str] | None = None,
    shacl_mode: str = "fast",
    shapes_path: str | None = None,
    include_withdrawn: bool = False,
) -> CheckReport:
    """Run SHACL (``shacl_mode`` ``fast`` or ``full``, :mod:`hcgraph.shacl`; the shapes of
    ``shapes_path`` or the packaged ones) and the ``integrity`` queries (default: all of
    :data:`INTEGRITY_CHECKS`) over ``store``, withdrawn stories left out unless
    ``include_withdrawn``.

    Raises:
        CheckError: the shapes cannot be loaded or validation fails to run.
    """
    withdrawn = set() if include_withdrawn else set(store.withdrawn_stories())
    report = CheckReport(stories=len(store.story_graphs()) - len(withdrawn))
    names = _check_names(integrity)
    shapes = load_shapes(shapes_path) if shacl else None
    started = time.perf_counter()
    findings: list[Finding] = []
    fast = shapes is not None and shacl_mode == "fast"
    preselected, parallel = None, False
    with _workers(store, shapes_path, fast) as futures:
        for name in names:
            findings += _integrity(store, name, report, include_withdrawn)
        if fast:
            preselected, parallel = _preselect(store, shapes, futures)
    if shapes is not None:
        results, report.shacl_graphs_validated = validate_shapes(
            store, shapes, mode=shacl_mode, preselected=preselected
        )
        findings.extend(_shacl_finding(r) for r in results if r.story not in withdrawn)
        # wall time of SHACL, overlapping the integrity queries when pre-selected in parallel
        overlap = 0.0 if parallel else sum(report.seconds.values())
        report.seconds["shacl"] = time.perf_counter() - started - overlap
    report.findings = sorted(set(findings), key=lambda f: (f.story, f.check, f.focus, f.message))
    return report


def _check_names(integrity: Iterable[str] | None) -> list[str]:
    names = list(INTEGRITY_CHECKS) if integrity is None else list(integrity)
    unknown = [n for n in names if n not in INTEGRITY_CHECKS]
    if unknown:
        known = ", ".join(INTEGRITY_CHECKS)
        raise CheckError(f"unknown integrity check {unknown[0]!r}; known: {known}")
    return names


def _integrity(
    store: Store, name: str, report: CheckReport, include_withdrawn: bool
) -> list[Finding]:
    """The findings of one integrity query (its time into ``report.seconds``)."""
    severity, describe = INTEGRITY_CHECKS[name]
    began = time.perf_counter()
    findings = []
    for row in run_query(store, name, include_withdrawn=include_withdrawn).records():
        focus, message = describe(row)
        where = row.get("story") or row.get("graph")
        findings.append(Finding(str(where), name, severity, str(focus), message))
    report.seconds[name] = time.perf_counter() - began
    return findings
