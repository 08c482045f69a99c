"""One retry policy for every HTTP client hcgraph runs: crawler, manifest fetcher, pusher.

Exponential back-off with jitter, capped; a server's ``Retry-After`` (seconds or an HTTP
date) is honoured when longer, up to a limit past which the caller gives up. Local rather
than ``tenacity``: the callers pick the delay from the response, per host.

>>> policy = Backoff(base=1.0, cap=8.0)
>>> [policy.delay(n, jitter=1.0) for n in (1, 2, 3, 4, 5)]
[1.0, 2.0, 4.0, 8.0, 8.0]
"""

from __future__ import annotations

import datetime as dt
import email.utils
import random
from dataclasses import dataclass

__all__ = ["Backoff", "retry_after_seconds", "retryable"]


def retryable(status: int | None) -> bool:
    """An HTTP status worth another attempt: 408, 429 or 5xx."""
    return status in (408, 429) or 500 <= (status or 0) <= 599


def retry_after_seconds(value: str | None, now: dt.datetime | None = None) -> float | None:
    """Seconds to wait for a ``Retry-After`` value (delta-seconds or HTTP date), or None."""
    if not value:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():  # not "²": isdigit() is true, float() refuses it
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):  # a year past C long: unreadable
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - (now or dt.datetime.now(dt.UTC))).total_seconds())


@dataclass(frozen=True)
class Backoff:
    """When to try again: ``base`` seconds, doubling with each failed attempt up to ``cap``;
    a ``Retry-After`` longer than ``max_retry_after`` means give up."""

    base: float = 0.5
    cap: float = 30.0
    max_retry_after: float = 300.0

    def delay(
        self, failed: int, rng: random.Random | None = None, jitter: float | None = None
    ) -> float:
        """The back-off before attempt ``failed + 1`` (``failed`` ≥ 1), jittered into
        [50%, 100%] of the exponential value so clients do not retry in lock-step."""
        value = min(self.cap, self.base * 2.0 ** (failed - 1))
        if jitter is None:
            jitter = 0.5 + (rng or random).random() / 2
        return value * jitter

    def wait(
        self, failed: int, retry_after: str | None, rng: random.Random | None = None
    ) -> float | None:
        """The delay before the next attempt: the back-off, or the server's ``Retry-After``
        when longer; None when the server asks for more than ``max_retry_after``."""
        asked = retry_after_seconds(retry_after)
        if asked is not None and asked > self.max_retry_after:
            return None
        return max(self.delay(failed, rng), asked or 0.0)
