"""``hcgraph export``: the store as RDF or a graph file."""

from __future__ import annotations

import os
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import BinaryIO

import click

from .._io import atomic_writer
from ..dump import gzip_writer, write_shards
from ..errors import ExportError, OutputError
from ..exporting import FORMATS
from ..exporting import export as run_export
from ..store import Store
from ._common import on_store, store_option


@click.command()
@click.option(
    "--format", "fmt", type=click.Choice(sorted(FORMATS)), default="turtle", show_default=True,
    help="Output format.",
)  # fmt: skip
@click.option(
    "--out", type=click.Path(path_type=Path), default=None,
    help="Output file (default: stdout); with --split, a directory.",
)  # fmt: skip
@click.option(
    "--dynamic", is_flag=True,
    help="With --format gexf: the reuse map's network as a dynamic GEXF 1.3 (start dates on "
    "nodes and edges) for Gephi's timeline.",
)  # fmt: skip
@click.option("--gzip", "compress", is_flag=True, help="Gzip the output (deterministic).")
@click.option(
    "--split", type=click.IntRange(min=1), default=None, metavar="N",
    help="N-Quads shards of whole story graphs, at most N quads each, into --out DIR.",
)  # fmt: skip
@store_option
def export(
    fmt: str, out: Path | None, dynamic: bool, compress: bool, split: int | None, store_dir: Path
) -> None:
    """Export the graph: the union of all graphs, the named graphs, or a projection.

    The union of all graphs (turtle, ntriples, jsonld), every named graph (nquads, trig),
    the networkx projection (graphml, gexf), the reuse map's network (vosviewer; gexf
    --dynamic), or the support verdicts as schema.org ClaimReview JSON-LD (claimreview).

    \b
    Example:
      hcgraph export --format turtle --out output/graph.ttl
      hcgraph export --format nquads --gzip --split 1000000 --out dump/
      hcgraph export --format vosviewer --out output/reuse.json
      hcgraph export --format gexf --dynamic --out output/reuse-timeline.gexf
      hcgraph export --format claimreview --out output/claimreview.jsonld
    """
    if dynamic and FORMATS[fmt].dynamic is None:
        raise ExportError(f"--dynamic needs --format gexf (format {fmt} has no dynamic variant)")
    if split is not None:
        _export_split(store_dir, fmt, out, split, compress)
        return
    if out is not None and out.is_dir():
        raise ExportError(f"--out {out} is a directory (only --split writes into one)")
    message = on_store(_export, store_dir, fmt, out, compress, dynamic)
    if message:
        click.echo(message, err=True)
    if out is not None:
        click.echo(f"wrote {out} ({fmt}{', dynamic' if dynamic else ''})", err=True)


def _export(store: Store, fmt: str, out: Path | None, compress: bool, dynamic: bool) -> str | None:
    """The export to ``out`` (None: stdout); returns the format's note, if any."""
    if out is None:
        _to_stdout(store, fmt, compress, dynamic)
    else:
        # Written beside the target and renamed: a failed export never leaves a torn file.
        with atomic_writer(out) as handle:
            _write(store, fmt, handle, compress, dynamic)
    note = FORMATS[fmt].note
    return note(store) if note is not None else None


def _export_split(store_dir: Path, fmt: str, out: Path | None, split: int, compress: bool) -> None:
    """``--split N``: N-Quads shards of whole story graphs into the directory ``out``."""
    if fmt != "nquads" or out is None:
        raise ExportError("--split needs --format nquads and --out DIR")
    shards = on_store(write_shards, store_dir, out, split, compress=compress)
    click.echo(f"wrote {len(shards)} shards to {out} (nquads)", err=True)


def _to_stdout(store: Store, fmt: str, compress: bool, dynamic: bool) -> None:
    """The export on stdout; a failed write (``> /dev/full``) is one line, not a traceback."""
    try:
        _write(store, fmt, sys.stdout.buffer, compress, dynamic)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        # What is still buffered would fail again at exit ("Exception ignored …"): stdout
        # goes to /dev/null from here on.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        raise OutputError(f"stdout: cannot write the export: {exc.strerror or exc}") from None


def _write(store: Store, fmt: str, handle: BinaryIO, compress: bool, dynamic: bool) -> None:
    with gzip_writer(handle) if compress else nullcontext(handle) as out:
        run_export(store, fmt, out, dynamic=dynamic)
