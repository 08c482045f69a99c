"""Benchmark the sources (circle packing) and time views (issue 40) against the reuse map.

For one store of N generated stories: CPU seconds to build and write each page, its size,
and in headless Chromium the first frame (``window.hcmapReady`` from navigation start), the
in-page circle packing (d3-hierarchy ``pack``, sources view) and one interaction: a click on
the most-cited source (sources: its stories listed and packed), a brush of the middle week
(time), a click-highlight of the top source (reuse, the baseline measured in the same run).
Interaction times run from the call to the end of the next frame (two animation frames).

With ``--brush-ab REF`` it measures instead the time page's brush (a day, a week, every
story) on this tree's template against the template at git ``REF`` (main before the brush
work: 4497891), the same graph, the two pages alternating in one browser: the median wall
milliseconds from the call to the end of the next frame, and the CPU milliseconds every
Chromium thread spent on it (``/proc/PID/task/*/schedstat``, less an empty two-frame call), so
a loaded machine still compares fairly.

With ``--controls`` it measures instead what the controls every page offers (issue 40 item
4) cost on each page: a date range, a search and a keyboard step (N), each from the call to
the end of the next frame, with the main thread's busy time (Chromium's ``TaskDuration``)
beside the wall time; the click-highlight of each page is the baseline, in the same run.

Usage::

    python bench/bench_map_views.py [--stories 10000] [--seed 13] [--controls] [--write-results]
    python bench/bench_map_views.py --brush-ab 4497891 [--rounds 9] [--write-results]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import publish  # noqa: E402
from bench_viz import build_store  # noqa: E402

from hcgraph import Store  # noqa: E402
from hcgraph.viz import citation_graph, render, write_map  # noqa: E402
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


def _browser(pw: Any) -> Any:
    """Headless Chromium as the tests run it."""
    return pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)


def _opened(pw: Any, path: Path) -> Any:
    """``path`` in a new Chromium page, offline, once the map has drawn its first frame."""
    page = _browser(pw).new_page(viewport={"width": 1400, "height": 900})
    page.route("http*://**", lambda route: route.abort())
    page.goto(path.as_uri())
    page.wait_for_function("() => window.hcmapReady !== undefined", timeout=600_000)
    return page


def in_browser(path: Path) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        page = _opened(pw, path)
        first = page.evaluate("window.hcmapReady")
        pack = page.evaluate("hcmap.packMs === undefined ? null : hcmap.packMs")
        view = page.evaluate("hcmap.meta.view")
        method, args = ACTIONS[view]
        arg = page.evaluate(args)
        act = sorted(page.evaluate(_TIMED, [method, arg]) for _ in range(3))[1]
        page.context.browser.close()
    return {"first_ms": first, "pack_ms": pack, "action_ms": act}


#: The brushes of the A/B: (name, from, to) over the generated stories' 14 days.
BRUSHES = (("a day", "2026-10-04", "2026-10-04"), ("a week", "2026-10-01", "2026-10-07"),
           ("every story", "2026-09-01", "2026-10-14"))  # fmt: skip
_FRAMES = """async () => {
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
}"""


def chromium_cpu() -> float:
    """CPU seconds of every thread of every Chromium process this script started."""
    import psutil

    total = 0
    for proc in psutil.Process().children(recursive=True):
        try:
            if "chrom" not in proc.name():
                continue
            for task in os.listdir(f"/proc/{proc.pid}/task"):
                with open(f"/proc/{proc.pid}/task/{task}/schedstat") as f:
                    total += int(f.read().split()[0])
        except (OSError, psutil.Error):
            continue
    return total / 1e9


def page_at(graph: Any, out: Path, ref: str | None) -> None:
    """Write the time page with this tree's templates, or with those at git ``ref``."""
    if ref is None:
        write_map(graph, out)
        return

    def load(name: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:hcgraph/viz/{name}"],
                              check=True, capture_output=True, text=True).stdout  # fmt: skip

    render._env.cache_clear()
    with mock.patch.object(render, "_load", load):
        write_map(graph, out)
    render._env.cache_clear()


