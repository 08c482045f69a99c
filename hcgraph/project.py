"""A networkx view of the RDF graph: typed, labelled nodes and predicate-labelled edges.

Behind GraphML/GEXF exports and the citation maps: edges run subject → object with their
``predicate`` as a CURIE; nodes have ``iri``, ``type`` (the local name of its ``hc:`` class,
``Agent``, or ``RelatedStory`` for a linked story not in the graph), a short ``label`` and
the full ``text`` (headline, title, name or text; "" where there is none).
"""

from __future__ import annotations

from collections import defaultdict

import networkx as nx
import pyoxigraph as ox

from .store import Store
from .vocab import DCTERMS, HC, PREFIXES, PROV, RDF, RDFS, SDO

__all__ = ["curie", "node_type", "to_networkx"]

_TYPE = str(RDF.type)
_HC = str(HC)
_LABEL_PREDICATES = [
    str(SDO.headline),
    str(DCTERMS.title),
    str(SDO.name),
    str(SDO.text),
    str(PROV.value),  # a claim's text, from its manifest's reply
    str(RDFS.label),
    str(DCTERMS.identifier),
]
_LABEL_RANK = {p: i for i, p in enumerate(_LABEL_PREDICATES)}
_SKIP_EDGES = {_TYPE, str(SDO.url)}
_RELATION = str(DCTERMS.relation)


def curie(iri: str) -> str:
    """``https://schema.org/headline`` → ``schema:headline`` (unknown namespaces unchanged)."""
    for prefix, ns in PREFIXES.items():
        if iri.startswith(ns) and prefix != "hcid":
            return f"{prefix}:{iri[len(ns) :]}"
    return iri


def node_type(types: set[str]) -> str:
    """The display type for a node with these rdf:types (its hc: class wins)."""
    if hc := min((t[len(_HC) :] for t in types if t.startswith(_HC)), default=""):
        return hc
    return "Agent" if str(PROV.SoftwareAgent) in types else "Resource"


def to_networkx(store: Store, *, max_label: int = 80) -> nx.MultiDiGraph:
    """The union of all graphs as a MultiDiGraph: a node per IRI that has an ``rdf:type`` or is
    the target of ``dcterms:relation``, an edge per triple between two of them."""
    union = _Union(store)
    graph = nx.MultiDiGraph()
    for iri in sorted(set(union.types) | union.related):
        kind = node_type(union.types[iri]) if iri in union.types else "RelatedStory"
        text = union.labels.get(iri, (0, ""))[1]
        short = " ".join(text.split())
        if len(short) > max_label:
            short = short[: max_label - 1] + "…"
        graph.add_node(iri, iri=iri, type=kind, label=short or _tail(iri), text=text)
    for src, pred, dst in union.links:
        if src in graph and dst in graph:
            graph.add_edge(src, dst, key=curie(pred), predicate=curie(pred))
    return graph


class _Union:
    """What one pass over the union finds: types, best labels, IRI links, related targets."""

    def __init__(self, store: Store) -> None:
        self.types: defaultdict[str, set[str]] = defaultdict(set)
        self.labels: dict[str, tuple[int, str]] = {}
        self.links: list[tuple[str, str, str]] = []
        self.related: set[str] = set()
        for triple in store.union_triples():
            if isinstance(triple.subject, ox.NamedNode):
                self.add(triple.subject.value, triple.predicate.value, triple.object)

    def add(self, s: str, p: str, o: object) -> None:
        if p == _TYPE and isinstance(o, ox.NamedNode):
            self.types[s].add(o.value)
        elif isinstance(o, ox.Literal):
            rank = _LABEL_RANK.get(p)
            if rank is not None and (s not in self.labels or rank < self.labels[s][0]):
                self.labels[s] = (rank, o.value)
        elif isinstance(o, ox.NamedNode) and p not in _SKIP_EDGES:
            self.links.append((s, p, o.value))
            if p == _RELATION:
                self.related.add(o.value)


def _tail(iri: str) -> str:
    return iri.rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1] or iri
