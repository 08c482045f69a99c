"""``hcgraph export``: the store as RDF or a graph file."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import click

from ..export import FORMATS
from ..export import export as run_export
from ..store import Store
from ._common import store_option


@click.command()
@click.option(
    "--format", "fmt", type=click.Choice(sorted(FORMATS)), default="turtle", show_default=True,
    help="Output format.",
)  # fmt: skip
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Output file (default: stdout).",
)  # fmt: skip
@store_option
def export(fmt: str, out: Path | None, store_dir: Path) -> None:
    """Export the graph: union of story graphs (turtle, ntriples, jsonld), named graphs
    (nquads, trig), or the networkx projection (graphml, gexf).

    \b
    Example:
      hcgraph export --format turtle --out output/graph.ttl
      hcgraph export --format nquads | gzip > graph.nq.gz
    """
    with Store(store_dir, read_only=True) as store:
        if out is None:
            run_export(store, fmt, sys.stdout.buffer)
            sys.stdout.buffer.flush()
            return
        out.parent.mkdir(parents=True, exist_ok=True)
        # Write beside the target and rename: a failed export never leaves a torn file.
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.")
        try:
            with os.fdopen(fd, "wb") as handle:
                run_export(store, fmt, handle)
            os.replace(tmp, out)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    click.echo(f"wrote {out} ({fmt})", err=True)
