"""Review of the outputs story text reaches (2026-12-07): what a reader of each page sees.

A story whose publisher name, manifest id and title carry a bidi override (U+202E) must not
draw reversed text anywhere a person reads it: the maps promise ``[U+202E]`` instead
(docs/security.md, "Maps"), on every field they show, the ids included.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from hcgraph import Store, citation_graph, ingest_bytes
from hcgraph.provenance.auditing import audit
from hcgraph.provenance.report_html import render_report
from hcgraph.provenance.trace_picture import to_svg
from hcgraph.provenance.tracing import trace
from hcgraph.viz.render import render_map
from tests.conftest import SEED, SEED_URL

BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
SPOOF = "pub \u202eevil\u202c name"


def _spoofed_story() -> dict[str, Any]:
    doc = json.loads(SEED.read_text())
    first = doc["manifests"][0]
    first["source_name"] = SPOOF
    first["title"] = "title \u2066isolate\u2069"
    old = first["manifest_id"]
    first["manifest_id"] = "17924\u202e39777"  # an id is exact text: it may hold anything
    text = json.dumps(doc, ensure_ascii=False).replace(f'"{old}"', '"17924\\u202e39777"')
    return json.loads(text)


@pytest.fixture(scope="module")
def spoofed() -> Any:
    st = Store(None)
    doc = _spoofed_story()
    assert not ingest_bytes(st, [(json.dumps(doc).encode(), "spoof.json")]).failures
    yield st
    st.close()


def _page_data(page: str) -> Any:
    block = page.split('<script type="application/json" id="hc-data">', 1)[1]
    return json.loads(block.split("</script>", 1)[0])


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(k) + _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@pytest.mark.parametrize("renderer", ["canvas", "webgl"])
@pytest.mark.parametrize(
    ("view", "focus"), [("story", SEED_URL), ("reuse", None), ("publisher", SPOOF)]
)
def test_map_data_holds_no_bidi_control(
    spoofed: Store, view: str, focus: str | None, renderer: str
) -> None:
    """Every string the page shows (labels, tooltips, the details' id row) comes from its
    data block: none may hold a bidi control, the publisher's and manifest's ids included."""
    page = render_map(citation_graph(spoofed, view, focus), renderer=renderer)
    shown = [s for s in _strings(_page_data(page)) if BIDI.search(s)]
    assert shown == []
    assert any("[U+202E]evil[U+202C]" in s for s in _strings(_page_data(page)))


def test_audit_report_shows_bidi_controls(spoofed: Store) -> None:
    """The audit's HTML report names the spoofed publisher (a declared-publishers finding,
    the concentration chart): shown as ``[U+202E]``, as on the maps, never obeyed."""
    page = render_report(audit(spoofed))
    assert "[U+202E]evil[U+202C]" in page
    assert BIDI.findall(page) == []


@pytest.mark.slow  # runs Graphviz
@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz")
def test_a_long_url_from_one_story_leaves_the_manifest_trace_drawable() -> None:
    """Graphviz reads no quoted string longer than 16,384 bytes, and the picture named its
    nodes by IRI: one story citing a manifest from a 20,000-character URL stopped the SVG
    trace of that manifest for every story citing it."""
    doc = json.loads(SEED.read_text())
    mid = doc["manifests"][0]["manifest_id"]
    hostile = json.loads(SEED.read_text())
    hostile["url"] = "https://example.org/" + "a" * 20_000 + "/"
    hostile["id"] = "hostile"
    with Store(None) as st:
        bodies = [(json.dumps(d).encode(), f"{i}.json") for i, d in enumerate((doc, hostile))]
        assert not ingest_bytes(st, bodies).failures
        svg = to_svg(trace(st, mid))
    root = ET.fromstring(svg)
    titles = "\n".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}title"))
    assert SEED_URL in titles and "https://example.org/aaaa" in titles
