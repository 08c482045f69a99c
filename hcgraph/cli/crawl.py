"""``hcgraph crawl``: follow stories and their related links over HTTP into the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..crawling import CrawlOptions, CrawlProgress, CrawlReport, FetchPolicy, crawl
from ..crawling.discovery import DEFAULT_STORY_PATTERN, parse_follow
from ..errors import failure_text
from ._common import (
    err_console,
    flag_option,
    float_option,
    int_option,
    max_bytes_option,
    out_console,
    shown,
    store_option,
)

_SHOWN_FAILURES = 20


@click.command()
@click.argument("seeds", nargs=-1, required=True)
@int_option("--depth", 2, "Follow related links up to N hops from a seed (seed = 0).", at_least=0)
@int_option("--max-stories", None, "Stop after N stories are stored.", at_least=1)
@int_option("--concurrency", 8, "Requests in flight overall.", at_least=1)
@int_option("--per-host", None, "Requests in flight per host (default: --concurrency).", at_least=1)
@float_option("--rate", None, "Requests per second per host (default: no limit).", positive=True)
@click.option(
    "--allow-host", "allow_hosts", multiple=True, metavar="HOST",
    help="Also follow links to HOST (repeatable). Default: the seeds' hosts only.",
)  # fmt: skip
@click.option(
    "--mirror", "mirrors", multiple=True, metavar="ORIGIN=MIRROR",
    help="Fetch ORIGIN's URLs from MIRROR; IRIs stay ORIGIN's (repeatable).",
)  # fmt: skip
@click.option("--ignore-robots", is_flag=True, help="Do not read robots.txt (your own mirror).")
@int_option("--retries", 3, "Retries on connection errors, timeouts, 408, 429 and 5xx.", at_least=0)
@float_option("--timeout", 30.0, "Seconds for one request, connect to last byte.", positive=True)
@max_bytes_option("Body size cap; larger responses are aborted.")
@click.option(
    "--json-suffix", default="index.json", show_default=True,
    help="A story page URL + this = its JSON URL.",
)  # fmt: skip
@click.option(
    "--contact", default=None, metavar="EMAIL|URL",
    help="Added to the User-Agent so site owners can reach you.",
)  # fmt: skip
@flag_option("--no-conditional", "Do not send If-None-Match/If-Modified-Since from earlier crawls.")
@click.option(
    "--follow", default="related", show_default=True, metavar="KINDS",
    help="What a story's links lead to, comma-separated: related, edition, newsroom, sitemap.",
)  # fmt: skip
@click.option(
    "--story-pattern", default=DEFAULT_STORY_PATTERN, show_default=True, metavar="REGEX",
    help="Links of index pages and sitemaps whose path matches this are stories.",
)  # fmt: skip
@click.option(
    "--report", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="JSON crawl report (default: STORE/crawl-report.json).",
)  # fmt: skip
@store_option
def crawl_command(
    seeds: tuple[str, ...],
    retries: int,
    timeout: float,
    max_bytes: int,
    no_conditional: bool,
    follow: str,
    store_dir: Path,
    **options: Any,  # the rest: CrawlOptions' fields, named alike
) -> None:
    """Crawl stories from SEED URLs breadth-first over their related links.

    SEEDs are story pages, their index.json, or local story files; what is found goes into
    the store. A seed may also be an index page (an edition, a newsroom: its story links
    are crawled), a sitemap (.xml, .xml.gz) or a robots.txt (its Sitemap: lines).

    Every body is kept in the raw archive (STORE/archive) before it is parsed. Interrupt
    it (Ctrl-C, SIGTERM, even SIGKILL) and run the same command again to resume; run it
    again after it finished to re-crawl with conditional requests.

    Free disk space is checked before each batch goes to the store, as ingest does: a
    crawl that would leave less than HCGRAPH_DISK_RESERVE bytes free stops (resumable).
    A crawl that completes compacts the store when it wrote a tenth or more of it.

    Exit codes: 0 all succeeded; 3 some URLs failed (listed in the report, the rest is
    stored); 1 user error; 130 interrupted (resumable).

    \b
    Example:
      hcgraph crawl https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/ \\
          --depth 2 --contact you@example.org
      hcgraph crawl https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/ \\
          --mirror https://hangingcontext.com=http://127.0.0.1:8000 --ignore-robots
    """
    opts = CrawlOptions(
        conditional=not no_conditional,
        policy=FetchPolicy(timeout=timeout, retries=retries, max_bytes=max_bytes),
        follow=parse_follow(follow),
        **options,
    )
    progress = Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
        console=err_console, disable=not err_console.is_terminal, transient=True,
    )  # fmt: skip
    task = progress.add_task("starting")

    def show(p: CrawlProgress) -> None:
        progress.update(
            task,
            description=f"fetched {p.fetched} · stored {p.stored} · queued {p.queued} · "
            f"failed {p.failed} · {p.rate:.0f} stories/s",
        )

    with progress:
        report = crawl(list(seeds), store_dir, opts, handle_signals=True, on_progress=show)
    print_report(report)
    raise SystemExit(report.exit_code)


# What the URLs left in the frontier are: a finished run left them by --max-stories, an
# interrupted one has not got to them yet.
_LEFT = {"complete": "not fetched (--max-stories)", "interrupted": "not fetched yet (resume)"}


def print_report(report: CrawlReport) -> None:
    """The summary table on stdout; failures (the first few) on stderr."""
    c = report.counts
    table = Table(title="crawl " + report.status + (" (resumed)" if report.resumed else ""),
                  show_header=False, title_justify="left")  # fmt: skip
    table.add_column(justify="left")
    table.add_column(justify="right")
    rows: list[tuple[str, int | str]] = [
        ("stories stored", c["stories"]), ("  added", c["added"]), ("  replaced", c["replaced"]),
        ("  unchanged", c["unchanged"]), ("  not modified (304)", c["not_modified"]),
        ("withdrawn (404/410, kept, marked)", c["withdrawn"]),
        ("duplicates (same story, other URL)", c["duplicates"]), ("failed", c["failed"]),
        ("skipped (off-site, robots.txt)", c["skipped"]), (_LEFT.get(report.status, "not fetched"),
        c["not_fetched"]), ("HTTP requests", c["requests"]),
    ]  # fmt: skip
    if report.found_by:
        found = ", ".join(f"{k} {n}" for k, n in report.found_by.items())
        rows.insert(5, ("  found by", found))
    if report.index_pages:
        rows.insert(-1, ("index pages and sitemaps read", len(report.index_pages)))
    for label, value in rows:
        table.add_row(label, str(value))
    table.add_row("time", f"{report.elapsed_seconds:.1f} s ({report.rate:.0f} stories/s)")
    out_console.print(table)
    for failure in report.failures[:_SHOWN_FAILURES]:
        status = f" [{failure['status']}]" if failure.get("status") else ""
        # Each problem with its own JSON path, as ingest prints them.
        reason = failure_text(failure.get("json_path"), failure["reason"])
        # URL and reason come from the sites crawled (headers, bodies, links): escaped, so
        # a server cannot send escape sequences to this terminal.
        url = failure["url"]
        err_console.print(f"[red]failed:[/] {shown(url)}{status}: {shown(reason)}")
    if len(report.failures) > _SHOWN_FAILURES:
        err_console.print(f"… and {len(report.failures) - _SHOWN_FAILURES} more failures")
    out_console.print(f"report: {shown(report.report_path)}")
    if report.status == "interrupted":
        err_console.print("interrupted: run the same command again to resume")
