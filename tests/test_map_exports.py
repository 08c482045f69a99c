"""The reuse map for other tools: VOSviewer JSON and the dynamic GEXF (issue 39).

The VOSviewer file is checked the way VOSviewer Online's own reader checks it (its
``src/workers/worker.js`` ``_parseJson`` and ``src/utils/errors.js`` ``getJsonDataError``,
neesjanvaneck/VOSviewer-Online): at least three items, ids present and unique, numeric
coordinates not all equal, every weight a non-negative number on every item (the reader fills
a key an item lacks with null, and a null weight is an error), scores numbers or null,
clusters integers 1…1000, every link's ends among the items, strengths non-negative.
The dynamic GEXF is validated with lxml against the official GEXF 1.3 XSD and RelaxNG
grammar in ``../shared/schemas/gexf-1.3`` (source and licence in that folder's README).
"""

from __future__ import annotations

import datetime as dt
import html
import io
import json
import re
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from lxml import etree

from hcgraph.errors import ExportError
from hcgraph.exporting import FORMATS, export
from hcgraph.ingest import ingest_bytes
from hcgraph.mapexport import start_dates
from hcgraph.store import Store
from hcgraph.viz import citation_graph
from hcgraph.viz.layout import communities
from hcgraph.viz.render import visible_bidi
from hcsample.corpus import generate_corpus
from tests.hostile import NASTY, hostile_story

SEED = Path(__file__).resolve().parent / "fixtures" / "agentic-rl-production.json"
GEXF13 = Path(__file__).resolve().parents[2] / "shared" / "schemas" / "gexf-1.3"
if not GEXF13.is_dir():  # CI and the shared workspace have it beside the checkout
    GEXF13 = Path("/work/shared/schemas/gexf-1.3")
X = "{http://gexf.net/1.3}"
HOSTILE_URL = "https://news.example.org/stories/2026-10-21/hostile/"


def _docs() -> list[tuple[bytes, str]]:
    docs = [(SEED.read_bytes(), "seed.json"), (json.dumps(hostile_story(SEED)).encode(), "h.json")]
    return docs + [
        (json.dumps(s).encode(), f"g{i}.json")
        for i, s in enumerate(generate_corpus(12, seed=5, hostile=True).stories)
    ]


def _export(store: Store, fmt: str, *, dynamic: bool = False) -> bytes:
    buf = io.BytesIO()
    export(store, fmt, buf, dynamic=dynamic)
    return buf.getvalue()


def _store(where: Path, docs: list[tuple[bytes, str]]) -> Store:
    store = Store(where)
    assert ingest_bytes(store, docs).ok
    return store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return _store(tmp_path_factory.mktemp("maps") / "st", _docs())


@pytest.fixture(scope="module")
def vos(store: Store) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(_export(store, "vosviewer"))
    return doc


@pytest.fixture(scope="module")
def gexf(store: Store) -> bytes:
    return _export(store, "gexf", dynamic=True)


# --- VOSviewer ---------------------------------------------------------------------------------
def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def vosviewer_errors(doc: dict[str, Any]) -> list[str]:
    """What VOSviewer Online's reader would refuse in ``doc`` (nothing for a good file)."""
    errors: list[str] = []
    items, links = doc["network"]["items"], doc["network"]["links"]
    if len(items) < 3:
        errors.append("fewer than three items")
    ids = [item.get("id") for item in items]
    if any(i is None or i == "" for i in ids):
        errors.append("an item without an id")
    if len(set(ids)) != len(ids):
        errors.append("ids not unique")
    weight_keys = {k for item in items for k in item.get("weights", {})}
    for item in items:
        if not (_number(item.get("x")) and _number(item.get("y"))):
            errors.append(f"item {item['id']}: x or y not a number")
        if not isinstance(item.get("label"), str):
            errors.append(f"item {item['id']}: label not a string")
        weights = item.get("weights", {})
        if any(not _number(weights.get(k)) or weights[k] < 0 for k in weight_keys):
            errors.append(f"item {item['id']}: a weight missing or not a non-negative number")
        if any(not _number(v) for v in item.get("scores", {}).values()):
            errors.append(f"item {item['id']}: a score not a number")
        cluster = item.get("cluster")
        if not isinstance(cluster, int) or isinstance(cluster, bool) or not 1 <= cluster <= 1000:
            errors.append(f"item {item['id']}: cluster not an integer in 1…1000")
    if items and len({(i["x"], i["y"]) for i in items}) == 1:
        errors.append("all items at the same coordinates")
    known = set(ids)
    for link in links:
        if link.get("source_id") not in known or link.get("target_id") not in known:
            errors.append(f"link {link}: an end is no item")
        if not _number(link.get("strength")) or link["strength"] < 0:
            errors.append(f"link {link}: strength not a non-negative number")
    for cluster in doc["network"].get("clusters", []):
        if not isinstance(cluster["cluster"], int) or not isinstance(cluster["label"], str):
            errors.append(f"cluster {cluster}: not (integer, label)")
    return errors


