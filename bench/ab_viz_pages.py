"""A/B two map pages in one Chromium run: first frame and interaction, alternately.

For changes to the map pages' scripts: the same map written by two trees (e.g. the tree
before a change with ``PYTHONPATH=<old tree>``) is opened alternately, ``--rounds`` times
each, so both see the same machine load. Per page and round: the first frame
(``window.hcmapReady``) and the end of the animation frame after it (*painted*: the GPU
process has drawn it), the page's step marks (``hcmap:*``, WebGL page), and for a hover
and a click-highlight of the top source, a search for a word of its title and three date
ranges (the first four weeks; every day but the first; the first three days): the script
cost (call → return) and call → end of the next frame (two ``requestAnimationFrame``
turns), each the median of 3.

Usage::

    python bench/ab_viz_pages.py --rounds 3 old.html new.html
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

#: Before the page's scripts: ``window.hcmapPainted``, the end of the animation frame after
#: the one in which the first frame was drawn (``hcmapReady`` set): the GPU process has
#: drawn it by then (software WebGL rasterises after the page's script returns).
PAINTED = """
(() => {
  const poll = () => {
    if (window.hcmapReady === undefined) { requestAnimationFrame(poll); return; }
    requestAnimationFrame(() => { window.hcmapPainted = performance.now(); });
  };
  requestAnimationFrame(poll);
})();
"""

_TIMED = """
async ([action, arg]) => {
  const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  // A hover: the mouse moved onto the node, over sigma's mouse layer (the event bubbles to
  // the document, where sigma listens, with the layer as its target).
  const move = (x, y) => hcmap.sigma.getCanvases().mouse.dispatchEvent(
    new MouseEvent("mousemove", { clientX: x, clientY: y, bubbles: true }));
  const box = () => hcmap.sigma.getCanvases().mouse.getBoundingClientRect();
  const hover = (id) => {
    const p = hcmap.sigma.framedGraphToViewport(hcmap.sigma.getNodeDisplayData(id)), r = box();
    move(r.left + p.x, r.top + p.y);
  };
  const script = [], framed = [];
  let shown = true;
  for (let i = 0; i < 3; i++) {
    await frame();
    const t0 = performance.now();
    if (action === "setDates") { hcmap.setDates(arg[0], arg[1]); }
    else if (action === "hover") { hover(arg); }
    else { hcmap[action](arg); }
    const t1 = performance.now();
    const tip = document.getElementById("tip");
    if (action === "hover") { shown = shown && tip.style.display === "block"; }
    await frame();
    script.push(t1 - t0); framed.push(performance.now() - t0);
    if (action === "hover") { move(box().left - 100, 5); }
    hcmap.reset();
    await frame();
  }
  script.sort((a, b) => a - b); framed.sort((a, b) => a - b);
  return [script[1], framed[1], shown];
}
"""


def open_page(browser: Any, path: Path) -> Any:
    """A new 1400 x 900 page opening ``path``: every http(s) request aborted, the painted-frame
    probe installed, navigation committed (the page's own wait comes after)."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.route("**/*", lambda r: r.abort() if r.request.url.startswith("http") else r.continue_())
    page.add_init_script(PAINTED)
    page.goto(path.as_uri(), wait_until="commit")
    return page


def measure(browser: Any, path: Path) -> dict[str, Any]:
    """One load of ``path``: first frame, marks, and the three interactions."""
    page = open_page(browser, path)
    page.wait_for_function("() => window.hcmapReady !== undefined", timeout=600_000, polling=100)
    row: dict[str, Any] = {"load": round(os.getloadavg()[0], 1)}
    row["first_ms"] = round(page.evaluate("window.hcmapReady"))
    page.wait_for_function("() => window.hcmapPainted !== undefined", timeout=600_000, polling=50)
    row["painted_ms"] = round(page.evaluate("window.hcmapPainted"))
    row["marks"] = page.evaluate(
        "performance.getEntriesByType('mark').map(m => [m.name, Math.round(m.startTime)])"
    )
    top = page.evaluate("hcmap.ranking.sources[0]")
    word = max(top["label"].split(), key=len).strip(":,.…")
    span = page.evaluate("hcmap.dateRange ? hcmap.dateRange() : null")
    actions: list[tuple[str, str, Any]] = [
        ("hover", "hover", top["id"]),
        ("click", "highlight", top["id"]),
        ("search", "search", word),
    ]
    if span and span["min"]:
        actions.append(("dates", "setDates", [span["min"], span["min"][:8] + "28"]))
        # Nearly every story shown (all but the first day's): most of the map drawn again.
        after = (date.fromisoformat(span["min"]) + timedelta(days=1)).isoformat()
        actions.append(("dates_wide", "setDates", [after, span["max"]]))
        # The first three days: a part of the map.
        third = (date.fromisoformat(span["min"]) + timedelta(days=2)).isoformat()
        actions.append(("dates_narrow", "setDates", [span["min"], third]))
    for key, action, arg in actions:
        script, framed, ok = page.evaluate(_TIMED, [action, arg])
        assert ok, f"{path.name}: the hover showed no tooltip"
        row[key] = [round(script), round(framed)]
    page.close()
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pages", nargs="+", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    rows: dict[str, list[dict[str, Any]]] = {str(p): [] for p in args.pages}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for _ in range(args.rounds):
            for p in args.pages:
                rows[str(p)].append(measure(browser, p))
                print(p.name, json.dumps(rows[str(p)][-1]), flush=True)
        browser.close()
    keys = ("hover", "click", "search", "dates", "dates_wide", "dates_narrow")
    print("| page | load | first frame ms | painted ms | hover ms (script / to frame) | click ms "
          "| search ms | date range ms | wide date range ms | narrow date range ms |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for p, rs in rows.items():

        def med(key: str, i: int, rs: list[dict[str, Any]] = rs) -> str:
            vals = [r[key][i] for r in rs if key in r]
            return f"{statistics.median(vals):.0f}" if vals else "—"

        loads = f"{min(r['load'] for r in rs)} to {max(r['load'] for r in rs)}"
        first = statistics.median(r["first_ms"] for r in rs)
        painted = statistics.median(r["painted_ms"] for r in rs)
        cells = [f"{med(k, 0)} / {med(k, 1)}" for k in keys]
        print(
            f"| {Path(p).name} | {loads} | {first:.0f} | {painted:.0f} | "
            + " | ".join(cells)
            + " |"
        )


if __name__ == "__main__":
    main()
