"""``hcgraph ingest``: story JSON files or directories into the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from ..ingest import IngestReport, check_paths, discover, ingest_paths, withdraw_stories
from ..store import Store
from ._common import err_console, flag_option, max_bytes_option, print_lines, store_option


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@max_bytes_option("Largest story file read; larger files fail (as crawl --max-bytes).")
@flag_option("--replace", "Let a file replace a story that was crawled from its URL.")
@flag_option(
    "--absolute-paths",
    "Record each file's absolute path in the graph (default: its path relative to the "
    "directory given, or its name), which then travels into every export and push.",
)
@click.option(
    "--withdraw",
    "withdraw",
    multiple=True,
    metavar="URL",
    help="Mark the stored story at URL withdrawn (as a crawl does on a 404/410); its graph "
    "is kept (repeatable).",
)
@store_option
def ingest(
    paths: tuple[Path, ...], store_dir: Path, withdraw: tuple[str, ...], **options: Any
) -> None:
    """Ingest story JSON files (or directories of them) into the store.

    A file that is not a valid story is reported with its path and JSON path and skipped;
    the rest are ingested. Re-ingesting identical bytes changes nothing; changed bytes
    replace the story's graph and record the revision, except that a story crawled from its
    URL is replaced by a file only with --replace. Exit code 3 if any file failed; exit
    code 1, before the store is touched, if a path given does not exist.

    --withdraw URL marks a stored story withdrawn (prov:invalidatedAtTime): queries, check,
    audit, maps and stats then leave it out unless --include-withdrawn; ingesting it again
    makes it current again.

    Free disk space is checked before each batch: a batch that would leave less than
    HCGRAPH_DISK_RESERVE bytes (256 MiB) free stops the run (exit code 1), keeping what
    is stored. A run that wrote a tenth or more of the store ends by compacting it, so
    queries run at full speed.

    \b
    Example:
      hcgraph ingest stories/ extra/one-story.json --store output/store
      hcgraph ingest --withdraw https://example.org/stories/gone/
    """
    if not paths and not withdraw:  # nothing to do: a usage error (exit 2), as click's own
        raise click.UsageError("give story files or directories, or --withdraw URL")
    check_paths(paths)  # a typo is a user error, refused before the store is created
    # The paths go to ingest_paths as given, so each file's location is recorded relative to
    # the directory it was found under; the bar's total costs a second walk, only when shown.
    bar = err_console.is_terminal
    total = sum(1 for _ in discover(paths)) if bar else None
    with Store(store_dir) as store:
        progress = Progress(
            TextColumn("ingest"), BarColumn(), MofNCompleteColumn(),
            console=err_console, disable=not bar, transient=True,
        )  # fmt: skip
        with progress:
            task = progress.add_task("ingest", total=total)
            report = ingest_paths(
                store,
                paths,
                on_progress=lambda n: progress.advance(task, n),
                **options,  # --max-bytes, --replace, --absolute-paths: named as ingest_paths'
                # counts only (flat memory at any size); each failure shown as it happens
                report=IngestReport(
                    keep_results=False, on_failure=lambda failure: print_lines(failure.render())
                ),
            )
        if withdraw:  # after the files: a file and a withdrawal of its story, both given
            withdraw_stories(store, withdraw, report=report)
    print_lines(report.render(str(store_dir), withdrew=bool(withdraw)))
    if report.failures:
        raise SystemExit(3)