def brush_ab(store: Store, ref: str, rounds: int) -> list[str]:
    """The brush table: this tree against ``ref``, alternating, ``rounds`` brushes each."""
    from playwright.sync_api import sync_playwright

    graph = citation_graph(store, "time")
    rows = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        b = _browser(pw)
        pages = {}
        for side, r in (("this tree", None), (ref, ref)):
            path = Path(tmp) / f"time-{side.replace(' ', '-')}.html"
            page_at(graph, path, r)
            pages[side] = page = b.new_page(viewport={"width": 1400, "height": 900})
            c0 = chromium_cpu()
            page.goto(path.as_uri())
            page.wait_for_function("() => window.hcmapReady !== undefined", timeout=600_000)
            page.evaluate(_FRAMES)
            first = page.evaluate("window.hcmapReady")
            rows.append(("first frame", "-", side, first, (chromium_cpu() - c0) * 1000))
        for name, lo, hi in BRUSHES:
            got: dict[str, tuple[list[float], list[float]]] = {s: ([], []) for s in pages}
            for _ in range(rounds):
                for side, page in pages.items():
                    c0 = chromium_cpu()
                    page.evaluate(_FRAMES)
                    c1 = chromium_cpu()
                    got[side][0].append(page.evaluate(_TIMED, ["brush", [lo, hi]]))
                    got[side][1].append((chromium_cpu() - c1 - (c1 - c0)) * 1000)
            lit = pages["this tree"].evaluate("document.getElementById('range').textContent")
            for side in pages:
                wall, cpu = (statistics.median(v) for v in got[side])
                rows.append((name, lit.split(";")[0].split(": ")[1], side, wall, cpu))
        b.close()
    lines = [
        "| brush | lights up | page | wall ms | Chromium CPU ms |",
        "| --- | --- | --- | ---: | ---: |",
    ]
    lines += [f"| {n} | {lit} | {side} | {w:.0f} | {c:.0f} |" for n, lit, side, w, c in rows]
    return lines


#: A control's action on any page: a JavaScript function of the page's date bounds.
CONTROLS = {
    "date range": "b => hcmap.setDates(b[0], b[1])",
    "search": "b => hcmap.search('agent')",
    "keyboard N": "b => document.getElementById('map').dispatchEvent("
    "new KeyboardEvent('keydown', {key: 'n', bubbles: true}))",
}
_BUSY = """
async (act) => {
  const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  await frame();
  const t0 = performance.now();
  act();
  await frame();
  return performance.now() - t0;
}
"""
_BOUNDS = """() => {
  const i = document.getElementById('date-from'), day = s => Date.parse(s) / 864e5;
  if (!i || !i.min) { return null; }
  const a = day(i.min), b = day(i.max), iso = d => new Date(d * 864e5).toISOString().slice(0, 10);
  return [iso(Math.round(a + (b - a) / 4)), iso(Math.round(a + 3 * (b - a) / 4))];
}"""


def _timed(page: Any, cdp: Any, action: str, bounds: Any, reset: str) -> tuple[float, float]:
    """Median of 3 (wall ms, main-thread busy ms) of ``action``, the page reset between."""
    runs = []
    for _ in range(3):
        busy0 = _busy(cdp)
        wall = page.evaluate(f"b => ({_BUSY})(() => ({action})(b))", bounds)
        runs.append((wall, (_busy(cdp) - busy0) * 1000))
        page.evaluate(reset)
    return sorted(runs)[1]


def _busy(cdp: Any) -> float:
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return float(next(m["value"] for m in metrics if m["name"] == "TaskDuration"))


