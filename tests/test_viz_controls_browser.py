"""Every control on every map the CLI writes, in Chromium (issue 40, items 4 and 5).

For each map kind ``hcgraph viz`` writes (each view on each renderer it offers, the
overview, grouped stories, sources and time), ``window.hcmap.controls()`` must list
exactly the controls that work there, and each listed one is driven through the page as a
user would: the date inputs and the unsupported checkbox hide and show, the PNG and SVG
buttons download valid files, the URL fragment survives a reload, the search box finds a
node, the keyboard moves and selects. A control not listed has no visible widget. The store
holds support verdicts (``hcgraph manifests check`` on the seed story) and a hostile
headline that would set ``window.__pwned`` if it ever ran.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import networkx as nx
import pytest

from hcgraph import Store, citation_graph, ingest_bytes
from hcgraph.viz import draw_map
from hcsample.corpus import generate_corpus
from tests.conftest import SEED, SEED_URL
from tests.hostile import CANARY
from tests.support.chromium import CHROMIUM

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
    pytest.mark.slow,
]

BASE = {"keyboard", "png", "search", "svg", "url-state"}
STORIES = BASE | {"date-filter", "unsupported-filter"}
#: Map kind → (view, focus, options, the controls it must list).
KINDS: dict[str, tuple[str, str | None, dict[str, Any], set[str]]] = {
    "reuse-canvas": ("reuse", None, {"renderer": "canvas"}, STORIES),
    "reuse-webgl": ("reuse", None, {"renderer": "webgl"}, STORIES),
    # One story, its sources all of one day: no date range to filter.
    "story-canvas": ("story", SEED_URL, {"renderer": "canvas"}, STORIES - {"date-filter"}),
    "story-webgl": ("story", SEED_URL, {"renderer": "webgl"}, STORIES - {"date-filter"}),
    "publisher-canvas": ("publisher", "PUB", {"renderer": "canvas"}, STORIES),
    "publisher-webgl": ("publisher", "PUB", {"renderer": "webgl"}, STORIES),
    "overview-canvas": ("reuse", None, {"overview": True}, BASE),
    "grouped-canvas": ("reuse", None, {"group_stories": "newsroom"}, BASE),
    "sources": ("sources", None, {}, STORIES | {"click-through", "zoom"}),
    "time": ("time", None, {}, STORIES | {"brush", "click-through", "tooltip"}),
}
#: The widget of a control that can be missing from a page.
WIDGET = {"date-filter": "#dates", "unsupported-filter": "#unsupported-box"}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def maps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Path, Any]]]:
    """Every map kind written by draw_map (what ``hcgraph viz`` runs) from one store with
    support verdicts: kind → (path, graph)."""
    from hcgraph.claims.pulling import pull_manifests
    from tests.test_claims import MID, _changed_number

    tmp = tmp_path_factory.mktemp("controls")
    stories = generate_corpus(60, seed=11, include_seed=json.loads(SEED.read_text())).stories
    stories[5]["headline"] = CANARY
    (tmp / "replies").mkdir()
    (tmp / "replies" / f"{MID}.json").write_text(json.dumps(_changed_number()))
    out: dict[str, tuple[Path, Any]] = {}
    with Store(tmp / "store") as st:
        docs = [(json.dumps(s).encode(), f"s{i}") for i, s in enumerate(stories)]
        assert not ingest_bytes(st, docs).failures
        pull_manifests(st, directory=tmp / "replies")
        reuse = citation_graph(st, "reuse")
        # A publisher of a source the story with verdicts cites: its map holds that story.
        pubs = {p for m in reuse.successors(SEED_URL) for p in reuse.successors(m)}
        pub = reuse.nodes[min(pubs)]["label"]
        for kind, (view, focus, options, _want) in KINDS.items():
            focus = pub if focus == "PUB" else focus
            path = tmp / f"{kind}.html"
            draw_map(st, view, focus, path, **options)
            out[kind] = (path, citation_graph(st, view, focus, **{
                k: v for k, v in options.items() if k != "renderer"}))  # fmt: skip
    yield out


def _open(tabs: Any, path: Path, hash: str = "") -> Any:
    """The map freshly loaded, in one of the module's reused tabs (tests.support.chromium)."""
    page = tabs.open(path.as_uri() + hash, accept_downloads=True)
    page.wait_for_function("() => window.hcmapReady !== undefined", timeout=60_000)
    return page


