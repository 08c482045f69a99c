"""Notebook maps in real headless Chromium with the network blocked.

``to_pyvis(store).write_html(...)`` (the docs' example) was a blank page offline: pyvis's
template loads vis-network from a CDN. Checked here: the page pyvis writes, the network shown
inline as a notebook cell's value (``_repr_html_``: a sandboxed ``<iframe srcdoc>``), and
:func:`hcgraph.viz.show_map` (hcgraph's own map inline) — each with every http(s)/ws request
counted and aborted, no console error, the network drawn (vis-network's own node count, and
pixels on the canvas), hostile text inert.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hcgraph import Store, citation_graph, ingest_bytes
from hcgraph.viz import show_map, to_pyvis
from tests.conftest import SEED
from tests.hostile import CANARY, canary_documents
from tests.support.chromium import CHROMIUM

pytestmark = [
    pytest.mark.slow,  # a real browser
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]

#: Canvas pixels drawn (alpha > 0), sampled on a grid of every 4th pixel: > 0 once drawn.
PAINTED = """() => {
  let n = 0;
  for (const c of document.querySelectorAll('canvas')) {
    const ctx = c.getContext('2d');
    if (!ctx || !c.width || !c.height) continue;
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    for (let i = 3; i < d.length; i += 16) if (d[i] > 0) n++;
  }
  return n;
}"""


@pytest.fixture(scope="module")
def nstore() -> Iterator[Store]:
    """Seed story + hostile story (canary text) + 12 generated hostile-text stories."""
    with Store(None) as st:
        assert not ingest_bytes(st, canary_documents(SEED)).failures
        yield st


class Offline:
    """A page opened with the network blocked, and what went wrong while it loaded."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page = browser.new_page(viewport={"width": 1200, "height": 900})
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else 0)
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.route("**/*", self._route)
        self.page.goto(path.as_uri())

    def _route(self, route: Any) -> None:
        if route.request.url.startswith(("http://", "https://", "ws://", "wss://")):
            self.requests.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    def frame(self) -> Any:
        """The page's one iframe (sandboxed srcdoc), once it has a document."""
        self.page.wait_for_selector("iframe")
        frames = [f for f in self.page.frames if f != self.page.main_frame]
        assert len(frames) == 1
        return frames[0]

    def clean(self) -> None:
        assert self.errors == [], self.errors
        assert self.requests == [], self.requests
        assert self.dialogs == [], self.dialogs


def _drawn_pyvis(where: Any, nodes: int, edges: int) -> None:
    where.wait_for_function("() => window.hcgraphPyvisReady === true", timeout=60_000)
    assert where.evaluate("network.body.data.nodes.length") == nodes
    assert where.evaluate("network.body.data.edges.length") == edges
    assert where.evaluate("Object.keys(network.getPositions()).length") == nodes
    where.wait_for_function(PAINTED, timeout=30_000)
    assert where.evaluate("window.__pwned === undefined")
    assert where.evaluate("document.querySelectorAll('img, iframe, object, embed').length") == 0


def test_pyvis_write_html_draws_the_network_offline(
    browser: Any, nstore: Store, tmp_path: Path
) -> None:
    graph = citation_graph(nstore, "story", "hostile")
    net = to_pyvis(graph)
    path = tmp_path / "story.html"
    net.write_html(str(path))  # as docs/maps.md shows it
    assert not (tmp_path / "lib").exists()  # nothing to copy next to the page
    page = Offline(browser, path)
    _drawn_pyvis(page.page, graph.number_of_nodes(), graph.number_of_edges())
    page.clean()
    # Restyled through pyvis's API, still offline.
    net.toggle_physics(True)
    net.set_edge_smooth("dynamic")
    path2 = tmp_path / "physics.html"
    net.write_html(str(path2))
    page2 = Offline(browser, path2)
    _drawn_pyvis(page2.page, graph.number_of_nodes(), graph.number_of_edges())
    page2.clean()


def test_pyvis_network_displays_inline_in_a_notebook(
    browser: Any, nstore: Store, tmp_path: Path
) -> None:
    graph = citation_graph(nstore, "reuse", top=30)
    net = to_pyvis(graph)
    cell = net._repr_html_()  # what Jupyter puts under the cell
    assert cell.startswith("<iframe srcdoc=") and 'sandbox="allow-scripts"' in cell
    host = tmp_path / "notebook.html"
    host.write_text(f"<!DOCTYPE html><html><body>{cell}</body></html>")
    page = Offline(browser, host)
    _drawn_pyvis(page.frame(), graph.number_of_nodes(), graph.number_of_edges())
    page.clean()


def test_show_map_displays_hcgraphs_own_map_inline(
    browser: Any, nstore: Store, tmp_path: Path
) -> None:
    shown = show_map(nstore, "story", focus="hostile", height="600px")
    cell = shown._repr_html_()
    assert cell.startswith("<iframe srcdoc=") and "height:600px" in cell
    host = tmp_path / "notebook.html"
    host.write_text(f"<!DOCTYPE html><html><body>{cell}</body></html>")
    page = Offline(browser, host)
    frame = page.frame()
    frame.wait_for_function(PAINTED, timeout=60_000)
    assert frame.evaluate("window.__pwned === undefined")
    assert CANARY.split(" \u2028")[0] not in frame.evaluate("document.documentElement.outerHTML")
    page.clean()
    # The same page can be saved, as `hcgraph viz` writes it.
    saved = shown.save(tmp_path / "map.html")
    assert saved.read_text() == shown.html
