"""The crawler: follow stories and their related links over HTTP into the store.

``crawl([url], "output/store", CrawlOptions(depth=1))`` crawls from a story page and
returns a :class:`~hcgraph.crawling.report.CrawlReport` (``.exit_code`` 0: every URL
succeeded). How the modules fit together: :mod:`hcgraph.crawling.crawler`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports as _lazy_exports

# Lazy (PEP 562): the store worker process imports ``hcgraph.crawling.worker``, which needs
# none of the fetching side (httpx, the frontier, the archive).
_EXPORTS: dict[str, str] = {
    "CrawlOptions": ".options",
    "CrawlProgress": ".crawler",
    "CrawlReport": ".report",
    "Crawler": ".crawler",
    "FetchPolicy": ".fetch",
    "FetchResult": ".fetch",
    "crawl": ".crawler",
    "user_agent": ".options",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = _lazy_exports(__name__, globals(), _EXPORTS)


if TYPE_CHECKING:
    from .crawler import Crawler as Crawler
    from .crawler import CrawlProgress as CrawlProgress
    from .crawler import crawl as crawl
    from .fetch import FetchPolicy as FetchPolicy
    from .fetch import FetchResult as FetchResult
    from .options import CrawlOptions as CrawlOptions
    from .options import user_agent as user_agent
    from .report import CrawlReport as CrawlReport
