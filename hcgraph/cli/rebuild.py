"""``hcgraph rebuild``: recreate the graph from the raw archive, no network."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import failure_text
from ..rebuilding import rebuild as run_rebuild
from ._common import dir_option, err_console, file_option, out_console, shown, store_option


@click.command()
@dir_option(
    "--archive", "archive_dir", exists=True,
    help="Raw archive to rebuild from (default: STORE/archive).",
)  # fmt: skip
@file_option(
    "--from", "wacz", exists=True,
    help="WACZ file to rebuild from (written by 'hcgraph archive export') instead of a raw "
    "archive directory.",
)  # fmt: skip
@click.option(
    "--drop-unarchived",
    is_flag=True,
    help="Rebuild even if the store holds stories the archive does not: a story only a local "
    "file holds is left out; a crawled story a local file replaced goes back to its crawled "
    "version.",
)
@store_option
def rebuild(
    archive_dir: Path | None, wacz: Path | None, drop_unarchived: bool, store_dir: Path
) -> None:
    """Rebuild the store's graph from the raw archive the crawler kept.

    No network is used.

    Bodies are replayed in fetch order through the same parse and mapping as a crawl, so
    the graph is the one a crawl would build with today's mapping (revisions and
    withdrawals included). With --from FILE.wacz, the fetches come from a WACZ that
    'hcgraph archive export' wrote (or any WACZ: then each response is one fetch).
    The old graph is replaced only when the new one is complete. Stories ingested from
    local files are not in the archive: if the store holds any, rebuild refuses and names
    them (exit code 1), unless --drop-unarchived. Exit code 3 if some
    archived 200 responses are not valid stories (the crawl reported them too), or if
    some archived bodies cannot be read back (damaged on disk: each is named, and skipped).

    \b
    Example:
      hcgraph rebuild --store output/store
      hcgraph rebuild --archive backup/archive --store output/fresh-store
      hcgraph rebuild --from crawl.wacz --store output/fresh-store
    """
    if wacz is not None and archive_dir is not None:
        raise click.UsageError("--from and --archive are two sources: give one")
    if wacz is not None:
        from ..webarchive import rebuild_from_wacz

        report = rebuild_from_wacz(
            store_dir, wacz, keep_outcomes=False, drop_unarchived=drop_unarchived
        )
    else:
        report = run_rebuild(
            store_dir, archive_dir, keep_outcomes=False, drop_unarchived=drop_unarchived
        )
    for failure in report.failures:
        reason = failure_text(failure.json_path, failure.reason)
        err_console.print(f"[red]not a story:[/] {shown(failure.source)}: {shown(reason)}")
    for failure in report.unreadable:
        err_console.print(
            f"[red]unreadable body:[/] {shown(failure.source)}: {shown(failure.reason)}"
        )
    unreadable = f", {len(report.unreadable)} unreadable" if report.unreadable else ""
    withdrawn = f", {report.withdrawn} withdrawn" if report.withdrawn else ""
    out_console.print(
        f"rebuilt {report.stories} stories{withdrawn} from {report.records} archived fetches "
        f"({report.bodies} distinct bodies, {len(report.failures)} not stories{unreadable}) "
        f"-> {shown(store_dir)}"
    )
    raise SystemExit(report.exit_code)
