"""Issue 14, items 10 and 11, in real headless Chromium: bidi controls in untrusted text are
shown, not obeyed, and the map's CSP allows only its own inline scripts (by hash)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from hcgraph import Store, citation_graph, ingest_bytes
from hcgraph.viz import write_map
from hcgraph.viz.render import render_map, visible_bidi
from tests.conftest import SEED, SEED_URL
from tests.support.chromium import CHROMIUM, TEST_ARGS

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]

SPOOF = "Safe headline \u202eoverride\u202c and \u2066isolate\u2069 end"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    doc = json.loads(SEED.read_text())
    doc["headline"] = SPOOF
    doc["manifests"][0]["title"] = SPOOF
    with Store(None) as st:
        assert not ingest_bytes(st, [(json.dumps(doc).encode(), "spoof.json")]).failures
        graph = citation_graph(st, "story", SEED_URL)
    path = tmp_path_factory.mktemp("viz") / "map.html"
    write_map(graph, path)
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=TEST_ARGS)
        pg = browser.new_page(viewport={"width": 1200, "height": 800})
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.on("pageerror", lambda exc: errors.append(str(exc)))
        pg.goto(path.as_uri())
        pg.wait_for_function("() => window.hcmapReady !== undefined", timeout=60_000)
        pg.errors = errors
        yield pg
        browser.close()


def test_visible_bidi() -> None:
    assert visible_bidi("a\u202eb\u2069") == "a[U+202E]b[U+2069]"
    assert visible_bidi("plain עברית") == "plain עברית"


def test_labels_tooltips_and_details_show_the_controls(page: Any) -> None:
    assert page.errors == []
    node = page.evaluate(f"hcmap.nodes.get({json.dumps(SEED_URL)})")
    for text in (node["label"], node["title"]):
        assert "\u202e" not in text and "\u2066" not in text
        assert "[U+202E]override[U+202C]" in text.replace("\n", " ")
    assert page.evaluate(f"hcmap.highlight({json.dumps(SEED_URL)})") > 1
    details = page.inner_text("#details")
    assert "[U+202E]override" in details and "edirrevo" not in details
    assert "\u202e" not in details
    bidi = page.evaluate("getComputedStyle(document.querySelector('#details .v')).unicodeBidi")
    assert bidi == "isolate"


def test_csp_allows_only_the_page_scripts(page: Any) -> None:
    csp = page.get_attribute('meta[http-equiv="Content-Security-Policy"]', "content")
    assert "'unsafe-inline'" not in csp.split("script-src", 1)[1].split(";", 1)[0]
    assert csp.count("'sha256-") == 2
    # The page's own scripts ran (the map is ready); an injected inline script does not.
    ran = page.evaluate(
        """() => { const s = document.createElement('script');
                   s.textContent = 'window.__injected = 1';
                   document.body.appendChild(s); return window.__injected === 1; }"""
    )
    assert ran is False
    assert page.evaluate("typeof hcmap.highlight") == "function"


def test_hashes_follow_the_scripts() -> None:
    import networkx as nx

    g = nx.DiGraph(view="story", title="t")
    g.add_node("x", type="Story", label="x", title="x")
    html = render_map(g)
    script_src = html.split("script-src", 1)[1].split(";", 1)[0]
    assert script_src.count("'sha256-") == 2 and "unsafe-inline" not in script_src
