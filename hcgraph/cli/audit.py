"""``hcgraph audit``: does each story keep its disclosure promises?"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..provenance.auditing import AuditOptions, audit, render_markdown, render_summary
from ..provenance.report_html import write_report
from ..provenance.scope import MAX_REPEAT_WINDOW, MAX_SOURCE_AGE
from ..store import Store
from ._common import err_console, file_option, flag_option, out_console, store_option, width_option


@click.command("audit")
@click.argument("stories", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["table", "json", "md"]), default="table",
              show_default=True)  # fmt: skip
@file_option("--html", help="Also write a self-contained offline HTML report here.")
@click.option("--max-source-age", type=click.IntRange(min=0, max=MAX_SOURCE_AGE), default=30,
              show_default=True, help="Days a source may predate its story.")  # fmt: skip
@click.option("--repeat-window", type=click.IntRange(min=0, max=MAX_REPEAT_WINDOW), default=7,
              show_default=True,  # the maximum shows in --help: [default: 7; 0<=x<=36500]
              help="Days within which two stories with near-identical sources repeat.")  # fmt: skip
@click.option("--repeat-threshold", type=click.FloatRange(0, 1, min_open=True), default=0.8,
              show_default=True,
              help="Jaccard of cited manifests that counts as a repeat.")  # fmt: skip
@flag_option("--include-withdrawn", "With no STORY given, audit withdrawn stories too.")
@width_option
@store_option
def audit_command(
    stories: tuple[str, ...], fmt: str, html: Path | None, store_dir: Path, **options: Any
) -> None:
    """Check stories (default: all current ones) against the promises of their disclosure.

    Every cited manifest exists (is listed); sources are recent (--max-source-age) and not
    dated after the story; claim ids belong to one manifest; the story does not repeat a
    recent story (--repeat-window, --repeat-threshold); each paragraph cites a claim; the
    declared publishers, source_count and cited_manifest_ids are true; the trust label fits.
    Exit code 1 when any story breaks a promise, 0 otherwise.

    \b
    Example:
      hcgraph audit --html output/audit.html
      hcgraph audit 'https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/'
    """
    with Store(store_dir, read_only=True) as store:  # options: AuditOptions' fields, named alike
        report = audit(store, list(stories) or None, AuditOptions(**options))
    if fmt == "json":
        click.echo(report.to_json())
    elif fmt == "md":
        click.echo(render_markdown(report), nl=False)
    else:
        for item in render_summary(report):
            out_console.print(item)
    if html is not None:
        write_report(report, html)
        err_console.print(f"wrote audit report -> {html}", markup=False)
    if report.exit_code:
        raise SystemExit(report.exit_code)
