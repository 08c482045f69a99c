"""An OWL 2 RL reasoner over real data: the ontology's links to standard terms are sound.

The data (the real seed story and a small generated corpus), ``hcgraph/ontology.ttl`` and the
relevant axioms of the standard vocabularies (``tests/fixtures/standard-axioms.ttl``: CiTO's
functional citation properties, PROV-O's domains, ranges and Entity/Activity disjointness,
which DCMI/schema.org properties expect resources) are closed under OWL 2 RL with ``owlrl``.
Nothing may follow that a consumer would find absurd: two distinct IRIs ``owl:sameAs`` (a
manifest and a claim, through a second cited entity), ``owl:Nothing`` members (an Activity
that is an Entity), or a literal as the value of a property that expects a resource
(``schema:citation 6``).
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib
from rdflib.namespace import OWL, RDF

from hcgraph.ingest import ingest_bytes
from hcgraph.store import Store
from hcgraph.vocab import CITO, HC, PROV, SDO
from hcsample.corpus import generate_corpus

owlrl = pytest.importorskip("owlrl")

AXIOMS = Path(__file__).resolve().parent / "fixtures" / "standard-axioms.ttl"


def _data(seed_bytes: bytes, n: int = 4) -> rdflib.Graph:
    docs = [(seed_bytes, "seed.json")] + [
        (json.dumps(s).encode(), f"{i}.json")
        for i, s in enumerate(generate_corpus(n, seed=11).stories)
    ]
    with Store(None) as store:
        ingest_bytes(store, docs)
        text = ox.serialize(list(store.union_triples()), format=ox.RdfFormat.N_TRIPLES)
    assert text is not None
    return rdflib.Graph().parse(data=text, format="nt")


@pytest.fixture(scope="module")
def data() -> rdflib.Graph:
    return _data((AXIOMS.parent / "agentic-rl-production.json").read_bytes())


def test_owl_rl_closure_has_no_absurd_entailments(data: rdflib.Graph) -> None:
    graph = rdflib.Graph()
    for triple in data:
        graph.add(triple)
    graph.parse(str(files("hcgraph") / "ontology.ttl"), format="turtle")
    graph.parse(AXIOMS, format="turtle")
    closure = owlrl.DeductiveClosure(owlrl.OWLRL_Semantics, axiomatic_triples=False)
    closure.expand(graph)
    same = sorted(
        (str(a), str(b))
        for a, b in graph.subject_objects(OWL.sameAs)
        if a != b and isinstance(a, rdflib.URIRef) and isinstance(b, rdflib.URIRef)
    )
    assert same == [], same[:5]
    nothing = sorted(str(s) for s in graph.subjects(RDF.type, OWL.Nothing))
    assert nothing == [], nothing[:5]
    errors = [str(o) for o in graph.objects(None, owlrl.Closure.ERRNS.error)]
    assert errors == [], errors[:5]
    object_props = set(graph.subjects(RDF.type, OWL.ObjectProperty))
    misplaced = sorted(
        {
            (str(p), str(o))
            for p in object_props
            for o in graph.objects(None, p)
            if isinstance(o, rdflib.Literal)
        }
    )
    assert misplaced == [], misplaced[:5]


def test_types_consumers_look_for_are_stated(data: rdflib.Graph) -> None:
    """Without inference: citations, activities, agents and organisations say what they are."""

    def typed(cls: rdflib.URIRef) -> set[rdflib.term.Node]:
        return set(data.subjects(RDF.type, cls))

    citations = typed(rdflib.URIRef(HC.Citation))
    assert citations and citations <= typed(CITO.Citation)
    for c in citations:
        assert len(set(data.objects(c, CITO.hasCitedEntity))) == 1
        assert len(set(data.objects(c, CITO.hasCitingEntity))) == 1
        assert set(data.objects(c, CITO.hasCitationCharacterization)) == {CITO.citesAsEvidence}
    activities = typed(rdflib.URIRef(HC.Ingest)) | typed(rdflib.URIRef(HC.WriterRun))
    assert activities and activities <= typed(PROV.Activity)
    orgs = typed(rdflib.URIRef(HC.Publisher)) | typed(rdflib.URIRef(HC.Newsroom))
    assert orgs and orgs <= typed(SDO.Organization) & typed(PROV.Agent)
    software = typed(PROV.SoftwareAgent)
    assert software and software <= typed(PROV.Agent)
