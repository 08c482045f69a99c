"""How hcgraph starts headless Chromium to look at its maps (tests and bench_viz).

Debian's Chromium, run as root without a sandbox, with the background-networking flags off so
it makes no connection of its own: a map must load with zero network requests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "PNG_VIEW", "TEST_ARGS", "Tabs"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

#: The tests' Chromium: no zygote, so every renderer and the GPU process are children of
#: the browser process, which reaps them. With the zygote, those processes are orphaned when
#: the browser closes and their CPU never reaches ``getrusage``/``/usr/bin/time`` (two
#: thirds of a map test's Chromium CPU went uncounted): the suite's CPU figures need it.
TEST_ARGS = [*CHROMIUM_ARGS, "--no-zygote"]

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


class Tabs:
    """Pages reused across a test module: each :meth:`open` is a fresh navigation (a new
    document: no script state, listeners or DOM of the test before) in a tab that already
    has its renderer process, which costs a third to a fifth of the CPU of a new page.

    Every page records its console errors and uncaught exceptions in ``page.errors`` and
    the URLs it requested in ``page.requests``, both emptied by each :meth:`open`. A test
    gives a page back with :meth:`done`; one that fails before that leaves its page out of
    the pool, and the next :meth:`open` makes a new one.
    """

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self._free: dict[tuple[int, int, bool], list[Any]] = {}

    def open(
        self, url: str, *, width: int = 1400, height: int = 900, accept_downloads: bool = True
    ) -> Any:
        key = (width, height, accept_downloads)
        pool = self._free.setdefault(key, [])
        page = pool.pop() if pool else self._new(key)
        page.goto("about:blank")  # the test before leaves no state in the next document
        page.errors.clear()
        page.requests.clear()
        page.goto(url)
        return page

    def _new(self, key: tuple[int, int, bool]) -> Any:
        width, height, accept_downloads = key
        page = self.browser.new_page(
            viewport={"width": width, "height": height}, accept_downloads=accept_downloads
        )
        errors: list[str] = []
        requests: list[str] = []
        page.tab_key, page.errors, page.requests = key, errors, requests
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("request", lambda r: requests.append(r.url))
        return page

    def done(self, page: Any) -> None:
        """Give ``page`` back for the next :meth:`open`."""
        if not page.is_closed():
            self._free.setdefault(page.tab_key, []).append(page)

    def close(self) -> None:
        for pages in self._free.values():
            for page in pages:
                page.close()
        self._free.clear()
