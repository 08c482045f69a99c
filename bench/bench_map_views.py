"""Benchmark the sources (circle packing) and time views (issue 40) against the reuse map.

For one store of N generated stories: CPU seconds to build and write each page, its size,
and in headless Chromium the first frame (``window.hcmapReady`` from navigation start), the
in-page circle packing (d3-hierarchy ``pack``, sources view) and one interaction: a click on
the most-cited source (sources: its stories listed and packed), a brush of the middle week
(time), a click-highlight of the top source (reuse, the baseline measured in the same run).
Interaction times run from the call to the end of the next frame (two animation frames).

Usage::

    python bench/bench_map_views.py [--stories 10000] [--seed 13] [--write-results]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import publish  # noqa: E402
from bench_viz import build_store  # noqa: E402

from hcgraph import Store  # noqa: E402
from hcgraph.viz import citation_graph, write_map  # noqa: E402
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

_TIMED = """
async ([method, args]) => {
  const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  await frame();
  const t0 = performance.now();
  hcmap[method].apply(null, args);
  await frame();
  return performance.now() - t0;
}
"""
#: Per view: the hcmap method timed and an expression giving its arguments.
ACTIONS = {
    "reuse": ("highlight", "[hcmap.ranking.sources[0].id]"),
    "sources": (
        "select",
        "[hcmap.circles().filter(c => c.kind === 'source').sort((a, b) => b.r - a.r)[0].id]",
    ),
    "time": ("brush", "['2026-10-01', '2026-10-07']"),
}


def build(store: Store, view: str, out: Path) -> tuple[float, int]:
    """CPU seconds to project and write ``view``, and the page's bytes."""
    t0 = time.process_time()
    graph = citation_graph(store, view)
    info = write_map(graph, out)
    return time.process_time() - t0, info.bytes


def in_browser(path: Path) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        page = b.new_page(viewport={"width": 1400, "height": 900})
        page.route("http*://**", lambda route: route.abort())
        page.goto(path.as_uri())
        page.wait_for_function("() => window.hcmapReady !== undefined", timeout=600_000)
        first = page.evaluate("window.hcmapReady")
        pack = page.evaluate("hcmap.packMs === undefined ? null : hcmap.packMs")
        view = page.evaluate("hcmap.meta.view")
        method, args = ACTIONS[view]
        arg = page.evaluate(args)
        act = sorted(page.evaluate(_TIMED, [method, arg]) for _ in range(3))[1]
        b.close()
    return {"first_ms": first, "pack_ms": pack, "action_ms": act}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stories", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--write-results", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, Store(build_store(args.stories, args.seed),
                                                     read_only=True) as store:  # fmt: skip
        for view in ("reuse", "sources", "time"):
            out = Path(tmp) / f"{view}.html"
            cpu, size = build(store, view, out)
            rows.append((view, cpu, size, in_browser(out)))
    lines = [
        f"## Issue 40: the sources and time views at {args.stories:,} stories — 2026-12-06",
        "",
        f"`python bench/bench_map_views.py --stories {args.stories} --seed {args.seed}` "
        "(headless Chromium, software WebGL; reuse is the baseline, measured in the same run):",
        "",
        "| view | build + write CPU s | page MB | first frame ms | d3 pack ms | interaction ms |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    what = {"reuse": "click a source", "sources": "click the top source",
            "time": "brush a week"}  # fmt: skip
    for view, cpu, size, br in rows:
        pack = f"{br['pack_ms']:.0f}" if br["pack_ms"] is not None else "-"
        lines.append(f"| {view} | {cpu:.1f} | {size / 1e6:.1f} | {br['first_ms']:.0f} | {pack} | "
                     f"{br['action_ms']:.0f} ({what[view]}) |")  # fmt: skip
    publish(lines[0], "\n".join(lines) + "\n", args.write_results)


if __name__ == "__main__":
    main()
