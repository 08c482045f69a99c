"""SPARQL 1.1 Graph Store Protocol: one request per named graph.

``PUT {gsp}?graph=IRI`` replaces the graph (idempotent: the same body twice leaves the same
triples; a changed story leaves nothing stale); ``POST`` merges into it. The graph IRI goes
in as a query parameter, percent-encoded by httpx (indirect graph identification, §4.2).
"""

from __future__ import annotations

import httpx

from .endpoints import RemoteEndpoint
from .graphs import LocalGraph

__all__ = ["gsp_request"]

METHODS = {"replace": "PUT", "merge": "POST"}


def gsp_request(
    client: httpx.AsyncClient, endpoint: RemoteEndpoint, graph: LocalGraph, mode: str
) -> httpx.Request:
    """The request that sends ``graph`` to ``endpoint`` (``mode``: replace or merge)."""
    return client.build_request(
        METHODS[mode],
        endpoint.gsp_url,
        params={"graph": graph.iri},
        content=graph.body,
        headers={"Content-Type": endpoint.content_type},
    )