def test_vosviewer_file_passes_the_readers_checks(vos: dict[str, Any], store: Store) -> None:
    assert vosviewer_errors(vos) == []
    graph = citation_graph(store, "reuse", overview=False)
    items, links = vos["network"]["items"], vos["network"]["links"]
    assert len(items) == graph.number_of_nodes() > 50
    assert len(links) == graph.number_of_edges()
    assert all(isinstance(i["id"], int) for i in items)
    assert set(vos["config"]["terminology"]) <= {
        "item", "items", "link", "links", "cluster", "clusters", "link_strength",
        "total_link_strength",
    }  # fmt: skip


def test_the_readers_checks_have_teeth(vos: dict[str, Any]) -> None:
    broken = json.loads(json.dumps(vos))
    broken["network"]["links"][0]["target_id"] = 10**9
    broken["network"]["items"][1]["id"] = broken["network"]["items"][0]["id"]
    broken["network"]["items"][2]["weights"] = {}
    broken["network"]["items"][3]["cluster"] = 0
    errors = " | ".join(vosviewer_errors(broken))
    for what in ("an end is no item", "ids not unique", "a weight missing", "cluster not"):
        assert what in errors


def test_vosviewer_numbers_are_the_maps(vos: dict[str, Any], store: Store) -> None:
    """Clusters are the map's communities, weights its citing stories, links its edges."""
    graph = citation_graph(store, "reuse", overview=False)
    by_iri = {
        html.unescape(i["description"].rsplit("<br>", 1)[-1]): i for i in vos["network"]["items"]
    }
    assert set(by_iri) == set(graph)
    expected = sorted(sorted(c) for c in communities(graph))
    got: dict[int, list[str]] = {}
    for iri, item in by_iri.items():
        got.setdefault(item["cluster"], []).append(iri)
    assert sorted(sorted(c) for c in got.values()) == expected
    assert len(vos["network"]["clusters"]) == len(expected)
    for iri, item in by_iri.items():
        attrs = graph.nodes[iri]
        assert item["weights"] == {"Citing stories": attrs["stories"]}
    ids = {iri: item["id"] for iri, item in by_iri.items()}
    strength = {
        (ln["source_id"], ln["target_id"]): ln["strength"] for ln in vos["network"]["links"]
    }
    for s, t in graph.edges():
        expect = 1 if graph.nodes[s]["type"] == "Story" else max(1, graph.nodes[s]["stories"])
        assert strength[(ids[s], ids[t])] == expect
    # Every story's score is its publication day as a decimal year.
    for iri, item in by_iri.items():
        day = graph.nodes[iri]["date"]
        if graph.nodes[iri]["type"] == "Story" and day:
            d = dt.date.fromisoformat(day)
            assert int(item["scores"]["Date"]) == d.year
            assert abs(item["scores"]["Date"] - d.year - (d.timetuple().tm_yday - 1) / 365) < 0.01


def test_hostile_text_stays_text(vos: dict[str, Any]) -> None:
    """Labels are text (JSON); descriptions are HTML in VOSviewer, so every value is escaped:
    the only markup in them is our own ``<b>`` and ``<br>``; URLs are http(s) only."""
    items = vos["network"]["items"]
    for item in items:
        assert "<" not in re.sub(r"</?b>|<br>", "", item["description"])
        assert item.get("url", "https://").startswith(("https://", "http://"))
    [hostile] = [i for i in items if i.get("url") == HOSTILE_URL]
    headline = " | ".join(NASTY[:6])
    assert html.escape(visible_bidi(headline)) in hostile["description"]
    assert hostile["label"].startswith('double "quotes"')  # text as it is, not escaped
    # bidi controls shown, as on the map: in the label and in the info panel
    assert "\u202e" not in hostile["label"] and "\u202e" not in hostile["description"]


# --- dynamic GEXF ------------------------------------------------------------------------------
def gexf13_errors(data: bytes) -> list[str]:
    """What the official GEXF 1.3 XSD and RelaxNG grammar say is wrong with ``data``."""
    if not GEXF13.is_dir():
        pytest.skip(f"the GEXF 1.3 schemas are not at {GEXF13}")
    parser = etree.XMLParser(no_network=True, resolve_entities=False)
    doc = etree.fromstring(data, parser)
    xsd = etree.XMLSchema(etree.parse(str(GEXF13 / "gexf.xsd"), parser))
    rng = etree.RelaxNG(etree.parse(str(GEXF13 / "rng" / "gexf.rng"), parser))
    errors = []
    for name, schema in (("xsd", xsd), ("rng", rng)):
        if not schema.validate(doc):
            errors += [f"{name}: line {e.line}: {e.message}" for e in schema.error_log]
    return errors


