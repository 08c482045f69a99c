"""Review of maps on odd graphs (2026-12-07), in Chromium from file://: an empty store and a
store whose only story cites nothing draw every page without a script error."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from hcgraph import Store, citation_graph, ingest_bytes
from hcgraph.viz import write_map
from tests.conftest import SEED
from tests.support.chromium import CHROMIUM

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
    pytest.mark.slow,
]


def _citing_nothing() -> bytes:
    story = copy.deepcopy(json.loads(SEED.read_text()))
    for fact in story["key_facts"]:
        fact["cites"] = []
    for section in story["sections"]:
        for paragraph in section["paragraphs"]:
            paragraph["cites"] = []
    story["cited_manifest_ids"], story["manifests"], story["related"] = [], [], []
    story["run_these_manifests"]["manifest_ids"] = []
    return json.dumps(story).encode()


@pytest.mark.parametrize("docs", [[], [_citing_nothing()]], ids=["empty", "story-citing-nothing"])
@pytest.mark.parametrize(
    ("view", "renderer"),
    [("sources", "auto"), ("time", "auto"), ("reuse", "canvas"), ("reuse", "webgl")],
)
def test_an_empty_map_draws_without_a_script_error(
    tabs: Any, tmp_path: Path, docs: list[bytes], view: str, renderer: str
) -> None:
    with Store(None) as store:
        assert not ingest_bytes(store, [(d, f"s{i}.json") for i, d in enumerate(docs)]).failures
        graph = citation_graph(store, view)
    assert graph.number_of_nodes() == len(docs)
    path = tmp_path / "map.html"
    write_map(graph, path, renderer=renderer)
    page = tabs.open(path.as_uri())
    page.wait_for_function("() => window.hcmapReady !== undefined || false", timeout=10_000)
    assert page.errors == []
    tabs.done(page)
