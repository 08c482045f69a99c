"""Each graph of the local store as the exact bytes a push sends, with its hash.

A body is the graph's N-Triples, lines sorted: deterministic, valid Turtle, and valid inside
SPARQL ``INSERT DATA`` (pyoxigraph escapes every literal). Its SHA-256 is what the push
state records: the graph, not the story's bytes, is what the server holds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

import pyoxigraph as ox

from ..store import Store

__all__ = ["LocalGraph", "local_graphs"]


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
