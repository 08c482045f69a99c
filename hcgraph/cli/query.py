"""``hcgraph query``: run a saved query (or a .rq file) and print its rows."""

from __future__ import annotations

import functools
import io
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from .._io import atomic_text_writer
from ..errors import QueryError
from ..queries import QueryResult, load_query, run_query, saved_queries
from ..results import FORMATS, write_result, write_table
from ._common import (
    FiniteFloat,
    file_option,
    flag_option,
    out_console,
    query_memory_option,
    run_limited_on_store,
    store_option,
    width_option,
)


def _parse_params(pairs: tuple[str, ...]) -> dict[str, str]:
    params: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise QueryError(f"--param {pair!r}: want NAME=VALUE")
        params[name.strip()] = value
    return params


def _list_queries() -> None:
    table = Table(title="saved queries", show_lines=False)
    table.add_column("name", no_wrap=True)
    table.add_column("title")
    table.add_column("parameters")
    for name, query in saved_queries().items():
        params = ", ".join(
            f"{p.name} ({p.type}{'' if p.required else ', default ' + str(p.default)})"
            for p in query.params
        )
        table.add_row(Text(name), Text(query.title), Text(params))
    out_console.print(table, soft_wrap=False)


@click.command()
@click.argument("name_or_file", required=False)
@click.option(
    "--param", "-p", "params", multiple=True, metavar="NAME=VALUE",
    help="Bind a query parameter (repeatable); bound as an RDF term, never spliced.",
)  # fmt: skip
@click.option(
    "--format", "fmt", type=click.Choice(list(FORMATS)), default="table", show_default=True,
    help="table for people; csv, tsv, json, xml (SPARQL results formats) or md for tools.",
)  # fmt: skip
@file_option("--out", help="Write to this file (default: stdout).")
@click.option(
    "--timeout-s", type=FiniteFloat(0, min_open=True), default=None,
    help="Stop the query after this many seconds (exit 1); default: no limit.",
)  # fmt: skip
@query_memory_option
@click.option("--list", "list_only", is_flag=True, help="List the saved queries and exit.")
@click.option(
    "--limit", type=click.IntRange(min=0), default=None, metavar="N",
    help="At most N rows (after --offset), in the query's order.",
)  # fmt: skip
@click.option(
    "--offset", type=click.IntRange(min=0), default=0, metavar="N",
    help="Skip the first N rows: page k of n rows is --offset k*n --limit n.",
)  # fmt: skip
@flag_option(
    "--allow-service",
    "Let the query use SERVICE (federation: this machine then fetches the URLs it names).",
)
@flag_option(
    "--include-withdrawn",
    "Count withdrawn stories too (their URL answered 404/410); default: current stories only.",
)
@width_option
@store_option
def query(
    name_or_file: str | None,
    params: tuple[str, ...],
    fmt: str,
    out: Path | None,
    timeout_s: float | None,
    query_memory: int | None,
    list_only: bool,
    allow_service: bool,
    store_dir: Path,
    **page: Any,  # --limit, --offset, --include-withdrawn: run_query's own keywords
) -> None:
    """Run a saved query by NAME, or any SPARQL .rq FILE, over the store.

    The default graph is the union of all graphs. Parameters declared in the
    query's header are given with --param and bound as RDF terms. A query using SERVICE is
    refused unless --allow-service: by default a query makes no outbound requests.
    Saved queries count current stories; --include-withdrawn counts withdrawn ones too.
    The query runs in a process of its own, stopped with one line (exit 1) when it needs
    more memory than --query-memory (default: half the machine's) or more time than
    --timeout-s.

    \b
    Example:
      hcgraph query --list
      hcgraph query source-reuse
      hcgraph query source-stories -p manifest_id=ID --limit 20 --offset 20
      hcgraph query co-citation -p story=URL --param k=3 --format csv --out pairs.csv
      hcgraph query story-trail -p story=https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/
      hcgraph query my-question.rq --format json
    """
    if list_only:
        _list_queries()
        return
    if name_or_file is None:
        names = ", ".join(saved_queries())
        raise click.UsageError(f"give a saved query name or a .rq file (saved: {names})")
    saved = load_query(name_or_file)
    ask = functools.partial(
        run_query, query=saved, params=_parse_params(params), allow_service=allow_service, **page
    )
    result: QueryResult = run_limited_on_store(
        ask, store_dir, name=saved.name, query_memory=query_memory, timeout_s=timeout_s
    )
    if out is None:
        if fmt == "table":
            write_table(result, sys.stdout, width=out_console.fixed_width)
        else:
            # Tools get exactly UTF-8 with the format's own line ends, whatever the locale.
            stream = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="")
            write_result(result, fmt, stream)
            stream.detach()
        sys.stdout.flush()
        return
    with atomic_text_writer(out) as handle:
        write_result(result, fmt, handle)
    click.echo(f"wrote {out} ({len(result)} rows, {fmt})", err=True)
