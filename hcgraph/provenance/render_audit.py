"""Terminal and Markdown views of an :class:`~hcgraph.provenance.auditing.AuditReport`."""

from __future__ import annotations

from typing import Any

from ..errors import visible
from ..mdtext import md_text, md_url
from .auditing import CHECKS, AuditReport

__all__ = ["render_markdown", "render_summary", "support_line"]


def _tally(report: AuditReport) -> str:
    """ "K of N stories keep every promise; F findings in M stories"."""
    failing = len(report.failing)
    return (
        f"{len(report.stories) - failing} of {len(report.stories)} stories keep every "
        f"promise; {len(report.findings)} findings in {failing} stories"
    )


def support_line(report: AuditReport) -> str:
    """One line of support verdicts over the stories audited."""
    total: dict[str, int] = {}
    for s in report.stories:
        for key, n in s.support.items():
            total[key] = total.get(key, 0) + n
    parts = [f"{total.get(k, 0)} {k}" for k in ("supported", "unsupported", "not-checkable")]
    unchecked = total.get("unchecked", 0)
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
