"""The floor of the WebGL map's first frame: the cheapest page drawing the same graph.

hcgraph's every-story reuse map (``template_gl.html``) and a *floor page* are written for the
same graph, then opened alternately in one headless Chromium (``--rounds`` loads each). The
floor page hands the same nodes (positions, sizes, colours) and edges (sizes) to the same
vendored graphology and sigma builds, as numeric arrays (edges as node indices), drawn by
sigma's cheapest programs (past 20,000 edges: lines and points, as hcgraph's page), with
sigma's labels off and nothing else: no panel, ranking, search, labels by rank, tooltips or
date index. What the floor page costs is what any page drawing this graph with this sigma pays; the
difference is what hcgraph's page adds. With ``--iri-keys``, also a floor page whose node
keys are the IRIs, as hcgraph's.

Per load: the first frame (``window.hcmapReady``: sigma's first ``afterRender``), *painted*
(``window.hcmapPainted``: the end of the next animation frame, so the GPU process has drawn
it), and
the page's step marks (``hcmap:*``).

The graph: the 10k-story reuse map of a generated store (``--stories-all``), or with
``--synthetic K`` its stories K times over (new IRIs, the same sources: 100k stories at
``K = 10``, as ``bench_viz.py --renderers --synthetic``), laid out by ``compute_layout``.

With ``--build-only --keep DIR`` it writes the pages (and ``built.json``: the CPU seconds of
projection, clusters, layout and each page) and stops; ``--load-only --keep DIR`` then times
the loads of those pages, so the building can run while the machine is busy and the loads
once it is quiet.

Usage::

    python bench/floor_gl_page.py --store bench/_work/viz-store-10000-seed1 --synthetic 10
    python bench/floor_gl_page.py --store BIG --build-only --keep DIR  # then --load-only
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hcgraph import Store  # noqa: E402
from hcgraph.viz import citation_graph, compute_layout, write_map  # noqa: E402
from hcgraph.viz.layout import communities  # noqa: E402
from hcgraph.viz.render import (  # noqa: E402
    GRAPHOLOGY_SHA256,
    SIGMA_SHA256,
    _vendored,
    safe_json,
)
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from ab_viz_pages import open_page  # noqa: E402

#: The WebGL page's cluster palette and the colour of the rest (template_gl.html).
PALETTE = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#393b79", "#e6550d", "#31a354", "#756bb1", "#636363", "#843c39",
    "#7b4173", "#3182bd", "#a55194", "#637939",
]  # fmt: skip
OTHER = "#b8bec6"
COUNTED = ("Manifest", "Publisher", "StoryGroup")
WORK = ROOT / "bench" / "_work"

_FLOOR = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>floor</title>
<style>html, body {{ margin: 0; height: 100%; }} #map {{ width: 100%; height: 100%; }}</style>
</head><body><div id="map"></div>
<script type="application/json" id="d">{data}</script>
<script>{graphology}</script>
<script>{sigma}</script>
<script>
(function () {{
  function mark(n) {{ performance.mark("hcmap:" + n); }}
  mark("script");
  var d = JSON.parse(document.getElementById("d").textContent);
  mark("parsed");
  var g = new graphology.Graph({{ type: "directed", multi: false, allowSelfLoops: false }});
  var key = d.ids ? function (i) {{ return d.ids[i]; }} : String;
  for (var i = 0; i < d.x.length; i++) {{
    var a = {{ x: d.x[i], y: d.y[i], size: d.size[i], color: d.palette[d.colour[i]] }};
    g.addNode(key(i), a);
  }}
  for (var k = 0; k < d.src.length; k++) {{
    g.addEdgeWithKey(String(k), key(d.src[k]), key(d.dst[k]), {{ size: d.esize[k] }});
  }}
  mark("graph");
  var done = false;
  var big = d.src.length > 20000, r = Sigma.rendering;
  var s = new Sigma(g, document.getElementById("map"), Object.assign({{
    renderLabels: false, renderEdgeLabels: false, enableEdgeEvents: false, zIndex: false,
    defaultEdgeType: "line", defaultEdgeColor: d.edgeColour, hideEdgesOnMove: big
  }}, big ? {{ edgeProgramClasses: {{ line: r.EdgeLineProgram }},
              nodeProgramClasses: {{ circle: r.NodePointProgram }} }} : {{}}));
  s.on("afterRender", function () {{
    if (done) {{ return; }}
    done = true; mark("sigma"); window.hcmapReady = performance.now();
  }});
  s.render();
}})();
</script></body></html>
"""


