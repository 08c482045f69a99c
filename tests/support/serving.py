"""What the serve tests look at inside a running endpoint or its HTTP parser, and the
package never needs: the pids of the ready query workers, one request head parsed alone; and
``hcgraph serve`` started as users start it, in a process of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hcgraph.serve.endpoint import Refusal, Request
from hcgraph.serve.http import RequestParser
from hcgraph.serve.server import Endpoint


def worker_pids(ep: Endpoint) -> list[int]:
    """Process ids of ``ep``'s in-process front's query workers ready for queries now."""
    front = ep._front
    workers = [] if front is None else front.pool.all
    return [w.proc.pid for w in workers if w.alive and w.ready]


def parse_head(head: bytes) -> Request:
    """The request a whole head (no body) parses to, or the refusal it gets (raised)."""
    parser = RequestParser()
    parser.feed(head)
    (item,) = parser.queue
    if isinstance(item, Refusal):
        raise item
    return item


def start_cli_serve(
    store_dir: Path, *, stdout: int = subprocess.DEVNULL
) -> tuple[subprocess.Popen[str], int, str]:
    """``python -m hcgraph serve`` on a free port: the process, its port and the first line it
    wrote to stderr (the banner naming the endpoint, or why it did not start)."""
    from tests.conftest import cli_env, free_port

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hcgraph", "serve", "--port", str(port), "--store", str(store_dir)],
        stdout=stdout, stderr=subprocess.PIPE, env=cli_env(), text=True,
    )  # fmt: skip
    return proc, port, proc.stderr.readline() if proc.stderr else ""
