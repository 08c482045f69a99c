"""Exports: a registry of formats, each a function writing the store to a binary stream.

:data:`FORMATS` (docs/graph.md describes each). Output order depends only on the store's
content, so the same stories export to the same bytes.
"""

from __future__ import annotations

import importlib
import io
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

__all__ = ["FORMATS", "Exporter", "export"]


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


def export(store: Store, fmt: str, out: BinaryIO, *, dynamic: bool = False) -> None:
    """Write the store to ``out`` in format ``fmt`` (a name in :data:`FORMATS`); with
    ``dynamic``, its time-stamped variant.

    Raises:
        UnknownFormatError: ``fmt`` is no registered format.
        ExportError: ``dynamic`` for a format without a dynamic variant.
    """
    if (exporter := FORMATS.get(fmt)) is None:
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


def _later(module: str, name: str) -> Callable[..., Any]:
    """``module.name``, imported on the first call (the viz modules load only when asked for)."""

    def call(*args: Any) -> Any:
        return getattr(importlib.import_module(module, __package__), name)(*args)

    return call


def _with_ids(store: Store, *, node_ids: bool) -> nx.MultiDiGraph:
    """The projection, text XML 1.0 forbids as U+FFFD, with unique ids that depend only on
    its content: edges ``e0…`` in (source, target, predicate) order, the predicate an
    attribute; with ``node_ids`` (GraphML's ``xs:NMTOKEN``) nodes ``n0…`` in IRI order, the
    IRI in ``iri``."""
    graph = to_networkx(store)
    out = nx.MultiDiGraph()
    out.graph.update(graph.graph)
    ids = {iri: (f"n{i}" if node_ids else iri) for i, iri in enumerate(sorted(graph.nodes))}
    for iri, new in ids.items():
        data = graph.nodes[iri].items()
        out.add_node(new, **{k: XML_FORBIDDEN.sub("\ufffd", v) for k, v in data})
    edges = sorted((u, v, d["predicate"]) for u, v, d in graph.edges(data=True))
    for i, (u, v, pred) in enumerate(edges):
        extra = {} if node_ids else {"id": f"e{i}", "label": pred}
        out.add_edge(ids[u], ids[v], key=f"e{i}", predicate=pred, **extra)
    return out


def _graphml(store: Store, out: BinaryIO) -> None:
    """The projection as GraphML, made in memory and then written: networkx writes it
    through lxml's ``xmlfile``, which drops a small file's write error (a full disk gave
    exit 0) and, on a large one, crashes the interpreter later (``> /dev/full``)."""
    buffer = io.BytesIO()
    nx.write_graphml(_with_ids(store, node_ids=True), buffer, named_key_ids=True)
    out.write(buffer.getbuffer())


def _gexf(store: Store, out: BinaryIO) -> None:
    """The projection as GEXF 1.2draft that validates against gexf.net's ``gexf.xsd``:
    networkx's ``graph name`` (not in the schema), ``networkx_key`` edge attribute (a copy
    of the edge id) and today's ``lastmodifieddate`` (bytes would differ by day) removed."""
    graph = _with_ids(store, node_ids=False)
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
    for block in graph.iter("attributes"):
        for attribute in [a for a in block.iter("attribute") if a.get("title") == title]:
            block.remove(attribute)
            for values in graph.iter("attvalues"):
                for value in [v for v in values if v.get("for") == attribute.get("id")]:
                    values.remove(value)


#: Format name → :class:`Exporter` (``hcgraph export --format``).
FORMATS: dict[str, Exporter] = {e.name: e for e in (
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
    Exporter("graphml", _graphml, "graphml",
             "application/graphml+xml", "networkx projection for Gephi/yEd"),
    Exporter("gexf", _gexf, "gexf", "application/gexf+xml", "networkx projection for Gephi",
             dynamic=_later(".mapexport", "write_dynamic_gexf")),
    Exporter("vosviewer", _later(".mapexport", "write_vosviewer"), "json", "application/json",
             "reuse map network for VOSviewer / VOSviewer Online"),
    Exporter("claimreview", _later(".claimreview", "write_claimreview"), "json",
             "application/ld+json", "support verdicts as schema.org ClaimReview JSON-LD",
             note=_later(".claimreview", "empty_note")),
)}  # fmt: skip
