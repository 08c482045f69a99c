"""Exports: a registry of formats, each a function writing the store to a binary stream.

=========  ==========================================================================
format     what it writes
=========  ==========================================================================
turtle     the union of all graphs (a set: each triple once), with readable prefixes
ntriples   the same union, one triple per line
jsonld     the same union as compact JSON-LD, ``@context`` from hcgraph/context.jsonld
nquads     every graph kept as a named graph (story graphs and shared graphs)
trig       every graph kept as a named graph, with prefixes
graphml    the networkx projection (typed, labelled nodes) for Gephi/yEd: nodes ``n0…``
           (IRI in ``iri``), edges ``e0…`` with the ``predicate`` attribute
gexf       the same projection as GEXF (node ids are the IRIs, edges ``e0…``); its
           ``dynamic`` variant is the reuse map's network as a dynamic GEXF 1.3 (a
           ``start`` date on nodes and edges, for Gephi's timeline)
vosviewer  the reuse map's network as VOSviewer JSON (communities, citing stories, dates)
claimrev…  ``claimreview``: each support verdict as a schema.org ClaimReview (JSON-LD array)
=========  ==========================================================================

The map formats (``vosviewer``, dynamic ``gexf``) are :mod:`hcgraph.mapexport`;
``claimreview`` is :mod:`hcgraph.claimreview`.

Output order depends only on the store's content (Oxigraph index order), never on the order
stories were ingested, so the same stories always export to the same bytes.

New formats register with :func:`register`; an unknown name raises
:class:`~hcgraph.errors.UnknownFormatError` listing the known ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

import networkx as nx
import pyoxigraph as ox

from .errors import ExportError, UnknownFormatError
from .jsonld import write_jsonld
from .project import to_networkx
from .rdftext import XML_FORBIDDEN
from .store import Store
from .vocab import TURTLE_PREFIXES

__all__ = ["FORMATS", "Exporter", "export", "register"]


@dataclass(frozen=True)
class Exporter:
    """One export format: its writer, file extension and media type."""

    name: str
    write: Callable[[Store, BinaryIO], None]
    extension: str
    media_type: str
    description: str
    #: The time-stamped variant (``export --dynamic``), where the format has one.
    dynamic: Callable[[Store, BinaryIO], None] | None = None
    #: A note for the user about what was written (e.g. "nothing to review"), or ``None``.
    note: Callable[[Store], str | None] | None = None


#: Format name → :class:`Exporter`, filled by :func:`register` (and ``hcgraph export --format``).
FORMATS: dict[str, Exporter] = {}


def register(exporter: Exporter) -> Exporter:
    """Add (or replace) a format in the registry."""
    FORMATS[exporter.name] = exporter
    return exporter


def export(store: Store, fmt: str, out: BinaryIO, *, dynamic: bool = False) -> None:
    """Write the store to ``out`` in format ``fmt`` (a name in :data:`FORMATS`); with
    ``dynamic``, its time-stamped variant.

    Raises:
        UnknownFormatError: ``fmt`` is no registered format.
        ExportError: ``dynamic`` for a format without a dynamic variant.
    """
    exporter = FORMATS.get(fmt)
    if exporter is None:
        known = ", ".join(sorted(FORMATS))
        raise UnknownFormatError(f"unknown format {fmt!r}; choose one of: {known}")
    if not dynamic:
        exporter.write(store, out)
        return
    if exporter.dynamic is None:
        has = ", ".join(sorted(name for name, e in FORMATS.items() if e.dynamic)) or "none"
        raise ExportError(
            f"--dynamic: format {fmt!r} has no dynamic variant (formats with one: {has})"
        )
    exporter.dynamic(store, out)


def _vosviewer(store: Store, out: BinaryIO) -> None:
    from .mapexport import write_vosviewer  # the viz modules load only when asked for

    write_vosviewer(store, out)


def _claimreview(store: Store, out: BinaryIO) -> None:
    from .claimreview import write_claimreview

    write_claimreview(store, out)


def _claimreview_note(store: Store) -> str | None:
    from .claimreview import empty_note

    return empty_note(store)


def _dynamic_gexf(store: Store, out: BinaryIO) -> None:
    from .mapexport import write_dynamic_gexf

    write_dynamic_gexf(store, out)


def _xml_safe_projection(store: Store) -> nx.MultiDiGraph:
    graph = to_networkx(store)
    for _, data in graph.nodes(data=True):
        for key, value in data.items():
            if isinstance(value, str):
                data[key] = XML_FORBIDDEN.sub("\ufffd", value)
    return graph


def _with_ids(graph: nx.MultiDiGraph, *, node_ids: bool) -> nx.MultiDiGraph:
    """The projection with unique, stable ids the schemas accept.

    Edges are numbered ``e0, e1, …`` in (source IRI, target IRI, predicate) order, with the
    predicate as the ``predicate`` attribute (GraphML and GEXF require unique edge ids; the
    predicate alone repeats). With ``node_ids`` (GraphML, whose ids are ``xs:NMTOKEN``, so
    no ``/`` or ``#``) nodes become ``n0, n1, …`` in IRI order; the IRI stays in ``iri``.
    The ids depend only on the graph's content.
    """
    out = nx.MultiDiGraph()
    out.graph.update(graph.graph)
    ids = {iri: (f"n{i}" if node_ids else iri) for i, iri in enumerate(sorted(graph.nodes))}
    for iri, new in ids.items():
        out.add_node(new, **graph.nodes[iri])
    edges = sorted((u, v, d["predicate"]) for u, v, d in graph.edges(data=True))
    for i, (u, v, pred) in enumerate(edges):
        extra = {} if node_ids else {"id": f"e{i}", "label": pred}
        out.add_edge(ids[u], ids[v], key=f"e{i}", predicate=pred, **extra)
    return out


def _gexf(store: Store, out: BinaryIO) -> None:
    """The projection as GEXF 1.2draft that validates against gexf.net's ``gexf.xsd``.

    networkx's writer needs three corrections: it writes ``<graph name="">``, an attribute the
    1.2draft schema does not allow on ``graph``; a multigraph's edge keys become a
    ``networkx_key`` edge attribute (ours only repeat the edge id); and it stamps today's date
    into ``<meta lastmodifieddate>``, which would make the same store export different bytes
    on different days. All three are removed from the element tree before it is written.
    """
    graph = _with_ids(_xml_safe_projection(store), node_ids=False)
    writer = nx.readwrite.gexf.GEXFWriter(encoding="utf-8", prettyprint=True, version="1.2draft")
    writer.add_graph(graph)
    root = writer.xml
    for meta in root.iter("meta"):
        meta.attrib.pop("lastmodifieddate", None)
    for element in root.iter("graph"):
        element.attrib.pop("name", None)
        _drop_attribute(element, "networkx_key")
    writer.write(out)


def _drop_attribute(graph: Any, title: str) -> None:
    """Remove the GEXF attribute ``title`` from ``graph``'s declarations and every value."""
    for block in graph.iter("attributes"):
        for attribute in [a for a in block.iter("attribute") if a.get("title") == title]:
            block.remove(attribute)
            for values in graph.iter("attvalues"):
                for value in [v for v in values if v.get("for") == attribute.get("id")]:
                    values.remove(value)


for _exp in (
    Exporter("turtle",
             lambda store, out: store.write_union(out, ox.RdfFormat.TURTLE, TURTLE_PREFIXES),
             "ttl", "text/turtle", "union of story graphs, prefixed Turtle"),
    Exporter("ntriples", lambda store, out: store.write_union(out, ox.RdfFormat.N_TRIPLES), "nt",
             "application/n-triples", "union of story graphs, N-Triples"),
    Exporter("jsonld", write_jsonld, "jsonld", "application/ld+json",
             "union of story graphs, compact JSON-LD (context: hcgraph/context.jsonld)"),
    Exporter("nquads", lambda store, out: store.dump(out, ox.RdfFormat.N_QUADS), "nq",
             "application/n-quads", "one named graph per story, N-Quads"),
    Exporter("trig", lambda store, out: store.dump(out, ox.RdfFormat.TRIG, TURTLE_PREFIXES), "trig",
             "application/trig", "one named graph per story, TriG"),
    Exporter("graphml", lambda store, out: nx.write_graphml(
                 _with_ids(_xml_safe_projection(store), node_ids=True), out, named_key_ids=True),
             "graphml", "application/graphml+xml", "networkx projection for Gephi/yEd"),
    Exporter("gexf", _gexf, "gexf", "application/gexf+xml", "networkx projection for Gephi",
             dynamic=_dynamic_gexf),
    Exporter("vosviewer", _vosviewer, "json", "application/json",
             "reuse map network for VOSviewer / VOSviewer Online"),
    Exporter("claimreview", _claimreview, "json", "application/ld+json",
             "support verdicts as schema.org ClaimReview JSON-LD", note=_claimreview_note),
):  # fmt: skip
    register(_exp)
