"""The citation maps' answers checked in Chromium against ground truth (issue 12).

Who dominates (ranking panel and always-drawn labels), where a sentence came from (the
provenance listed on click), and the small things (tooltips, search, reset). Ground truth
comes from the story dicts (tests/support/groundtruth.py), never from the map itself.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from hcgraph import Store, citation_graph, ingest_bytes
from hcgraph.viz import write_map
from hcsample.corpus import generate_corpus
from tests.conftest import SEED, SEED_URL
from tests.support.chromium import CHROMIUM
from tests.support.groundtruth import ground_truth

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
    pytest.mark.slow,
]


@pytest.fixture(scope="module")
def stories() -> list[dict[str, Any]]:
    seed = json.loads(SEED.read_text())
    return generate_corpus(60, seed=11, include_seed=seed).stories


@pytest.fixture(scope="module")
def mstore(stories: list[dict[str, Any]]) -> Iterator[Store]:
    with Store(None) as st:
        docs = [(json.dumps(s).encode(), f"s{i}") for i, s in enumerate(stories)]
        assert not ingest_bytes(st, docs).failures
        yield st


def _open(tabs: Any, graph: nx.DiGraph, path: Path) -> Any:
    """``graph``'s map written to ``path`` and loaded in one of the module's reused tabs
    (tests.support.chromium); ``page.errors`` holds what went wrong."""
    write_map(graph, path)
    page = tabs.open(path.as_uri())
    page.wait_for_function("() => window.hcmapReady !== undefined", timeout=60_000)
    return page


def _ids(graph: nx.DiGraph) -> dict[str, str]:
    return {n: a["id"] for n, a in graph.nodes(data=True)}


def _reuse_page(
    tabs: Any, store: Store, path: Path, **options: Any
) -> tuple[nx.DiGraph, dict[str, str], Any]:
    """The reuse map of ``store`` (with ``options``), its node ids, and the page showing it."""
    graph = citation_graph(store, "reuse", **options)
    return graph, _ids(graph), _open(tabs, graph, path)


def test_ranking_panel_and_labels_answer_who_dominates(
    tabs: Any, mstore: Store, stories: list[dict[str, Any]], tmp_path: Path
) -> None:
    truth = ground_truth(stories)
    graph, ids, page = _reuse_page(tabs, mstore, tmp_path / "reuse.html")
    for panel, kind, count_of in (
        ("#rank-sources", "Manifest", lambda i: len(truth.manifest_citing_stories.get(i, ()))),
        ("#rank-publishers", "Publisher", lambda i: truth.publisher_reach.get(i, (0,))[0]),
    ):
        rows = page.eval_on_selector_all(
            f"{panel} button",
            "bs => bs.map(b => [b.dataset.id, b.querySelector('.name').textContent,"
            " +b.querySelector('.count').textContent])",
        )
        assert len(rows) == 10
        every = sorted((count_of(a["id"]) for _n, a in graph.nodes(data=True)
                        if a["type"] == kind), reverse=True)  # fmt: skip
        # In order, with the ground-truth counts: the ten largest, largest first.
        assert [count for _i, _name, count in rows] == every[:10]
        for node, name, count in rows:
            assert count == count_of(ids[node]) and name == graph.nodes[node]["label"]
    # Their labels are drawn on the first frame, none overlapping another.
    drawn = page.evaluate("hcmap.labels()")
    texts = {d["id"]: d["text"] for d in drawn}
    for key in ("sources", "publishers"):
        for row in page.evaluate(f"hcmap.ranking.{key}"):
            assert texts.get(row["id"]) == graph.nodes[row["id"]]["label"], row
    for i, a in enumerate(drawn):
        for b in drawn[i + 1 :]:
            apart = (a["x"] + a["w"] <= b["x"] or b["x"] + b["w"] <= a["x"]
                     or a["y"] + a["h"] <= b["y"] or b["y"] + b["h"] <= a["y"])  # fmt: skip
            assert apart, (a["text"], b["text"])
    # A click in the panel focuses the map on that source and lists who cites it.
    first = (
        rows[0][0] if False else page.eval_on_selector("#rank-sources button", "b => b.dataset.id")
    )
    page.click("#rank-sources button")
    details = page.text_content("#details")
    assert graph.nodes[first]["title"] in details
    assert page.evaluate("hcmap.dimmed()") > 0
    assert page.errors == []
    tabs.done(page)


def test_paragraph_click_lists_its_provenance_chain(
    tabs: Any, mstore: Store, stories: list[dict[str, Any]], tmp_path: Path
) -> None:
    seed = stories[0]
    graph = citation_graph(mstore, "story", SEED_URL)
    page = _open(tabs, graph, tmp_path / "story.html")
    # The focus story's label is drawn whole, inside the map (not clipped at the left edge).
    width = page.evaluate("document.getElementById('map').clientWidth")
    focus = [d for d in page.evaluate("hcmap.labels()") if d["id"] == SEED_URL]
    assert focus and focus[0]["text"] == graph.nodes[SEED_URL]["label"]
    assert focus[0]["x"] >= 0 and focus[0]["x"] + focus[0]["w"] <= width
    manifests = {str(m["manifest_id"]): m for m in seed["manifests"]}
    checked = 0
    for s_ix, section in enumerate(seed["sections"]):
        for p_ix, para in enumerate(section["paragraphs"]):
            node = f"{SEED_URL}#s{s_ix + 1}-p{p_ix + 1}"
            if node not in graph or not para.get("cites"):
                continue
            page.evaluate("id => hcmap.highlight(id)", node)
            details = page.text_content("#details")
            assert graph.nodes[node]["title"] in details
            hrefs = page.eval_on_selector_all("#details a", "as => as.map(a => a.href)")
            for cite in para["cites"]:
                m = manifests[str(cite["manifest_id"])]
                for claim in cite["claim_ids"]:
                    assert f"claim {claim}" in details
                assert m["title"] in details and m["source_name"] in details
                assert str(m["published_date"])[:10] in details
                assert m["source_url"] in hrefs
            # The tooltip names the publisher and the cited claim ids.
            tip = page.evaluate("id => hcmap.nodes.get(id).title", node)
            claims = [str(c) for cite in para["cites"] for c in cite["claim_ids"]]
            assert "cites claims: " in tip and all(c in tip for c in claims[:12])
            assert any(
                manifests[str(c["manifest_id"])]["source_name"] in tip for c in para["cites"]
            )
            checked += 1
    assert checked >= 3
    assert page.errors == []
    tabs.done(page)


def test_manifest_click_lists_the_stories_citing_it(
    tabs: Any, mstore: Store, stories: list[dict[str, Any]], tmp_path: Path
) -> None:
    truth = ground_truth(stories)
    graph, ids, page = _reuse_page(tabs, mstore, tmp_path / "reuse.html")
    by_url = {s["url"]: s for s in stories}
    manifest = max((n for n, a in graph.nodes(data=True) if a["type"] == "Manifest"),
                   key=lambda n: (graph.nodes[n]["stories"], n))  # fmt: skip
    page.evaluate("id => hcmap.highlight(id)", manifest)
    citing = truth.manifest_citing_stories[ids[manifest]]
    assert f"cited by {len(citing)} stories" in page.text_content("#details")
    items = page.eval_on_selector_all(
        "#details li",
        "ls => ls.map(l => [l.querySelector('a') && l.querySelector('a').href, l.textContent])",
    )
    story_items = [(href, text) for href, text in items if href in by_url]
    assert {href for href, _t in story_items} == set(citing)
    for href, text in story_items:
        assert by_url[href]["headline"][:40] in text
        assert by_url[href]["published_at"][:10] in text
    assert page.errors == []
    tabs.done(page)


def _norm(text: str) -> str:
    flat = unicodedata.normalize("NFD", text)
    return "".join(c for c in flat if not unicodedata.combining(c)).lower()


def test_search_reset_and_tooltip(tabs: Any, mstore: Store, tmp_path: Path) -> None:
    graph = citation_graph(mstore, "reuse")
    page = _open(tabs, graph, tmp_path / "reuse.html")
    headline = graph.nodes[SEED_URL]["title"]  # "Agentic RL grows up: …"
    words = headline.split()[:3]
    # All words, any order, any case, accents ignored.
    query = " ".join(reversed(words)).upper().replace("E", "É")
    hits = page.evaluate("q => hcmap.search(q)", query)
    wanted = [_norm(w) for w in words]
    expected = 0
    for n, a in graph.nodes(data=True):
        hay = _norm(" ".join([a["label"], a["title"], a["id"], n, a["type"], *a["publishers"]]))
        expected += all(w in hay for w in wanted)
    assert hits == expected >= 1
    assert page.evaluate("hcmap.dimmed()") == len(graph) - hits
    # Reset clears the search and every filter.
    page.select_option("#publisher", "0")
    page.uncheck("input[data-type='Manifest']")
    assert page.evaluate("hcmap.shown()")["nodes"] < len(graph)
    page.click("#reset")
    assert page.evaluate("hcmap.shown()") == {
        "nodes": graph.number_of_nodes(),
        "edges": graph.number_of_edges(),
    }
    assert page.evaluate("hcmap.dimmed()") == 0
    assert page.is_checked("input[data-type='Manifest']")
    assert page.eval_on_selector("#publisher", "s => s.value") == "-1"
    assert page.input_value("#search") == ""
    # A tooltip shows on hover and hides when the pointer leaves the map.
    page.evaluate("id => hcmap.network.focus(id, {scale: 1.2, animation: false})", SEED_URL)
    box = page.locator("#map canvas").bounding_box()
    xy = page.evaluate("id => hcmap.network.canvasToDOM(hcmap.network.getPosition(id))", SEED_URL)
    page.mouse.move(box["x"] + xy["x"] - 30, box["y"] + xy["y"])
    page.mouse.move(box["x"] + xy["x"], box["y"] + xy["y"], steps=5)
    visible = (
        "() => { const t = document.querySelector('div.vis-tooltip');"
        " return !!t && t.style.visibility !== 'hidden'; }"
    )
    page.wait_for_function(visible)
    page.mouse.move(5, 5)  # over the side panel
    page.wait_for_function(f"() => !({visible})()")
    # ... and when the view is re-fitted under a still pointer.
    page.mouse.move(box["x"] + xy["x"] - 30, box["y"] + xy["y"])
    page.mouse.move(box["x"] + xy["x"], box["y"] + xy["y"], steps=5)
    page.wait_for_function(visible)
    page.evaluate("hcmap.reset()")
    assert page.evaluate(f"({visible})()") is False
    assert page.errors == []
    tabs.done(page)


def test_overview_lists_and_draws_a_sources_stories(
    tabs: Any, mstore: Store, stories: list[dict[str, Any]], tmp_path: Path
) -> None:
    truth = ground_truth(stories)
    graph, ids, page = _reuse_page(tabs, mstore, tmp_path / "overview.html", overview=True)
    assert not any(a["type"] == "Story" for _n, a in graph.nodes(data=True))
    assert page.evaluate("hcmap.shown()")["nodes"] == len(graph)
    source = page.eval_on_selector("#rank-sources button", "b => b.dataset.id")
    citing = truth.manifest_citing_stories[ids[source]]
    page.click("#rank-sources button")
    hrefs = page.eval_on_selector_all("#details li a", "as => as.map(a => a.href)")
    assert set(hrefs) == set(citing)
    page.click("#drill")
    shown = page.evaluate("hcmap.shown()")
    assert shown["nodes"] == len(graph) + len(citing)
    assert shown["edges"] == graph.number_of_edges() + len(citing)
    drawn = set(page.evaluate("hcmap.nodes.getIds()")) - set(graph)
    assert drawn == set(citing)
    # The drill-down is highlighted: the source, its publisher(s) and its stories.
    assert page.evaluate("hcmap.dimmed()") == shown["nodes"] - len(citing) - 1 - len(
        list(graph.successors(source))
    )
    assert page.errors == []
    tabs.done(page)


def test_unsupported_paragraphs_are_marked_and_claims_show_their_text(
    tabs: Any, tmp_path: Path
) -> None:
    """After the support check, the story map marks the paragraph that does not say what a
    claim it cites says (✗ and its count), and the claim's text — from the manifest reply,
    hostile markup included — is in the tooltip and the provenance panel, as text."""
    from hcgraph.claims.pulling import pull_manifests
    from hcgraph.ingest import ingest_paths
    from tests.test_claims import MID, TB_CLAIM, _changed_number

    reply = _changed_number()
    for claim in reply["signal"]["claims"]:
        if claim["claim_id"] == TB_CLAIM:
            claim["text"] += ' <img src=x onerror="window.pwned=1">'
    replies = tmp_path / "replies"
    replies.mkdir()
    (replies / f"{MID}.json").write_text(json.dumps(reply))
    with Store(tmp_path / "store") as st:
        ingest_paths(st, [SEED])
        pull_manifests(st, directory=replies)
        graph = citation_graph(st, "story", SEED_URL)
    page = _open(tabs, graph, tmp_path / "story.html")
    part = f"{SEED_URL}#s1-p2"
    node = page.evaluate("id => hcmap.nodes.get(id)", part)
    assert node["v"] == 1 and node["label"].startswith("✗ ")
    assert "unsupported: 1 cited claim" in page.evaluate("id => hcmap.nodes.get(id).title", part)
    claim = f"https://w3id.org/hcgraph/id/claim/{TB_CLAIM}"
    tip = page.evaluate("id => hcmap.nodes.get(id).title", claim)
    assert "79.3%" in tip and "not said as cited in s1-p2" in tip
    page.evaluate("id => hcmap.highlight(id)", claim)
    assert "79.3% on TerminalBench-2.1" in page.text_content("#details")
    assert page.evaluate("window.pwned") is None
    marked = [n for n, a in graph.nodes(data=True) if a.get("unsupported")]
    assert sorted(m.rsplit("#", 1)[-1] for m in marked) == ["kf1", "s1-p2"]
    assert page.errors == []
    tabs.done(page)