def synthetic(base: nx.DiGraph, times: int) -> nx.DiGraph:
    """``base``'s stories ``times`` times over (``#copyK`` IRIs, the same sources and edges)."""
    graph = base.copy()
    for k in range(1, times):
        for n, a in base.nodes(data=True):
            if a["type"] == "Story":
                graph.add_node(f"{n}#copy{k}", **a)
                for t in base.successors(n):
                    graph.add_edge(f"{n}#copy{k}", t, **base.edges[n, t])
    return graph


def _palette_index(cluster: int) -> int:
    """A cluster's colour in ``[*PALETTE, OTHER]``: the 20 largest their own, the rest OTHER."""
    return cluster if 0 <= cluster < len(PALETTE) else len(PALETTE)


def floor_data(graph: nx.DiGraph, positions: dict[str, tuple[float, float]]) -> dict[str, Any]:
    """The floor page's arrays: what hcgraph's page hands sigma (x, -y, size, cluster colour)."""
    order = sorted(graph)
    index = {n: i for i, n in enumerate(order)}
    cluster = {n: k for k, members in enumerate(communities(graph)) for n in members}
    attrs = [graph.nodes[n] for n in order]
    max_s = max([int(a.get("stories", 0) or 0) for a in attrs if a["type"] != "Story"] + [1])
    sizes = []
    for a in attrs:
        s = int(a.get("stories", 0) or 0)
        if a["type"] in COUNTED:
            sizes.append(round(2 + 16 * math.sqrt(s / max_s), 2))
        else:
            sizes.append(1.6 if a["type"] == "Story" else 3)
    edges = sorted(graph.edges(data=True), key=lambda e: (e[0], e[1]))
    return {
        "x": [positions[n][0] for n in order],
        "y": [-positions[n][1] for n in order],
        "size": sizes,
        "colour": [_palette_index(cluster.get(n, -1)) for n in order],
        "palette": [*PALETTE, OTHER],
        "src": [index[s] for s, _o, _a in edges],
        "dst": [index[o] for _s, o, _a in edges],
        "esize": [
            round(min(3, 0.4 + 0.3 * min(10, max(1, int(a.get("weight", 1) or 1)))), 2)
            for _s, _o, a in edges
        ],
        "edgeColour": "#e3e7eb" if len(edges) > 20000 else "#c9d1d9",
    }


def write_floor(
    graph: nx.DiGraph, positions: dict[str, tuple[float, float]], out: Path, iri_keys: bool = False
) -> int:
    """Write the floor page for ``graph``; its size in bytes. ``iri_keys``: the graph's
    node keys are the IRIs (as hcgraph's page), not ``"0"``, ``"1"``, …"""
    data = floor_data(graph, positions)
    if iri_keys:
        data["ids"] = sorted(graph)
    html = _FLOOR.format(
        data=safe_json(data),
        graphology=_vendored("graphology.umd.min.js", GRAPHOLOGY_SHA256),
        sigma=_vendored("sigma.min.js", SIGMA_SHA256),
    )
    out.write_text(html, encoding="utf-8")
    return len(html.encode())


def measure(browser: Any, path: Path) -> dict[str, Any]:
    """One load of ``path``: first frame, painted, marks (ms since navigation start)."""
    page = open_page(browser, path)
    page.wait_for_function("() => window.hcmapPainted !== undefined", timeout=900_000, polling=50)
    marks = (
        "performance.getEntriesByType('mark').map(m => [m.name.slice(6), Math.round(m.startTime)])"
    )
    row = {
        "load": round(os.getloadavg()[0], 1),
        "first_ms": round(page.evaluate("window.hcmapReady")),
        "painted_ms": round(page.evaluate("window.hcmapPainted")),
        "marks": page.evaluate(marks),
    }
    page.close()
    return row


