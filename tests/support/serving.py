"""What the serve tests look at inside a running endpoint or its HTTP parser, and the
package never needs: the pids of the ready query workers, one request head parsed alone."""

from __future__ import annotations

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
