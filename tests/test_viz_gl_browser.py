"""The WebGL (sigma.js) citation map in Chromium: labels by rank, the date filter's counts,
share (PNG, SVG, URL state), phone and keyboard, offline and hostile text (issue 27).

Ground truth comes from the story dicts (tests/support/groundtruth.py), never from the map.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hcgraph import Store, citation_graph, ingest_bytes
from hcgraph.viz import write_map
from hcsample.corpus import generate_corpus
from tests.conftest import SEED
from tests.hostile import CANARY
from tests.support.chromium import CHROMIUM, PNG_VIEW
from tests.support.groundtruth import ground_truth

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
    pytest.mark.slow,
]


@pytest.fixture(scope="module")
def stories() -> list[dict[str, Any]]:
    seed = json.loads(SEED.read_text())
    corpus = generate_corpus(300, seed=11, include_seed=seed).stories
    # One story whose headline would run if it ever reached the DOM as markup.
    corpus[5]["headline"] = CANARY
    return corpus


@pytest.fixture(scope="module")
def gstore(stories: list[dict[str, Any]]) -> Iterator[Store]:
    with Store(None) as st:
        docs = [(json.dumps(s).encode(), f"s{i}") for i, s in enumerate(stories)]
        assert not ingest_bytes(st, docs).failures
        yield st


@pytest.fixture(scope="module")
def gl_map(gstore: Store, tmp_path_factory: pytest.TempPathFactory) -> Any:
    graph = citation_graph(gstore, "reuse", overview=False)
    path = tmp_path_factory.mktemp("gl") / "map.html"
    write_map(graph, path, renderer="webgl")
    return graph, path


def _open(tabs: Any, path: Path, *, hash: str = "", width: int = 1400, height: int = 900) -> Any:
    """The map freshly loaded in one of the module's reused tabs (tests.support.chromium):
    ``page.errors`` and ``page.requests`` hold what went wrong and what it fetched."""
    page = tabs.open(path.as_uri() + hash, width=width, height=height)
    page.wait_for_function("() => window.hcmapReady !== undefined", timeout=60_000)
    return page


@pytest.fixture(scope="module")
def canvas_map(gstore: Store, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The same reuse map drawn by vis-network: the date range and share work there too."""
    graph = citation_graph(gstore, "reuse", overview=False)
    path = tmp_path_factory.mktemp("canvas") / "map.html"
    write_map(graph, path, renderer="canvas")
    return graph, path


@pytest.fixture()
def page(tabs: Any, gl_map: Any) -> Iterator[Any]:
    pg = _open(tabs, gl_map[1])
    yield pg
    tabs.done(pg)


@pytest.fixture(params=["webgl", "canvas"])
def either(request: pytest.FixtureRequest, tabs: Any) -> Iterator[tuple[Any, Path, Any]]:
    """(graph, path, page) of the reuse map on each renderer."""
    graph, path = request.getfixturevalue("gl_map" if request.param == "webgl" else "canvas_map")
    pg = _open(tabs, path)
    assert pg.evaluate("hcmap.renderer") == request.param
    yield graph, path, pg
    tabs.done(pg)


