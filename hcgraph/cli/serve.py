"""``hcgraph serve``: a read-only SPARQL endpoint over the store (served in-process)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import click

from ..deepcheck import deep_check
from ..serve import DEFAULT_PORT, DEFAULT_TIMEOUT_S, Endpoint
from ..workbench import workbench_files
from ._common import FiniteFloat, flag_option, on_store, query_memory_option, store_option


@click.command()
@click.option(
    "--host", default="127.0.0.1", show_default=True,
    help="Loopback address to bind (127.0.0.1, ::1 or localhost); nothing else is allowed.",
)  # fmt: skip
@click.option(
    "--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True,
    help="TCP port (0: pick a free one).",
)  # fmt: skip
@click.option(
    "--timeout-s", type=FiniteFloat(0), default=DEFAULT_TIMEOUT_S, show_default=True,
    help="Per-query time limit in seconds, answer included (0: none); then 503.",
)  # fmt: skip
@click.option(
    "--workers", type=click.IntRange(1, 64), default=None,
    help="Query worker processes: queries evaluated at once (default: 2-4 by CPUs).",
)  # fmt: skip
@query_memory_option
@click.option(
    "--check-deep", is_flag=True,
    help="First read every index of the store (as hcgraph check --deep): a damaged store"
    " is named and not served. Slow on a large store.",
)  # fmt: skip
@flag_option("--no-workbench", "Serve no query page at / (only the /query endpoint).")
@flag_option(
    "--allow-service",
    "Let queries use SERVICE (federation: the server then fetches the URLs they name).",
)
@store_option
def serve(
    timeout_s: float, check_deep: bool, no_workbench: bool, store_dir: Path, **options: Any
) -> None:
    """Serve the store read-only over the SPARQL 1.1 Protocol until Ctrl-C.

    Queries go to /query (GET or POST) and run in worker processes holding the store open
    read-only; the default graph is the union of all graphs, as in `hcgraph query`. A
    query that runs past --timeout-s, needs more memory than --query-memory (default: half
    the machine's, shared by the workers) or whose client goes away is stopped. After an
    ingest or crawl into the store finishes, the next query sees the new data. Queries
    using SERVICE are refused (no outbound requests) unless --allow-service; requests whose
    Host header is not this loopback address and port are refused (DNS rebinding).
    The root URL (/) is a SPARQL workbench (YASGUI) with the saved queries as examples; it
    loads nothing from elsewhere and sends its queries to /query (--no-workbench: no page).

    \b
    Example:
      hcgraph serve --port 7878
      curl -H 'Accept: text/csv' --data-urlencode 'query=SELECT * { ?s a ?t } LIMIT 5' \\
        http://127.0.0.1:7878/query
    """
    if check_deep:
        click.echo(on_store(deep_check, store_dir).summary(), err=True)
    static = None if no_workbench else workbench_files()
    # options: --host, --port, --workers, --query-memory, --allow-service, named as Endpoint's
    endpoint = Endpoint(store_dir, timeout_s=timeout_s or None, static=static, **options)
    # SIGTERM (service managers, `timeout`) stops the server as cleanly as Ctrl-C does.
    previous = signal.signal(signal.SIGTERM, _stop_requested)
    try:
        endpoint.start()
        workbench = "" if no_workbench else f"; workbench: {endpoint.url}/"
        click.echo(
            f"SPARQL endpoint: {endpoint.query_url} (read-only; default graph = union of all"
            f" graphs){workbench}. Ctrl-C to stop.",
            err=True,
        )
        endpoint.wait()
    except KeyboardInterrupt:
        # A requested stop: later SIGTERMs are ignored (after a Ctrl-C too) to the end, not
        # only through the stop. The process ends next; with the previous handler back, a
        # repeat landing after "stopped" would still kill it (143).
        previous = signal.SIG_IGN
        signal.signal(signal.SIGTERM, previous)
        endpoint.stop()
        click.echo("stopped", err=True)
    finally:
        signal.signal(signal.SIGTERM, previous)
        endpoint.stop()


def _stop_requested(_signum: int, _frame: object) -> None:
    """SIGTERM: stop as on Ctrl-C (a requested stop: exit 0, as uvicorn and gunicorn do).
    Only the first counts: `timeout` signals the command and then its whole process group,
    and a repeat landing in the stop would cut it short (exit 130, workers left to die)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt
