"""Compact JSON-LD: the union graph with a ``@context`` built from hcgraph's prefixes.

The context (:func:`context`, shipped as ``hcgraph/context.jsonld``) maps each prefix of
:data:`~hcgraph.vocab.TURTLE_PREFIXES` to its namespace. The document is streamed as
``{"@context": {…}, "@graph": [node, …]}``, one node object per run of triples about one
subject, in the store's order: CURIEs for ``@id`` and keys, ``rdf:type`` as ``@type``, plain
strings as JSON strings, every other literal as ``{"@value", "@type"|"@language"}`` (and
``"@direction"`` for ``"…"@he--rtl``) with its exact lexical form (no JSON numbers, which
would re-canonicalise ``06``). A triple term (RDF 1.2) has no JSON-LD 1.1 form: refused. An
IRI becomes a CURIE only where expansion gives it back; one whose scheme is a prefix name is
refused.
"""

from __future__ import annotations

import itertools
import json
from functools import lru_cache
from typing import BinaryIO

import pyoxigraph as ox

from .errors import ExportError
from .store import Store
from .vocab import RDF, TURTLE_PREFIXES

__all__ = ["context", "write_jsonld"]

_TYPE = str(RDF.type)
_STRING = "http://www.w3.org/2001/XMLSchema#string"


def context() -> dict[str, str]:
    """The JSON-LD context: prefix → namespace (the content of ``hcgraph/context.jsonld``)."""
    return dict(TURTLE_PREFIXES)


# longest namespace first, so ``…/id/claim/`` wins over a shorter one
_BY_LENGTH = sorted(TURTLE_PREFIXES.items(), key=lambda kv: -len(kv[1]))


@lru_cache(maxsize=1 << 16)
def _curie(iri: str) -> str:
    """``iri`` as a CURIE of :func:`context` where expanding it gives ``iri`` back."""
    for prefix, ns in _BY_LENGTH:
        if iri.startswith(ns) and not iri[len(ns) :].startswith("//"):
            return f"{prefix}:{iri[len(ns) :]}"
    if iri.split(":", 1)[0] in TURTLE_PREFIXES:
        raise ExportError(f"IRI {iri!r} would read back as a CURIE in JSON-LD; use --format trig")
    return iri


def _node_id(term: ox.NamedNode | ox.BlankNode | ox.Triple) -> str:
    if isinstance(term, ox.NamedNode):
        return _curie(term.value)
    if isinstance(term, ox.BlankNode):
        return "_:" + term.value
    raise ExportError(
        f"the graph holds a triple term (RDF 1.2), <<( {term} )>>, which JSON-LD 1.1 cannot"
        " carry; use --format turtle, trig or nquads"
    )


def _value(term: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple) -> object:
    if isinstance(term, ox.Literal):
        datatype = term.datatype.value
        if term.language:
            value = {"@value": term.value, "@language": term.language}
            if term.direction is not None:  # "…"@he--rtl: JSON-LD 1.1's @direction
                value["@direction"] = str(term.direction)
            return value
        if datatype == _STRING:
            return term.value
        return {"@value": term.value, "@type": _curie(datatype)}
    return {"@id": _node_id(term)}


def write_jsonld(store: Store, out: BinaryIO) -> None:
    """Write the union of all graphs as compact JSON-LD (see the module docstring)."""
    head = json.dumps({"@context": context()}, ensure_ascii=False, indent=1)[:-2]
    out.write((head + ',\n "@graph": [').encode())
    separator = "\n"
    for sid, triples in itertools.groupby(store.union_triples(), lambda t: _node_id(t.subject)):
        node: dict[str, list[object]] = {}
        for triple in triples:
            pred, obj = triple.predicate.value, triple.object
            if pred == _TYPE and isinstance(obj, ox.NamedNode):
                node.setdefault("@type", []).append(_curie(obj.value))
            else:
                node.setdefault(_curie(pred), []).append(_value(obj))
        text = json.dumps({"@id": sid, **node}, ensure_ascii=False, separators=(",", ":"))
        out.write((separator + text).encode())
        separator = ",\n"
    out.write(b"\n]}\n")
