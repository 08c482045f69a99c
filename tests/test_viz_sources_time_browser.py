"""The sources (circle packing) and time pages in Chromium from file:// (issue 40).

Each page draws, asks for nothing over the network, keeps a hostile headline as text; a
click on a source lists the stories behind it (sources) and a brushed date range lights up
the sources its stories cite (time). Ground truth comes from the story dicts.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hcgraph import Store, citation_graph, ingest_bytes
from hcgraph.viz import write_map
from hcgraph.viz.render import visible_bidi
from hcgraph.viz.timeline import lag_days, lag_summary
from hcsample.corpus import generate_corpus
from tests.conftest import SEED
from tests.hostile import CANARY
from tests.support.chromium import CHROMIUM
from tests.support.groundtruth import ground_truth

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
    pytest.mark.slow,
]


@pytest.fixture(scope="module")
def stories() -> list[dict[str, Any]]:
    corpus = generate_corpus(300, seed=11, include_seed=json.loads(SEED.read_text())).stories
    corpus[5]["headline"] = CANARY  # would set window.__pwned if it ever ran
    return corpus


@pytest.fixture(scope="module")
def vstore(stories: list[dict[str, Any]]) -> Iterator[Store]:
    with Store(None) as st:
        docs = [(json.dumps(s).encode(), f"s{i}") for i, s in enumerate(stories)]
        assert not ingest_bytes(st, docs).failures
        yield st


def _open(tabs: Any, path: Path, hash: str = "") -> Any:
    """The map freshly loaded in one of the module's reused tabs (tests.support.chromium):
    ``page.errors`` and ``page.requests`` hold what went wrong and what it fetched."""
    page = tabs.open(path.as_uri() + hash)
    page.wait_for_function("() => window.hcmapReady !== undefined", timeout=60_000)
    return page


def _offline_and_clean(page: Any) -> None:
    assert [u for u in page.requests if not u.startswith("file:")] == []
    assert page.evaluate("window.__pwned") is None
    assert page.errors == []


@pytest.fixture(scope="module")
def sources_map(vstore: Store, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    graph = citation_graph(vstore, "sources")
    path = tmp_path_factory.mktemp("sources") / "map-sources.html"
    write_map(graph, path)
    return graph, path


def test_sources_page_draws_the_hierarchy_with_labels_that_do_not_overlap(
    tabs: Any, sources_map: tuple[Any, Path], stories: list[dict[str, Any]]
) -> None:
    graph, path = sources_map
    truth = ground_truth(stories)
    page = _open(tabs, path)
    circles = page.evaluate("hcmap.circles()")
    kinds = [c["kind"] for c in circles]
    manifests = [n for n, a in graph.nodes(data=True) if a["type"] == "Manifest"]
    assert kinds.count("source") == len(manifests)
    # One circle per publisher, and one for the sources no publisher is known for (a cite of
    # a manifest no story lists).
    orphans = [m for m in manifests if not list(graph.successors(m))]
    publishers = {p for m in manifests for p in graph.successors(m)}
    assert orphans and kinds.count("publisher") == len(publishers) + 1
    assert page.evaluate("document.querySelectorAll('#circles circle').length") == len(circles)
    # Area follows citing stories: the most-cited source is the biggest circle.
    src = [c for c in circles if c["kind"] == "source"]
    biggest = max(src, key=lambda c: c["r"])
    top = max(truth.manifest_citing_stories.values(), key=len)
    assert graph.nodes[biggest["id"]]["stories"] == len(top)
    # Publishers contain their sources.
    by_id = {c["id"]: c for c in circles}
    for c in src:
        pub = min(graph.successors(c["id"]), default="urn:hcgraph:no-publisher")
        p = by_id[pub]
        assert ((c["x"] - p["x"]) ** 2 + (c["y"] - p["y"]) ** 2) ** 0.5 + c["r"] <= p["r"] + 0.5
    # Labels: the biggest publisher's and source's drawn, none overlapping another.
    labels = page.evaluate("hcmap.labels()")
    ids = {d["id"] for d in labels}
    assert biggest["id"] in ids
    assert max((c for c in circles if c["kind"] == "publisher"), key=lambda c: c["r"])["id"] in ids
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            apart = (a["x"] + a["w"] <= b["x"] or b["x"] + b["w"] <= a["x"]
                     or a["y"] + a["h"] <= b["y"] or b["y"] + b["h"] <= a["y"])  # fmt: skip
            assert apart, (a["text"], b["text"])
    # No verdicts in this store: no unsupported filter (tests/test_viz_controls_browser.py).
    listed = set(page.evaluate("hcmap.controls()"))
    assert listed == {"click-through", "date-filter", "keyboard", "png", "search", "svg"} | {
        "url-state", "zoom"}  # fmt: skip
    _offline_and_clean(page)
    tabs.done(page)


def test_a_click_on_a_source_lists_its_stories_and_their_paragraphs(
    tabs: Any, sources_map: tuple[Any, Path], stories: list[dict[str, Any]]
) -> None:
    graph, path = sources_map
    truth = ground_truth(stories)
    hostile = stories[5]
    # A source the hostile story cites, cited by few (so the story is among the listed).
    mid = min(truth.story_cited_manifests[hostile["url"]],
              key=lambda m: (len(truth.manifest_citing_stories[m]), m))  # fmt: skip
    (iri,) = [n for n, a in graph.nodes(data=True) if a["type"] == "Manifest" and a["id"] == mid]
    page = _open(tabs, path)
    page.evaluate("id => hcmap.select(hcmap.circles().find(c => c.id === id).id)", iri)
    page.evaluate("hcmap.reset()")
    # A real click in the middle of the source's circle (after zooming to its publisher).
    (pub,) = sorted(graph.successors(iri))
    page.evaluate("id => hcmap.select(id)", pub)
    pt = page.evaluate("id => hcmap.point(id)", iri)
    page.mouse.click(pt["x"], pt["y"])
    assert page.evaluate("hcmap.selected()") == iri
    listed = page.evaluate("hcmap.citers()")
    # Bidi controls are shown, not obeyed (render.visible_bidi).
    headlines = {s["url"]: visible_bidi(s["headline"]) for s in stories}
    expected = sorted(headlines[u] for u in truth.manifest_citing_stories[mid])
    assert sorted(listed) == expected
    assert page.evaluate("hcmap.storiesDrawn()") == len(expected)
    # The hostile headline is listed as text: shown, never run.
    assert CANARY in listed
    details = page.text_content("#details")
    assert "<script>window.__pwned" in details
    assert page.evaluate("document.querySelectorAll('#details script, #details img').length") == 0
    # Each citing paragraph's text is in the panel.
    for (_story, manifest), rows in graph.graph["passages"].items():
        if manifest == iri:
            for _part, text in rows:
                assert text in details
    # The selection is in the URL: a reload opens on it.
    assert "sel=" in page.url
    again = _open(tabs, path, "#" + page.url.split("#", 1)[1])
    assert again.evaluate("hcmap.selected()") == iri
    assert sorted(again.evaluate("hcmap.citers()")) == expected
    _offline_and_clean(page)
    _offline_and_clean(again)
    tabs.done(again)
    tabs.done(page)


@pytest.fixture(scope="module")
def time_map(vstore: Store, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    graph = citation_graph(vstore, "time")
    path = tmp_path_factory.mktemp("time") / "map-time.html"
    write_map(graph, path)
    return graph, path


def _day(text: str) -> dt.date:
    return dt.date.fromisoformat(text[:10])


def test_time_page_draws_and_a_brush_lights_up_the_cited_sources(
    tabs: Any, time_map: tuple[Any, Path], stories: list[dict[str, Any]]
) -> None:
    graph, path = time_map
    truth = ground_truth(stories)
    page = _open(tabs, path)
    counts = page.evaluate("hcmap.counts()")
    assert counts["stories"] == len(truth.story_urls)
    assert page.evaluate("hcmap.lag()") == lag_summary(lag_days(graph))
    assert "median" in page.text_content("#lag")
    # Something is drawn: the canvas is not blank.
    inked = page.evaluate("""() => { const c = document.getElementById('cv');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0; for (let i = 0; i < d.length; i += 4) { if (d[i] < 200) n++; } return n; }""")
    assert inked > 1000
    # Brush the two middle days with the mouse.
    days = sorted({_day(s["published_at"]) for s in stories})
    lo, hi = days[len(days) // 2 - 1], days[len(days) // 2]
    x0 = page.evaluate("d => hcmap.xOf(d)", lo.isoformat()) - 2
    x1 = page.evaluate("d => hcmap.xOf(d)", hi.isoformat()) + 2
    page.mouse.move(x0, 300)
    page.mouse.down()
    page.mouse.move((x0 + x1) / 2, 320)
    page.mouse.move(x1, 340)
    page.mouse.up()
    in_range = {s["url"] for s in stories if lo <= _day(s["published_at"]) <= hi}
    cited = {m for u in in_range for m in truth.story_cited_manifests.get(u, ())}
    ids = {a["id"]: n for n, a in graph.nodes(data=True) if a["type"] == "Manifest"}
    dated = {m for m in cited if graph.nodes[ids[m]]["date"]}
    got = page.evaluate("hcmap.highlighted()")
    assert set(got) == {ids[m] for m in dated} and len(got) == len(dated)
    assert f"{len(in_range)} stories citing {len(dated)} sources" in page.text_content("#range")
    assert f"brush={lo.isoformat()}..{hi.isoformat()}" in page.url
    assert "unsupported-filter" not in page.evaluate("hcmap.controls()")
    _offline_and_clean(page)
    tabs.done(page)


def test_time_page_keeps_a_hostile_headline_as_text(
    tabs: Any, time_map: tuple[Any, Path], stories: list[dict[str, Any]]
) -> None:
    _graph, path = time_map
    url = stories[5]["url"]
    page = _open(tabs, path)
    pt = page.evaluate("id => hcmap.point(id)", url)
    page.mouse.move(pt["x"], pt["y"])
    assert page.is_visible("#tip")
    page.evaluate("id => hcmap.select(id)", url)
    assert "<script>window.__pwned" in page.text_content("#details")
    # Each dated source it cites is listed with its lag.
    graph = _graph
    dated = [m for m in graph.successors(url) if graph.nodes[m]["date"]]
    rows = page.eval_on_selector_all("#cited li", "ls => ls.map(l => l.textContent)")
    assert len(rows) == len(dated) > 0 and all(" day" in r for r in rows)
    assert page.evaluate("document.querySelectorAll('#details script, #details img').length") == 0
    _offline_and_clean(page)
    tabs.done(page)


def test_time_brush_summary_and_lit_lines_match_the_graph(
    tabs: Any, time_map: tuple[Any, Path], stories: list[dict[str, Any]]
) -> None:
    """A brush finds its stories by binary search over the dates and draws their citations
    as hairlines counted per pixel: its lag summary equals the one computed from the graph,
    and the middle of a lit citation line is red."""
    graph, path = time_map
    page = _open(tabs, path)
    days = sorted({_day(s["published_at"]) for s in stories})
    for lo, hi in ((days[0], days[0]), (days[1], days[len(days) // 2]), (days[0], days[-1])):
        got = page.evaluate("r => hcmap.brush(r[0], r[1])", [lo.isoformat(), hi.isoformat()])
        lags, lit = [], set()
        for s, m in graph.edges():
            a, b = graph.nodes[s], graph.nodes[m]
            if a["type"] != "Story" or not a["date"] or not b["date"]:
                continue
            if lo <= _day(a["date"]) <= hi:
                lags.append((_day(a["date"]) - _day(b["date"])).days)
                lit.add(m)
        assert got["lag"] == lag_summary(lags)
        assert sorted(got["sources"]) == sorted(lit)
    # The middle of one lit line (the last range: every story) is red on the canvas.
    s, m = next((s, m) for s, m in graph.edges() if graph.nodes[s]["type"] == "Story"
                and graph.nodes[s]["date"] and graph.nodes[m]["date"])  # fmt: skip
    a, b = page.evaluate("id => hcmap.point(id)", s), page.evaluate("id => hcmap.point(id)", m)
    red = page.evaluate(
        """([x, y]) => { const c = document.getElementById('cv'), r = c.getBoundingClientRect();
        const k = c.width / r.width;
        const px = Math.floor((x - r.left) * k), py = Math.floor((y - r.top) * k);
        const d = c.getContext('2d').getImageData(px - 2, py - 2, 5, 5).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) { if (d[i] > d[i + 1] + 60) n++; }
        return n; }""",
        [(a["x"] + b["x"]) / 2, (a["y"] + b["y"]) / 2],
    )
    assert red > 0
    _offline_and_clean(page)
    tabs.done(page)


def test_time_brush_skips_what_the_date_filter_hides(
    tabs: Any, time_map: tuple[Any, Path], stories: list[dict[str, Any]]
) -> None:
    """With dates shown narrower than the corpus, a brush over every day lights up only the
    shown stories and, of what they cite, only the shown sources (the fast brush's run of
    citations less the hidden ones)."""
    graph, path = time_map
    page = _open(tabs, path)
    days = sorted({_day(s["published_at"]) for s in stories})
    a, b = days[1], days[-2]
    shown = page.evaluate("r => hcmap.setDates(r[0], r[1])", [a.isoformat(), b.isoformat()])
    got = page.evaluate("r => hcmap.brush(r[0], r[1])", [days[0].isoformat(), days[-1].isoformat()])
    dated = [_day(v["date"]) for v in graph.nodes.values() if v["type"] == "Story" and v["date"]]
    n = sum(a <= d <= b for d in dated)
    lags, lit = [], set()
    for s, m in graph.edges():
        sa, ma = graph.nodes[s], graph.nodes[m]
        if sa["type"] != "Story" or not sa["date"] or not ma["date"]:
            continue
        if a <= _day(sa["date"]) <= b and a <= _day(ma["date"]) <= b:
            lags.append((_day(sa["date"]) - _day(ma["date"])).days)
            lit.add(m)
    assert got["stories"] == n == shown["stories"] < len(dated)
    assert sorted(got["sources"]) == sorted(lit)
    assert got["lag"] == lag_summary(lags)
    assert f"{n} stories citing {len(lit)} sources" in page.text_content("#range")
    assert "from=" in page.url and "brush=" in page.url
    _offline_and_clean(page)
    tabs.done(page)
