"""Review of the outputs (2026-12-07), in real headless Chromium: a map's SVG download is XML.

A manifest title may hold a C0 control (U+0007): drawn as a label, it went into the SVG the
page's download button writes as it was, and XML 1.0 holds no such character, so the file
opened nowhere. The page's SVG must parse as XML, the label's text kept (the control shown as
U+FFFD, as in trace pictures).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from hcgraph import Store, citation_graph, ingest_bytes
from hcgraph.viz import write_map
from tests.conftest import SEED, SEED_URL
from tests.support.chromium import CHROMIUM

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]


@pytest.mark.parametrize("renderer", ["canvas", "webgl"])
def test_svg_download_is_xml(tabs: Any, tmp_path: Any, renderer: str) -> None:
    doc = json.loads(SEED.read_text())
    for m in doc["manifests"]:
        m["title"] = "\x07Bell " + m["title"]
    doc["headline"] = "\x01Start \ufffe of the headline"
    with Store(None) as st:
        assert not ingest_bytes(st, [(json.dumps(doc).encode(), "ctl.json")]).failures
        graph = citation_graph(st, "story", SEED_URL)
    path = tmp_path / "map.html"
    write_map(graph, path, renderer=renderer)
    page = tabs.open(path.as_uri())
    page.wait_for_function("() => window.hcmap && window.hcmap.isReady()", timeout=60_000)
    svg = page.evaluate("hcmap.svg()")
    texts = [t.text or "" for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")]
    assert any("\ufffdBell" in t for t in texts)
    assert page.errors == []
    tabs.done(page)
