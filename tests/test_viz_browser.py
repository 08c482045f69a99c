"""Every citation-map view opened in real headless Chromium (Debian's /usr/bin/chromium).

Checked per view: zero console errors, zero network requests (every http(s) request is
routed, counted and aborted), nodes/edges drawn == the projection, a hostile-text corpus
opens no dialog and runs no script (a canary), search and filters change what is shown,
clicking a node highlights its provenance neighbourhood. A screenshot per view goes to
tests/artifacts/ (git-ignored). Skipped only where /usr/bin/chromium is missing; CI
installs it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from hcgraph import Store, citation_graph, ingest_bytes
from hcgraph.viz import write_map
from tests.conftest import ROOT, SEED, SEED_URL
from tests.hostile import canary_documents
from tests.support.chromium import CHROMIUM

pytestmark = [
    pytest.mark.slow,  # a real browser
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]

ARTIFACTS = ROOT / "tests" / "artifacts"
HOSTILE_URL = "https://news.example.org/stories/2026-10-21/hostile/"


@pytest.fixture(scope="module")
def vstore() -> Iterator[Store]:
    """Seed story + hostile story (canary text) + 12 generated hostile-text stories."""
    with Store(None) as st:
        assert not ingest_bytes(st, canary_documents(SEED)).failures
        yield st


class Page:
    """A loaded map plus everything that went wrong while loading and using it."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page = browser.new_page(viewport={"width": 1400, "height": 900})
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        self.page.on("dialog", self._dialog)
        self.page.route("**/*", self._route)
        self.page.goto(path.as_uri())
        self.page.wait_for_function("() => window.hcmapReady !== undefined", timeout=60_000)

    def _console(self, msg: Any) -> None:
        if msg.type == "error":
            self.errors.append(msg.text)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(("http://", "https://", "ws://", "wss://")):
            self.requests.append(url)
            route.abort()
        else:
            route.continue_()

    def js(self, expr: str, arg: Any = None) -> Any:
        return self.page.evaluate(expr, arg)


def _open(browser: Any, graph: nx.DiGraph, tmp_path: Path) -> Page:
    path = tmp_path / f"{graph.graph['view']}.html"
    write_map(graph, path)
    return Page(browser, path)


