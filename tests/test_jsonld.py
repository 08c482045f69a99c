"""JSON-LD export: compact, with the ``@context`` of ``hcgraph/context.jsonld`` (built from
the prefixes hcgraph declares); pyld, rdflib and pyoxigraph read back exactly the triples of
the N-Triples export, hostile text included."""

from __future__ import annotations

import io
import json
from importlib.resources import files
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib
from rdflib.compare import to_isomorphic

from hcgraph.exporting import export
from hcgraph.ingest import ingest_bytes
from hcgraph.jsonld import context
from hcgraph.store import Store
from hcgraph.vocab import TURTLE_PREFIXES
from hcsample.corpus import generate_corpus
from tests.hostile import hostile_story

pyld = pytest.importorskip("pyld")
SEED = Path(__file__).resolve().parent / "fixtures" / "agentic-rl-production.json"


@pytest.fixture(scope="module")
def exports() -> tuple[bytes, bytes]:
    docs = [(SEED.read_bytes(), "seed.json"), (json.dumps(hostile_story(SEED)).encode(), "h.json")]
    docs += [
        (json.dumps(s).encode(), f"g{i}.json")
        for i, s in enumerate(generate_corpus(4, seed=11, hostile=True).stories)
    ]
    with Store(None) as store:
        assert ingest_bytes(store, docs).ok
        outs = []
        for fmt in ("jsonld", "ntriples"):
            buf = io.BytesIO()
            export(store, fmt, buf)
            outs.append(buf.getvalue())
    return outs[0], outs[1]


def _nt_set(text: str) -> set[str]:
    graph = ox.parse(text.encode(), format=ox.RdfFormat.N_TRIPLES)
    return {str(t) for t in graph}


def test_shipped_context_is_built_from_the_declared_prefixes() -> None:
    shipped = json.loads((files("hcgraph") / "context.jsonld").read_text())
    assert shipped == {"@context": context()}
    assert context() == TURTLE_PREFIXES


def test_jsonld_is_compact(exports: tuple[bytes, bytes]) -> None:
    doc = json.loads(exports[0])
    assert doc["@context"] == context()
    nodes = doc["@graph"]
    assert nodes and all("@id" in n for n in nodes)
    keys = {k for n in nodes for k in n}
    assert {"@type", "schema:headline", "cito:hasCitedEntity", "prov:wasDerivedFrom"} <= keys
    assert not any(k.startswith("http://purl.org/spar/cito/") for k in keys)
    ids = {n["@id"] for n in nodes}
    assert any(i.startswith("manifest:") for i in ids)


def test_pyld_reads_the_same_triples(exports: tuple[bytes, bytes]) -> None:
    doc = json.loads(exports[0])
    nquads = pyld.jsonld.to_rdf(doc, {"format": "application/n-quads"})
    assert _nt_set(nquads) == _nt_set(exports[1].decode())


def test_rdflib_and_pyoxigraph_read_the_same_triples(exports: tuple[bytes, bytes]) -> None:
    expected = rdflib.Graph().parse(data=exports[1], format="nt")
    got = rdflib.Graph().parse(data=exports[0], format="json-ld")
    assert len(got) == len(expected)
    assert to_isomorphic(got) == to_isomorphic(expected)
    oxi = {str(t) for t in ox.parse(exports[0], format=ox.RdfFormat.JSON_LD)}
    assert oxi == _nt_set(exports[1].decode())
