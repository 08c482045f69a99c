"""How hcgraph starts headless Chromium to look at its maps (tests and bench_viz).

Debian's Chromium, run as root without a sandbox, with the background-networking flags off so
it makes no connection of its own: a map must load with zero network requests.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CHROMIUM", "CHROMIUM_ARGS"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
