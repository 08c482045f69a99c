"""robots.txt, fetched once per logical origin and honoured (RFC 9309).

``protego`` matches the rules; the file is read through the mirror, if any, and only its
first 512 KiB. A 4xx allows everything; a 5xx or an unreachable server disallows the origin
for this crawl. Our agent's ``Crawl-delay`` sets the host's request interval; one over the
fetch policy's ``max_retry_after`` fails that origin's URLs (as such a ``Retry-After`` does).
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit, urlunsplit

from protego import Protego

from ..urls import host_of
from .fetch import Fetcher, FetchResult

__all__ = ["AGENT_TOKEN", "Robots", "sitemaps_of"]

#: The product token matched against ``User-agent:`` lines.
AGENT_TOKEN = "hcgraph"
_MAX_ROBOTS_BYTES = 512 * 1024  # read of a robots.txt, as RFC 9309 allows


def sitemaps_of(parser: Protego) -> list[str]:
    """The ``Sitemap:`` URLs of a parsed robots.txt, in order, once each."""
    return list(dict.fromkeys(parser.sitemaps))


class Robots:
    """Per-origin robots.txt rules, fetched with ``fetcher`` lazily and once (concurrent
    callers share the fetch); ``enabled=False`` ignores them (``--ignore-robots``)."""

    def __init__(self, fetcher: Fetcher, *, enabled: bool = True) -> None:
        self.fetcher = fetcher
        self.enabled = enabled
        # origin → its rules: parsed; None (a 4xx: no rules); or why it could not be read
        self._rules: dict[str, asyncio.Task[Protego | str | None]] = {}

    async def why_not(self, url: str) -> tuple[str, str] | None:
        """``None`` if robots.txt allows ``url`` (a logical URL), else ``(state, reason)``.

        ``state`` is ``skipped`` when the rules disallow the URL, ``failed`` when robots.txt
        could not be read (the site is down or erroring: a failure, not a policy).
        """
        if not self.enabled:
            return None
        origin, rules = await self._rules_of(url)
        if isinstance(rules, str):
            return "failed", f"{origin}/robots.txt {rules}"
        if rules is None or rules.can_fetch(url, AGENT_TOKEN):
            return None
        return "skipped", f"disallowed by {origin}/robots.txt"

    async def sitemaps(self, url: str) -> list[str]:
        """The ``Sitemap:`` lines of the robots.txt at ``url`` (read with the rules, even with
        ``--ignore-robots``); none if it could not be read."""
        _origin, rules = await self._rules_of(url)
        return sitemaps_of(rules) if isinstance(rules, Protego) else []

    async def _rules_of(self, url: str) -> tuple[str, Protego | str | None]:
        """``url``'s origin and its robots.txt rules (fetched once per origin)."""
        parts = urlsplit(url)
        origin = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
        task = self._rules.get(origin)
        if task is None:
            task = self._rules[origin] = asyncio.ensure_future(self._load(origin))
        return origin, await asyncio.shield(task)

    async def _load(self, origin: str) -> Protego | str | None:
        # only the start is read: one past the body cap was refused and then allowed all
        result = await self.fetcher.get(origin + "/robots.txt", keep_first=_MAX_ROBOTS_BYTES)
        unreadable = _unreadable(result)
        if unreadable is not None or result.status != 200 or result.body is None:
            return unreadable  # None: a 4xx, or a redirect we may not follow: no rules
        parser = Protego.parse(result.body.decode("utf-8", "replace"))
        delay = parser.crawl_delay(AGENT_TOKEN) if self.enabled else None
        if not delay:
            return parser
        limit = self.fetcher.policy.max_retry_after
        if delay > limit:  # honoured, it would stall the crawl for ever (1e308)
            return f"asks for a Crawl-delay of {delay:g} s, longer than the {limit:g} s limit"
        self.fetcher.politeness.set_min_interval(
            host_of(self.fetcher.mirrors.to_fetch(origin + "/")), float(delay)
        )
        return parser


def _unreadable(result: FetchResult) -> str | None:
    """Why a robots.txt could not be read (unreachable, or a 5xx), else None."""
    if result.error is not None and result.status is None:
        return f"could not be read (unreachable: {result.error})"
    if result.status is not None and result.status >= 500:
        return f"could not be read (HTTP {result.status})"
    return None
