"""``hcgraph ingest``: story JSON files or directories into the store."""

from __future__ import annotations

from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from ..errors import failure_text, problem_lines
from ..ingest import Failure, IngestReport, check_paths, discover, ingest_paths
from ..store import Store
from ._common import err_console, max_bytes_option, out_console, shown, store_option


def _show_failure(failure: Failure) -> None:
    """A failure's lines on stderr, as it happens: every problem, each with its JSON path."""
    lines = problem_lines(failure.problems) or [failure_text(failure.json_path, failure.reason)]
    for line in lines:
        err_console.print(f"[red]failed:[/] {shown(failure.source)}: {shown(line)}")


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@max_bytes_option("Largest story file read; larger files fail (as crawl --max-bytes).")
@click.option(
    "--replace", is_flag=True, help="Let a file replace a story that was crawled from its URL."
)
@click.option(
    "--absolute-paths",
    is_flag=True,
    help="Record each file's absolute path in the graph (default: its path relative to the "
    "directory given, or its name), which then travels into every export and push.",
)
@store_option
def ingest(
    paths: tuple[Path, ...], store_dir: Path, max_bytes: int, replace: bool, absolute_paths: bool
) -> None:
    """Ingest story JSON files (or directories of them) into the store.

    A file that is not a valid story is reported with its path and JSON path and skipped;
    the rest are ingested. Re-ingesting identical bytes changes nothing; changed bytes
    replace the story's graph and record the revision, except that a story crawled from its
    URL is replaced by a file only with --replace. Exit code 3 if any file failed; exit
    code 1, before the store is touched, if a path given does not exist.

    Free disk space is checked before each batch: a batch that would leave less than
    HCGRAPH_DISK_RESERVE bytes (256 MiB) free stops the run (exit code 1), keeping what
    is stored. A run that wrote a tenth or more of the store ends by compacting it, so
    queries run at full speed.

    \b
    Example:
      hcgraph ingest stories/ extra/one-story.json --store output/store
    """
    check_paths(paths)  # a typo is a user error, refused before the store is created
    present = list(paths)
    # The paths go to ingest_paths as given, so each file's location is recorded relative to
    # the directory it was found under; the bar's total costs a second walk, only when shown.
    bar = err_console.is_terminal
    total = sum(1 for _ in discover(present)) if bar else None
    with Store(store_dir) as store:
        progress = Progress(
            TextColumn("ingest"), BarColumn(), MofNCompleteColumn(),
            console=err_console, disable=not bar, transient=True,
        )  # fmt: skip
        with progress:
            task = progress.add_task("ingest", total=total)
            report = ingest_paths(
                store,
                present,
                on_progress=lambda n: progress.advance(task, n),
                max_bytes=max_bytes,
                replace=replace,
                absolute_paths=absolute_paths,
                # counts only (flat memory at any size); each failure shown as it happens
                report=IngestReport(keep_results=False, on_failure=_show_failure),
            )
    for r in report.repeats:
        err_console.print(
            f"[yellow]warning:[/] {shown(r.source)}: same url {shown(r.story_url or '')} as "
            f"{shown(r.repeat_of or '')} earlier in this run; the later file replaced it"
        )
    for r in report.id_clashes:
        err_console.print(
            f"[yellow]warning:[/] {shown(r.source)}: id {shown(r.story_id or '')} of "
            f"{shown(r.story_url or '')} is also the id of {shown(r.id_clash or '')}; "
            "both are stored (hcgraph check flags them)"
        )
    dupes = ""
    if report.repeats or report.id_clashes:
        dupes = f", {len(report.repeats)} repeated url, {len(report.id_clashes)} duplicate id"
    out_console.print(
        f"ingested {report.stored} stories "
        f"({report.count('added')} added, {report.count('replaced')} replaced, "
        f"{report.count('unchanged')} unchanged{dupes}), "
        f"{len(report.failures)} failed -> {shown(store_dir)}"
    )
    if report.failures:
        raise SystemExit(3)
