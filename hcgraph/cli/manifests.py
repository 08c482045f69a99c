"""``hcgraph manifests``: read the manifests the stories cite, and check the stories by them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..claims.fetching import FetchOptions
from ..claims.pulling import pull_manifests
from ..claims.reply import DEFAULT_API, DEFAULT_KEY_ENV
from ..claims.verdicts import check_support
from ..store import Store
from ._common import FiniteFloat, err_console, out_console, store_option


@click.group("manifests")
def manifests() -> None:
    """Read the cited manifests' claims and check each paragraph against them.

    \b
    Example:
      SYNORB_KEY=... hcgraph manifests fetch --max 25
      hcgraph manifests fetch --dir replies/     # saved replies, one ID.json each: offline
      hcgraph manifests check
    """


@manifests.command("fetch")
@click.option("--api", default=DEFAULT_API, show_default=True,
              help="The manifest API: a base URL (…/manifests/by-id/ID is added) or a URL "
                   "template holding {manifest_id}.")  # fmt: skip
@click.option("--key-env", default=DEFAULT_KEY_ENV, show_default=True, metavar="NAME",
              help="The environment variable holding the API key (the key itself is never "
                   "taken from a flag, nor written anywhere).")  # fmt: skip
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              help="Read saved replies (DIR/ID.json, as curl would save them) instead of "
                   "fetching: fully offline.")  # fmt: skip
@click.option("--max", "max_fetch", type=click.IntRange(min=0), default=None,
              help="Request at most N manifests this run (the 72-hour demo key pulls 25); "
                   "the most-cited go first and the rest are reported as left.")  # fmt: skip
@click.option("--rate", type=FiniteFloat(min=0), default=2.0, show_default=True,
              help="Requests per second to the API (0: no limit).")  # fmt: skip
@store_option
def fetch(directory: Path | None, store_dir: Path, **options: Any) -> None:
    """Fetch the reply of every manifest the store cites, then check the stories by them.

    A manifest is never fetched twice: replies are kept in the store's archive, and a rerun
    fetches only what is missing. 401/403 stops with the variable named (exit 1); 429 or a
    used-up quota stops, keeps what came and says when to resume; a 404 is "not found" and
    the rest go on. Exit code 3 when some manifests were not had, 0 when all were.

    \b
    Example:
      SYNORB_KEY=... hcgraph manifests fetch --max 25
      hcgraph manifests fetch --dir replies/ --store output/store
    """
    with Store(store_dir) as store:  # options: FetchOptions' fields, named alike
        report = pull_manifests(store, FetchOptions(**options), directory=directory)
    for line in report.lines():
        out_console.print(line, markup=False, highlight=False)
    if report.exit_code:
        raise SystemExit(report.exit_code)


@manifests.command("check")
@click.option("--all", "force", is_flag=True,
              help="Check every story again, not only those whose text or replies "
                   "changed.")  # fmt: skip
@store_option
def check(force: bool, store_dir: Path) -> None:
    """Check each paragraph and key fact against the text of the claims it cites.

    Uses the replies already in the store (``hcgraph manifests fetch``); verdicts go to the
    graph (saved query ``unsupported-paragraphs``; ``hcgraph audit`` reports them). Only
    stories whose text or replies changed since their last check are checked again.

    \b
    Example:
      hcgraph manifests check && hcgraph query unsupported-paragraphs
    """
    with Store(store_dir) as store:
        report = check_support(store, force=force)
    for line in report.lines():
        out_console.print(line, markup=False, highlight=False)
    if not report.counts and not report.unchanged:
        err_console.print("no story cites a claim", markup=False)
