"""``window.hcmap.layoutQuality()`` in Chromium: the number written in the page, shown in
its panel, and the connected-closeness of the positions the page actually draws."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from hcgraph import Store, citation_graph, ingest_bytes
from hcgraph.viz import write_map
from hcgraph.viz.quality import connected_closeness
from hcsample.corpus import generate_corpus
from tests.support.chromium import CHROMIUM

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
    pytest.mark.slow,
]

#: The positions a page draws, by renderer: vis-network's and graphology's own.
_DRAWN = {
    "canvas": "(() => hcmap.network.getPositions())()",
    "webgl": """(() => { const out = {};
      hcmap.graph.forEachNode((id, a) => { out[id] = {x: a.x, y: a.y}; }); return out; })()""",
}


@pytest.fixture(scope="module")
def store() -> Iterator[Store]:
    with Store(None) as st:
        stories = generate_corpus(200, seed=13).stories
        docs = [(json.dumps(s).encode(), f"s{i}") for i, s in enumerate(stories)]
        assert not ingest_bytes(st, docs).failures
        yield st


def _written(path: Path) -> Any:
    html = path.read_text("utf-8")
    start = html.index('id="hc-data">') + len('id="hc-data">')
    return json.loads(html[start : html.index("</script>", start)])["meta"]["layoutQuality"]


@pytest.mark.parametrize("renderer", ["canvas", "webgl"])
def test_layout_quality_is_the_score_of_what_the_page_draws(
    browser: Any, store: Store, tmp_path: Path, renderer: str
) -> None:
    graph = citation_graph(store, "reuse", overview=False)
    path = tmp_path / "map.html"
    write_map(graph, path, renderer=renderer)
    written = _written(path)
    assert isinstance(written, float) and 0 < written <= 1
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    page.goto(path.as_uri())
    page.wait_for_function("() => window.hcmapReady !== undefined", timeout=60_000)
    assert page.evaluate("hcmap.renderer") == renderer
    assert page.evaluate("hcmap.layoutQuality()") == written
    shown = page.inner_text("#layout-quality")
    assert shown.startswith("layout quality ") and float(shown.split()[-1]) == round(written, 3)
    drawn = page.evaluate(_DRAWN[renderer])
    page.close()
    assert set(drawn) == set(graph)
    again = connected_closeness(graph, {n: (p["x"], p["y"]) for n, p in drawn.items()})
    assert again == pytest.approx(written, abs=2e-3)  # positions are rounded to 0.1 px


def test_the_story_and_publisher_maps_report_it_too(
    browser: Any, store: Store, tmp_path: Path
) -> None:
    reuse = citation_graph(store, "reuse", overview=False)
    publisher = max(
        (a for _n, a in reuse.nodes(data=True) if a["type"] == "Publisher"),
        key=lambda a: a.get("stories", 0),
    )["label"]
    story = min(n for n, a in reuse.nodes(data=True) if a["type"] == "Story")
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    for view, focus in (("story", story), ("publisher", publisher)):
        graph: nx.DiGraph = citation_graph(store, view, focus)
        path = tmp_path / f"{view}.html"
        write_map(graph, path)
        page.goto(path.as_uri())
        page.wait_for_function("() => window.hcmapReady !== undefined", timeout=60_000)
        score = page.evaluate("hcmap.layoutQuality()")
        assert score == _written(path) and isinstance(score, float) and 0 < score <= 1
    page.close()


def test_the_sources_and_time_views_measure_what_they_draw(
    browser: Any, store: Store, tmp_path: Path
) -> None:
    """These two place their points in the page: the score is computed there, and agrees
    with :func:`connected_closeness` of the points read back from the page."""
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    for view in ("sources", "time"):
        graph = citation_graph(store, view)
        path = tmp_path / f"{view}.html"
        write_map(graph, path)
        page.goto(path.as_uri())
        page.wait_for_function("() => window.hcmapReady !== undefined", timeout=60_000)
        score = page.evaluate("hcmap.layoutQuality()")
        assert isinstance(score, float) and 0 < score <= 1
        drawn = nx.Graph()
        pos: dict[str, tuple[float, float]] = {}
        if view == "sources":  # each publisher, then the sources packed in it
            owner = ""
            for c in page.evaluate("hcmap.circles()"):
                pos[c["id"]] = (c["x"], c["y"])
                if c["kind"] == "publisher":
                    owner = c["id"]
                    drawn.add_node(owner)
                else:
                    drawn.add_edge(owner, c["id"])
        else:
            nodes = list(graph)  # every point read back in one call, not one call a node
            points = page.evaluate("ids => ids.map(id => hcmap.point(id))", nodes)
            pos = {n: (p["x"], p["y"]) for n, p in zip(nodes, points, strict=True) if p}
            drawn.add_nodes_from(pos)
            drawn.add_edges_from((s, o) for s, o in graph.edges() if s in pos and o in pos)
        assert connected_closeness(drawn, pos) == pytest.approx(score, abs=2e-3), view
    page.close()
