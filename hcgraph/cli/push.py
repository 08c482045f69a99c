"""``hcgraph push``: story graphs to a triple store over SPARQL 1.1 (GSP or Update)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..push import (
    BULK_MIN_GRAPHS,
    PRESETS,
    PushOptions,
    credentials_from_env,
    push_graphs,
    resolve_endpoint,
)
from ..push.auth import credentials_at_risk
from ..store import Store
from ._common import (
    F,
    err_console,
    flag_option,
    float_option,
    int_option,
    print_lines,
    store_option,
)


def _service_path(service: str, what: str) -> Callable[[F], F]:
    """``--SERVICE-path PATH|URL``: where the endpoint has one service, over the preset."""
    return click.option(
        f"--{service}-path", metavar="PATH|URL", help=f"{what} (overrides the preset)."
    )


@click.command(name="push")
@click.option(
    "--endpoint", required=True, metavar="URL",
    help="The store's base URL (server root; Fuseki: the dataset URL).",
)  # fmt: skip
@click.option(
    "--preset", type=click.Choice(sorted(PRESETS)), default="oxigraph", show_default=True,
    help="Where this product puts its GSP/query/update services.",
)  # fmt: skip
@_service_path("gsp", "Graph Store Protocol service")
@_service_path("query", "SPARQL query service")
@_service_path("update", "SPARQL update service")
@click.option(
    "--protocol", type=click.Choice(["gsp", "update"]), default="gsp", show_default=True,
    help="gsp: one PUT per graph; update: DROP + INSERT DATA in batches.",
)  # fmt: skip
@click.option(
    "--bulk", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
    help="A first push or --all: load the graphs in large chunks with the store's bulk loader "
    f"(Oxigraph); auto: when at least {BULK_MIN_GRAPHS} graphs go; never: one PUT per graph.",
)  # fmt: skip
@click.option(
    "--mode", type=click.Choice(["replace", "merge"]), default="replace", show_default=True,
    help="Replace each remote graph, or add to it.",
)  # fmt: skip
@click.option(
    "--auth-env", metavar="VAR",
    help="Environment variable holding 'user:password' (Basic or Digest, as the server asks), "
    "'Digest user:password' or a bearer token.",
)  # fmt: skip
@click.option(
    "--ca-bundle", type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="PEM file of CA certificates to trust (TLS verification is always on).",
)  # fmt: skip
@flag_option(
    "--verify", "Afterwards, compare per-graph triple counts on the server with the store."
)
@flag_option("--all", "Push every graph, not only those changed since the last push here.", "force")
@click.option("--dry-run", is_flag=True, help="List the graphs that would be pushed; send nothing.")
@int_option("--concurrency", 4, "Requests in flight.")
@int_option("--batch", 50, "Graphs per SPARQL Update request (--protocol update).")
@int_option("--retries", 3, "Retries after a connection error or HTTP 5xx/429, with backoff.")
@float_option("--timeout", 60.0, "Seconds to wait for each answer.")
@store_option
def push_command(
    endpoint: str,
    preset: str,
    gsp_path: str | None,
    query_path: str | None,
    update_path: str | None,
    auth_env: str | None,
    store_dir: Path,
    **options: Any,  # the rest: PushOptions' fields, named alike
) -> None:
    """Push each named graph to a triple store.

    Story graphs and the shared graphs (manifests, publishers, agents, links) alike.

    By default one SPARQL 1.1 Graph Store Protocol PUT per graph (idempotent: a graph is
    replaced whole, nothing stale is left); --protocol update sends DROP SILENT GRAPH +
    INSERT DATA in batches for stores without GSP. Only graphs changed since the last push
    to this endpoint are sent (content hashes in STORE/push-state.json); --all sends all.
    A first push or --all to Oxigraph goes through its bulk loader instead (--bulk).

    A graph the server refuses is reported and the rest continue (exit 3); an unreachable
    server or refused credentials stop the push (exit 1); graphs already acknowledged are
    recorded, so a rerun sends only what is missing. --verify mismatches exit 3; a count
    query that fails is an error after the summary (exit 1, or 3 if graphs were refused).

    \b
    Example:
      oxigraph serve --location server-data --bind 127.0.0.1:7878 &
      hcgraph push --endpoint http://127.0.0.1:7878 --verify
      HC_AUTH='alice:s3cret' hcgraph push --endpoint https://sparql.example.org/ds \\
          --preset fuseki --auth-env HC_AUTH
    """  # fmt: skip
    credentials = credentials_from_env(auth_env) if auth_env else None
    target = resolve_endpoint(
        endpoint, preset, gsp_path=gsp_path, query_path=query_path, update_path=update_path,
        authenticated=credentials is not None,
    )  # fmt: skip
    opts = PushOptions(**options)
    opts.check()
    if credentials_at_risk(target.url, credentials):
        err_console.print("[yellow]warning:[/] sending credentials over plain http://")
    with Store(store_dir, read_only=True) as store:
        progress = Progress(
            TextColumn("push"), BarColumn(), MofNCompleteColumn(),
            TextColumn("graphs, {task.fields[triples]:,} triples"),
            TimeElapsedColumn(), TimeRemainingColumn(),
            console=err_console, disable=not err_console.is_terminal, transient=True,
        )  # fmt: skip
        with progress:
            task = progress.add_task("push", total=len(store.graph_names()), triples=0)

            def advance(graphs: int, triples: int) -> None:
                done = progress.tasks[task].fields["triples"] + triples
                progress.update(task, advance=graphs, triples=done)

            report = push_graphs(store, target, opts, credentials=credentials, on_progress=advance)
    print_lines(report.render(dry_run=opts.dry_run))
    if opts.dry_run:
        return
    if report.aborted is not None:
        raise SystemExit(1)
    if report.failures:
        raise SystemExit(3)  # graphs refused: the push's own result comes first
    if report.verify is not None and report.verify.error is not None:
        raise SystemExit(1)  # an error, not a difference: nothing was compared
    if not report.ok:
        raise SystemExit(3)