def test_every_top_name_is_labelled_at_first_frame(page: Any, gl_map: Any) -> None:
    graph, _path = gl_map
    assert page.evaluate("hcmap.renderer") == "webgl"
    assert page.evaluate("hcmap.shown()")["nodes"] == graph.number_of_nodes()
    drawn = page.evaluate("hcmap.labels()")
    texts = {d["id"]: d["text"] for d in drawn}
    ranking = page.evaluate("hcmap.ranking")
    assert len(ranking["sources"]) == 10 and len(ranking["publishers"]) == 10
    for row in ranking["sources"] + ranking["publishers"]:
        assert texts.get(row["id"]) == graph.nodes[row["id"]]["label"], row
    # Legible: inside the map, none overlapping another.
    width = page.evaluate("document.getElementById('map').clientWidth")
    height = page.evaluate("document.getElementById('map').clientHeight")
    for i, a in enumerate(drawn):
        assert a["x"] >= 0 and a["x"] + a["w"] <= width and 0 <= a["y"] <= height
        for b in drawn[i + 1 :]:
            apart = (a["x"] + a["w"] <= b["x"] or b["x"] + b["w"] <= a["x"]
                     or a["y"] + a["h"] <= b["y"] or b["y"] + b["h"] <= a["y"])  # fmt: skip
            assert apart, (a["text"], b["text"])
    # Zoomed in on the top source: its label is still drawn.
    top = ranking["sources"][0]["id"]
    page.evaluate("id => hcmap.focus(id)", top)
    assert top in {d["id"] for d in page.evaluate("hcmap.labels()")}
    # Offline: not one request beyond the file itself; no script error.
    assert [u for u in page.requests if not u.startswith("file:")] == []
    assert page.errors == []


def test_legend_says_what_colour_means(page: Any, gl_map: Any) -> None:
    graph, _ = gl_map
    clusters = page.evaluate("hcmap.clusters")
    assert len(clusters) > 1 and sum(c["size"] for c in clusters) == graph.number_of_nodes()
    legend = page.text_content("#legend")
    assert "Louvain" in legend and clusters[0]["label"] in legend
    pub = page.evaluate("hcmap.ranking.publishers[0]")
    page.select_option("#colour", "publisher")
    assert pub["label"] in page.text_content("#legend")
    # The top publisher and its manifests share one colour.
    manifest = next(m for m, p in graph.in_edges(pub["id"]))
    assert page.evaluate("id => hcmap.colour(id)", manifest) == page.evaluate(
        "id => hcmap.colour(id)", pub["id"]
    )


