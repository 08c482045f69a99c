"""The crawler: follow stories and their related links over HTTP into the store.

>>> from hcgraph.crawling import CrawlOptions, crawl
>>> report = crawl(["https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/"],
...                "output/store", CrawlOptions(depth=1))            # doctest: +SKIP
>>> report.exit_code                                                  # doctest: +SKIP
0

See :mod:`hcgraph.crawling.crawler` for how the modules fit together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports as _lazy_exports

# Lazy (PEP 562), like the package above it: the store worker process imports
# ``hcgraph.crawling.worker``, which needs the pipeline and the store but none of the
# fetching side (httpx, the frontier, the archive: ~0.1 s of CPU a crawl at start-up).
_EXPORTS: dict[str, str] = {
    "CrawlOptions": ".options",
    "CrawlProgress": ".crawler",
    "CrawlReport": ".report",
    "Crawler": ".crawler",
    "FetchPolicy": ".fetch",
    "FetchResult": ".fetch",
    "Mirror": "..urls",
    "acrawl": ".crawler",
    "canonicalize": "..urls",
    "crawl": ".crawler",
    "json_url": "..urls",
    "user_agent": ".options",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = _lazy_exports(__name__, globals(), _EXPORTS)


if TYPE_CHECKING:
    from ..urls import Mirror as Mirror
    from ..urls import canonicalize as canonicalize
    from ..urls import json_url as json_url
    from .crawler import Crawler as Crawler
    from .crawler import CrawlProgress as CrawlProgress
    from .crawler import acrawl as acrawl
    from .crawler import crawl as crawl
    from .fetch import FetchPolicy as FetchPolicy
    from .fetch import FetchResult as FetchResult
    from .options import CrawlOptions as CrawlOptions
    from .options import user_agent as user_agent
    from .report import CrawlReport as CrawlReport
