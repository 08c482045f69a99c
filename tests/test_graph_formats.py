"""GraphML and GEXF exports obey their schemas: unique, stable ids, the predicate on each edge.

Each export is validated with lxml against the official XSDs, checked in under
``tests/fixtures/schemas/`` (GraphML 1.0 and 1.1, GEXF 1.2draft — what networkx writes; the
source and licence of each are in that folder's README). lxml enforces the identity
constraints too (``xs:key``/``xs:keyref``). The XSDs import one another by relative path only,
and lxml reads nothing from the network, so validation runs offline. A few structural checks
the XSDs do not state (GEXF has no identity constraints) are kept beside them.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from lxml import etree

from hcgraph.exporting import export
from hcgraph.ingest import ingest_bytes
from hcgraph.project import to_networkx
from hcgraph.store import Store
from hcsample.corpus import generate_corpus
from tests.hostile import hostile_story

SEED = Path(__file__).resolve().parent / "fixtures" / "agentic-rl-production.json"
G = "{http://graphml.graphdrawing.org/xmlns}"
X = "{http://www.gexf.net/1.2draft}"
SCHEMAS = Path(__file__).resolve().parent / "fixtures" / "schemas"
XSDS = {
    "graphml": ("graphml-1.0/graphml.xsd", "graphml-1.1/graphml.local.xsd"),
    "gexf": ("gexf-1.2draft/gexf.xsd",),
}
NMTOKEN = re.compile(r"^[\w.\-:\u00b7\u0300-\u036f\u203f\u2040]+$")


def _docs() -> list[tuple[bytes, str]]:
    docs = [(SEED.read_bytes(), "seed.json"), (json.dumps(hostile_story(SEED)).encode(), "h.json")]
    return docs + [
        (json.dumps(s).encode(), f"g{i}.json")
        for i, s in enumerate(generate_corpus(8, seed=3, hostile=True).stories)
    ]


def _export(docs: list[tuple[bytes, str]], fmt: str, where: Path) -> tuple[bytes, int]:
    with Store(where) as store:  # on disk: the index order is the content's order
        assert ingest_bytes(store, docs).ok
        buf = io.BytesIO()
        export(store, fmt, buf)
        return buf.getvalue(), to_networkx(store).number_of_edges()


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[bytes, int]]:
    docs = _docs()
    return {fmt: _export(docs, fmt, tmp_path_factory.mktemp(fmt)) for fmt in ("graphml", "gexf")}


def _children(elem: etree._Element) -> list[str]:
    return [c.tag for c in elem if isinstance(c.tag, str)]


def _ordered(tags: list[str], order: list[str]) -> bool:
    ranks = [order.index(t) for t in tags]
    return ranks == sorted(ranks)


def xsd_errors(data: bytes, fmt: str) -> list[str]:
    """What the official XSDs of ``fmt`` say is wrong with ``data`` (nothing for a valid file)."""
    errors = []
    for name in XSDS[fmt]:
        parser = etree.XMLParser(no_network=True, resolve_entities=False)
        schema = etree.XMLSchema(etree.parse(str(SCHEMAS / name), parser))
        if not schema.validate(etree.fromstring(data, parser)):
            errors += [f"{name}: line {e.line}: {e.message}" for e in schema.error_log]
    return errors


def validate_graphml(data: bytes) -> etree._Element:
    assert xsd_errors(data, "graphml") == []
    root = etree.fromstring(data)
    assert root.tag == G + "graphml"
    tags = _children(root)
    assert set(tags) <= {G + "desc", G + "key", G + "graph", G + "data"}
    assert _ordered([t if t != G + "data" else G + "graph" for t in tags],
                    [G + "desc", G + "key", G + "graph"])  # fmt: skip
    keys: dict[str, str] = {}
    for key in root.iter(G + "key"):
        kid = key.get("id")
        assert kid and NMTOKEN.match(kid) and kid not in keys, kid  # xs:key key_id_key
        kind = key.get("for", "all")
        assert kind in {"all", "graphml", "graph", "node", "edge", "hyperedge", "port", "endpoint"}
        assert key.get("attr.type", "string") in {"boolean", "int", "long", "float", "double",
                                                  "string"}  # fmt: skip
        keys[kid] = kind
    nodes: set[str] = set()
    for node in root.iter(G + "node"):
        nid = node.get("id")
        assert nid and NMTOKEN.match(nid), nid  # xs:NMTOKEN
        assert nid not in nodes  # xs:key node_id_key
        nodes.add(nid)
    edges: set[str] = set()
    for graph in root.iter(G + "graph"):
        assert graph.get("edgedefault") in {"directed", "undirected"}
        assert set(_children(graph)) <= {G + "desc", G + "data", G + "node", G + "edge",
                                         G + "hyperedge"}  # fmt: skip
    for edge in root.iter(G + "edge"):
        eid = edge.get("id")
        assert eid is not None and NMTOKEN.match(eid), eid
        assert eid not in edges, f"duplicate edge id {eid}"  # xs:key edge_id_key
        edges.add(eid)
        assert edge.get("source") in nodes and edge.get("target") in nodes  # xs:keyref
        assert edge.get("directed") in {None, "true", "false"}
    for datum in root.iter(G + "data"):
        parent = datum.getparent()
        assert parent is not None
        kind = keys.get(datum.get("key", ""))  # xs:keyref data_key_ref
        assert kind is not None, datum.get("key")
        assert kind in {"all", etree.QName(parent).localname}
    return root


def validate_gexf(data: bytes) -> etree._Element:
    assert xsd_errors(data, "gexf") == []
    root = etree.fromstring(data)
    assert root.tag == X + "gexf" and root.get("version") == "1.2"
    assert _ordered(_children(root), [X + "meta", X + "graph"])
    [graph] = root.findall(X + "graph")
    assert graph.get("defaultedgetype", "undirected") in {"directed", "undirected", "mutual"}
    assert graph.get("mode", "static") in {"static", "dynamic"}
    assert _ordered(_children(graph), [X + "attributes", X + "nodes", X + "edges"])
    attrs: dict[str, set[str]] = {"node": set(), "edge": set()}
    for block in graph.findall(X + "attributes"):
        cls = block.get("class")
        assert cls in attrs
        for attr in block.findall(X + "attribute"):
            assert attr.get("title") and attr.get("type") in {
                "integer", "long", "double", "float", "boolean", "liststring", "string", "anyURI"
            }  # fmt: skip
            assert attr.get("id") not in attrs[cls]
            attrs[cls].add(attr.get("id", ""))
    nodes: set[str] = set()
    for node in graph.iter(X + "node"):
        nid = node.get("id")
        assert nid and nid not in nodes
        nodes.add(nid)
        for value in node.iter(X + "attvalue"):
            assert value.get("for") in attrs["node"] and value.get("value") is not None
    edges: set[str] = set()
    for edge in graph.iter(X + "edge"):
        eid = edge.get("id")
        assert eid and eid not in edges, f"duplicate edge id {eid}"
        edges.add(eid)
        assert edge.get("source") in nodes and edge.get("target") in nodes
        for value in edge.iter(X + "attvalue"):
            assert value.get("for") in attrs["edge"] and value.get("value") is not None
    return root


def test_graphml_is_schema_valid_with_unique_edge_ids(
    exports: dict[str, tuple[bytes, int]],
) -> None:
    data, n_edges = exports["graphml"]
    root = validate_graphml(data)
    edges = list(root.iter(G + "edge"))
    assert len(edges) == n_edges > 100
    pred_key = [k.get("id") for k in root.iter(G + "key")
                if k.get("attr.name") == "predicate" and k.get("for") == "edge"]  # fmt: skip
    assert len(pred_key) == 1
    for edge in edges:
        preds = [d.text for d in edge.findall(G + "data") if d.get("key") == pred_key[0]]
        assert len(preds) == 1 and preds[0] and ":" in preds[0]
    iris = [k.get("id") for k in root.iter(G + "key") if k.get("attr.name") == "iri"]
    assert iris, "node IRIs are kept as the iri attribute"


def test_gexf_is_schema_valid_with_unique_edge_ids(exports: dict[str, tuple[bytes, int]]) -> None:
    data, n_edges = exports["gexf"]
    root = validate_gexf(data)
    assert len(list(root.iter(X + "edge"))) == n_edges
    assert b"lastmodifieddate" not in data
    titles = [a.get("title") for a in root.iter(X + "attribute")]
    assert "networkx_key" not in titles and titles.count("predicate") == 1


def test_the_schemas_reject_what_they_should(exports: dict[str, tuple[bytes, int]]) -> None:
    """The validation has teeth: a GEXF ``<graph name="">`` (what networkx writes) and a GraphML
    edge to an undeclared node fail it."""
    gexf = exports["gexf"][0].replace(b'<graph defaultedgetype="directed"',
                                      b'<graph name="" defaultedgetype="directed"', 1)  # fmt: skip
    assert any("name" in e for e in xsd_errors(gexf, "gexf"))
    graphml = re.sub(rb'target="n\d+"', b'target="nowhere"', exports["graphml"][0], count=1)
    assert xsd_errors(graphml, "graphml")


@pytest.mark.parametrize("fmt", ["graphml", "gexf"])
def test_graph_exports_are_stable(
    exports: dict[str, tuple[bytes, int]], fmt: str, tmp_path: Path
) -> None:
    """Same content, other ingest order: the same bytes, ids included."""
    assert _export(list(reversed(_docs())), fmt, tmp_path / "st")[0] == exports[fmt][0]
