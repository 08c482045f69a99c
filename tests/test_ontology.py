"""The ontology file and the code agree, and every term is properly declared."""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

import pytest
import rdflib
from rdflib.namespace import OWL, RDF, RDFS

from hcgraph.ingest import ingest_bytes
from hcgraph.store import Store
from hcgraph.vocab import HC
from hcsample.corpus import generate_corpus

ONTOLOGY = rdflib.Graph().parse(str(files("hcgraph") / "ontology.ttl"), format="turtle")
NS = str(HC)
DECLARED = {str(s)[len(NS) :] for s in ONTOLOGY.subjects(RDF.type, None) if str(s).startswith(NS)}


def test_code_and_ontology_list_the_same_terms() -> None:
    assert set(dir(HC)) == DECLARED


@pytest.mark.parametrize("name", sorted(dir(HC)))
def test_term_is_fully_declared(name: str) -> None:
    term = rdflib.URIRef(NS + name)
    # ``HC`` is an rdflib namespace, so a str: a term named like a str method (``count``,
    # ``index``, ``format``, …) would come back as that method from ``HC.name``, silently.
    assert getattr(HC, name) == term and HC[name] == term
    assert ONTOLOGY.value(term, RDFS.label) is not None
    assert ONTOLOGY.value(term, RDFS.comment) is not None
    kinds = set(ONTOLOGY.objects(term, RDF.type))
    if OWL.Class in kinds:
        supers = list(ONTOLOGY.objects(term, RDFS.subClassOf))
    else:
        assert kinds & {OWL.ObjectProperty, OWL.DatatypeProperty}
        assert ONTOLOGY.value(term, RDFS.domain) is not None
        assert ONTOLOGY.value(term, RDFS.range) is not None
        supers = list(ONTOLOGY.objects(term, RDFS.subPropertyOf))
    assert supers and all(not str(s).startswith(NS) for s in supers)  # tied to a standard term


def test_every_hc_term_written_is_declared(seed_bytes: bytes) -> None:
    import json

    docs = [(seed_bytes, "seed")] + [
        (json.dumps(s).encode(), str(i)) for i, s in enumerate(generate_corpus(60, seed=5).stories)
    ]
    with Store(None) as store:
        ingest_bytes(store, docs)
        used = set()
        for t in store.union_triples():
            for term in (t.predicate, t.object):
                if term.value.startswith(NS):
                    used.add(term.value[len(NS) :])
    assert used <= DECLARED
    assert len(used) >= 35  # the mapping really uses the ontology


def test_every_term_the_code_names_is_declared() -> None:
    """``HC.name``, ``HC["name"]``, ``HCT("name")`` and ``_t(HC, "name")`` in the package, in
    either quotes (claims/graphing.py writes ``_t(HC, 'name')``): each a declared term (what
    mypy checked of the class ``HC`` was, and the string forms it never checked)."""
    package = Path(str(files("hcgraph")))
    source = "\n".join(p.read_text(encoding="utf-8") for p in package.rglob("*.py"))
    quoted = r"""["'](\w+)["']"""
    named = {
        *re.findall(r"\bHC\.([A-Za-z]\w*)", source),
        *re.findall(r"\bHC\[" + quoted + r"\]", source),
        *re.findall(r"\bHCT\(" + quoted + r"\)", source),
        *re.findall(r"\b_t\(HC, " + quoted + r"\)", source),
    }
    assert len(named) >= 65 and named <= DECLARED, sorted(named - DECLARED)
