"""``hcgraph stats``: what the store holds."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from ..errors import visible
from ..stats import graph_stats
from ..store import Store
from ._common import out_console, store_option


@click.command()
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@store_option
def stats(fmt: str, store_dir: Path) -> None:
    """Count stories, triples and nodes per type.

    \b
    Example:
      hcgraph stats --format json
    """
    with Store(store_dir, read_only=True) as store:
        data = graph_stats(store)
    if fmt == "json":
        click.echo(json.dumps(data, indent=2, sort_keys=True))
        return
    table = Table(title="hcgraph store")
    table.add_column("what")
    table.add_column("count", justify="right")
    for key in ("stories", "triples", "quads", "related_links"):
        table.add_row(key, str(data[key]))
    for kind, count in data["nodes"].items():
        table.add_row(Text(f"  {visible(kind, one_line=True)}"), str(count))
    out_console.print(table, soft_wrap=False)