def test_dynamic_gexf_is_valid_gexf_13(gexf: bytes, store: Store) -> None:
    assert gexf13_errors(gexf) == []
    root = etree.fromstring(gexf)
    assert root.tag == X + "gexf" and root.get("version") == "1.3"
    [graph] = root.findall(X + "graph")
    assert (graph.get("mode"), graph.get("timeformat")) == ("dynamic", "date")
    nodes = {n.get("id"): n for n in graph.iter(X + "node")}
    edges = list(graph.iter(X + "edge"))
    reuse = citation_graph(store, "reuse", overview=False)
    assert set(nodes) == set(reuse) and len(edges) == reuse.number_of_edges()
    assert len({e.get("id") for e in edges}) == len(edges)
    for e in edges:
        assert e.get("source") in nodes and e.get("target") in nodes


def test_the_gexf_schemas_have_teeth(gexf: bytes) -> None:
    bad = gexf.replace(b'start="', b'start="yesterday', 1)
    assert any("start" in e for e in gexf13_errors(bad))


def _day(element: Any) -> dt.date | None:
    text = element.get("start")
    return dt.date.fromisoformat(text) if text else None


def test_the_timeline_plays_forward(gexf: bytes, store: Store) -> None:
    """Stories start on their day; a link starts with its citing end and never before
    either end exists (a start of None: there from the beginning)."""
    graph = etree.fromstring(gexf).find(X + "graph")
    assert graph is not None
    reuse = citation_graph(store, "reuse", overview=False)
    start = {n.get("id"): _day(n) for n in graph.iter(X + "node")}
    dated = [n for n, d in start.items() if d is not None]
    assert len(dated) > len(start) / 2
    for n, day in start.items():
        if reuse.nodes[n]["type"] == "Story":
            assert (day.isoformat() if day else "") == reuse.nodes[n]["date"]
    for edge in graph.iter(X + "edge"):
        s, t, day = edge.get("source"), edge.get("target"), _day(edge)
        assert day == start[s]
        for end in (start[s], start[t]):
            assert end is None or (day is not None and end <= day)


def test_start_dates_rules() -> None:
    g = nx.DiGraph()
    for n, kind, day in [
        ("s1", "Story", "2026-03-01"), ("s2", "Story", "2026-01-15"), ("s3", "Story", ""),
        ("m1", "Manifest", "2025-12-31"), ("m2", "Manifest", ""), ("m3", "Manifest", "2026-02-01"),
        ("m4", "Manifest", ""), ("p1", "Publisher", ""), ("p2", "Publisher", ""),
        ("p3", "Publisher", ""),
    ]:  # fmt: skip
        g.add_node(n, type=kind, date=day)
    g.add_edges_from([("s1", "m1"), ("s2", "m1"), ("s1", "m2"), ("s2", "m2"), ("s3", "m3"),
                      ("m1", "p1"), ("m2", "p1"), ("m3", "p2"), ("m4", "p3")])  # fmt: skip
    start = start_dates(g)
    d = dt.date.fromisoformat
    assert start["s1"] == d("2026-03-01") and start["s3"] is None
    assert start["m1"] == d("2025-12-31")  # its document is older than its first cite
    assert start["m2"] == d("2026-01-15")  # undated document: its first citing story
    assert start["m3"] is None  # an undated story cites it: there from the beginning
    assert start["m4"] is None  # no date and no citer
    assert start["p1"] == d("2025-12-31") and start["p2"] is None and start["p3"] is None


# --- both ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt, dynamic", [("vosviewer", False), ("gexf", True)])
def test_map_exports_are_stable(store: Store, fmt: str, dynamic: bool, tmp_path: Path) -> None:
    """Same content, other ingest order: the same bytes (ids, clusters, layout included)."""
    with _store(tmp_path / "st", list(reversed(_docs()))) as other:
        assert _export(other, fmt, dynamic=dynamic) == _export(store, fmt, dynamic=dynamic)


def test_formats_without_a_dynamic_variant_say_so(store: Store, invoke: Any) -> None:
    assert FORMATS["gexf"].dynamic is not None and FORMATS["vosviewer"].dynamic is None
    with pytest.raises(ExportError, match="no dynamic variant"):
        _export(store, "turtle", dynamic=True)
    result = invoke("export", "--format", "vosviewer", "--dynamic", "--store", store.directory)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "error: --dynamic needs --format gexf (format vosviewer has no dynamic variant)"
    ]


def test_empty_store_exports_empty_maps(tmp_path: Path) -> None:
    with Store(tmp_path / "empty") as empty:
        assert json.loads(_export(empty, "vosviewer"))["network"]["items"] == []
        assert gexf13_errors(_export(empty, "gexf", dynamic=True)) == []
