"""How hcgraph starts headless Chromium to look at its maps (tests and bench_viz).

Debian's Chromium, run as root without a sandbox, with the background-networking flags off so
it makes no connection of its own: a map must load with zero network requests.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "PNG_VIEW"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

#: A JavaScript expression for a map page: an async function giving a 2D context holding the
#: view as the page's PNG download draws it (``hcmap.png()``), in device pixels. For tests
#: that read the pixels of what a user would save: ``const ctx = await ${PNG_VIEW}();``.
PNG_VIEW = """(async () => {
  const img = new Image();
  img.src = hcmap.png();
  await img.decode();
  const c = document.createElement("canvas");
  c.width = img.width; c.height = img.height;
  const ctx = c.getContext("2d");
  ctx.drawImage(img, 0, 0);
  return ctx;
})"""
