"""Every export parses with rdflib, pyoxigraph and Raptor's rapper, with equal triple counts,
on a corpus full of hostile text; the graph exports are typed and labelled for Gephi."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import networkx as nx
import pyoxigraph as ox
import pytest
import rdflib

from hcgraph.errors import UnknownFormatError
from hcgraph.exporting import FORMATS, export
from hcgraph.ingest import ingest_bytes
from hcgraph.store import Store
from hcsample.corpus import generate_corpus
from tests.hostile import NASTY, hostile_story

RDF_FORMATS = {
    # name: (pyoxigraph format, rdflib format, rapper syntax or None, keeps named graphs)
    "turtle": (ox.RdfFormat.TURTLE, "turtle", "turtle", False),
    "ntriples": (ox.RdfFormat.N_TRIPLES, "nt", "ntriples", False),
    "nquads": (ox.RdfFormat.N_QUADS, "nquads", "nquads", True),
    "trig": (ox.RdfFormat.TRIG, "trig", "trig", True),
    "jsonld": (ox.RdfFormat.JSON_LD, "json-ld", None, False),  # Raptor has no JSON-LD parser
}


@pytest.fixture(scope="module")
def hostile_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    seed = Path(__file__).parent / "fixtures" / "agentic-rl-production.json"
    docs = [(seed.read_bytes(), "seed.json")]
    docs.append((json.dumps(hostile_story(seed)).encode(), "hostile.json"))
    docs += [
        (json.dumps(s).encode(), f"gen{i}.json")
        for i, s in enumerate(generate_corpus(40, seed=11, hostile=True).stories)
    ]
    store = Store(tmp_path_factory.mktemp("hostile") / "store")
    report = ingest_bytes(store, docs)
    assert report.ok, report.failures
    return store


def _export(store: Store, fmt: str) -> bytes:
    out = io.BytesIO()
    export(store, fmt, out)
    return out.getvalue()


def _union_size(store: Store) -> int:
    return sum(1 for _ in store.union_triples())


@pytest.mark.slow  # three parsers over 10k+ triples, rapper in a subprocess
@pytest.mark.parametrize("fmt", sorted(RDF_FORMATS))
def test_rdf_export_round_trips_in_three_parsers(
    hostile_store: Store, fmt: str, tmp_path: Path
) -> None:
    ox_fmt, rdflib_fmt, rapper_syntax, quads = RDF_FORMATS[fmt]
    data = _export(hostile_store, fmt)
    expected = len(hostile_store) if quads else _union_size(hostile_store)
    assert expected > 10_000

    parsed = list(ox.parse(data, format=ox_fmt))
    assert len(parsed) == expected
    assert len(set(parsed)) == expected  # each triple (or quad) once

    if quads:
        ds = rdflib.Dataset()
        ds.parse(data=data, format=rdflib_fmt)
        assert len(list(ds.quads((None, None, None, None)))) == expected
    else:
        g = rdflib.Graph()
        g.parse(data=data, format=rdflib_fmt)
        assert len(g) == expected

    if rapper_syntax is not None:
        if shutil.which("rapper") is None:
            pytest.skip("rapper (raptor2-utils) not installed on this machine; CI installs it")
        path = tmp_path / f"out.{FORMATS[fmt].extension}"
        path.write_bytes(data)
        proc = subprocess.run(
            ["rapper", "-i", rapper_syntax, "-c", str(path)], capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
        assert "error" not in proc.stderr.lower()
        assert f"returned {expected} triples" in proc.stderr


def test_hostile_literals_survive_exactly(hostile_store: Store) -> None:
    data = _export(hostile_store, "turtle")
    g = rdflib.Graph().parse(data=data, format="turtle")
    texts = {str(o) for o in g.objects() if isinstance(o, rdflib.Literal)}
    for nasty in NASTY:
        assert nasty in texts or nasty * 2 in texts, nasty


def test_union_formats_hold_each_triple_once(hostile_store: Store) -> None:
    # Shared nodes (manifests, publishers, claims) are described once, in shared graphs: the
    # union is a set, so it has exactly as many triples as the store has quads.
    assert len(hostile_store) == _union_size(hostile_store)
    lines = _export(hostile_store, "ntriples").splitlines()
    assert len(lines) == len(set(lines)) == _union_size(hostile_store)


def test_turtle_uses_readable_prefixes(hostile_store: Store) -> None:
    head = _export(hostile_store, "turtle")[:2000].decode()
    for prefix in ("prov:", "cito:", "schema:", "dcterms:", "hc:", "claim:", "manifest:"):
        assert f"@prefix {prefix}" in head


@pytest.mark.parametrize("fmt, reader", [("graphml", nx.read_graphml), ("gexf", nx.read_gexf)])
def test_graph_exports_have_typed_labelled_nodes(
    hostile_store: Store, fmt: str, reader: object, tmp_path: Path
) -> None:
    path = tmp_path / f"g.{fmt}"
    path.write_bytes(_export(hostile_store, fmt))
    graph = reader(path)  # type: ignore[operator]
    types = {d.get("type") for _, d in graph.nodes(data=True)}
    assert {"Story", "Paragraph", "Claim", "Manifest", "Publisher", "SourceDocument"} <= types
    assert all(d.get("label") for _, d in graph.nodes(data=True))
    assert graph.number_of_edges() > graph.number_of_nodes()


def test_unknown_format_names_the_known_ones(hostile_store: Store) -> None:
    with pytest.raises(UnknownFormatError, match="turtle"):
        export(hostile_store, "rdfxml-please", io.BytesIO())