def test_date_filter_counts_match_ground_truth(either: Any, stories: list[dict[str, Any]]) -> None:
    graph, _, page = either
    dates = sorted(str(s["published_at"])[:10] for s in stories)
    lo, hi = dates[len(dates) // 4], dates[len(dates) // 2]
    inside = [s for s in stories if lo <= str(s["published_at"])[:10] <= hi]
    truth = ground_truth(inside)
    # Unfiltered, the page's recount (the 10 largest in one pass) is the writer's ranking.
    assert page.evaluate("hcmap.counts()") == page.evaluate("hcmap.ranking")
    got = page.evaluate("([a, b]) => hcmap.setDates(a, b)", [lo, hi])
    ids = {n: a["id"] for n, a in graph.nodes(data=True)}
    every = sorted((len(v) for v in truth.manifest_citing_stories.values()), reverse=True)
    assert [r["count"] for r in got["sources"]] == every[:10]
    for r in got["sources"]:
        assert r["count"] == len(truth.manifest_citing_stories[ids[r["id"]]])
    # A publisher's reach: the shown stories citing one of its manifests (a manifest's
    # publisher known from any story listing it, in the range or not).
    publisher = {str(m["manifest_id"]): m["source_name"] for s in stories for m in s["manifests"]}
    reached: dict[str, set[str]] = {}
    for url, cited in truth.story_cited_manifests.items():
        for m in cited:
            if m in publisher:
                reached.setdefault(publisher[m], set()).add(url)
    reach = sorted((len(v) for v in reached.values()), reverse=True)
    assert [r["count"] for r in got["publishers"]] == reach[:10]
    # The panel shows those counts; the stories outside the range are not drawn.
    shown = page.eval_on_selector_all("#rank-sources .count", "cs => cs.map(c => +c.textContent)")
    assert shown == every[:10]
    drawn = page.evaluate("hcmap.shown()")["nodes"]
    assert drawn < graph.number_of_nodes()
    assert page.evaluate("hcmap.dateRange()")["from"] == lo
    page.evaluate("hcmap.reset()")
    assert page.evaluate("hcmap.shown()")["nodes"] == graph.number_of_nodes()
    assert page.errors == []


_PIXELS = (
    """
async ([ids, far]) => {
  // For each node: its map position, whether no other node of `far` lies within 12 px and
  // no label over it, and the pixel there (RGBA) of the view as the PNG download draws it.
  const s = hcmap.sigma, pr = s.pixelRatio, ctx = await """
    + PNG_VIEW
    + """();
  const at = (id) => s.framedGraphToViewport(s.getNodeDisplayData(id));
  const others = far.map(at), labels = hcmap.labels();
  return ids.map((id) => {
    const p = at(id);
    const clear = (b) =>
      p.x < b.x - 2 || p.x > b.x + b.w + 2 || p.y < b.y - 2 || p.y > b.y + b.h + 2;
    const alone = labels.every(clear) &&
      others.every((q, k) => far[k] === id || Math.hypot(q.x - p.x, q.y - p.y) > 12);
    const px = Array.from(ctx.getImageData(Math.floor(p.x * pr), Math.floor(p.y * pr), 1, 1).data);
    return { id, x: p.x, y: p.y, alone, px };
  });
}
"""
)


def test_date_filter_hides_what_it_filters(page: Any, gl_map: Any) -> None:
    """A filtered-out node is not drawn, not labelled and not hovered; a shown one is drawn
    in its colour and shows its tooltip. (The WebGL page keeps the filtered-out nodes in its
    WebGL layers and covers them with the veil, which draws the shown ones again.)"""
    graph, _ = gl_map
    story_dates = sorted(a["date"][:10] for _n, a in graph.nodes(data=True) if a["type"] == "Story")
    lo, hi = story_dates[len(story_dates) // 4], story_dates[len(story_dates) // 2]
    page.evaluate("([a, b]) => hcmap.setDates(a, b)", [lo, hi])
    stories = [(n, a) for n, a in graph.nodes(data=True) if a["type"] == "Story"]
    inside = [n for n, a in stories if lo <= a["date"][:10] <= hi]
    outside = [n for n, a in stories if not lo <= a["date"][:10] <= hi]
    assert inside and outside
    assert page.evaluate("hcmap.shown()")["nodes"] <= graph.number_of_nodes() - len(outside)
    labelled = {b["id"] for b in page.evaluate("hcmap.labels()") if not b["region"]}
    assert labelled and not labelled & set(outside)
    every = page.evaluate("hcmap.nodes.getIds()")
    width = page.evaluate("document.getElementById('map').clientWidth")
    height = page.evaluate("document.getElementById('map').clientHeight")

    def rgb(node: str) -> list[int]:
        colour = page.evaluate("id => hcmap.sigma.getNodeDisplayData(id).color", node)
        assert colour.startswith("#") and len(colour) == 7, colour
        return [int(colour[k : k + 2], 16) for k in (1, 3, 5)]

    def on_map(r: dict[str, Any]) -> bool:
        # Alone, inside the map, and in a cluster's colour (the grey of small clusters is
        # too close to the edges' to tell apart).
        inside = 2 <= r["x"] <= width - 2 and 2 <= r["y"] <= height - 2
        return bool(r["alone"]) and inside and rgb(r["id"]) != [0xB8, 0xBE, 0xC6]

    hidden = [r for r in page.evaluate(_PIXELS, [outside, every]) if on_map(r)]
    kept = [r for r in page.evaluate(_PIXELS, [inside, every]) if on_map(r)]
    assert len(hidden) >= 5 and len(kept) >= 5

    def near(px: list[int], want: list[int]) -> bool:  # the centre of a small, antialiased dot
        return max(abs(a - b) for a, b in zip(px[:3], want, strict=True)) <= 40

    # Not drawn: a filtered-out story's centre is not in its colour (a shown edge may
    # cross it); a shown story's is (no other node within 12 px, no label over it).
    for r in hidden[:20]:
        assert not near(r["px"], rgb(r["id"])), r
    for r in kept[:20]:
        assert near(r["px"], rgb(r["id"])), r
    # A highlight on top of the filter (the map pale, the kept items drawn again): the
    # filtered-out stories stay undrawn, the stories citing the source are drawn.
    top = page.evaluate("hcmap.ranking.sources[0].id")
    page.evaluate("id => hcmap.highlight(id)", top)
    ids = [r["id"] for r in hidden]
    for r in page.evaluate(_PIXELS, [ids, every]):
        assert not near(r["px"], rgb(r["id"])), r
    citing = [r for r in kept if graph.has_edge(r["id"], top)]
    assert citing
    for r in page.evaluate(_PIXELS, [[r["id"] for r in citing], every]):
        assert near(r["px"], rgb(r["id"])), r
    page.evaluate("hcmap.clear()")
    # Hover: a shown story shows its tooltip, a filtered-out one does not.
    box = page.locator("#map").bounding_box()
    page.mouse.move(box["x"] + kept[0]["x"], box["y"] + kept[0]["y"])
    page.wait_for_function("getComputedStyle(document.getElementById('tip')).display === 'block'")
    page.mouse.move(box["x"] + 2, box["y"] + 2)
    page.mouse.move(box["x"] + hidden[0]["x"], box["y"] + hidden[0]["y"])
    page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert page.evaluate("getComputedStyle(document.getElementById('tip')).display") == "none"
    page.evaluate("hcmap.reset()")
    again = {r["id"]: r for r in page.evaluate(_PIXELS, [[r["id"] for r in hidden], every])}
    assert any(near(again[r["id"]]["px"], rgb(r["id"])) for r in hidden)  # drawn again
    assert page.errors == []


def test_png_and_svg_downloads(either: Any, tmp_path: Path) -> None:
    page = either[2]
    with page.expect_download() as dl:
        page.click("#png")
    png = tmp_path / "map.png"
    dl.value.save_as(png)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    with page.expect_download() as dl:
        page.click("#svg")
    svg = tmp_path / "map.svg"
    dl.value.save_as(svg)
    text = svg.read_text()
    assert text.startswith("<svg") and "<circle" in text
    top = page.evaluate("hcmap.ranking.sources[0].label")
    from xml.etree import ElementTree

    root = ElementTree.fromstring(text)
    labels = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert top in labels
    assert page.errors == []


def test_url_fragment_restores_the_view(tabs: Any, either: Any) -> None:
    graph, path, page = either
    pub = page.evaluate("hcmap.publishers[1]")
    manifest = page.evaluate("hcmap.ranking.sources[0].id")
    page.select_option("#publisher", "1")
    page.evaluate("hcmap.setDates('2026-01-01', '2026-12-31')")
    webgl = page.evaluate("hcmap.renderer") == "webgl"
    if webgl:
        page.select_option("#colour", "date")
    page.evaluate("id => hcmap.highlight(id)", manifest)
    state = page.evaluate("hcmap.state()")
    assert state["pub"] == pub and state["sel"] == manifest and state["from"] == "2026-01-01"
    assert state.get("colour") == ("date" if webgl else None)
    frag = page.evaluate("location.hash")
    shown = page.evaluate("hcmap.shown()")
    other = _open(tabs, path, hash=frag)
    assert other.evaluate("hcmap.state()") == state
    assert other.evaluate("hcmap.shown()") == shown
    assert other.evaluate("hcmap.selected()") == manifest
    assert graph.nodes[manifest]["title"] in other.text_content("#details")
    assert other.input_value("#publisher") == "1"
    assert other.input_value("#date-from") == "2026-01-01"
    assert other.errors == []
    tabs.done(other)


def test_story_view_date_range_and_share(
    tabs: Any, gstore: Store, stories: list[dict[str, Any]], tmp_path: Path
) -> None:
    """The story view (vis-network): the date range runs over the story's sources (its one
    story has one date), hiding the sources outside it with their claims; PNG, SVG and the
    URL fragment as on the reuse map."""
    story = max(stories, key=lambda s: len({m["manifest_id"] for m in s["manifests"]}))
    graph = citation_graph(gstore, "story", story["url"])
    path = tmp_path / "story.html"
    write_map(graph, path)
    page = _open(tabs, path)
    assert page.evaluate("hcmap.renderer") == "canvas"
    listed = [str(m.get("published_date") or "")[:10] for m in story["manifests"]]
    dates = sorted({d for d in listed if d})
    assert len(dates) >= 2
    lo, hi = dates[0], dates[len(dates) // 2]
    # Ground truth from the story dict: its manifests published inside [lo, hi].
    drawn = {a["id"] for _n, a in graph.nodes(data=True) if a["type"] == "Manifest"}
    inside = {str(m["manifest_id"]) for m in story["manifests"]
              if lo <= str(m.get("published_date", ""))[:10] <= hi} & drawn  # fmt: skip
    page.evaluate("([a, b]) => hcmap.setDates(a, b)", [lo, hi])
    shown = page.evaluate("hcmap.nodes.get().filter(n => !n.hidden).map(n => n.id)")
    manifests = {graph.nodes[n]["id"] for n in shown if graph.nodes[n]["type"] == "Manifest"}
    assert manifests == inside and 0 < len(inside) < len(drawn)
    claims = [n for n in shown if graph.nodes[n]["type"] == "Claim"]
    assert all(graph.nodes[m]["id"] in inside for c in claims for m in graph.successors(c))
    assert page.get_attribute("#date-from", "aria-label") == "Sources from date"
    frag = page.evaluate("location.hash")
    assert f"from={lo}" in frag and "view=story" in frag
    with page.expect_download() as dl:
        page.click("#png")
    png = tmp_path / "story.png"
    dl.value.save_as(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = page.evaluate("hcmap.svg()")
    assert svg.startswith("<svg") and "<circle" in svg
    other = _open(tabs, path, hash=frag)
    again = other.evaluate("hcmap.nodes.get().filter(n => !n.hidden).map(n => n.id)")
    assert sorted(again) == sorted(shown)
    assert other.errors == [] and page.errors == []
    tabs.done(other)
    tabs.done(page)


def test_labels_and_veil_stay_on_their_nodes_after_a_click(page: Any) -> None:
    """Every frame after the first (a click redraws): the top source's label sits at its
    node. The page once normalised the node positions twice after the first frame, so the
    forced labels and the veil's kept nodes were drawn away from their nodes (or not at all)."""
    top = page.evaluate("hcmap.ranking.sources[0].id")
    page.evaluate("id => hcmap.highlight(id)", top)
    at = page.evaluate(
        "id => hcmap.sigma.framedGraphToViewport(hcmap.sigma.getNodeDisplayData(id))", top
    )
    box = next(b for b in page.evaluate("hcmap.labels()") if b["id"] == top)
    centre = (box["x"] + box["w"] / 2, box["y"] + box["h"] / 2)
    assert abs(centre[0] - at["x"]) <= box["w"] / 2 + 40 and abs(centre[1] - at["y"]) <= 140
    page.evaluate("hcmap.sigma.render()")  # any later frame (a pan, a zoom) keeps them all
    drawn = {b["id"] for b in page.evaluate("hcmap.labels()")}
    ranked = page.evaluate("hcmap.ranking.sources.concat(hcmap.ranking.publishers).map(r => r.id)")
    assert top in drawn
    page.evaluate("hcmap.clear()")
    assert set(ranked) <= {b["id"] for b in page.evaluate("hcmap.labels()")}


def test_phone_panel_collapses_and_the_map_gets_the_screen(tabs: Any, gl_map: Any) -> None:
    phone = _open(tabs, gl_map[1], width=390, height=844)
    box = phone.locator("#map").bounding_box()
    assert box["height"] >= 0.7 * 844 and box["width"] >= 380
    phone.click("#toggle")
    assert phone.evaluate("document.getElementById('side').offsetHeight") > 200
    phone.click("#toggle")
    assert phone.locator("#map").bounding_box()["height"] >= 0.7 * 844
    tabs.done(phone)


def test_keyboard_reaches_the_ranked_nodes(page: Any, gl_map: Any) -> None:
    graph, _ = gl_map
    ranking = page.evaluate("hcmap.ranking")
    page.focus("#map")
    # N steps through the ranked nodes in rank order: #1 source, #1 publisher, #2 source, …
    page.keyboard.press("n")
    assert page.evaluate("hcmap.selected()") == ranking["sources"][0]["id"]
    page.keyboard.press("n")
    assert page.evaluate("hcmap.selected()") == ranking["publishers"][0]["id"]
    page.keyboard.press("n")
    second = ranking["sources"][1]["id"]
    assert page.evaluate("hcmap.selected()") == second
    page.keyboard.press("Enter")
    assert graph.nodes[second]["title"] in page.text_content("#details")
    # Search results are buttons: Tab reaches them, Enter opens the provenance.
    word = graph.nodes[ranking["publishers"][0]["id"]]["label"]
    page.fill("#search", word)
    page.press("#search", "Enter")
    page.keyboard.press("Enter")
    assert "reach" in page.text_content("#details")


def test_hostile_text_stays_text_and_tooltips_wrap(
    page: Any, stories: list[dict[str, Any]]
) -> None:
    url = stories[5]["url"]
    assert page.evaluate("window.__pwned") is None
    page.evaluate("id => hcmap.highlight(id)", url)
    assert "<script>window.__pwned" in page.text_content("#details")
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.querySelectorAll('#details img, #details script').length") == 0
    wrap = page.evaluate("getComputedStyle(document.getElementById('tip')).overflowWrap")
    assert wrap == "anywhere"
    assert page.errors == []


def _uncited_parts(story: dict[str, Any]) -> set[str]:
    """Ground truth: the node ids of the story's paragraphs and key facts citing nothing."""
    url = story["url"]
    truth = ground_truth([story])
    parts = {f"{url}#s{s + 1}-p{p + 1}" for _u, s, p in truth.uncited_paragraphs}
    parts |= {f"{url}#kf{k + 1}" for k, f in enumerate(story["key_facts"]) if not f.get("cites")}
    return parts


def test_unsourced_parts_are_marked_listed_and_filtered(
    tabs: Any, gstore: Store, stories: list[dict[str, Any]], tmp_path: Path
) -> None:
    story = next(s for s in stories if _uncited_parts(s))
    expected = _uncited_parts(story)
    graph = citation_graph(gstore, "story", story["url"])
    path = tmp_path / "story.html"
    write_map(graph, path)
    page = _open(tabs, path)
    assert page.evaluate("hcmap.renderer") == "canvas"
    assert set(page.evaluate("hcmap.uncited()")) == expected
    # Marked: a red dashed border on each, none on a cited paragraph.
    for node in expected:
        look = page.evaluate("id => hcmap.nodes.get(id)", node)
        assert look["color"]["border"] == "#cf222e" and look["shapeProperties"]["borderDashes"]
    cited = next(n for n, a in graph.nodes(data=True)
                 if a["type"] == "Paragraph" and n not in expected)  # fmt: skip
    assert "shapeProperties" not in page.evaluate("id => hcmap.nodes.get(id)", cited)
    # Listed in the panel; a click lists its (empty) provenance.
    listed = page.eval_on_selector_all("#uncited-list button", "bs => bs.map(b => b.dataset.id)")
    assert set(listed) == expected
    page.click("#uncited-list button")
    assert "cites no source" in page.text_content("#details")
    # The filter shows only them (with their sections and story).
    page.check("#uncited-only")
    shown = page.evaluate("hcmap.nodes.get().filter(n => !n.hidden).map(n => n.id)")
    parts = {n for n in shown if graph.nodes[n]["type"] in ("Paragraph", "KeyFact")}
    assert parts == expected
    assert {graph.nodes[n]["type"] for n in shown} <= {"Story", "Section", "Paragraph", "KeyFact"}
    assert page.errors == []
    tabs.done(page)


def test_reuse_map_marks_stories_with_uncited_parts(
    page: Any, gl_map: Any, stories: list[dict[str, Any]]
) -> None:
    expected = {s["url"]: len(_uncited_parts(s)) for s in stories if _uncited_parts(s)}
    got = page.evaluate("hcmap.uncited()")
    assert set(got) == set(expected)
    for url in list(expected)[:20]:
        assert page.evaluate("id => hcmap.nodes.get(id).g", url) == expected[url]
    page.evaluate("hcmap.setUncited(true)")
    stories_shown = page.evaluate(
        "hcmap.nodes.getIds().filter(id => hcmap.nodes.get(id).group === 'Story')"
        ".filter(id => !hcmap.graph.getNodeAttribute(id, 'hidden') && hcmap.uncited().includes(id))"
    )
    assert set(stories_shown) == set(expected)
    assert page.evaluate("hcmap.shown()")["nodes"] < len(gl_map[0])


@pytest.mark.parametrize("view", ["reuse", "story"])
def test_canvas_maps_label_every_top_name_too(
    tabs: Any, gstore: Store, stories: list[dict[str, Any]], tmp_path: Path, view: str
) -> None:
    """vis-network pages (the 300-story reuse map, a story's trail): the top sources and
    publishers are all labelled at first frame (placed in rank order, further out when
    crowded), none overlapping."""
    focus = stories[0]["url"] if view == "story" else None
    graph = citation_graph(gstore, view, focus)
    path = tmp_path / f"{view}.html"
    write_map(graph, path, renderer="canvas")
    page = _open(tabs, path)
    texts = {d["id"]: d["text"] for d in page.evaluate("hcmap.labels()")}
    rows = page.evaluate("hcmap.ranking.sources.concat(hcmap.ranking.publishers)")
    assert rows
    missing = [r["label"] for r in rows if texts.get(r["id"]) != graph.nodes[r["id"]]["label"]]
    assert missing == []
    assert page.errors == []
    tabs.done(page)


def test_big_reuse_maps_are_laid_out_by_community(gl_map: Any) -> None:
    """Past 1,000 nodes the ring layout (the force layout's start) puts a community's sources
    and publishers together: each nearer its own community's centre than any other's. The
    force layout keeps them closer to their own centre than to the others, on average."""
    from hcgraph.viz.layout import COMMUNITY_NODES, communities, compute_layout, ring_layout

    graph, _ = gl_map
    big = graph.copy()
    for k in range(COMMUNITY_NODES + 1 - len(big)):
        big.add_node(f"urn:x:{k}", type="Story", label="", stories=1)
    groups = [[n for n in c if big.nodes[n]["type"] != "Story"] for c in communities(big)]
    groups = [g for g in groups if len(g) >= 3]
    for pos, strict in ((ring_layout(big), True), (compute_layout(big), False)):
        centres = [
            (sum(pos[n][0] for n in g) / len(g), sum(pos[n][1] for n in g) / len(g)) for g in groups
        ]
        for i, g in enumerate(groups):
            own = other = 0.0
            for n in g:
                d = [math.dist(pos[n], c) for c in centres]
                assert not strict or min(range(len(d)), key=d.__getitem__) == i, n
                own += d[i]
                other += (sum(d) - d[i]) / (len(d) - 1)
            assert own < other, i
