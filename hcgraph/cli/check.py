"""``hcgraph check``: SHACL + integrity checks; exit 1 when a violation is found."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import click

from ..checking import INTEGRITY_CHECKS, CheckReport
from ..checking import check as run_check
from ..deepcheck import deep_check
from ..errors import one_line
from ..shacl import MODES
from ._common import (
    file_option,
    flag_option,
    int_option,
    on_store,
    query_memory_option,
    run_limited_on_store,
    store_option,
)


def render_text(report: CheckReport, *, max_per_story: int = 0) -> str:
    """The readable report: each story's heading and findings (at most ``max_per_story``
    when it is positive), then a summary."""
    lines: list[str] = []
    for story, findings in report.by_story().items():
        bad = sum(1 for f in findings if f.severity == "violation")
        lines.append(f"{one_line(story)}  ({bad} violations, {len(findings) - bad} warnings)")
        shown = findings if max_per_story <= 0 else findings[:max_per_story]
        for f in shown:
            lines.append(f"  {f.severity:<9}  {f.check:<21}  {one_line(f.message)}")
            if f.focus and f.focus not in f.message:
                lines.append(f"  {'':9}  {'':21}  at {one_line(f.focus)}")
        if len(shown) < len(findings):
            lines.append(f"  … {len(findings) - len(shown)} more (use --format json for all)")
        lines.append("")
    lines.append(_summary(report))
    return "\n".join(lines) + "\n"


def _summary(report: CheckReport) -> str:
    """The verdict line: stories checked, with findings, and the counts per check."""
    per_check = ", ".join(
        f"{name}: {sum(counts.values())}" for name, counts in report.counts().items()
    )
    verdict = "OK" if report.ok else "FAILED"
    shared = report.shared_graphs_with_findings()  # not stories: counted apart
    return (
        f"{verdict}: {report.stories} stories checked, {report.stories_with_findings()} with"
        " findings"
        + (f" (and findings in {shared} shared graph{'s' * (shared != 1)})" if shared else "")
        + f"; {report.violations} violations, {report.warnings} warnings"
        + (f" ({per_check})" if per_check else "")
    )


@click.command()
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
    help="text: grouped by story, for people; json: for tools.",
)  # fmt: skip
@click.option(
    "--shacl", "shacl_mode", type=click.Choice([*MODES, "off"]), default="fast",
    show_default=True,
    help="fast: pySHACL on focus nodes Oxigraph pre-selects; full: pySHACL on every story graph.",
)  # fmt: skip
@click.option(
    "--only", "only", multiple=True, type=click.Choice(list(INTEGRITY_CHECKS)),
    help="Run only these integrity queries (repeatable; default: all).",
)  # fmt: skip
@file_option("--shapes", "shapes_path", exists=True,
             help="A SHACL shapes file instead of the packaged shapes.ttl.")  # fmt: skip
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@click.option(
    "--deep", is_flag=True,
    help="First read every index of the database, so a damaged table is named (exit 1)"
    " before anything serves it; slow: about six full reads of the store.",
)  # fmt: skip
@int_option("--max-per-story", 20, "Findings shown per story in text output (0: all).", at_least=0)
@flag_option("--include-withdrawn", "Check withdrawn stories too (default: current stories only).")
@query_memory_option
@store_option
def check(
    fmt: str,
    shacl_mode: str,
    only: tuple[str, ...],
    shapes_path: Path | None,
    strict: bool,
    deep: bool,
    max_per_story: int,
    include_withdrawn: bool,
    query_memory: int | None,
    store_dir: Path,
) -> None:
    """Validate the store: SHACL shapes plus the integrity queries.

    SHACL shapes check the structure of every graph; the integrity queries find uncited
    paragraphs, unsupported key facts, dangling citations, declared-vs-derived fields and
    related stories not ingested.

    Exit code 0 when clean (warnings allowed), 1 when a violation is found: usable in CI.

    --include-withdrawn checks withdrawn stories too (their URL answered 404/410): by
    default they are left out.

    --deep first reads every index of the database (each quad through each of Oxigraph's
    indexes, every block checked against its checksum): a damaged table is named in one
    line, with what to do (rebuild from the raw archive, or ingest again), and the exit
    code is 1.

    \b
    Example:
      hcgraph check
      hcgraph check --deep --shacl off
      hcgraph check --format json > check.json
      hcgraph check --shacl full --strict
    """
    if deep:
        click.echo(on_store(deep_check, store_dir).summary(), err=True)
    checked = functools.partial(
        run_check,
        shacl=shacl_mode != "off",
        integrity=list(only) or None,
        shacl_mode=shacl_mode if shacl_mode != "off" else "fast",
        shapes_path=str(shapes_path) if shapes_path else None,
        include_withdrawn=include_withdrawn,
    )
    # A damaged table can make a light query allocate without end: the memory limit turns
    # that into one line. The check starts worker processes of its own: not a daemon.
    report: CheckReport = run_limited_on_store(
        checked, store_dir, name="check", query_memory=query_memory, daemon=False
    )
    if fmt == "json":
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_text(report, max_per_story=max_per_story))
    sys.stdout.flush()
    failed = not report.ok or (strict and report.warnings > 0)
    click.get_current_context().exit(1 if failed else 0)