def controls_cost(path: Path) -> dict[str, Any]:
    """First frame, the page's click baseline and each control's cost, in Chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        page = _opened(pw, path)
        page.wait_for_timeout(2000)  # the search index is built in idle slices after the frame
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")
        view = page.evaluate("hcmap.meta.view")
        method, args = ACTIONS[view]
        arg = page.evaluate(args)
        reset = "hcmap.setDates('', ''); hcmap.search(''); hcmap.reset()"
        out = {"first_ms": page.evaluate("window.hcmapReady"),
               "renderer": page.evaluate("hcmap.renderer"),
               "controls": page.evaluate("hcmap.controls()"),
               "click": _timed(page, cdp, f"() => hcmap.{method}.apply(null, {arg!r})", None,
                               reset)}  # fmt: skip
        bounds = page.evaluate(_BOUNDS)
        for name, action in CONTROLS.items():
            if name == "date range" and bounds is None:
                out[name] = None
                continue
            out[name] = _timed(page, cdp, action, bounds, reset)
        page.context.browser.close()
    return out


def controls_table(store: Store, tmp: Path, args: argparse.Namespace) -> None:
    """The controls' cost on each page the CLI writes at this size (reuse both renderers)."""
    rows = []
    for view, renderer in (("reuse", "webgl"), ("reuse", "canvas"), ("sources", "auto"),
                           ("time", "auto")):  # fmt: skip
        out = tmp / f"{view}-{renderer}.html"
        write_map(citation_graph(store, view), out, renderer=renderer)
        rows.append((f"{view} ({renderer})" if view == "reuse" else view, controls_cost(out)))
    load = os.getloadavg()
    lines = [
        f"## Issue 40: every control on every map, cost at {args.stories:,} stories — 2026-12-07",
        "",
        f"`python bench/bench_map_views.py --stories {args.stories} --seed {args.seed} "
        f"--controls` (headless Chromium, software WebGL; load average {load[0]:.1f} / "
        f"{load[1]:.1f} on 2 cores). Each cell: wall ms / main-thread busy ms, median of 3, "
        "from the call to the end of the next frame. Baseline, in the same run: each page's "
        "own action (reuse: click a source; sources: click the top source; time: brush a week).",
        "",
        "| page | first frame ms | own action (baseline) | date range | search | keyboard N |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]

    def cell(v: tuple[float, float] | None) -> str:
        return "-" if v is None else f"{v[0]:.0f} / {v[1]:.0f}"

    for name, r in rows:
        cells = [cell(r[k]) for k in ("click", "date range", "search", "keyboard N")]
        lines.append(f"| {name} | {r['first_ms']:.0f} | " + " | ".join(cells) + " |")
    publish(lines[0], "\n".join(lines) + "\n", args.write_results)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stories", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--brush-ab", metavar="REF", default=None,
                    help="time the time page's brush against the template at git REF")  # fmt: skip
    ap.add_argument("--rounds", type=int, default=9, help="brushes of each kind per page")
    ap.add_argument("--write-results", action="store_true")
    ap.add_argument("--controls", action="store_true", help="the controls' cost on each page")
    args = ap.parse_args()
    if args.brush_ab:
        with Store(build_store(args.stories, args.seed), read_only=True) as store:
            table = brush_ab(store, args.brush_ab, args.rounds)
        heading = f"## Issue 40: the time view's brush at {args.stories:,} stories — 2026-12-07"
        cmd = (f"`python bench/bench_map_views.py --brush-ab {args.brush_ab} --stories "
               f"{args.stories} --seed {args.seed} --rounds {args.rounds}`")  # fmt: skip
        load = f", load average {os.getloadavg()[0]:.1f} at the end:"
        publish(
            heading, "\n".join([heading, "", cmd + load, "", *table]) + "\n", args.write_results
        )
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp, Store(build_store(args.stories, args.seed),
                                                     read_only=True) as store:  # fmt: skip
        if args.controls:
            controls_table(store, Path(tmp), args)
            return
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
