"""Maps leave withdrawn stories out, and with them the sources only they cite.

Two stores: the seed story plus a second story (citing four of the seed's manifests and one
of its own, from a publisher of its own) withdrawn, and the seed story alone. Without
``--include-withdrawn`` every map of the first must be the map of the second, byte for byte
(the page, its legend and summary counts, the exports); with it the second story's source
and publisher are drawn as cited by it. Fast: graphs and pages built without a browser.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hcgraph.errors import VizError
from hcgraph.exporting import export
from hcgraph.ingest import ingest_bytes, withdraw_stories
from hcgraph.store import Store
from hcgraph.viz import citation_graph, render_map

SEED = Path(__file__).resolve().parent / "fixtures" / "agentic-rl-production.json"
SEED_URL = "https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/"
GONE_URL = "https://hangingcontext.com/stories/2026-10-21/agentic-rl-follow-up/"
SHARED_OUT = "1792416676125360803"  # the seed's manifest the second story does not cite
OWN = "1792499999999999999"  # the second story's own manifest
OWN_IRI = f"https://w3id.org/hcgraph/id/manifest/{OWN}"
OWN_PUBLISHER = "https://w3id.org/hcgraph/id/publisher/own-publisher"


def _second_story() -> dict[str, Any]:
    """The seed story as another story, its fifth manifest swapped for one of its own."""
    doc: dict[str, Any] = json.loads(
        SEED.read_text().replace(SHARED_OUT, OWN).replace(SEED_URL, GONE_URL)
    )
    doc.update(id="279", slug="agentic-rl-follow-up", published_at="2026-10-21T00:54:40Z")
    for m in doc["manifests"]:
        if m["manifest_id"] == OWN:
            m.update(source_name="own-publisher", title="A source only the withdrawn story cites")
    return doc


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, Store]]:
    """(seed + the second story withdrawn, the seed alone)."""
    where = tmp_path_factory.mktemp("withdrawn")
    seed = (SEED.read_bytes(), "seed.json")
    with Store(where / "both") as both, Store(where / "seed") as alone:
        assert ingest_bytes(both, [seed, (json.dumps(_second_story()).encode(), "b.json")]).ok
        assert withdraw_stories(both, [GONE_URL]).count("withdrawn") == 1
        assert ingest_bytes(alone, [seed]).ok
        yield both, alone


#: (view, focus, options) for every view family the CLI draws.
MAPS = [
    ("reuse", None, {}),
    ("reuse", None, {"overview": True}),
    ("reuse", None, {"group_stories": "newsroom"}),
    ("reuse", None, {"top": 3}),
    ("reuse", "huggingface-daily-papers", {}),
    ("publisher", "huggingface-daily-papers", {}),
    ("sources", None, {}),
    ("time", None, {}),
    ("story", SEED_URL, {}),
]


@pytest.mark.parametrize(("view", "focus", "options"), MAPS)
def test_a_map_leaves_out_sources_only_withdrawn_stories_cite(
    stores: tuple[Store, Store], view: str, focus: str | None, options: dict[str, Any]
) -> None:
    """The page drawn from the store with a withdrawn story is the seed-only page."""
    both, alone = stores
    graph = citation_graph(both, view, focus, **options)
    assert OWN_IRI not in graph and OWN_PUBLISHER not in graph
    assert render_map(graph) == render_map(citation_graph(alone, view, focus, **options))


@pytest.mark.parametrize(("fmt", "dynamic"), [("vosviewer", False), ("gexf", True)])
def test_map_exports_leave_them_out(stores: tuple[Store, Store], fmt: str, dynamic: bool) -> None:
    both, alone = stores
    out, expected = io.BytesIO(), io.BytesIO()
    export(both, fmt, out, dynamic=dynamic)
    export(alone, fmt, expected, dynamic=dynamic)
    assert OWN.encode() not in out.getvalue() and b"own-publisher" not in out.getvalue()
    assert out.getvalue() == expected.getvalue()


@pytest.mark.parametrize("view", ["reuse", "sources", "time"])
def test_include_withdrawn_draws_them_cited(stores: tuple[Store, Store], view: str) -> None:
    graph = citation_graph(stores[0], view, include_withdrawn=True)
    assert graph.nodes[OWN_IRI]["stories"] == graph.nodes[OWN_PUBLISHER]["stories"] == 1
    assert set(graph.predecessors(OWN_IRI)) == {GONE_URL}
    assert set(graph.successors(OWN_IRI)) == {OWN_PUBLISHER}
    assert graph.nodes[f"https://w3id.org/hcgraph/id/manifest/{SHARED_OUT}"]["stories"] == 1


def test_a_focus_only_withdrawn_stories_cite_says_so(stores: tuple[Store, Store]) -> None:
    with pytest.raises(VizError, match="only withdrawn stories cite it: --include-withdrawn"):
        citation_graph(stores[0], "publisher", "own-publisher")
    graph = citation_graph(stores[0], "publisher", "own-publisher", include_withdrawn=True)
    assert set(graph) == {OWN_PUBLISHER, OWN_IRI, GONE_URL}


def test_a_focus_on_a_withdrawn_story_says_it_is_withdrawn(stores: tuple[Store, Store]) -> None:
    """A --focus on a withdrawn story names it withdrawn, not "cited only by withdrawn
    stories" (the hint added for sources said that of a story too)."""
    with pytest.raises(VizError) as caught:
        citation_graph(stores[0], "reuse", GONE_URL)
    message = str(caught.value)
    assert "cite it" not in message
    assert "or withdrawn: --include-withdrawn draws them" in message
    graph = citation_graph(stores[0], "reuse", GONE_URL, include_withdrawn=True)
    assert GONE_URL in graph and OWN_IRI in graph