def build(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """Project, cluster, lay out and write both pages into ``out``; what it cost (CPU s)."""
    c0 = time.process_time()
    with Store(args.store, read_only=True) as store:
        base = citation_graph(store, "reuse", overview=False)
    project_s = time.process_time() - c0
    graph = synthetic(base, args.synthetic) if args.synthetic > 1 else base
    t0 = time.process_time()
    communities(graph)  # cached on the graph: the layout and both pages reuse it
    clusters_s = time.process_time() - t0
    t0 = time.process_time()
    positions = compute_layout(graph)
    layout_s = time.process_time() - t0
    pages = {"hcgraph": "hcgraph.html", "floor": "floor.html"}
    t0 = time.process_time()
    info = write_map(graph, out / pages["hcgraph"], positions, renderer="webgl")
    write_s = time.process_time() - t0
    t0 = time.process_time()
    floor_bytes = write_floor(graph, positions, out / pages["floor"])
    floor_s = time.process_time() - t0
    sizes = {"hcgraph": info.bytes, "floor": floor_bytes}
    if args.iri_keys:
        pages["floor-iri"] = "floor-iri.html"
        sizes["floor-iri"] = write_floor(graph, positions, out / "floor-iri.html", iri_keys=True)
    built = {"nodes": info.nodes, "edges": info.edges, "project_s": project_s,
             "clusters_s": clusters_s, "layout_s": layout_s, "write_s": write_s,
             "floor_s": floor_s, "pages": pages, "sizes": sizes,
             "load": round(os.getloadavg()[0], 1)}  # fmt: skip
    (out / "built.json").write_text(json.dumps(built, indent=1))
    return built


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, default=WORK / "viz-store-10000-seed1")
    ap.add_argument("--synthetic", type=int, default=1, metavar="K",
                    help="the store's stories K times over (10: 100k stories)")  # fmt: skip
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="write the pages here (default: a temp dir)")
    ap.add_argument("--iri-keys", action="store_true",
                    help="also a floor page whose node keys are the IRIs")  # fmt: skip
    ap.add_argument("--build-only", action="store_true",
                    help="write the pages (and built.json) into --keep, load nothing")  # fmt: skip
    ap.add_argument("--load-only", action="store_true",
                    help="load the pages a --build-only run wrote into --keep")  # fmt: skip
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    if (args.build_only or args.load_only) and args.keep is None:
        ap.error("--build-only and --load-only need --keep DIR")
    out = (args.keep or Path(tempfile.mkdtemp(prefix="floor-gl-"))).resolve()
    out.mkdir(parents=True, exist_ok=True)
    load0 = os.getloadavg()[0]
    built = json.loads((out / "built.json").read_text()) if args.load_only else build(args, out)
    print(f"{built['nodes']:,} nodes, {built['edges']:,} edges; projection "
          f"{built['project_s']:.1f} CPU s, clusters {built['clusters_s']:.1f} CPU s, layout "
          f"{built['layout_s']:.1f} CPU s; hcgraph page {built['sizes']['hcgraph'] / 1e6:.1f} MB "
          f"in {built['write_s']:.1f} CPU s; floor page {built['sizes']['floor'] / 1e6:.1f} MB "
          f"in {built['floor_s']:.1f} CPU s (load {built['load']})", flush=True)  # fmt: skip
    if args.build_only:
        return
    pages = {k: out / v for k, v in built["pages"].items()}
    sizes = built["sizes"]
    rows: dict[str, list[dict[str, Any]]] = {k: [] for k in pages}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for _ in range(args.rounds):
            for name, path in pages.items():
                rows[name].append(measure(browser, path))
                print(name, json.dumps(rows[name][-1]), flush=True)
        browser.close()
    print(f"\nload average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    print("| page | MB | load | first frame s (each load) | painted s | marks, median ms |")
    print("|---|---|---|---|---|---|")
    for name, rs in rows.items():
        mb = sizes[name] / 1e6
        firsts = ", ".join(f"{r['first_ms'] / 1000:.2f}" for r in rs)
        first = statistics.median(r["first_ms"] for r in rs) / 1000
        painted = statistics.median(r["painted_ms"] for r in rs) / 1000
        names = [m[0] for m in rs[0]["marks"]]
        marks = ", ".join(
            f"{n} {statistics.median(dict(r['marks']).get(n, 0) for r in rs):.0f}" for n in names
        )
        loads = f"{min(r['load'] for r in rs)} to {max(r['load'] for r in rs)}"
        print(f"| {name} | {mb:.1f} | {loads} | {first:.2f} ({firsts}) | {painted:.2f} | {marks} |")


if __name__ == "__main__":
    main()
