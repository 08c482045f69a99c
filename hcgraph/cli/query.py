"""``hcgraph query``: run a saved query (or a .rq file) and print its rows."""

from __future__ import annotations

import io
import multiprocessing
import sys
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from .._io import atomic_text_writer
from ..errors import HcgraphError, QueryError
from ..queries import QueryResult, SavedQuery, load_query, run_query, saved_queries
from ..results import FORMATS, write_result, write_table
from ..store import Store
from ._common import (
    allow_service_option,
    include_withdrawn_option,
    out_console,
    out_file_option,
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


def _run_in_child(
    conn: Connection,
    store_dir: Path,
    saved: SavedQuery,
    params: dict[str, str],
    allow: bool,
    page: dict[str, Any],
) -> None:
    try:
        with Store(store_dir, read_only=True) as store:
            answer: Any = run_query(store, saved, params, allow_service=allow, **page)
    except HcgraphError as exc:
        answer = exc
    try:
        conn.send(answer)
    except Exception as exc:  # an error object that does not pickle
        conn.send(QueryError(str(exc)))


def _run_limited(
    store_dir: Path,
    saved: SavedQuery,
    params: dict[str, str],
    allow: bool,
    timeout_s: float,
    page: dict[str, Any],
) -> QueryResult:
    """Run the query in a child process and stop it after ``timeout_s`` seconds: a query
    running in pyoxigraph cannot be interrupted otherwise.

    Raises:
        QueryError: the time ran out (the child is killed), or the query failed.
    """
    context: Any = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    )
    receive, send = context.Pipe(duplex=False)
    child = context.Process(
        target=_run_in_child, args=(send, store_dir, saved, params, allow, page), daemon=True
    )
    child.start()
    send.close()
    try:
        if not receive.poll(timeout_s):
            raise QueryError(
                f"{saved.name}: the query did not finish within {timeout_s:g} s (--timeout-s);"
                " stopped"
            )
        try:
            answer = receive.recv()
        except EOFError:
            raise QueryError(f"{saved.name}: the query process ended without an answer") from None
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()
    if isinstance(answer, HcgraphError):
        raise answer
    if not isinstance(answer, QueryResult):
        raise QueryError(f"{saved.name}: the query process gave no result")
    return answer


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
@out_file_option("Write to this file (default: stdout).")
@click.option(
    "--timeout-s", type=click.FloatRange(0, min_open=True), default=None,
    help="Stop the query after this many seconds (exit 1); default: no limit.",
)  # fmt: skip
@click.option("--list", "list_only", is_flag=True, help="List the saved queries and exit.")
@click.option(
    "--limit", type=click.IntRange(min=0), default=None, metavar="N",
    help="At most N rows (after --offset), in the query's order.",
)  # fmt: skip
@click.option(
    "--offset", type=click.IntRange(min=0), default=0, metavar="N",
    help="Skip the first N rows: page k of n rows is --offset k*n --limit n.",
)  # fmt: skip
@allow_service_option(
    "Let the query use SERVICE (federation: this machine then fetches the URLs it names)."
)
@include_withdrawn_option(
    "Count withdrawn stories too (their URL answered 404/410); default: current stories only."
)
@width_option
@store_option
def query(
    name_or_file: str | None,
    params: tuple[str, ...],
    fmt: str,
    out: Path | None,
    timeout_s: float | None,
    list_only: bool,
    limit: int | None,
    offset: int,
    allow_service: bool,
    include_withdrawn: bool,
    store_dir: Path,
) -> None:
    """Run a saved query by NAME, or any SPARQL .rq FILE, over the store.

    The default graph is the union of all graphs. Parameters declared in the
    query's header are given with --param and bound as RDF terms. A query using SERVICE is
    refused unless --allow-service: by default a query makes no outbound requests.
    Saved queries count current stories; --include-withdrawn counts withdrawn ones too.

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
    bindings = _parse_params(params)
    page: dict[str, Any] = {
        "limit": limit,
        "offset": offset,
        "include_withdrawn": include_withdrawn,
    }
    if timeout_s is not None:
        result = _run_limited(store_dir, saved, bindings, allow_service, timeout_s, page)
    else:
        with Store(store_dir, read_only=True) as store:
            result = run_query(store, saved, bindings, allow_service=allow_service, **page)
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
