"""Each story graph of the local store as the exact bytes a push sends, with its hash.

A graph's body is its N-Triples, lines sorted: deterministic (same triples, same bytes),
valid Turtle too (for stores that take only Turtle), and valid inside SPARQL ``INSERT DATA``
(pyoxigraph escapes every literal: quotes, backslashes, newlines, control characters).

The content hash recorded for incremental pushes is the SHA-256 of that body. It is taken
over the graph rather than the raw story bytes because the graph is what the server holds:
it also changes when the same story is re-mapped differently, and it is what ``--verify``
and a re-push are about.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pyoxigraph as ox

from ..store import Store

__all__ = ["LocalGraph", "graph_body", "local_graphs"]


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


def graph_body(store: Store, iri: str) -> tuple[bytes, int]:
    """The sorted N-Triples of graph ``iri`` and its triple count."""
    lines = store.sorted_lines(iri)
    return b"".join(lines), len(lines)


def local_graphs(store: Store, iris: Iterable[str] | None = None) -> Iterator[LocalGraph]:
    """Yield every graph — story graphs and shared graphs — (or those in ``iris``) in IRI order."""
    for iri in store.graph_names() if iris is None else sorted(iris):
        body, count = graph_body(store, iri)
        yield LocalGraph(iri, body, count, hashlib.sha256(body).hexdigest())
