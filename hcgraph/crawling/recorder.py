"""What happened to each crawled URL: the frontier's record and the live progress counters.

The :class:`Recorder` is the one place that marks a URL failed, skipped, duplicate or done,
queues a stored story's related links one hop deeper (or records why not), and keeps the
:class:`CrawlProgress` counters in step with those marks, so a count can never disagree with
the frontier it summarises.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..pipeline import Document, Outcome
from ..urls import Scope, canonicalize, json_url, resolve
from .discovery import DEFAULT_STORY_PATTERN, FOLLOW_KINDS, lastmod_utc, story_page
from .frontier import Frontier, Row

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
        follow: what a stored story's links lead to (see :data:`.discovery.FOLLOW_KINDS`).
        pattern: which links of an index page or sitemap are story pages.
    """

    def __init__(
        self,
        frontier: Frontier,
        scope: Scope,
        json_suffix: str,
        progress: CrawlProgress,
        *,
        follow: tuple[str, ...] = ("related",),
        pattern: re.Pattern[str] | None = None,
    ) -> None:
        self.frontier = frontier
        self.scope = scope
        self.json_suffix = json_suffix
        self.progress = progress
        self.follow = frozenset(follow) & set(FOLLOW_KINDS)
        self.pattern = pattern or re.compile(DEFAULT_STORY_PATTERN)
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

    def variant(self, url: str, claim: str) -> None:
        """``url`` served the story whose own page is ``claim``, a variant of ``url`` (see
        :func:`~hcgraph.crawling.identity_check.variant_of`): a duplicate, and the story is
        fetched at its own URL (same depth, same way found)."""
        row = self.frontier.row(url)
        self.frontier.mark_duplicate(url, claim, f"same story as {claim} (a variant of its URL)")
        own = json_url(claim, self.json_suffix)
        if own != url and self.scope.why_not(own) is None:
            depth = row.depth if row else 0
            self.frontier.add(own, depth, url, via=row.via if row else None)

    def as_index(self, row: Row, page: str, reason: str) -> None:
        """A seed page with no story JSON (``row``, its JSON URL) is read as an index page."""
        self.frontier.mark_read(row.url, [[page, "seed", "index"]], reason)
        self.frontier.add(page, row.depth, row.url, via="seed", role="index")

    def index_read(self, row: Row, links: list[tuple[str, str | None]], sitemaps: bool) -> int:
        """Queue what an index page (``row``) lists; return how many story pages it lists.

        ``links`` are ``(url, lastmod)``. On a sitemap index (``sitemaps``) every in-scope
        link is a sitemap; elsewhere only the in-scope links that look like story pages are
        kept, as story JSON URLs. Either way at the page's own depth: the stories an index
        page lists are as far from the seeds as the page. Other links are ignored.
        """
        via = "sitemap" if row.role in ("sitemap", "robots") else (row.via or "seed")
        children: dict[str, list[str]] = {}  # url → [url, via, role], in order, once each
        for link, lastmod in links:
            found = self._sitemap(link) if sitemaps else self._story(link, via)
            if found is None or found[0] in children:
                continue
            children[found[0]] = found
            when = None if sitemaps else lastmod_utc(lastmod)
            self.frontier.add(found[0], row.depth, row.url, via=found[1], role=found[2],
                              lastmod=when)  # fmt: skip
        self.frontier.mark_read(row.url, list(children.values()))
        return sum(1 for c in children.values() if c[2] == "story")

    def _sitemap(self, link: str) -> list[str] | None:
        """A sitemap a sitemap index lists, if in scope: ``[url, via, role]``."""
        try:
            target = canonicalize(link)
        except ValueError:
            return None
        return [target, "sitemap", "sitemap"] if self.scope.why_not(target) is None else None

    def _story(self, link: str, via: str) -> list[str] | None:
        """The story JSON URL of an in-scope link shaped like a story page."""
        page = story_page(link, self.pattern, self.json_suffix)
        if page is None or self.scope.why_not(page) is not None:
            return None
        return [json_url(page, self.json_suffix), via, "story"]

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

    def _children(self, outcome: Outcome, depth: int) -> Iterable[str | list[str]]:
        """Queue the in-scope links ``--follow`` asks for one hop deeper (related stories,
        the edition and newsroom pages); record the rest as skipped."""
        base = outcome.story_url or outcome.key or ""
        links = [("related", link) for link in outcome.related] if "related" in self.follow else []
        links += [(kind, link) for kind, link in outcome.index_links if kind in self.follow]
        for kind, link in links:
            target = resolve(link, base)
            why = self.scope.why_not(target)
            if why is not None:  # canonical where possible: one entry per resource
                with contextlib.suppress(ValueError):
                    target = canonicalize(target)
                self.frontier.add_final(target, depth + 1, "skipped", outcome.key, why)
                continue
            if kind == "related":
                child = json_url(target, self.json_suffix)
                self.frontier.add(child, depth + 1, outcome.key, via=kind)
                yield child
            else:
                page = canonicalize(target)
                self.frontier.add(page, depth + 1, outcome.key, via=kind, role="index")
                yield [page, kind, "index"]


def _host_or_none(url: str) -> str | None:
    try:
        return canonicalize(url).split("/")[2]
    except (ValueError, IndexError):
        return None
