"""Which URL a crawl worker fetches next, and when the crawl is over.

Leases (shallowest first, never one URL to two workers), the in-flight and processing
counts, the story cap and idleness decide together, so they change in one place.
"""

from __future__ import annotations

import asyncio

from .frontier import Frontier

__all__ = ["Scheduler"]

_LEASE_AHEAD = 64  # queued URLs read from the frontier at a time


class Scheduler:
    """Leases URLs queued in ``frontier``: none once ``stored`` (with what a resumed crawl
    stored before) + in flight + processing reaches ``max_stories`` (None: no cap)."""

    def __init__(self, frontier: Frontier, *, max_stories: int | None, stored: int) -> None:
        self.frontier = frontier
        self.max_stories = max_stories
        self.stored = stored
        self.in_flight = 0
        self.processing = 0
        self.stopped = False
        self._leased: set[str] = set()
        self._buffer: list[tuple[str, int]] = []
        self._cond = asyncio.Condition()

    def cap_reached(self) -> bool:
        """True when what is stored, in flight and being processed reaches ``max_stories``."""
        cap = self.max_stories
        return cap is not None and self.stored + self.in_flight + self.processing >= cap

    def idle(self) -> bool:
        """Nothing in flight and nothing being processed (so nothing new can be queued)."""
        return self.in_flight == 0 and self.processing == 0

    def may_fetch(self) -> bool:
        """True while a fetch is in flight, or a queued URL can still be leased (bodies may
        arrive before processing records anything)."""
        if self.in_flight:
            return True
        if self.stopped or self.cap_reached():
            return False
        return bool(self._buffer) or bool(self.frontier.queued(1, self._leased))

    async def lease(self) -> tuple[str, int] | None:
        """The next ``(url, depth)`` to fetch, waiting while others may still queue some;
        None when the crawl is stopped or over (the worker then ends)."""
        async with self._cond:
            while True:
                if self.stopped:
                    return None
                if not self.cap_reached():
                    if not self._buffer:
                        self._buffer = self.frontier.queued(_LEASE_AHEAD, self._leased)[::-1]
                    if self._buffer:
                        url, depth = self._buffer.pop()
                        if url in self._leased:
                            continue
                        self._leased.add(url)
                        self.in_flight += 1
                        return url, depth
                if self.idle():
                    self._cond.notify_all()
                    return None
                await self._cond.wait()

    def release(self, url: str) -> None:
        """The fetch of a leased URL is over (whatever its outcome)."""
        self._leased.discard(url)
        self.in_flight -= 1

    def handed_over(self) -> None:
        """A fetched body waits for processing (counted before a hand-over that may block:
        the crawl is never idle in between)."""
        self.processing += 1

    def processed(self, count: int, stored: int = 0) -> None:
        """``count`` bodies left processing, ``stored`` of them as stories."""
        self.processing -= count
        self.stored += stored

    def stop(self) -> None:
        """No new leases; waiting workers end at the next :meth:`wake`."""
        self.stopped = True

    async def wake(self) -> None:
        """Let waiting workers look again (a count changed, or the crawl stopped)."""
        async with self._cond:
            self._cond.notify_all()