def _check_clean(page: Page, graph: nx.DiGraph) -> None:
    """The common contract of every view."""
    assert page.errors == [], page.errors
    assert page.requests == [], page.requests
    assert page.dialogs == [], page.dialogs
    assert page.js("window.__pwned === undefined")
    # Nothing hostile turned into markup anywhere in the page.
    assert page.js("document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert page.js("document.scripts.length") == 3
    drawn = page.js("hcmap.shown()")
    assert drawn == {"nodes": graph.number_of_nodes(), "edges": graph.number_of_edges()}
    assert page.js("hcmap.nodes.length") == graph.number_of_nodes()
    assert page.js("hcmap.edges.length") == graph.number_of_edges()
    assert page.js("hcmap.network.physics.physicsEnabled") is False


def _screenshot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.page.screenshot(path=str(ARTIFACTS / f"viz-{name}.png"))


def _check_search_and_filter(page: Page, graph: nx.DiGraph, query: str, type_off: str) -> None:
    total = graph.number_of_nodes()
    # Search by typing into the real search box.
    page.page.fill("#search", query)
    page.page.wait_for_function("() => document.getElementById('status').textContent !== ''")
    matches = int(page.page.text_content("#status").split()[0])
    expected = sum(query.lower() in " ".join([a["label"], a["title"], a["id"], n]).lower()
                   for n, a in graph.nodes(data=True))  # fmt: skip
    assert 0 < matches <= total and matches >= expected
    assert page.js("hcmap.dimmed()") == total - matches
    page.page.fill("#search", "")
    page.page.wait_for_function("() => hcmap.dimmed() === 0")
    # Node-type filter: unticking a type hides exactly its nodes (and their edges).
    n_type = sum(1 for _n, a in graph.nodes(data=True) if a["type"] == type_off)
    page.page.uncheck(f"input[data-type='{type_off}']")
    shown = page.js("hcmap.shown()")
    assert shown["nodes"] == total - n_type
    kept = [n for n, a in graph.nodes(data=True) if a["type"] != type_off]
    assert shown["edges"] == graph.subgraph(kept).number_of_edges()
    page.page.check(f"input[data-type='{type_off}']")
    assert page.js("hcmap.shown()")["nodes"] == total


def _check_publisher_filter(page: Page, graph: nx.DiGraph) -> None:
    publishers = page.js("hcmap.publishers")
    name = publishers[0]
    page.page.select_option("#publisher", "0")
    expected = sum(1 for _n, a in graph.nodes(data=True) if name in a["publishers"])
    assert page.js("hcmap.shown()")["nodes"] == expected < graph.number_of_nodes()
    page.page.select_option("#publisher", "-1")
    newsrooms = page.js("hcmap.newsrooms")
    if newsrooms:
        page.page.select_option("#newsroom", "0")
        expected = sum(1 for _n, a in graph.nodes(data=True) if newsrooms[0] in a["newsrooms"])
        assert page.js("hcmap.shown()")["nodes"] == expected
        page.page.select_option("#newsroom", "-1")
    assert page.js("hcmap.shown()")["nodes"] == graph.number_of_nodes()


def _click_node(page: Page, node: str, *, hover: bool = False) -> None:
    """A real mouse click on (or hover over) the node's position on the canvas."""
    page.js("id => hcmap.network.focus(id, {scale: 1.2, animation: false})", node)
    box = page.page.locator("#map canvas").bounding_box()
    xy = page.js(
        "id => { const p = hcmap.network.getPosition(id); return hcmap.network.canvasToDOM(p); }",
        node,
    )
    if hover:
        page.page.mouse.move(box["x"] + xy["x"] - 30, box["y"] + xy["y"])
        page.page.mouse.move(box["x"] + xy["x"], box["y"] + xy["y"], steps=5)
    else:
        page.page.mouse.click(box["x"] + xy["x"], box["y"] + xy["y"])


def _provenance(graph: nx.DiGraph, node: str) -> set[str]:
    return {node} | nx.ancestors(graph, node) | nx.descendants(graph, node)


def test_story_view_in_chromium(browser: Any, vstore: Store, tmp_path: Path) -> None:
    graph = citation_graph(vstore, "story", HOSTILE_URL)
    page = _open(browser, graph, tmp_path)
    _check_clean(page, graph)
    assert "<script>window.__pwned='script'</script>" in page.page.title()
    _screenshot(page, "story")
    # Click the hostile story itself: its text shows, as text, in the details panel.
    _click_node(page, HOSTILE_URL)
    page.page.wait_for_function(
        "() => document.getElementById('details').textContent.includes('highlighted')"
    )
    details = page.page.text_content("#details")
    assert "<script>window.__pwned='script'</script>" in details
    assert page.js("hcmap.dimmed()") == len(graph) - len(_provenance(graph, HOSTILE_URL))
    # A claim's provenance: the paragraphs citing it, up to the story; its manifest, down to
    # the publisher.
    claim = next(n for n, a in graph.nodes(data=True) if a["type"] == "Claim")
    assert page.js("id => hcmap.highlight(id)", claim) == len(_provenance(graph, claim))
    assert page.js("hcmap.dimmed()") == len(graph) - len(_provenance(graph, claim))
    _screenshot(page, "story-highlight")
    _check_search_and_filter(page, graph, "claim", "Claim")
    _check_publisher_filter(page, graph)
    _check_clean(page, graph)
    page.page.close()


def test_reuse_view_in_chromium(browser: Any, vstore: Store, tmp_path: Path) -> None:
    graph = citation_graph(vstore, "reuse")
    page = _open(browser, graph, tmp_path)
    _check_clean(page, graph)
    _screenshot(page, "reuse")
    # The tooltip of a hostile story is the plain text (vis-network sets innerText).
    title = page.js("id => hcmap.nodes.get(id).title", HOSTILE_URL)
    assert "<script>window.__pwned='script'</script>" in title
    # Hover the hostile story: the real tooltip shows that text as text, with no elements
    # but line breaks.
    _click_node(page, HOSTILE_URL, hover=True)
    page.page.wait_for_function(
        "() => { const t = document.querySelector('div.vis-tooltip');"
        " return t && t.style.visibility !== 'hidden' && t.textContent.includes('__pwned'); }"
    )
    # innerText turns newlines into <br>; nothing else may appear.
    tags = page.js("[...document.querySelector('div.vis-tooltip').querySelectorAll('*')]"
                   ".map(e => e.tagName)")  # fmt: skip
    assert set(tags) <= {"BR"}, tags
    assert page.js("window.__pwned === undefined")
    manifest = max((n for n, a in graph.nodes(data=True) if a["type"] == "Manifest"),
                   key=lambda n: graph.nodes[n]["stories"])  # fmt: skip
    _click_node(page, manifest)
    page.page.wait_for_function(
        "() => document.getElementById('details').textContent.includes('highlighted')"
    )
    assert page.js("hcmap.dimmed()") == len(graph) - len(_provenance(graph, manifest))
    assert "stories" in page.page.text_content("#details")
    _check_search_and_filter(page, graph, "agent", "Story")
    _check_publisher_filter(page, graph)
    _check_clean(page, graph)
    page.page.close()


def test_publisher_view_in_chromium(browser: Any, vstore: Store, tmp_path: Path) -> None:
    seed = json.loads(SEED.read_text())
    graph = citation_graph(vstore, "publisher", seed["manifests"][0]["source_name"])
    page = _open(browser, graph, tmp_path)
    _check_clean(page, graph)
    _screenshot(page, "publisher")
    _check_search_and_filter(page, graph, "rl", "Manifest")
    page.js("id => hcmap.highlight(id)", SEED_URL)
    assert page.js("hcmap.dimmed()") == len(graph) - len(_provenance(graph, SEED_URL))
    _check_clean(page, graph)
    page.page.close()


def test_grouped_reuse_view_in_chromium(browser: Any, vstore: Store, tmp_path: Path) -> None:
    graph = citation_graph(vstore, "reuse", top=10, group_stories="newsroom-day")
    page = _open(browser, graph, tmp_path)
    _check_clean(page, graph)
    _screenshot(page, "reuse-grouped")
    page.page.close()
