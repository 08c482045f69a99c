"""``hcgraph archive``: the raw archive in formats other tools read (``archive export``)."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import dir_option, err_console, file_option, out_console, shown, store_option


@click.group()
def archive() -> None:
    """Hand the raw archive to web-archive tools: export it as a WACZ of WARC records.

    \b
    Example:
      hcgraph archive export --wacz crawl.wacz --store output/store
    """


@archive.command("export")
@file_option(
    "--wacz", "out", required=True, help="WACZ file to write (replaced whole if it exists)."
)
@dir_option(
    "--archive", "archive_dir", exists=True, help="Raw archive to export (default: STORE/archive)."
)
@store_option
def export_command(out: Path, archive_dir: Path | None, store_dir: Path) -> None:
    """Write the raw archive as a WACZ file (WARC 1.1 records, CDXJ index, page list).

    Each fetch is a response record (a revisit when an earlier response of the URL holds
    the same body, or for a 304), a request record, and a metadata record with hcgraph's
    own fetch record, so `hcgraph rebuild --from FILE.wacz` gives back the same graph.
    pywb, ReplayWeb.page and `wacz validate` read the file. It only reads the archive: a
    crawl may run meanwhile (what it fetches after the export starts may be left out).

    \b
    Example:
      hcgraph archive export --wacz crawl.wacz --store output/store
      hcgraph rebuild --from crawl.wacz --store output/restored
    """
    from ..webarchive import export_wacz

    report = export_wacz(out, store_dir, archive_dir)
    warc = report.warc
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(warc.records.items()))
    out_console.print(
        f"exported {warc.fetches} fetches ({kinds}; {len(warc.pages)} pages) -> "
        f"{shown(report.path)} ({report.size:,} bytes)"
    )
    for url in warc.unreadable:
        err_console.print(f"[red]unreadable body:[/] {shown(url)}: kept as a metadata record")
    raise SystemExit(3 if warc.unreadable else 0)
