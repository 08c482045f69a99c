"""``hcgraph stats``: what the store holds."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from ..errors import visible
from ..stats import graph_stats
from ._common import flag_option, on_store, out_console, store_option


@click.command()
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@flag_option("--include-withdrawn", "Count withdrawn stories among the stories too.")
@store_option
def stats(fmt: str, include_withdrawn: bool, store_dir: Path) -> None:
    """Count stories, triples and nodes per type.

    Stories are the current ones; withdrawn stories (their URL answered 404/410, their
    graphs kept) are counted apart, or among them with --include-withdrawn.

    \b
    Example:
      hcgraph stats --format json
    """
    data = on_store(graph_stats, store_dir, include_withdrawn=include_withdrawn)
    if fmt == "json":
        click.echo(json.dumps(data, indent=2, sort_keys=True))
        return
    table = Table(title="hcgraph store")
    table.add_column("what")
    table.add_column("count", justify="right")
    for key in ("stories", "withdrawn", "triples", "quads", "related_links"):
        if key in data:
            table.add_row(key, str(data[key]))
    for kind, count in data["nodes"].items():
        table.add_row(Text(f"  {visible(kind, one_line=True)}"), str(count))
    out_console.print(table, soft_wrap=False)
