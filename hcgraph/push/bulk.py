"""A store's bulk path: many graphs in one request, through the server's bulk loader.

Oxigraph's server takes a whole dataset at its Graph Store service, ``POST /store`` with a
quads format and no ``graph`` parameter; ``?no_transaction`` hands the body to the same
bulk loader ``oxigraph load`` runs (sorted files written straight into the database, no
read before each write), several times faster than a transaction per graph. hcgraph sends
each chunk as TriG: every graph is ``<g> {`` + its N-Triples (the exact bytes a
per-graph PUT sends and the push state hashes) + ``}``, so no line is rewritten.

The bulk loader only *adds* quads and is not atomic: a request that fails midway may leave
part of its graphs on the server. So, for a push that replaces graphs:

* graphs the server already holds are dropped first (``DROP SILENT GRAPH``, in batches,
  over SPARQL Update), and forgotten in the push state before that;
* a graph goes into a chunk only when it is not recorded as pushed (or is forgotten
  first), so a push stopped before a chunk's answer sends that chunk's graphs again — and
  the rerun drops whatever part of them reached the server before loading them whole.

Quads are a set on the server, so a chunk sent twice leaves each triple once.
"""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import pyoxigraph as ox

from .endpoints import RemoteEndpoint
from .graphs import LocalGraph
from .verify import remote_select

__all__ = ["GRAPHS_QUERY", "bulk_body", "bulk_request", "drop_request", "remote_graphs"]

#: Every named graph the server holds (``GRAPH ?g {}`` matches empty graphs too).
GRAPHS_QUERY = "SELECT ?g WHERE { GRAPH ?g { } }"
BULK_TYPE = "application/trig"


def bulk_body(graphs: Sequence[LocalGraph]) -> bytes:
    """The TriG of ``graphs``: each one's N-Triples inside a ``<g> { … }`` block."""
    parts: list[bytes] = []
    for graph in graphs:
        parts += (graph.term.encode(), b" {\n", graph.body, b"}\n")
    return b"".join(parts)


def bulk_request(
    client: httpx.AsyncClient, endpoint: RemoteEndpoint, graphs: Sequence[LocalGraph]
) -> httpx.Request:
    """One bulk-loader POST carrying ``graphs`` (the endpoint must have a ``bulk_url``)."""
    assert endpoint.bulk_url is not None
    return client.build_request(
        "POST",
        endpoint.bulk_url,
        params={"no_transaction": ""},
        content=bulk_body(graphs),
        headers={"Content-Type": BULK_TYPE},
    )


def drop_request(
    client: httpx.AsyncClient, endpoint: RemoteEndpoint, iris: Sequence[str]
) -> httpx.Request:
    """A SPARQL Update dropping ``iris`` (pyoxigraph-validated IRIs; nothing else spliced in)."""
    body = " ;\n".join(f"DROP SILENT GRAPH {ox.NamedNode(iri)}" for iri in iris) + "\n"
    return client.build_request(
        "POST",
        endpoint.update_url,
        content=body.encode("utf-8"),
        headers={"Content-Type": "application/sparql-update; charset=utf-8"},
    )


async def remote_graphs(client: httpx.AsyncClient, endpoint: RemoteEndpoint) -> set[str]:
    """The names of the graphs the server holds (SPARQL query, JSON results).

    Raises:
        PushError: the query failed or the answer is not SPARQL JSON results.
    """
    rows = await remote_select(
        client, endpoint, GRAPHS_QUERY, ("g",), "listing the server's graphs: "
    )
    return {g.value for (g,) in rows if isinstance(g, ox.NamedNode)}
