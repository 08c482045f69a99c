"""Benchmark the reuse map's force layout (issue 40) against the ring layout it replaced.

For the reuse map of N generated stories (``hcsample.corpus``, seed 13): the CPU seconds of
clusters (Louvain) + layout, the layout's connected-closeness (Jacomy 2023, the score the page
reports as ``hcmap.layoutQuality()``), and the first frame in headless Chromium of the page
drawn with each layout (milliseconds from navigation, and the CPU seconds Chromium's
processes spent to it: on a shared machine the wall time swings with the load). The
baseline is the ring layout (publishers or communities on a ring,
stories at the weighted centre of what they cite: ``hcgraph.viz.layout.ring_layout``),
measured in the same run on the same graph, the two alternated round by round. Louvain's
modularity and community count are printed too (the clusters both layouts colour).

Usage::

    python bench/bench_layout.py [--sizes 300 1000 10000] [--rounds 3] [--write-results]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import networkx as nx  # noqa: E402
from _results import publish  # noqa: E402
from bench_viz import build_store  # noqa: E402

from hcgraph import Store  # noqa: E402
from hcgraph.viz import citation_graph, write_map  # noqa: E402
from hcgraph.viz.layout import Positions, communities, force_reuse_layout, ring_layout  # noqa: E402
from hcgraph.viz.quality import connected_closeness  # noqa: E402
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

LAYOUTS: dict[str, Callable[[nx.DiGraph], Positions]] = {
    "ring (before)": ring_layout,
    "force (ForceAtlas2)": force_reuse_layout,
}


def timed(
    graph: nx.DiGraph, layout: Callable[[nx.DiGraph], Positions]
) -> tuple[float, float, Positions]:
    """CPU and wall seconds of clusters + layout on a fresh copy (no cached communities)."""
    fresh = nx.DiGraph(graph)
    c0, w0 = time.process_time(), time.perf_counter()
    communities(fresh)
    pos = layout(fresh)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return cpu, wall, {n: (round(x, 1), round(y, 1)) for n, (x, y) in pos.items()}


def modularity(graph: nx.DiGraph) -> tuple[int, float]:
    """Louvain's communities (as the map colours them) and their weighted modularity."""
    und = nx.Graph()
    und.add_nodes_from(graph)
    for s, o, a in graph.edges(data=True):
        w = float(a.get("weight", 1) or 1)
        und.add_edge(s, o, weight=und.get_edge_data(s, o, {"weight": 0.0})["weight"] + w)
    groups = communities(graph)
    return len(groups), nx.community.modularity(und, groups, weight="weight")


def _chromium_cpu() -> float:
    """CPU seconds used so far by this process's Chromium processes (browser, renderer, GPU)."""
    import psutil

    total = 0.0
    for proc in psutil.Process().children(recursive=True):
        try:
            if "chrom" in proc.name().lower():
                t = proc.cpu_times()
                total += t.user + t.system
        except psutil.Error:
            continue
    return total


def first_frames(paths: dict[str, Path], loads: int) -> dict[str, tuple[float, float]]:
    """Median first frame (``window.hcmapReady``, ms from navigation) of each page and the
    median CPU seconds Chromium spent to it (less load-bound than the wall), the pages
    alternated load by load."""
    from playwright.sync_api import sync_playwright

    seen: dict[str, list[tuple[float, float]]] = {k: [] for k in paths}
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        for _ in range(loads):
            for name, path in paths.items():
                page = b.new_page(viewport={"width": 1400, "height": 900})
                page.route("http*://**", lambda route: route.abort())
                cpu = _chromium_cpu()
                page.goto(path.as_uri())
                page.wait_for_function("() => window.hcmapReady !== undefined", timeout=600_000)
                cpu = _chromium_cpu() - cpu
                seen[name].append((page.evaluate("window.hcmapReady"), cpu))
                assert page.evaluate("hcmap.layoutQuality()") is not None
                page.close()
        b.close()
    return {
        k: (statistics.median(ms for ms, _ in v), statistics.median(c for _, c in v))
        for k, v in seen.items()
    }


def measure(n: int, seed: int, rounds: int, loads: int, tmp: Path) -> dict[str, Any]:
    with Store(build_store(n, seed), read_only=True) as store:
        graph = citation_graph(store, "reuse", overview=False)
    cpu: dict[str, list[float]] = {k: [] for k in LAYOUTS}
    wall: dict[str, list[float]] = {k: [] for k in LAYOUTS}
    positions: dict[str, Positions] = {}
    for _ in range(rounds):
        for name, layout in LAYOUTS.items():
            c, w, pos = timed(graph, layout)
            cpu[name].append(c)
            wall[name].append(w)
            assert positions.setdefault(name, pos) == pos, "not deterministic"
    paths = {}
    for k, (name, pos) in enumerate(positions.items()):
        paths[name] = tmp / f"map-{n}-{k}.html"
        write_map(graph, paths[name], pos)
    frames = first_frames(paths, loads)
    count, q = modularity(graph)
    return {
        "n": n,
        "nodes": graph.number_of_nodes(),
        "edges": graph.number_of_edges(),
        "communities": count,
        "modularity": q,
        "rows": [
            (
                name,
                statistics.median(cpu[name]),
                statistics.median(wall[name]),
                connected_closeness(graph, positions[name]),
                *frames[name],
            )
            for name in LAYOUTS
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[300, 1000, 10_000])
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--rounds", type=int, default=3, help="A/B rounds of clusters + layout")
    ap.add_argument("--loads", type=int, default=3, help="page loads per layout in Chromium")
    ap.add_argument("--write-results", action="store_true")
    args = ap.parse_args()
    results = []
    load = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            load.append(os.getloadavg()[0])
            results.append(measure(n, args.seed, args.rounds, args.loads, Path(tmp)))
            print(results[-1], flush=True)
    lines = [
        "## Issue 40: the reuse map's force layout against the ring layout — 2026-12-07",
        "",
        f"`python bench/bench_layout.py --sizes {' '.join(map(str, args.sizes))} "
        f"--seed {args.seed} --rounds {args.rounds} --loads {args.loads}` "
        f"(load average {min(load):.1f} to {max(load):.1f} on the 2 cores; CPU s are the median "
        "of the A/B rounds, clusters = Louvain included; first frame: median of the loads, "
        "headless Chromium, canvas ≤ 1,000 nodes, WebGL above):",
        "",
        "| stories | nodes / edges | layout | clusters + layout CPU s | wall s "
        "| connected-closeness | first frame ms | Chromium CPU s to it |",
        "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        for name, c, w, q, f, fc in r["rows"]:
            lines.append(f"| {r['n']:,} | {r['nodes']:,} / {r['edges']:,} | {name} | {c:.2f} | "
                         f"{w:.2f} | {q:.3f} | {f:.0f} | {fc:.2f} |")  # fmt: skip
    lines += [
        "",
        "Louvain (networkx, seed 7) on the undirected weighted map: "
        + "; ".join(
            f"{r['n']:,} stories: {r['communities']} communities, modularity {r['modularity']:.3f}"
            for r in results
        )
        + ".",
    ]
    publish(lines[0], "\n".join(lines) + "\n", args.write_results)


if __name__ == "__main__":
    main()
