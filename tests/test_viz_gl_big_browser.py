"""The WebGL map past 20,000 edges (lines and points) under a date filter, in Chromium.

Past 20,000 edges a filter that hides a few items patches the picture (the veil covers only
the cells a hidden item touches and draws the shown items there again); one that hides
more covers the map (the full veil). Both are checked pixel by pixel against geometry
computed here from the nodes' positions, never against the page's own idea of them.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from hcgraph import Store, citation_graph, ingest_bytes
from hcgraph.viz import compute_layout, write_map
from hcsample.corpus import generate_corpus
from tests.conftest import SEED
from tests.support.chromium import CHROMIUM, PNG_VIEW

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
    pytest.mark.slow,
]

#: The stories a "few hidden" filter hides: dated before every other story.
EARLY = "2000-01-01"


@pytest.fixture(scope="module")
def big_map(tmp_path_factory: pytest.TempPathFactory) -> tuple[nx.DiGraph, Path, list[str]]:
    """A reuse map of > 20,000 edges: a 300-story map's stories copied (new ids, seeded
    random places, the same sources) until it is; six stories moved to ``EARLY``."""
    seed = json.loads(SEED.read_text())
    stories = generate_corpus(300, seed=11, include_seed=seed).stories
    with Store(None) as st:
        docs = [(json.dumps(s).encode(), f"s{i}") for i, s in enumerate(stories)]
        assert not ingest_bytes(st, docs).failures
        base = citation_graph(st, "reuse", overview=False)
    pos = compute_layout(base)
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    rng = random.Random(7)
    graph = base.copy()
    originals = [n for n, a in base.nodes(data=True) if a["type"] == "Story"]
    k = 0
    while graph.number_of_edges() <= 20_000:
        k += 1
        for n in originals:
            copy = f"{n}#copy{k}"
            graph.add_node(copy, **base.nodes[n])
            x, y = rng.uniform(min(xs), max(xs)), rng.uniform(min(ys), max(ys))
            pos[copy] = (round(x, 1), round(y, 1))
            for t in base.successors(n):
                graph.add_edge(copy, t, **base.edges[n, t])
    # Six originals inside the picture's bounds (hiding them does not reframe it).
    inner = [
        n for n in originals if min(xs) < pos[n][0] < max(xs) and min(ys) < pos[n][1] < max(ys)
    ]
    early = sorted(inner)[:6]
    for n in early:
        graph.nodes[n]["date"] = EARLY + graph.nodes[n]["date"][10:]
    path = tmp_path_factory.mktemp("big") / "map.html"
    write_map(graph, path, pos, renderer="webgl")
    return graph, path, early


@pytest.fixture()
def page(tabs: Any, big_map: Any) -> Iterator[Any]:
    """The map freshly loaded in one of the module's reused tabs (tests.support.chromium)."""
    pg = tabs.open(big_map[1].as_uri())
    pg.wait_for_function("() => window.hcmapReady !== undefined", timeout=60_000)
    yield pg
    tabs.done(pg)


# The view as the PNG download draws it, probed at map points: for each [x, y] the lowest
# red value of the 3 x 3 pixels around it, whether the pixel's RGB is within 40 of a colour
# and the veil's alpha there; and the share of the veil's pixels that are drawn (alpha > 0).
_PROBE = (
    """
async ([points, colours]) => {
  const pr = hcmap.sigma.pixelRatio, ctx = await """
    + PNG_VIEW
    + """();
  const c = ctx.canvas, px = ctx.getImageData(0, 0, c.width, c.height).data;
  const get = (x, y) => { const i = (y * c.width + x) * 4; return [px[i], px[i + 1], px[i + 2]]; };
  const probes = points.map(([x, y], k) => {
    const X = Math.floor(x * pr), Y = Math.floor(y * pr);
    let low = 255;
    for (let dy = -1; dy <= 1; dy++) {
      for (let dx = -1; dx <= 1; dx++) { low = Math.min(low, get(X + dx, Y + dy)[0]); }
    }
    const want = colours[k], got = get(X, Y);
    const near = want ? Math.max(...got.map((v, i) => Math.abs(v - want[i]))) <= 40 : null;
    return { low, near, veil: 0 };
  });
  const veil = hcmap.sigma.getCanvases().veil;
  const v = veil.getContext("2d").getImageData(0, 0, veil.width, veil.height).data;
  let drawn = 0;
  for (let i = 3; i < v.length; i += 4) { if (v[i]) { drawn += 1; } }
  points.forEach(([x, y], k) => {
    probes[k].veil = v[(Math.floor(y * pr) * veil.width + Math.floor(x * pr)) * 4 + 3];
  });
  return { probes, veil: drawn / (v.length / 4) };
}
"""
)

