"""What a push sends: each local graph as exact bytes with its hash, and the requests.

A graph's body is its N-Triples, lines sorted: deterministic, valid Turtle, and valid inside
SPARQL ``INSERT DATA``; its SHA-256 is what the push state records. The requests of GSP,
SPARQL Update and Oxigraph's bulk loader are in docs/pushing.md. A store runs one update
request as one transaction (each batch is all-or-nothing); the bulk loader only adds quads
and is not atomic, so graphs the server holds are first dropped and forgotten in the state.

Escaping: bodies are pyoxigraph's N-Triples, whose terms are valid SPARQL terms (IRIs
validated; every literal a ``"…"`` string with quotes, backslashes, newlines and control
characters escaped), so no user text can close a literal or a block; graph names are
pyoxigraph-validated IRIs, and a GSP graph IRI goes in as a query parameter that httpx
percent-encodes (indirect identification, §4.2).
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from typing import cast

import httpx
import pyoxigraph as ox

from ..store import Store
from .endpoints import RemoteEndpoint

__all__ = ["LocalGraph", "local_graphs", "request", "update_body"]

METHODS = {"replace": "PUT", "merge": "POST"}
_UPDATE_TYPE = "application/sparql-update; charset=utf-8"
_PIECE = 256 * 1024  # what a bulk body hands the socket at a time


@dataclass(frozen=True)
class LocalGraph:
    """One named graph ready to send."""

    iri: str
    body: bytes
    triples: int
    sha256: str

    @property
    def term(self) -> str:
        """The graph name in N-Triples/SPARQL syntax (``<iri>``), validated by pyoxigraph."""
        return str(ox.NamedNode(self.iri))


def local_graphs(store: Store) -> Iterator[LocalGraph]:
    """Yield every graph of the store (story graphs and shared ones) in IRI order."""
    for iri in store.graph_names():
        lines = store.sorted_lines(iri)
        body = b"".join(lines)
        yield LocalGraph(iri, body, len(lines), hashlib.sha256(body).hexdigest())


def update_body(graphs: Sequence[LocalGraph], mode: str) -> bytes:
    """The SPARQL Update text for ``graphs`` (``mode``: replace or merge)."""
    operations: list[bytes] = []
    for graph in graphs:
        name = graph.term.encode()
        if mode == "replace":
            operations.append(b"DROP SILENT GRAPH " + name)
        operations.append(b"INSERT DATA { GRAPH " + name + b" {\n" + graph.body + b"} }")
    return b" ;\n".join(operations) + b"\n"


def _bulk_parts(graphs: Sequence[LocalGraph]) -> list[bytes]:
    """The TriG of ``graphs`` in parts: each one's N-Triples inside a ``<g> { … }`` block."""
    parts: list[bytes] = []
    for graph in graphs:
        parts += (graph.term.encode(), b" {\n", graph.body, b"}\n")
    return parts


class _Parts(httpx.AsyncByteStream):
    """A body sent from its parts as they are (no joined copy of a chunk of tens of MB),
    at most ``_PIECE`` bytes at a time; it can be sent again (an auth challenge)."""

    def __init__(self, parts: list[bytes]) -> None:
        self._parts = parts

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self._parts:
            view = memoryview(part)
            for start in range(0, len(view), _PIECE):
                yield view[start : start + _PIECE]  # type: ignore[misc]


def request(
    client: httpx.AsyncClient,
    endpoint: RemoteEndpoint,
    kind: str,
    job: Sequence[LocalGraph] | Sequence[str],
    mode: str,
) -> httpx.Request:
    """The request of one job of ``kind`` (gsp: one graph, PUT to replace, POST to merge;
    bulk, update: graphs; drop: graph IRIs); ``mode``: replace or merge."""
    graphs = cast("Sequence[LocalGraph]", job)
    if kind == "gsp":
        return client.build_request(
            METHODS[mode],
            endpoint.gsp_url,
            params={"graph": graphs[0].iri},
            content=graphs[0].body,
            headers={"Content-Type": endpoint.content_type},
        )
    if kind == "bulk":
        assert endpoint.bulk_url is not None
        parts = _bulk_parts(graphs)
        headers = {"Content-Type": "application/trig", "Content-Length": str(sum(map(len, parts)))}
        return client.build_request(
            "POST",
            endpoint.bulk_url,
            params={"no_transaction": ""},
            content=_Parts(parts),
            headers=headers,
        )
    if kind == "drop":
        drops = (f"DROP SILENT GRAPH {ox.NamedNode(iri)}" for iri in cast("Sequence[str]", job))
        body = (" ;\n".join(drops) + "\n").encode("utf-8")
    else:
        body = update_body(graphs, mode)
    headers = {"Content-Type": _UPDATE_TYPE}
    return client.build_request("POST", endpoint.update_url, content=body, headers=headers)
