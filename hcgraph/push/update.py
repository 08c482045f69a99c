"""SPARQL 1.1 Update for stores without the Graph Store Protocol.

One request carries a batch of graphs; per graph, ``replace`` mode sends
``DROP SILENT GRAPH <g>`` then ``INSERT DATA { GRAPH <g> { … } }``, ``merge`` mode only the
``INSERT DATA``. Stores run one update request as one transaction (Oxigraph does), so each
batch is all-or-nothing.

Escaping: the data is pyoxigraph's N-Triples, whose terms are valid SPARQL terms — IRIs are
validated, and every literal is a ``"…"`` string with ``"``, ``\\``, newlines and control
characters escaped — so no user text can close a literal or a block. Nothing else is
spliced in: graph names are pyoxigraph-validated IRIs.
"""

from __future__ import annotations

from collections.abc import Sequence

import httpx

from .endpoints import RemoteEndpoint
from .graphs import LocalGraph

__all__ = ["update_body", "update_request"]


def update_body(graphs: Sequence[LocalGraph], mode: str) -> bytes:
    """The SPARQL Update text for ``graphs`` (``mode``: replace or merge)."""
    operations: list[bytes] = []
    for graph in graphs:
        name = graph.term.encode()
        if mode == "replace":
            operations.append(b"DROP SILENT GRAPH " + name)
        operations.append(b"INSERT DATA { GRAPH " + name + b" {\n" + graph.body + b"} }")
    return b" ;\n".join(operations) + b"\n"


def update_request(
    client: httpx.AsyncClient, endpoint: RemoteEndpoint, graphs: Sequence[LocalGraph], mode: str
) -> httpx.Request:
    """A POST of the update for ``graphs`` (SPARQL 1.1 Protocol, ``application/sparql-update``)."""
    return client.build_request(
        "POST",
        endpoint.update_url,
        content=update_body(graphs, mode),
        headers={"Content-Type": "application/sparql-update; charset=utf-8"},
    )