_POSITIONS = """
() => {
  const s = hcmap.sigma, out = {};
  hcmap.nodes.getIds().forEach((id) => {
    const d = s.getNodeDisplayData(id), p = s.framedGraphToViewport(d);
    out[id] = [p.x, p.y, s.scaleSize(d.size), d.color];
  });
  return out;
}
"""


def _seg_dist(p: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    ax, ay = a
    dx, dy = b[0] - ax, b[1] - ay
    t = max(0.0, min(1.0, ((p[0] - ax) * dx + (p[1] - ay) * dy) / ((dx * dx + dy * dy) or 1.0)))
    return math.hypot(p[0] - ax - t * dx, p[1] - ay - t * dy)


def _rgb(colour: str) -> list[int]:
    assert colour.startswith("#") and len(colour) == 7, colour
    return [int(colour[k : k + 2], 16) for k in (1, 3, 5)]


class _Scene:
    """The map's geometry in viewport pixels: where a probe sees one item only."""

    def __init__(self, graph: nx.DiGraph, at: dict[str, list[Any]], w: float, h: float) -> None:
        self.graph, self.at, self.w, self.h = graph, at, w, h
        self.edges = [(u, v) for u, v in graph.edges()]

    def xy(self, n: str) -> tuple[float, float]:
        return self.at[n][0], self.at[n][1]

    def inside(self, p: tuple[float, float], margin: float = 4) -> bool:
        return margin <= p[0] <= self.w - margin and margin <= p[1] <= self.h - margin

    def clear_of(
        self,
        p: tuple[float, float],
        *,
        edge: tuple[str, str] | None = None,
        node: str | None = None,
        edge_gap: float = 3,
        node_gap: float = 8,
    ) -> bool:
        """No node but ``node`` within its radius + ``node_gap`` of p, no edge but ``edge``
        within ``edge_gap``: the pixel there shows that one item (or nothing). For a
        node's own centre (``node``) edges do not count: nodes are drawn over them."""
        for n, (x, y, r, _c) in self.at.items():
            if n != node and math.hypot(p[0] - x, p[1] - y) <= r + node_gap:
                return False
        return node is not None or all(
            (u, v) == edge or _seg_dist(p, self.xy(u), self.xy(v)) > edge_gap for u, v in self.edges
        )


def _scene(page: Any, graph: nx.DiGraph) -> _Scene:
    w = page.evaluate("document.getElementById('map').clientWidth")
    h = page.evaluate("document.getElementById('map').clientHeight")
    return _Scene(graph, page.evaluate(_POSITIONS), w, h)


def test_a_few_hidden_are_patched_out(page: Any, big_map: Any) -> None:
    """Six stories dated before the range: their dots and edges are gone, the shown items
    where they were are drawn again, and the rest of the map is the WebGL picture."""
    graph, _, early = big_map
    assert page.evaluate("hcmap.edges.length") > 20_000
    # Zoomed in 20x on the first of them: 20k edges leave no pixel clear at the full view.
    page.evaluate(
        """async (id) => {
          const s = hcmap.sigma, d = s.getNodeDisplayData(id);
          s.getCamera().setState({ x: d.x, y: d.y, ratio: 0.05 });
          await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
        }""",
        early[0],
    )
    scene = _scene(page, graph)
    # Probes: a point on each hidden edge that sees nothing else; a shown edge's point
    # next to a hidden edge (inside its patch) that sees nothing else; the hidden dots.
    hidden_edges = [(u, v) for u in early for v in graph.successors(u)]

    def along(u: str, v: str, step: float) -> Iterator[tuple[float, float]]:
        (ax, ay), (bx, by) = scene.xy(u), scene.xy(v)
        n = max(1, int(math.hypot(bx - ax, by - ay) / step))
        for i in range(1, n):
            p = (ax + (bx - ax) * i / n, ay + (by - ay) * i / n)
            if scene.inside(p):
                yield p

    gone = []  # up to 3 points a hidden edge, 30 px apart
    for u, v in hidden_edges:
        mine = [p for p in along(u, v, 30) if scene.clear_of(p, edge=(u, v))]
        gone += mine[:3]
    kept = []  # shown edges within 4 px of a hidden one (the veil there tells a patch)
    for u, v in scene.edges:
        if u in early or len(kept) >= 40:
            continue
        for p in along(u, v, 10):
            by_hidden = any(_seg_dist(p, scene.xy(x), scene.xy(y)) <= 4 for x, y in hidden_edges)
            if by_hidden and scene.clear_of(p, edge=(u, v)):
                kept.append(p)
                break
    dots = [n for n in early if scene.inside(scene.xy(n)) and scene.clear_of(scene.xy(n), node=n)
            and scene.at[n][3] != "#b8bec6"]  # fmt: skip
    assert len(gone) >= 3 and len(kept) >= 3 and dots, (len(gone), len(kept), dots)
    points = [list(p) for p in gone + kept] + [list(scene.xy(n)) for n in dots]
    colours = [None] * (len(gone) + len(kept)) + [_rgb(scene.at[n][3]) for n in dots]

    before = page.evaluate(_PROBE, [points, colours])
    assert before["veil"] == 0  # no filter: no veil
    assert all(r["low"] <= 246 for r in before["probes"][: len(gone) + len(kept)])  # edges drawn
    assert all(r["near"] for r in before["probes"][len(gone) + len(kept) :])  # dots drawn

    last = max(a["date"][:10] for _n, a in graph.nodes(data=True) if a["type"] == "Story")
    page.evaluate("([a, b]) => hcmap.setDates(a, b)", ["2000-01-02", last])
    assert page.evaluate("hcmap.shown()")["nodes"] <= graph.number_of_nodes() - len(early)
    after = page.evaluate(_PROBE, [points, colours])
    # Patched: the veil covers a part of the map, not all of it.
    assert 0 < after["veil"] < 0.6, after["veil"]
    probes = after["probes"]
    for p, r in zip(gone, probes[: len(gone)], strict=True):
        assert r["low"] >= 252, (p, r)  # the hidden edge is gone: white
    patched = 0
    for p, r in zip(kept, probes[len(gone) : len(gone) + len(kept)], strict=True):
        assert r["low"] <= 246, (p, r)  # the shown edge is drawn (again, where patched)
        patched += r["veil"] == 255
    assert patched >= 3, patched
    for n, r in zip(dots, probes[len(gone) + len(kept) :], strict=True):
        assert r["near"] is False, (n, r)  # the hidden story's dot is gone
    page.evaluate("hcmap.reset()")
    assert page.evaluate(_PROBE, [points, colours])["veil"] == 0
    assert page.errors == []


def test_many_hidden_are_covered(page: Any, big_map: Any) -> None:
    """Half the stories outside the range: the veil covers the map, draws the shown dots
    in their colours and none of the hidden."""
    graph, _, _early = big_map
    scene = _scene(page, graph)
    dated = sorted((a["date"][:10], n) for n, a in graph.nodes(data=True) if a["type"] == "Story")
    lo, hi = dated[0][0], dated[len(dated) // 2][0]
    inside = [n for d, n in dated if lo <= d <= hi]
    outside = [n for d, n in dated if not lo <= d <= hi]
    assert inside and outside

    def alone(ns: list[str]) -> list[str]:
        got = []
        for n in ns:
            if len(got) >= 10:
                break
            p = scene.xy(n)
            r, colour = scene.at[n][2], scene.at[n][3]
            # A dot big enough to hold its colour at its centre, in a cluster's colour.
            if r >= 1.5 and colour != "#b8bec6" and scene.inside(p) and scene.clear_of(p, node=n):
                got.append(n)
        return got

    shown, hidden = alone(inside), alone(outside)
    assert len(shown) >= 3 and len(hidden) >= 3, (len(shown), len(hidden))
    ids = shown + hidden
    page.evaluate("([a, b]) => hcmap.setDates(a, b)", [lo, hi])
    points = [list(scene.xy(n)) for n in ids]
    got = page.evaluate(_PROBE, [points, [_rgb(scene.at[n][3]) for n in ids]])
    assert got["veil"] == 1.0  # covered
    for n, r in zip(ids, got["probes"], strict=True):
        assert r["near"] is (n in shown), (n, r)
    assert page.errors == []
