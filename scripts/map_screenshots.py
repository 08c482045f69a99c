"""Screenshots of the citation maps for the docs (docs/img/), reproducible.

- ``map-reuse-1k.png``: the reuse map of 1,000 generated stories (seed 1), first frame:
  ranking panel, top labels, sizes.
- ``map-story-provenance.png``: the seed story's trail with one paragraph clicked, the
  provenance panel listing its claims, manifests, dates, source links and publishers.
- ``map-reuse-10k.png``: the WebGL reuse map of 10,000 generated stories (seed 1), every
  story drawn, coloured by cluster, the top labels drawn (skipped unless bench/bench_viz.py
  built its 10k store).

Usage: ``python scripts/map_screenshots.py`` (needs /usr/bin/chromium and Playwright; the
1k store is bench/bench_viz.py's, built on first use).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_viz import build_store  # noqa: E402

from hcgraph import Store, citation_graph, ingest_bytes  # noqa: E402
from hcgraph.viz import write_map  # noqa: E402
from hcsample.corpus import generate_corpus  # noqa: E402
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

OUT = ROOT / "docs" / "img"
SEED = ROOT / "tests" / "fixtures" / "agentic-rl-production.json"
SEED_URL = "https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/"


def main() -> None:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="map-shots-"))
    with Store(build_store(1000, 1), read_only=True) as store:
        write_map(citation_graph(store, "reuse"), tmp / "reuse.html")
    big = ROOT / "bench" / "_work" / "viz-store-10000-seed1"
    names = ["map-reuse-1k.png", "map-story-provenance.png"]
    if (big / "DONE").exists():
        with Store(big, read_only=True) as store:
            write_map(citation_graph(store, "reuse"), tmp / "reuse-10k.html")
        names.append("map-reuse-10k.png")
    seed = json.loads(SEED.read_text())
    corpus = generate_corpus(40, seed=5, include_seed=seed).stories
    docs = [(json.dumps(s).encode(), f"s{i}") for i, s in enumerate(corpus)]
    with Store(None) as store:
        ingest_bytes(store, docs)
        write_map(citation_graph(store, "story", SEED_URL), tmp / "story.html")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 860})
        page.goto((tmp / "reuse.html").as_uri())
        page.wait_for_function("() => window.hcmapReady !== undefined", timeout=120_000)
        page.screenshot(path=str(OUT / "map-reuse-1k.png"))
        page.goto((tmp / "story.html").as_uri())
        page.wait_for_function("() => window.hcmapReady !== undefined", timeout=60_000)
        page.evaluate("id => hcmap.highlight(id)", SEED_URL + "#s2-p1")
        # The side panel scrolled to the provenance list, the trail beside it.
        page.evaluate("document.getElementById('details').scrollIntoView()")
        page.screenshot(path=str(OUT / "map-story-provenance.png"))
        if "map-reuse-10k.png" in names:
            page.goto((tmp / "reuse-10k.html").as_uri())
            page.wait_for_function("() => window.hcmapReady !== undefined", timeout=120_000)
            page.screenshot(path=str(OUT / "map-reuse-10k.png"))
        browser.close()
    for name in names:
        _shrink(OUT / name)
        print(OUT / name, (OUT / name).stat().st_size)


def _shrink(path: Path) -> None:
    """A 256-colour palette PNG: a quarter of the bytes, no visible loss for a chart."""
    try:
        from PIL import Image
    except ImportError:  # Pillow is optional: keep the full-colour PNG
        return
    with Image.open(path) as im:
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


if __name__ == "__main__":
    main()