def _clean(tabs: Any, page: Any) -> None:
    assert page.evaluate("window.__pwned") is None
    assert page.errors == []
    tabs.done(page)


def _total(shown: dict[str, int]) -> int:
    return sum(shown.values())


@pytest.fixture(params=list(KINDS))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_controls_lists_exactly_what_the_page_offers(
    tabs: Any, maps: dict[str, tuple[Path, Any]], kind: str
) -> None:
    page = _open(tabs, maps[kind][0])
    listed = page.evaluate("hcmap.controls()")
    assert listed == sorted(KINDS[kind][3])
    for name, widget in WIDGET.items():
        assert page.is_visible(widget) == (name in listed), (kind, name)
    _clean(tabs, page)


@pytest.mark.parametrize("kind", [k for k, spec in KINDS.items() if "date-filter" in spec[3]])
def test_date_filter_hides_and_shows(
    tabs: Any, maps: dict[str, tuple[Path, Any]], kind: str
) -> None:
    path, graph = maps[kind]
    page = _open(tabs, path)
    before = page.evaluate("hcmap.shown()")
    lo, hi = page.get_attribute("#date-from", "min"), page.get_attribute("#date-from", "max")
    assert lo and hi and lo < hi
    dates = sorted(a["date"][:10] for _n, a in graph.nodes(data=True)
                   if a["type"] == "Story" and a["date"])  # fmt: skip
    mid = dates[len(dates) // 2]
    page.fill("#date-from", mid)
    after = page.evaluate("hcmap.shown()")
    assert 0 < _total(after) < _total(before), (before, after)
    assert f"from={mid}" in page.url
    if kind == "time":  # ground truth: the dated stories on or after the day
        assert after["stories"] == sum(1 for d in dates if d >= mid)
    page.fill("#date-from", "")
    assert page.evaluate("hcmap.shown()") == before
    _clean(tabs, page)


@pytest.mark.parametrize(
    "kind", [k for k, spec in KINDS.items() if "unsupported-filter" in spec[3]]
)
def test_unsupported_filter_keeps_the_stories_with_unsupported_sentences(
    tabs: Any, maps: dict[str, tuple[Path, Any]], kind: str
) -> None:
    path, graph = maps[kind]
    page = _open(tabs, path)
    before = page.evaluate("hcmap.shown()")
    assert page.text_content("#unsupported-n") == f"({_marked(graph)})"
    page.check("#unsupported-only")
    after = page.evaluate("hcmap.shown()")
    assert 0 < _total(after) < _total(before), (before, after)
    assert "unsup=1" in page.url
    if kind in ("reuse-canvas", "reuse-webgl"):  # the story, what it cites, their publishers
        assert after["nodes"] == 1 + len(nx.descendants(graph, SEED_URL))
    elif kind == "time":
        assert after["stories"] == 1
    elif kind == "sources":
        assert after["sources"] == len(list(graph.successors(SEED_URL)))
    page.uncheck("#unsupported-only")
    assert page.evaluate("hcmap.shown()") == before
    _clean(tabs, page)


def _marked(graph: nx.DiGraph) -> int:
    return sum(1 for _n, a in graph.nodes(data=True) if a.get("unsupported"))


def test_png_and_svg_downloads_are_valid_pictures(
    tabs: Any, maps: dict[str, tuple[Path, Any]], kind: str, tmp_path: Path
) -> None:
    from PIL import Image

    path, graph = maps[kind]
    page = _open(tabs, path)
    with page.expect_download() as dl:
        page.click("#png")
    png = tmp_path / "map.png"
    dl.value.save_as(png)
    assert png.read_bytes()[:8] == PNG_MAGIC
    image = Image.open(io.BytesIO(png.read_bytes())).convert("L")
    assert image.width >= 400 and image.height >= 400
    assert image.getextrema()[0] < 200  # something is drawn, not a white sheet
    with page.expect_download() as dl:
        page.click("#svg")
    svg = tmp_path / "map.svg"
    dl.value.save_as(svg)
    root = ElementTree.fromstring(svg.read_text())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    circles = len(list(root.iter("{http://www.w3.org/2000/svg}circle")))
    assert circles >= min(5, graph.number_of_nodes())
    assert not list(root.iter("{http://www.w3.org/2000/svg}script"))
    assert dl.value.suggested_filename.endswith(".svg")
    _clean(tabs, page)


def _query(graph: nx.DiGraph) -> tuple[str, str]:
    """Two words of the most-cited dated source's title, and its label."""
    rows = [a for _n, a in graph.nodes(data=True) if a["type"] == "Manifest" and a["date"]]
    top = max(rows, key=lambda a: (a.get("stories", 0), a["label"]))
    words = [w for w in re.findall(r"[A-Za-z]{4,}", top["title"] or top["label"])][:2]
    return " ".join(words).lower(), top["label"]


def test_search_finds_a_node(tabs: Any, maps: dict[str, tuple[Path, Any]], kind: str) -> None:
    path, graph = maps[kind]
    query, label = _query(graph)
    page = _open(tabs, path)
    page.fill("#search", query)
    page.wait_for_function("() => /\\d/.test(document.getElementById('status').textContent)")
    found = int(re.match(r"\d+", page.text_content("#status")).group())  # type: ignore[union-attr]
    assert found >= 1
    if page.query_selector("#hits"):
        assert any(label[:20] in b for b in page.eval_on_selector_all(
            "#hits button", "bs => bs.map(b => b.textContent)"))  # fmt: skip
    else:
        assert page.evaluate("hcmap.dimmed()") > 0  # the others veiled
    assert "q=" in page.url
    page.fill("#search", "zzqxv nothing matches")
    page.wait_for_function("() => /^0 /.test(document.getElementById('status').textContent)")
    # The hostile headline is found as text, never run.
    if kind in ("reuse-canvas", "reuse-webgl", "time"):
        page.fill("#search", "__pwned script")
        page.wait_for_function("() => /^[1-9]/.test(document.getElementById('status').textContent)")
    _clean(tabs, page)


def test_url_state_round_trips_through_a_reload(
    tabs: Any, maps: dict[str, tuple[Path, Any]], kind: str
) -> None:
    path, graph = maps[kind]
    listed = KINDS[kind][3]
    page = _open(tabs, path)
    page.fill("#search", _query(graph)[0])
    page.wait_for_function("() => /\\d/.test(document.getElementById('status').textContent)")
    if "date-filter" in listed:
        page.fill("#date-to", page.get_attribute("#date-from", "max") or "")
    if "unsupported-filter" in listed and kind != "story-webgl":
        page.check("#unsupported-only")
    page.focus("#map")
    page.keyboard.press("n")
    state, shown, url = page.evaluate("hcmap.state()"), page.evaluate("hcmap.shown()"), page.url
    assert "#" in url and page.evaluate("hcmap.selected()")
    page.reload()
    page.wait_for_function("() => window.hcmapReady !== undefined", timeout=60_000)
    assert page.url == url
    assert page.evaluate("hcmap.state()") == state
    assert page.evaluate("hcmap.shown()") == shown
    assert page.input_value("#search") == state["q"]
    _clean(tabs, page)


def test_url_state_is_text_not_markup(tabs: Any, maps: dict[str, tuple[Path, Any]]) -> None:
    bad = "<img src=x onerror=\"window.__pwned='hash'\">"
    for kind in KINDS:
        path = maps[kind][0]
        sel = "%3Cscript%3Ewindow.__pwned=1%3C/script%3E"
        page = _open(tabs, path, "#q=" + bad.replace(" ", "%20") + "&sel=" + sel)
        assert page.input_value("#search") == bad
        assert page.evaluate("document.querySelectorAll('#side img, #side script').length") == 0
        _clean(tabs, page)


def test_keyboard_moves_and_selects(
    tabs: Any, maps: dict[str, tuple[Path, Any]], kind: str
) -> None:
    page = _open(tabs, maps[kind][0])
    page.focus("#map")
    assert page.evaluate("hcmap.selected()") == ""
    page.keyboard.press("n")
    first = page.evaluate("hcmap.selected()")
    assert first
    page.keyboard.press("n")
    second = page.evaluate("hcmap.selected()")
    assert second and second != first
    page.keyboard.press("p")
    assert page.evaluate("hcmap.selected()") == first
    page.keyboard.press("Enter")
    assert page.evaluate("hcmap.selected()")
    assert page.get_attribute("#details", "class") != "muted"
    view = page.evaluate("hcmap.view()")
    page.keyboard.press("ArrowRight")
    moved = page.evaluate("hcmap.view()")
    assert moved != view
    page.keyboard.press("+")
    assert page.evaluate("hcmap.view()") != moved
    page.keyboard.press("Escape")
    assert page.evaluate("hcmap.selected()") == ""
    _clean(tabs, page)
