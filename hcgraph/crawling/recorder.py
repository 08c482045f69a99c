"""What happened to each crawled URL: the frontier's record and the live progress counters.

The :class:`Recorder` is the one place that marks a URL failed, skipped, duplicate or done,
queues a stored story's related links one hop deeper (or records why not), and keeps the
:class:`CrawlProgress` counters in step with those marks, so a count can never disagree with
the frontier it summarises.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..pipeline import Document, Outcome
from ..urls import Scope, canonicalize, json_url, resolve
from .frontier import Frontier

__all__ = ["CrawlProgress", "Recorder"]


@dataclass
class CrawlProgress:
    """Live counters for a progress display."""

    fetched: int = 0
    stored: int = 0
    failed: int = 0
    queued: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def rate(self) -> float:
        """Stories stored per second so far."""
        elapsed = time.monotonic() - self.started
        return self.stored / elapsed if elapsed > 0 else 0.0


class Recorder:
    """Records fetch and processing outcomes in the frontier and the progress counters.

    Args:
        frontier: the crawl's persistent state.
        scope: which hosts are followed; a local seed's story adds its own host.
        json_suffix: page URL + this = the story's JSON URL.
        progress: the counters shown while crawling.
    """

    def __init__(
        self, frontier: Frontier, scope: Scope, json_suffix: str, progress: CrawlProgress
    ) -> None:
        self.frontier = frontier
        self.scope = scope
        self.json_suffix = json_suffix
        self.progress = progress
        self.not_modified: set[str] = set()  # answered 304: stored "not-modified", not "unchanged"
        self.gone: dict[str, int] = {}  # answered 404/410 (confirmed): URL → status

    # --- fetching ---------------------------------------------------------------------------
    def fetched(self) -> None:
        """One response (or final error) came back."""
        self.progress.fetched += 1

    def failed(
        self, url: str, *, status: int | None, kind: str, reason: str, json_path: str | None = None
    ) -> None:
        """``url`` cannot give a story (robots, HTTP, content type, identity, parsing...)."""
        self.frontier.mark_failed(url, status=status, kind=kind, reason=reason, json_path=json_path)
        self.progress.failed += 1

    def skipped(self, url: str, reason: str) -> None:
        """``url`` is deliberately not fetched (robots.txt asks so)."""
        self.frontier.mark_skipped(url, reason)

    def poisoned(self, item: Document, exc: Exception) -> None:
        """Processing this body raised on its own: it fails alone, not the crawl."""
        text = " ".join(str(exc).split())[:300] or type(exc).__name__
        self.failed(item.key or "", status=None, kind="process-error", reason=text)

    # --- processing -------------------------------------------------------------------------
    def outcome(self, outcome: Outcome) -> bool:
        """Record one processed body; True when it was stored as a story."""
        url = outcome.key
        assert url is not None
        frontier = self.frontier
        if outcome.withdrawal:
            status = self.gone.pop(url, None) or self.frontier.status_of(url)
            if outcome.status == "withdrawn" and outcome.story_url is not None:
                frontier.mark_withdrawn(url, outcome.story_url, status)
            else:  # no story stored from it (any more): an HTTP failure, as ever
                self.failed(url, status=status, kind="http", reason=f"HTTP {status}")
            return False
        if outcome.reason is not None:
            kind = "not-a-story" if outcome.not_a_story else "invalid-story"
            self.failed(
                url, status=None, kind=kind, reason=outcome.reason, json_path=outcome.json_path
            )
            return False
        assert outcome.story_url is not None
        if outcome.duplicate_of is not None:
            frontier.mark_duplicate(url, outcome.story_url, f"same story as {outcome.duplicate_of}")
            return False
        depth = frontier.depth_of(url) or 0
        if depth == 0 and url.startswith("file:"):  # a local seed: its site is in scope
            host = _host_or_none(outcome.story_url)
            if host and host not in self.scope.hosts:
                self.scope = self.scope.with_host(host)
                frontier.set_setting("hosts", json.dumps(sorted(self.scope.hosts)))
        related = list(self._children(outcome, depth))
        put = outcome.status or "unchanged"
        if put == "unchanged" and url in self.not_modified:
            put = "not-modified"
        frontier.mark_done(url, outcome.story_url, put, related)
        frontier.claim(outcome.story_url, url, outcome.story_id)
        self.progress.stored += 1
        try:
            own = json_url(outcome.story_url, self.json_suffix)
        except ValueError:
            own = None
        if own and own != url:
            frontier.add_final(own, depth, "alias", url, f"same story as {url}")
        return True

    def _children(self, outcome: Outcome, depth: int) -> Iterable[str]:
        """Queue the in-scope related links one hop deeper; record the rest as skipped."""
        base = outcome.story_url or outcome.key or ""
        for link in outcome.related:
            target = resolve(link, base)
            why = self.scope.why_not(target)
            if why is not None:  # canonical where possible: one entry per resource
                with contextlib.suppress(ValueError):
                    target = canonicalize(target)
                self.frontier.add_final(target, depth + 1, "skipped", outcome.key, why)
                continue
            child = json_url(target, self.json_suffix)
            self.frontier.add(child, depth + 1, outcome.key)
            yield child


def _host_or_none(url: str) -> str | None:
    try:
        return canonicalize(url).split("/")[2]
    except (ValueError, IndexError):
        return None
