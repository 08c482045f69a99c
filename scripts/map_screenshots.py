"""Screenshots of every map view at 300 and 10,000 stories for docs/maps.md (docs/img/).

Usage::

    python scripts/map_screenshots.py                 # every view, 300 and 10,000 stories
    python scripts/map_screenshots.py --sizes 300     # the small corpus only (a minute)

For each size it builds a store of generated stories once (``hcsample.corpus``, seed 13, the
seed story first; cached in ``bench/_work/shots-store-N-seed13``; the 10k ingest takes
minutes), writes every view ``hcgraph viz --view VIEW`` offers (:data:`VIEWS`, which a test
keeps equal to the CLI's list) with the CLI's defaults (``--renderer auto``), opens each page
in headless Chromium at 1200x800 and waits for the page's own "drawn" hook
(``window.hcmapReady``), and saves ``docs/img/map-VIEW-300.png`` / ``map-VIEW-10k.png`` as
palette PNGs, plus ``map-story-provenance.png`` (the seed story, one paragraph clicked).

What it draws is deterministic: the corpora are seeded, the layouts are computed in Python,
the focus of the story and publisher views is picked by rule (the seed story; the publisher
cited by the most stories), the viewport and scale are fixed. Needs /usr/bin/chromium,
Playwright and Pillow (``pip install -e '.[docs]'``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hcgraph import Store, ingest_bytes  # noqa: E402
from hcgraph.viz import citation_graph, draw_map  # noqa: E402
from hcsample.corpus import iter_stories  # noqa: E402

OUT = ROOT / "docs" / "img"
WORK = ROOT / "bench" / "_work"
SEED = 13
SEED_STORY = ROOT / "tests" / "fixtures" / "agentic-rl-production.json"
SEED_URL = "https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/"
#: Every view ``hcgraph viz --view`` offers, in the order docs/maps.md shows them.
VIEWS = ("reuse", "sources", "time", "publisher", "story")
SIZES = (300, 10_000)
VIEWPORT = {"width": 1200, "height": 800}


def tag(n: int) -> str:
    """``300`` → ``"300"``, ``10000`` → ``"10k"`` (the file names' size part)."""
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def image_names() -> list[str]:
    """Every PNG the script writes, in the order it writes them."""
    names = [f"map-{view}-{tag(n)}.png" for n in SIZES for view in VIEWS]
    return [*names, "map-story-provenance.png"]


def build_store(n: int) -> Path:
    """A store of the seed story and ``n`` generated stories (seed 13), built once."""
    path = WORK / f"shots-store-{n}-seed{SEED}"
    if (path / "DONE").exists():
        return path
    t0 = time.perf_counter()
    seed = json.loads(SEED_STORY.read_text())
    stories = iter_stories(n, SEED, include_seed=seed)
    with Store(path) as store:
        report = ingest_bytes(store, ((json.dumps(s).encode(), f"gen/{i}")
                                      for i, s in enumerate(stories)))  # fmt: skip
        if report.failures:
            raise SystemExit(f"ingest failed: {report.failures[:3]}")
    (path / "DONE").write_text(f"{time.perf_counter() - t0:.1f}\n")
    return path


def top_publisher(store: Store) -> str:
    """The publisher cited by the most stories (ties: the smallest IRI): the publisher view's
    focus."""
    graph = citation_graph(store, "reuse", overview=True)
    pubs = [(-int(a.get("stories", 0)), n) for n, a in graph.nodes(data=True)
            if a["type"] == "Publisher"]  # fmt: skip
    return min(pubs)[1]


def write_pages(n: int, tmp: Path) -> list[tuple[str, Path]]:
    """Each view of the ``n``-story store as a page: (image name, page path)."""
    pages = []
    with Store(build_store(n), read_only=True) as store:
        focus = {"story": SEED_URL, "publisher": top_publisher(store)}
        for view in VIEWS:
            path = tmp / f"{view}-{n}.html"
            info = draw_map(store, view, focus.get(view), path)
            print(f"{n} stories, {view}: {info.nodes} nodes, {info.bytes / 1e6:.1f} MB", flush=True)
            pages.append((f"map-{view}-{tag(n)}.png", path))
    return pages


def shoot(pages: list[tuple[str, Path]]) -> list[Path]:
    """Open each page in headless Chromium, wait for it to be drawn, save a PNG."""
    from playwright.sync_api import sync_playwright

    from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS

    OUT.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for name, path in pages:
            page = browser.new_page(viewport=VIEWPORT, device_scale_factor=1)
            page.route("http*://**", lambda route: route.abort())
            page.goto(path.as_uri())
            page.wait_for_function("() => window.hcmapReady !== undefined", timeout=600_000)
            # Two animation frames: whatever the first frame scheduled is on screen.
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => "
                          "requestAnimationFrame(r)))")  # fmt: skip
            page.screenshot(path=str(OUT / name))
            written.append(OUT / name)
            if name == "map-story-300.png":
                # The README's picture: one paragraph clicked, its provenance in the panel.
                page.evaluate("id => hcmap.highlight(id)", SEED_URL + "#s2-p1")
                page.evaluate("document.getElementById('details').scrollIntoView()")
                page.screenshot(path=str(OUT / "map-story-provenance.png"))
                written.append(OUT / "map-story-provenance.png")
            page.close()
        browser.close()
    return written


def shrink(path: Path) -> None:
    """A 128-colour palette PNG: about a fifth of the bytes, no visible loss for a chart."""
    from PIL import Image

    with Image.open(path) as im:
        small = im.convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT, dither=0)
    small.save(path, optimize=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), choices=SIZES,
                    help="corpus sizes to shoot (default: 300 10000)")  # fmt: skip
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="map-shots-") as tmp:
        pages = [p for n in args.sizes for p in write_pages(n, Path(tmp))]
        written = shoot(pages)
    for path in written:
        shrink(path)
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size / 1e3:.0f} kB")
    total = sum(p.stat().st_size for p in OUT.glob("map-*.png"))
    print(f"docs/img/map-*.png: {total / 1e6:.2f} MB in all")


if __name__ == "__main__":
    main()
