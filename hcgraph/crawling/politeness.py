"""Politeness: how many requests run at once, per host, and how often a host is hit.

A request takes a *slot* for its host: a per-host semaphore, then a wait until the host's
next allowed start (``1 / rate`` after the previous one, never before a ``Retry-After`` or
robots ``Crawl-delay``). The global limit is the number of workers (``--concurrency``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

__all__ = ["Politeness"]


@dataclass
class _Host:
    sem: asyncio.Semaphore
    interval: float
    next_start: float = 0.0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class Politeness:
    """Per-host concurrency and rate limits, and host-wide back-off.

    Args:
        per_host: requests in flight to one host at once.
        rate: request starts per second per host; ``None`` or ``0`` = unlimited.
    """

    def __init__(self, per_host: int = 8, rate: float | None = None) -> None:
        self.per_host = max(1, per_host)
        self.interval = 1.0 / rate if rate else 0.0
        self._hosts: dict[str, _Host] = {}

    def _host(self, host: str) -> _Host:
        state = self._hosts.get(host)
        if state is None:
            state = self._hosts[host] = _Host(asyncio.Semaphore(self.per_host), self.interval)
        return state

    def set_min_interval(self, host: str, seconds: float) -> None:
        """Never start requests to ``host`` closer than ``seconds`` apart (robots Crawl-delay)."""
        state = self._host(host)
        state.interval = max(state.interval, seconds)

    def defer(self, host: str, seconds: float) -> None:
        """No new request to ``host`` for ``seconds`` (a ``Retry-After`` applies to the host)."""
        state = self._host(host)
        state.next_start = max(state.next_start, time.monotonic() + max(0.0, seconds))

    @asynccontextmanager
    async def slot(self, host: str) -> AsyncIterator[None]:
        """Hold one request slot for ``host``: waits for the per-host limit and rate."""
        state = self._host(host)
        async with state.sem:
            async with state.lock:  # starts are serialised so the interval holds exactly
                # Re-check after each sleep: a Retry-After may have pushed the start back.
                while (delay := state.next_start - time.monotonic()) > 0:
                    await asyncio.sleep(delay)
                state.next_start = max(state.next_start, time.monotonic()) + state.interval
            yield
