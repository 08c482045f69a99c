"""Benchmark the citation maps: generation time, first frame and interaction in Chromium.

hcgraph's reuse map (SPARQL aggregation → precomputed layout → self-contained HTML, physics
off) at 1k and 10k generated stories, against a baseline measured in the same run: pyvis's
default path (``Network()`` + ``add_node``/``add_edge`` + ``write_html``, physics on, as a
pyvis user would write it) for the same nodes and edges at 1k stories.

At 10k the default reuse map is the *overview* (sources and publishers; a source's citing
stories listed and drawn on a click); the full map (``--stories-all``) and the grouped map
are measured beside it, so the design choice rests on numbers. Interaction (issue 12
targets: < 200 ms) is timed inside the page, from the call to the end of the next frame
drawn after it (two ``requestAnimationFrame`` turns): a search for a word of the top
source's title, a click-highlight of the top source, and (overview) drawing its citing
stories. Each is the median of 3.

Time-to-stable: from the start of navigation to
- hcgraph: the first drawn frame (``window.hcmapReady``); physics is off, so the map is
  stable and draggable from that frame (the script also drags a node to prove it);
- pyvis: vis-network's ``stabilizationIterationsDone`` (physics on; pyvis hides its loading
  bar then), capped at ``--cap`` seconds. Physics keeps running afterwards: whether the
  ``stabilized`` event (nodes at rest) ever came is reported too.
The browser is Debian's /usr/bin/chromium, headless, with every http(s) request aborted
(and counted: pyvis's page asks for CDN files, hcgraph's asks for none).

Usage::

    python bench/bench_viz.py [--sizes 1000 10000] [--write-results]

Stores are built once per size under bench/_work/ (git-ignored) and reused.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import write_section  # noqa: E402

from hcgraph import Store, ingest_bytes  # noqa: E402
from hcgraph.viz import citation_graph, compute_layout, write_map  # noqa: E402
from hcsample.corpus import iter_stories  # noqa: E402
from tests.support.chromium import CHROMIUM_ARGS  # noqa: E402

ARGS = CHROMIUM_ARGS
WORK = ROOT / "bench" / "_work"

# Hooks pyvis's global ``network`` as soon as its page assigns it.
_PYVIS_HOOK = """
(() => {
  let net;
  Object.defineProperty(window, "network", {
    configurable: true,
    get() { return net; },
    set(v) {
      net = v;
      v.once("stabilizationIterationsDone", () => { window.__stable = performance.now(); });
      v.once("stabilized", () => { window.__settled = performance.now(); });
    },
  });
})();
"""


def build_store(n: int, seed: int) -> Path:
    """A store of ``n`` generated stories, built once and reused."""
    path = WORK / f"viz-store-{n}-seed{seed}"
    done = path / "DONE"
    if done.exists():
        return path
    t0 = time.perf_counter()
    with Store(path) as store:
        docs = ((json.dumps(s).encode(), f"gen/{i}") for i, s in enumerate(iter_stories(n, seed)))
        report = ingest_bytes(store, docs)
        assert not report.failures, report.failures[:3]
    done.write_text(f"{time.perf_counter() - t0:.1f}\n")
    return path


_TIMED = """
async ([action, arg]) => {
  const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  await frame();
  const t0 = performance.now();
  const result = hcmap[action](arg);
  await frame();
  const ms = performance.now() - t0;
  hcmap.reset();
  await frame();
  return [ms, result];
}
"""


def interact(page: Any) -> dict[str, float | None]:
    """Median milliseconds of search, click-highlight and (overview) drill-down."""
    top = page.evaluate("hcmap.ranking.sources.length ? hcmap.ranking.sources[0] : null")
    if top is None:
        return {"search_ms": None, "click_ms": None, "drill_ms": None}
    word = max(top["label"].split(), key=len).strip(":,.…")
    out: dict[str, float | None] = {}
    for key, action, arg in (("search_ms", "search", word), ("click_ms", "highlight", top["id"])):
        out[key] = statistics.median(page.evaluate(_TIMED, [action, arg])[0] for _ in range(3))
    out["drill_ms"] = None
    if page.evaluate("hcmap.hasDrill"):
        out["drill_ms"] = page.evaluate(_TIMED, ["drill", top["id"]])[0]
    return out


def generate(store_dir: Path, out: Path, renderer: str = "auto", **opts: Any) -> dict[str, Any]:
    """hcgraph: projection, layout, render+write; wall seconds of each."""
    with Store(store_dir, read_only=True) as store:
        c0 = time.process_time()
        t0 = time.perf_counter()
        graph = citation_graph(store, "reuse", **opts)
        t1 = time.perf_counter()
        pos = compute_layout(graph)
        t2 = time.perf_counter()
        info = write_map(graph, out, pos, renderer=renderer)
        t3 = time.perf_counter()
    return {
        "graph": graph,
        "project_s": t1 - t0,
        "layout_s": t2 - t1,
        "render_s": t3 - t2,
        "total_s": t3 - t0,
        "cpu_s": time.process_time() - c0,
        "nodes": info.nodes,
        "edges": info.edges,
        "mb": info.bytes / 1e6,
    }


def pyvis_generate(graph: Any, out: Path) -> float:
    """The pyvis default path for the same nodes and edges (physics on, pyvis's template)."""
    from pyvis.network import Network

    t0 = time.perf_counter()
    net = Network(height="900px", width="100%", cdn_resources="in_line")
    for n, a in graph.nodes(data=True):
        net.add_node(n, label=a["label"], title=a["title"] or a["label"])
    for s, o, a in graph.edges(data=True):
        net.add_edge(s, o, value=a.get("weight", 1))
    cwd = os.getcwd()
    os.chdir(out.parent)  # pyvis writes lib/ beside the page
    try:
        net.write_html(out.name)
    finally:
        os.chdir(cwd)
    return time.perf_counter() - t0


def open_in_chromium(browser: Any, path: Path, *, pyvis: bool, cap: float) -> dict[str, Any]:
    """Seconds from navigation start to stable; requests attempted; console errors."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    requests: list[str] = []
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

    def route(r: Any) -> None:
        if r.request.url.startswith(("http://", "https://")):
            requests.append(r.request.url)
            r.abort()
        else:
            r.continue_()

    page.route("**/*", route)
    if pyvis:
        page.add_init_script(_PYVIS_HOOK)
    flag = "window.__stable" if pyvis else "window.hcmapReady"
    stable: float | None
    try:
        page.goto(path.as_uri(), wait_until="commit", timeout=cap * 1000)
        page.wait_for_function(f"() => {flag} !== undefined", timeout=cap * 1000, polling=100)
        stable = page.evaluate(f"() => {flag}") / 1000
    except Exception:  # a timeout is a result here (capped)
        stable = None
    dragged: bool | None = None
    timings: dict[str, float | None] = {}
    if not pyvis and stable is not None:
        timings = interact(page)
        dragged = _drag(page)
    elif pyvis:
        dragged = bool(page.evaluate("() => window.__settled !== undefined"))
    page.close()
    return {
        "stable_s": stable,
        "requests": len(requests),
        "errors": len(errors),
        "dragged": dragged,
        **timings,
    }


def _drag(page: Any) -> bool:
    """Drag the node under the centre of the zoomed-in view with the real mouse; True if it
    moved (physics off, so only the drag can move it)."""
    first = page.evaluate("() => hcmap.nodes.getIds()[0]")
    page.evaluate("id => hcmap.network.focus(id, {scale: 1.5, animation: false})", first)
    box = page.locator("#map canvas").bounding_box()
    xy = page.evaluate("id => hcmap.network.canvasToDOM(hcmap.network.getPosition(id))", first)
    node = page.evaluate("xy => hcmap.network.getNodeAt(xy)", xy)  # topmost node there
    if node is None:
        return False
    before = page.evaluate("id => hcmap.network.getPosition(id)", node)
    x, y = box["x"] + xy["x"], box["y"] + xy["y"]
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 80, y + 40, steps=8)
    page.mouse.up()
    after = page.evaluate("id => hcmap.network.getPosition(id)", node)
    return bool(abs(after["x"] - before["x"]) > 10)


def _fmt(x: float | None, cap: float) -> str:
    return f"> {cap:.0f}" if x is None else f"{x:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--loads", type=int, default=3, help="page loads per map (median)")
    ap.add_argument("--cap", type=float, default=180.0, help="time-to-stable cap, seconds")
    ap.add_argument("--baseline-size", type=int, default=1000)
    ap.add_argument("--write-results", action="store_true")
    ap.add_argument(
        "--renderers", action="store_true",
        help="issue 27: the every-story reuse map drawn by vis-network (canvas) and by "
        "sigma.js (WebGL), same run",
    )  # fmt: skip
    ap.add_argument(
        "--synthetic", type=int, default=0, metavar="K",
        help="with --renderers: also the WebGL map of the 10k stories K times over",
    )  # fmt: skip
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    if args.renderers:
        renderers(args)
        return

    load0 = os.getloadavg()[0]
    rows: list[list[str]] = []
    tmp = Path(tempfile.mkdtemp(prefix="bench-viz-"))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for n in args.sizes:
            store_dir = build_store(n, args.seed)
            variants: list[tuple[str, dict[str, Any]]] = [("reuse", {})]
            if n >= 10000:
                variants[0] = ("reuse (default: overview)", {})
                variants.append(("reuse --stories-all", {"overview": False}))
                variants.append(("reuse --top 200 --group-stories newsroom-day",
                                 {"top": 200, "group_stories": "newsroom-day"}))  # fmt: skip
            for name, opts in variants:
                out = tmp / f"hc-{n}-{len(opts)}.html"
                gen = generate(store_dir, out, **opts)
                loads = [open_in_chromium(browser, out, pyvis=False, cap=args.cap)
                         for _ in range(args.loads)]  # fmt: skip
                stable = [x["stable_s"] for x in loads if x["stable_s"] is not None]

                def ms(key: str, loads: list[dict[str, Any]] = loads) -> str:
                    vals = [x[key] for x in loads if x.get(key) is not None]
                    return f"{statistics.median(vals):.0f}" if vals else ""

                rows.append([
                    f"hcgraph `{name}`", f"{n:,}", f"{gen['nodes']:,}", f"{gen['edges']:,}",
                    f"{gen['total_s']:.2f} ({gen['project_s']:.2f} + {gen['layout_s']:.2f} + "
                    f"{gen['render_s']:.2f})",
                    f"{gen['cpu_s']:.2f}",
                    f"{gen['mb']:.1f}",
                    _fmt(statistics.median(stable) if stable else None, args.cap),
                    ms("search_ms"), ms("click_ms"), ms("drill_ms"),
                    str(max(x["requests"] for x in loads)),
                    "yes" if all(x["dragged"] for x in loads) else "no",
                ])  # fmt: skip
                print(" | ".join(rows[-1]), flush=True)
                if n == args.baseline_size and not opts:
                    base = tmp / "pyvis" / "pyvis.html"
                    base.parent.mkdir()
                    gen_s = pyvis_generate(gen["graph"], base)
                    res = open_in_chromium(browser, base, pyvis=True, cap=args.cap)
                    rows.append([
                        "baseline: pyvis default (physics on)", f"{n:,}", f"{gen['nodes']:,}",
                        f"{gen['edges']:,}", f"{gen_s:.2f} (+ projection {gen['project_s']:.2f})",
                        "",
                        f"{base.stat().st_size / 1e6:.1f}", _fmt(res["stable_s"], args.cap),
                        "", "", "",
                        str(res["requests"]),
                        "yes, but nodes still moving" if not res["dragged"] else "yes",
                    ])  # fmt: skip
                    print(" | ".join(rows[-1]), flush=True)
        browser.close()
    head = ("| map | stories | nodes | edges | generate s (project + layout + render) "
            "| generate CPU s | HTML MB "
            "| first frame (time-to-stable) in Chromium s | search ms | click-highlight ms "
            "| draw a source's stories ms | http requests attempted | draggable |")  # fmt: skip
    table = "\n".join([head, "|" + "---|" * 13, *("| " + " | ".join(r) + " |" for r in rows)])
    print(table)
    if args.write_results:
        _write_results(table, args, (load0, os.getloadavg()[0]))


_GL_TIMED = """
async ([action, arg]) => {
  const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const out = [];
  for (let i = 0; i < 3; i++) {
    await frame();
    const t0 = performance.now();
    if (action === "setDates") { hcmap.setDates(arg[0], arg[1]); } else { hcmap[action](arg); }
    await frame();
    out.push(performance.now() - t0);
    hcmap.reset();
    await frame();
  }
  out.sort((a, b) => a - b);
  return out[1];
}
"""


def _mid_day(a: str, b: str) -> str:
    """The day halfway between two ISO days."""
    d0, d1 = datetime.date.fromisoformat(a), datetime.date.fromisoformat(b)
    return (d0 + (d1 - d0) / 2).isoformat()


def renderers(args: argparse.Namespace) -> None:
    """The every-story reuse map, canvas vs WebGL, at each size: write CPU, first frame and
    interaction (hover = tooltip of the top source, click, search, date filter)."""
    from playwright.sync_api import sync_playwright

    load0 = os.getloadavg()[0]
    rows: list[list[str]] = []
    tmp = Path(tempfile.mkdtemp(prefix="bench-viz-gl-"))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for n in args.sizes:
            store_dir = build_store(n, args.seed)
            for renderer in ("canvas", "webgl"):
                out = tmp / f"{renderer}-{n}.html"
                gen = generate(store_dir, out, renderer=renderer, overview=False)
                firsts, timings = [], {}
                for k in range(args.loads):
                    page = browser.new_page(viewport={"width": 1400, "height": 900})
                    page.route("**/*", lambda r: r.abort() if r.request.url.startswith("http")
                               else r.continue_())  # fmt: skip
                    page.goto(out.as_uri(), wait_until="commit")
                    page.wait_for_function("() => window.hcmapReady !== undefined",
                                           timeout=args.cap * 1000, polling=100)  # fmt: skip
                    firsts.append(page.evaluate("window.hcmapReady") / 1000)
                    if k == 0:
                        top = page.evaluate("hcmap.ranking.sources[0]")
                        word = max(top["label"].split(), key=len).strip(":,.…")
                        timings["click"] = page.evaluate(_GL_TIMED, ["highlight", top["id"]])
                        timings["search"] = page.evaluate(_GL_TIMED, ["search", word])
                        if renderer == "webgl":
                            # The whole range (every dated story shown: the veil redraws
                            # the most) and its first half.
                            r = page.evaluate("hcmap.dateRange()")
                            timings["dates"] = page.evaluate(
                                _GL_TIMED, ["setDates", [r["min"], r["max"]]]
                            )
                            timings["half"] = page.evaluate(
                                _GL_TIMED, ["setDates", [r["min"], _mid_day(r["min"], r["max"])]]
                            )
                    page.close()
                rows.append([
                    renderer, f"{n:,}", f"{gen['nodes']:,}", f"{gen['edges']:,}",
                    f"{gen['cpu_s']:.2f}", f"{gen['mb']:.1f}",
                    f"{statistics.median(firsts):.2f}",
                    f"{timings['click']:.0f}", f"{timings['search']:.0f}",
                    (f"{timings['dates']:.0f} / {timings['half']:.0f}"
                     if "dates" in timings else "—"),
                ])  # fmt: skip
                print(" | ".join(rows[-1]), flush=True)
        if args.synthetic:
            # 100k stories without a 100k store (ingest: ~45 min here): the 10k map's
            # stories ten times over (new IRIs, same sources), laid out and written alike.
            store_dir = build_store(10000, args.seed)
            with Store(store_dir, read_only=True) as store:
                base = citation_graph(store, "reuse", overview=False)
            graph = base.copy()
            for k in range(1, args.synthetic):
                for n, a in base.nodes(data=True):
                    if a["type"] == "Story":
                        graph.add_node(f"{n}#copy{k}", **a)
                        for t in base.successors(n):
                            graph.add_edge(f"{n}#copy{k}", t, **base.edges[n, t])
            out = tmp / "webgl-synthetic.html"
            c0 = time.process_time()
            info = write_map(graph, out, compute_layout(graph), renderer="webgl")
            cpu = time.process_time() - c0
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(out.as_uri(), wait_until="commit")
            page.wait_for_function("() => window.hcmapReady !== undefined",
                                   timeout=args.cap * 1000, polling=100)  # fmt: skip
            first = page.evaluate("window.hcmapReady") / 1000
            top = page.evaluate("hcmap.ranking.sources[0]")
            click = page.evaluate(_GL_TIMED, ["highlight", top["id"]])
            r = page.evaluate("hcmap.dateRange()")
            whole = page.evaluate(_GL_TIMED, ["setDates", [r["min"], r["max"]]])
            half = page.evaluate(_GL_TIMED, ["setDates", [r["min"], _mid_day(r["min"], r["max"])]])
            page.close()
            rows.append([
                f"webgl (synthetic: the 10k stories {args.synthetic} times)",
                f"{10000 * args.synthetic:,}", f"{info.nodes:,}", f"{info.edges:,}",
                f"{cpu:.2f} (render only)", f"{info.bytes / 1e6:.1f}", f"{first:.2f}",
                f"{click:.0f}", "", f"{whole:.0f} / {half:.0f}",
            ])  # fmt: skip
            print(" | ".join(rows[-1]), flush=True)
        browser.close()
    head = ("| renderer | stories | nodes | edges | write CPU s (incl. layout) | HTML MB "
            "| first frame s | click-highlight ms | search ms "
            "| date filter ms (whole range / first half) |")  # fmt: skip
    table = "\n".join([head, "|" + "---|" * 10, *("| " + " | ".join(r) + " |" for r in rows)])
    print(table)
    if args.write_results:
        heading = "## Citation maps: WebGL renderer (issue 27)"
        write_section(heading, (
            f"{heading}\n\n`python bench/bench_viz.py --renderers --write-results --loads "
            f"{args.loads} --sizes {' '.join(map(str, args.sizes))}` on {os.cpu_count()} "
            f"cores, {time.strftime('%Y-%m-%d')}, load average {load0:.1f} at the start and "
            f"{os.getloadavg()[0]:.1f} at the end (other jobs share the cores: read ratios). "
            "The every-story reuse map (`--stories-all`), drawn by vis-network on a canvas "
            "and by sigma.js on WebGL (headless Chromium, SwiftShader software WebGL). First "
            f"frame: median of {args.loads} loads; interaction: in-page, call → end of the "
            "next frame, median of 3.\n\n"
            f"{table}\n"
        ))  # fmt: skip


def _write_results(table: str, args: argparse.Namespace, load: tuple[float, float]) -> None:
    heading = "## Citation maps at scale (issue 12)"
    section = (
        f"{heading}\n\n"
        f"`python bench/bench_viz.py --write-results --loads {args.loads}` on "
        f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}; seeded generated stories "
        f"(`hcsample.corpus`, seed {args.seed}); load average {load[0]:.1f} at the start and "
        f"{load[1]:.1f} at the end of the run (three other engineers' jobs share the 2 cores: "
        "read ratios and CPU seconds, not wall seconds); headless Debian Chromium, software "
        "rendering, every http(s) request aborted. First frame: median of "
        f"{args.loads} page loads (pyvis baseline: one, capped at {args.cap:.0f} s). "
        "Interaction: in-page, call → end of the next drawn frame, median of 3 (drawing a "
        "source's stories: one). Targets (issue 12): at 10k, first frame < 2 s, search and "
        "click-highlight < 200 ms, written in < 5 s CPU.\n\n"
        f"{table}\n"
    )
    write_section(heading, section)


if __name__ == "__main__":
    main()
