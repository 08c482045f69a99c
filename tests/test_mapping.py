"""The seed story, mapped and stored, answers the basic questions over SPARQL."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from hcgraph.ingest import ingest_bytes
from hcgraph.mapping import IngestInfo, map_story
from hcgraph.model import parse_story
from hcgraph.store import Store
from hcgraph.vocab import SHARED_GRAPHS
from tests.conftest import SEED_URL


@pytest.fixture
def seeded(store: Store, seed_bytes: bytes) -> Store:
    report = ingest_bytes(store, [(seed_bytes, "seed.json")])
    assert report.ok and report.count("added") == 1
    return store


def _count(store: Store, where: str) -> int:
    rows = list(store.query(f"SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE {{ {where} }}"))
    return int(rows[0]["n"].value)


def test_one_story_with_headline_and_date(seeded: Store) -> None:
    rows = list(
        seeded.query(
            "SELECT ?s ?h ?d WHERE { ?s a hc:Story ; schema:headline ?h ; schema:datePublished ?d }"
        )
    )
    assert len(rows) == 1
    assert rows[0]["s"].value == SEED_URL
    assert rows[0]["h"].value.startswith("Agentic RL grows up")
    assert rows[0]["d"].value == "2026-10-20T00:54:40Z"
    assert rows[0]["d"].datatype.value.endswith("#dateTime")


@pytest.mark.parametrize(
    "where, expected",
    [
        ("?x a hc:Section ; dcterms:isPartOf ?s . ?s a hc:Story", 5),
        ("?x a hc:Paragraph ; dcterms:isPartOf/dcterms:isPartOf ?s . ?s a hc:Story", 9),
        ("?s hc:keyFact ?x . ?x a hc:KeyFact", 5),
        ("?x a hc:Claim", 24),
        ("?x a hc:Manifest", 5),
        ("?x a hc:Publisher", 4),
        ("?s dcterms:relation ?x", 4),
        ("?s hc:unresolved ?x . ?x a hc:UnresolvedQuestion", 4),
        ("?p cito:citesAsEvidence ?x", 24),
        ("?m prov:hadPrimarySource ?x . ?x a hc:SourceDocument", 5),
    ],
)
def test_seed_counts(seeded: Store, where: str, expected: int) -> None:
    assert _count(seeded, where) == expected


def test_each_claim_linked_to_its_own_manifest(seeded: Store, seed_path: Path) -> None:
    doc = json.loads(seed_path.read_text())
    expected: dict[str, str] = {}
    for cites in [p["cites"] for s in doc["sections"] for p in s["paragraphs"]] + [
        k["cites"] for k in doc["key_facts"]
    ]:
        for cite in cites:
            for claim in cite["claim_ids"]:
                expected[claim] = cite["manifest_id"]
    rows = seeded.query(
        "SELECT ?cid ?mid WHERE { ?c a hc:Claim ; dcterms:identifier ?cid ; dcterms:isPartOf ?m ."
        " ?m dcterms:identifier ?mid }"
    )
    got = {r["cid"].value: r["mid"].value for r in rows}
    assert len(expected) == 24
    assert got == expected


def test_manifests_trace_to_source_and_publisher(seeded: Store) -> None:
    rows = list(
        seeded.query(
            "SELECT ?title ?url ?pub ?date WHERE { ?m a hc:Manifest ; dcterms:title ?title ;"
            " prov:hadPrimarySource ?doc ; dcterms:publisher/schema:name ?pub ."
            " ?doc dcterms:issued ?date . BIND(STR(?doc) AS ?url) }"
        )
    )
    assert len(rows) == 5
    assert {r["pub"].value for r in rows} == {
        "arxiv-ai-agents-tool-use",
        "arxiv-ai-finance-markets",
        "arxiv-frontier-methods-select",
        "huggingface-daily-papers",
    }
    assert {r["date"].value for r in rows} == {"2026-10-19"}


def test_writer_and_ingest_provenance(seeded: Store, seed_bytes: bytes) -> None:
    import hashlib

    rows = list(
        seeded.query(
            "SELECT ?agent ?run ?sha ?src WHERE { ?s a hc:Story ; prov:wasAttributedTo ?a ;"
            " prov:wasGeneratedBy ?r ; hc:rawDocument ?raw . ?a schema:name ?agent ."
            " ?r dcterms:identifier ?run . ?raw hc:sha256 ?sha ."
            " ?i prov:used ?raw ; hc:sourceLocation ?src ; prov:endedAtTime ?t }"
        )
    )
    assert len(rows) == 1
    assert rows[0]["agent"].value == "muse"
    assert rows[0]["run"].value == "2026-10-20T00"
    assert rows[0]["sha"].value == hashlib.sha256(seed_bytes).hexdigest()
    assert rows[0]["src"].value == "seed.json"


def test_triples_live_in_the_story_graph_and_the_shared_graphs_only(seeded: Store) -> None:
    assert seeded.story_graphs() == [SEED_URL]
    assert seeded.graph_names() == sorted([SEED_URL, *SHARED_GRAPHS.values()])
    assert list(seeded.ox.quads_for_pattern(None, None, None, ox.DefaultGraph())) == []


def test_mapping_is_deterministic(seed_bytes: bytes) -> None:
    info = IngestInfo("ab" * 32, "seed.json", dt.datetime(2026, 11, 1, tzinfo=dt.UTC), 10)
    first = map_story(parse_story(seed_bytes, "a"), info)
    second = map_story(parse_story(seed_bytes, "b"), info)
    assert first == second
    assert len(set(first.triples)) == len(first.triples)  # no triple emitted twice
    # each shared subject in one graph only, and no shared triple in the story graph
    shared = [t for d in first.shared.values() for t in d.triples]
    assert len(set(shared)) == len(shared)
    assert not set(shared) & set(first.triples)


def test_nquads_utf8_are_the_story_graphs_lines(seed_path: Path) -> None:
    """The bytes bulk-loaded (ASCII lines first) hold exactly the lines of ``nquads()``."""
    info = IngestInfo("ab" * 32, "seed.json", dt.datetime(2026, 11, 1, tzinfo=dt.UTC), 10)
    headline = "Z\u00fcrich \U0001f99c \u2013 a \u201ctest\u201d"  # Latin-1, astral, BMP
    wide = _mutated(seed_path, lambda d: d.update(headline=headline))
    for raw in (wide, seed_path.read_bytes()):
        mapped = map_story(parse_story(raw, "s"), info)
        text = mapped.nquads().encode()
        data = mapped.nquads_utf8()
        assert sorted(data.splitlines()) == sorted(text.splitlines())
        assert len(data) == len(text) and data.endswith(b" .\n")
    assert "🦜".encode() in map_story(parse_story(wide, "s"), info).nquads_utf8()


def _mutated(seed_path: Path, change: callable) -> bytes:  # type: ignore[valid-type]
    doc = json.loads(seed_path.read_text())
    change(doc)
    return json.dumps(doc).encode()


def test_dangling_manifest_and_claim_are_kept_and_marked(store: Store, seed_path: Path) -> None:
    def plant(doc: dict) -> None:
        doc["sections"][0]["paragraphs"][0]["cites"].append(
            {"manifest_id": "1111111111111111111", "claim_ids": ["2222222222222222222"]}
        )
        # a claim of manifest 1792439777014362933 cited under another listed manifest
        doc["sections"][1]["paragraphs"][0]["cites"][0]["claim_ids"].append("1792440033556282600")

    ingest_bytes(store, [(_mutated(seed_path, plant), "x.json")])
    rows = list(
        store.query(
            "SELECT ?id WHERE { ?s hc:citesUnlistedManifest ?m . ?m dcterms:identifier ?id }"
        )
    )
    assert [r["id"].value for r in rows] == ["1111111111111111111"]
    assert _count(store, "?x a hc:Manifest") == 6
    assert _count(store, "?x dcterms:identifier '2222222222222222222' ; a hc:Claim") == 1
    rows = list(
        store.query(
            "SELECT ?c (COUNT(DISTINCT ?m) AS ?n) WHERE { ?c a hc:Claim ; dcterms:isPartOf ?m }"
            " GROUP BY ?c HAVING (COUNT(DISTINCT ?m) > 1)"
        )
    )
    assert [r["c"].value.rsplit("/", 1)[1] for r in rows] == ["1792440033556282600"]


def test_unknown_fields_become_json_literals(store: Store, seed_path: Path) -> None:
    def plant(doc: dict) -> None:
        doc["x_future"] = {"k": "v <script>"}
        doc["manifests"][0]["doi"] = "10.1/x"

    ingest_bytes(store, [(_mutated(seed_path, plant), "x.json")])
    values = {
        json.dumps(json.loads(r["j"].value), sort_keys=True)
        for r in store.query("SELECT ?j WHERE { ?s hc:unmappedJson ?j }")
    }
    assert json.dumps({"x_future": {"k": "v <script>"}}, sort_keys=True) in values
    assert json.dumps({"doi": "10.1/x"}) in values


#: Mapping a story in a fresh interpreter; prints the crawler and HTTP modules it loaded.
_MAP_ALONE = """
import datetime as dt, sys
from pathlib import Path
import hcgraph.mapping
from hcgraph.mapping import IngestInfo, map_story
from hcgraph.model import parse_story
raw = Path(sys.argv[1]).read_bytes()
story = parse_story(raw, "seed.json")
assert story.related, "the fixture must have related links (they are canonicalised)"
info = IngestInfo("ab" * 32, "seed.json", dt.datetime(2026, 11, 1, tzinfo=dt.UTC), len(raw))
assert map_story(story, info).triples
print(sorted(m for m in sys.modules if m.startswith(("hcgraph.crawl", "httpx"))))
"""


@pytest.mark.slow
def test_mapping_loads_no_crawler(seed_path: Path) -> None:
    """Mapping canonicalises related links (hcgraph.urls) without loading the crawler or
    its HTTP client: the one import arrow that ran back up the stages."""
    import subprocess
    import sys

    from tests.conftest import cli_env

    done = subprocess.run(
        [sys.executable, "-c", _MAP_ALONE, str(seed_path)],
        env=cli_env(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
