"""The crawler: follow stories and their related links over HTTP into the store.

>>> from hcgraph.crawling import CrawlOptions, crawl
>>> report = crawl(["https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/"],
...                "output/store", CrawlOptions(depth=1))            # doctest: +SKIP
>>> report.exit_code                                                  # doctest: +SKIP
0

See :mod:`hcgraph.crawling.crawler` for how the modules fit together.
"""

from ..urls import Mirror, canonicalize, json_url
from .crawler import Crawler, CrawlOptions, CrawlProgress, acrawl, crawl, user_agent
from .fetch import FetchPolicy, FetchResult
from .report import CrawlReport

__all__ = [
    "CrawlOptions",
    "CrawlProgress",
    "CrawlReport",
    "Crawler",
    "FetchPolicy",
    "FetchResult",
    "Mirror",
    "acrawl",
    "canonicalize",
    "crawl",
    "json_url",
    "user_agent",
]
