"""The sources (circle packing) and time views' data, checked against ground truth (issue 40).

Fast: no browser. The pages themselves are driven in Chromium in
tests/test_viz_sources_time_browser.py.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from hcgraph import Store, citation_graph, ingest_bytes
from hcgraph.claims.plaintext import plain
from hcgraph.viz import VIEWS, default_map_path, render_map
from hcgraph.viz import sources as sources_mod
from hcgraph.viz.data import short
from hcgraph.viz.render import D3_HIERARCHY_SHA256, D3_HIERARCHY_VERSION, safe_json
from hcgraph.viz.sources import PASSAGE_CHARS, sources_payload
from hcgraph.viz.timeline import lag_days, lag_summary, time_payload
from tests.conftest import SEED, SEED_URL, CorpusStore
from tests.hostile import CANARY


def test_both_views_are_registered() -> None:
    assert {"sources", "time"} <= set(VIEWS)
    assert default_map_path("time", None) == Path("output/map-time.html")


def test_sources_payload_counts_and_citers_match_ground_truth(corpus_store: CorpusStore) -> None:
    truth: Any = corpus_store.truth
    graph = citation_graph(corpus_store.store, "sources")
    payload = sources_payload(graph)
    stories = payload["stories"]
    assert len(payload["sources"]) == len(payload["citers"])
    for row, citers in zip(payload["sources"], payload["citers"], strict=True):
        iri, _label, _title, _url, _date, pub, count, mid = row
        expected = truth.manifest_citing_stories.get(mid, frozenset())
        assert count == len(expected) == len(citers), mid
        assert {stories[k][0] for k, _p in citers} == set(expected)
        # Newest first: the page lists them in this order.
        dates = [stories[k][2] for k, _p in citers]
        assert dates == sorted(dates, reverse=True)
        publisher = payload["publishers"][pub]
        assert iri in graph and publisher[3] in set(graph.successors(iri)) | {
            "urn:hcgraph:no-publisher"
        }
    # Publishers carry their reach (distinct stories), largest first.
    reach = [p[2] for p in payload["publishers"]]
    assert reach == sorted(reach, reverse=True)
    for _label, name, count, _iri in payload["publishers"]:
        if name in truth.publisher_reach:
            assert count == truth.publisher_reach[name][0]


def test_sources_passages_are_the_citing_paragraphs(corpus_store: CorpusStore) -> None:
    """The seed story's passages under each manifest are its paragraphs citing it, in order."""
    seed = json.loads(SEED.read_text())
    graph = citation_graph(corpus_store.store, "sources")
    passages = graph.graph["passages"]
    expected: dict[str, list[str]] = {}
    for i, section in enumerate(seed["sections"]):
        for j, para in enumerate(section["paragraphs"]):
            for cite in para.get("cites") or ():
                rows = expected.setdefault(str(cite["manifest_id"]), [])
                text = short(plain(para["markdown"]).text, PASSAGE_CHARS)
                if (f"#s{i + 1}-p{j + 1}", text) not in rows:
                    rows.append((f"#s{i + 1}-p{j + 1}", text))  # type: ignore[arg-type]
    found = 0
    for (story, manifest), rows in passages.items():
        if story != SEED_URL:
            continue
        mid = graph.nodes[manifest]["id"]
        got = [(p[len(SEED_URL) :], t) for p, t in rows if "#s" in p]
        assert got == expected[mid], mid
        found += 1
    assert found  # the seed story is among the newest citers of some sources


def test_passage_budget_is_kept_and_said(
    corpus_store: CorpusStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sources_mod, "PASSAGE_BUDGET", 5000)
    graph = citation_graph(corpus_store.store, "sources")
    size = sum(len(t) for rows in graph.graph["passages"].values() for _p, t in rows)
    assert 0 < size <= 5000
    assert "the others linked" in graph.graph["note"]


def test_sources_page_is_offline_and_hostile_text_stays_data(
    corpus_store: CorpusStore,
) -> None:
    stories = json.loads(SEED.read_text())
    stories["headline"] = CANARY
    with Store(None) as st:
        assert not ingest_bytes(st, [(json.dumps(stories).encode(), "seed")]).failures
        for view in ("sources", "time"):
            html = render_map(citation_graph(st, view))
            assert "<script>window.__pwned" not in html and "<img src=x" not in html
            assert "\\u003cscript\\u003ewindow.__pwned" in html
            csp = re.search(r'Content-Security-Policy" content="([^"]+)"', html)
            assert csp and "default-src 'none'" in csp.group(1)
            assert "unsafe-inline'" not in csp.group(1).split("style-src")[0]
            assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert safe_json(CANARY).count("<") == 0


def test_lag_days_match_ground_truth(corpus_store: CorpusStore) -> None:
    """Every cited (story, manifest) pair dated at both ends, the source's date known from any
    story listing it (a story citing a manifest it does not list still has its lag)."""
    truth: Any = corpus_store.truth
    graph = citation_graph(corpus_store.store, "time")
    published: dict[str, dt.date] = {}
    for story in corpus_store.stories:
        for m in story["manifests"]:  # type: ignore[attr-defined]
            if m.get("published_date"):
                published.setdefault(
                    str(m["manifest_id"]), dt.date.fromisoformat(m["published_date"])
                )
    expected = []
    for story in corpus_store.stories:
        day = dt.datetime.fromisoformat(str(story["published_at"]).replace("Z", "+00:00")).date()
        for mid in truth.story_cited_manifests.get(story["url"], ()):
            if mid in published:
                expected.append((day - published[mid]).days)
    assert lag_days(graph) == sorted(expected)
    listed = [v for (u, mid), v in truth.source_lag_days.items()
              if mid in truth.story_cited_manifests.get(u, ())]  # fmt: skip
    assert set(listed) <= set(expected) and len(listed) < len(expected)
    payload = time_payload(graph)
    assert payload["lag"] == lag_summary(expected)
    # The page holds dated stories and sources only: every citation it draws has a lag.
    assert payload["lag"]["n"] == len(payload["cites"]["s"])


def test_lag_summary_is_nearest_rank() -> None:
    s = lag_summary([10, -2, 0, 3, 3, 400, 7])
    assert (s["n"], s["min"], s["q1"], s["median"], s["q3"], s["p90"], s["max"]) == (
        7, -2, 0, 3, 7, 10, 400,
    )  # fmt: skip
    assert dict(s["bins"]) == {
        "source after story": 1, "same day": 1, "1-7 days": 3, "8-30 days": 1,
        "31-90 days": 0, "91-365 days": 0, "over a year": 1,
    }  # fmt: skip
    assert lag_summary([]) == {"n": 0, "bins": [[b[0], 0] for b in lag_summary([1])["bins"]]}


def test_time_payload_places_dated_stories_in_newsroom_lanes(corpus_store: CorpusStore) -> None:
    graph = citation_graph(corpus_store.store, "time")
    p = time_payload(graph)
    s, m, c = p["stories"], p["sources"], p["cites"]
    assert len(set(map(len, s.values()))) == 1 and len(set(map(len, m.values()))) == 1
    # Lanes: the busiest newsroom first.
    sizes = [s["r"].count(k) for k in range(len(p["rooms"]))]
    assert sizes == sorted(sizes, reverse=True) and sum(sizes) == len(s["id"])
    for k, iri in enumerate(s["id"]):
        assert graph.nodes[iri]["date"] == s["d"][k]
        assert p["rooms"][s["r"][k]] in (*graph.nodes[iri]["newsrooms"], "(no newsroom)")
    pairs = {(s["id"][a], m["id"][b]) for a, b in zip(c["s"], c["m"], strict=True)}
    assert pairs == {(a, b) for a, b in graph.edges() if a in set(s["id"]) and b in set(m["id"])}


def test_cli_writes_both_views_and_rejects_a_renderer(invoke: Any, tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    with Store(store_dir) as st:
        ingest_bytes(st, [(SEED.read_bytes(), str(SEED))])
    for view in ("sources", "time"):
        out = tmp_path / f"{view}.html"
        result = invoke("viz", "--view", view, "--out", out, "--store", store_dir)
        assert result.exit_code == 0, result.output
        assert f"{view} map" in result.output and out.stat().st_size > 1000
    result = invoke("viz", "--view", "time", "--renderer", "webgl", "--out", tmp_path / "x.html",
                    "--store", store_dir)  # fmt: skip
    assert result.exit_code == 1
    assert "error: the time view has one renderer" in result.output


def test_vendored_d3_hierarchy_is_the_npm_file_with_its_licence() -> None:
    static = Path(sources_mod.__file__).parent / "static"
    data = (static / "d3-hierarchy.min.js").read_bytes()
    assert hashlib.sha256(data).hexdigest() == D3_HIERARCHY_SHA256
    assert data.startswith(f"// https://d3js.org/d3-hierarchy/ v{D3_HIERARCHY_VERSION}".encode())
    assert "ISC" in (static / "README.md").read_text()
    assert "Permission to use" in (static / "LICENSE-d3-hierarchy.txt").read_text()
