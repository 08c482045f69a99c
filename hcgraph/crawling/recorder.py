"""What happened to each crawled URL: the frontier's record and the live progress counters.

The :class:`Recorder` is the one place that marks a URL's state, queues a stored story's
links, keeps what conditional requests send and keeps :class:`CrawlProgress` in step.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from ..pipeline import Document, Outcome
from ..urls import Scope, canonicalize, json_url, page_url
from .discovery import lastmod_utc, story_page
from .frontier import Frontier, Row, Validators

if TYPE_CHECKING:
    from ..archive import Archive
    from .fetch import FetchResult

__all__ = ["CrawlProgress", "Recorder", "is_gone"]

_JSONISH = ("application/json", "text/json", "text/plain", "application/octet-stream")
_GONE = (404, 410)  # a stored story's URL answering these (twice in a row) is withdrawn


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
    """Records fetch and processing outcomes in ``frontier`` and ``progress``; ``archive``
    holds the bodies a 304 confirms, ``scope`` grows with a local seed's site, ``follow`` and
    ``pattern`` are the crawl's options."""

    def __init__(
        self,
        frontier: Frontier,
        archive: Archive,
        scope: Scope,
        json_suffix: str,
        progress: CrawlProgress,
        *,
        follow: tuple[str, ...],
        pattern: re.Pattern[str],
    ) -> None:
        self.frontier = frontier
        self.archive = archive
        self.scope = scope
        self.json_suffix = json_suffix
        self.progress = progress
        self.follow = frozenset(follow)
        self.pattern = pattern
        self.not_modified: set[str] = set()  # answered 304: stored "not-modified", not "unchanged"
        self.gone: dict[str, int] = {}  # answered 404/410 (confirmed): URL → status
        self.gone_before = frontier.gone_urls()  # the last fetch answered 404/410 (any run)

    # --- fetching ---------------------------------------------------------------------------
    def fetched(self) -> None:
        """One response (or final error) came back."""
        self.progress.fetched += 1

    def failed(
        self, url: str, *, status: int | None, kind: str, reason: str, json_path: str | None = None
    ) -> None:
        """``url`` cannot give a story."""
        self.frontier.mark_failed(url, status=status, kind=kind, reason=reason, json_path=json_path)
        self.progress.failed += 1

    def robots_allow(self, url: str, verdict: tuple[str, str] | None) -> bool:
        """True if robots.txt's ``verdict`` (:meth:`.Robots.why_not`) lets ``url`` be fetched;
        else it is recorded skipped or failed."""
        if verdict is None:
            return True
        state, reason = verdict
        if state == "failed":
            self.failed(url, status=None, kind="robots", reason=reason)
        else:
            self.frontier.mark(url, "skipped", reason=reason)
        return False

    def fetch_failed(self, row: Row | None, result: FetchResult, not_modified: bool) -> bool:
        """True (and recorded) if the response cannot be a story; a seed page whose JSON is
        not there is read as an index page instead."""
        failure = _failure(result, not_modified)
        if failure is None:
            return False
        kind, reason = failure
        if row is not None and row.role == "page" and _no_story_here(result, kind):
            with self.frontier.batch():
                page = page_url(row.url, self.json_suffix)
                self.frontier.mark_read(row.url, [[page, "seed", "index"]], reason)
                self.frontier.add(page, row.depth, row.url, via="seed", role="index")
            return True
        self.failed(result.url, status=result.status, kind=kind, reason=reason)
        return True

    def variant(self, url: str, claim: str) -> None:
        """``url`` served the story whose own page is ``claim``, a variant of ``url``: a
        duplicate, and the story is fetched at its own URL (same depth, same way found)."""
        row = self.frontier.row(url)
        self.frontier.mark(
            url, "duplicate", story=claim, reason=f"same story as {claim} (a variant of its URL)"
        )
        own = json_url(claim, self.json_suffix)
        if own != url and self.scope.why_not(own) is None:
            self.frontier.add(own, row.depth if row else 0, url, via=row.via if row else None)

    def story_fetched(self, url: str, result: FetchResult, sha: str, not_modified: bool) -> None:
        """A story body is archived: record it fetched, with its validators (one commit)."""
        when = result.fetched_at.isoformat()
        with self.frontier.batch():
            if result.status == 200:
                etag, modified = result.headers.get("etag"), result.headers.get("last-modified")
                self.frontier.set_validators(url, Validators(etag, modified, sha, when))
            elif not_modified:
                self.frontier.confirmed(url, when)
            self.frontier.mark_fetched(url, sha, result.final_url, when, result.status)
        if not_modified:
            self.not_modified.add(url)

    # --- conditional requests -----------------------------------------------------------------
    def conditional(self, v: Validators | None) -> tuple[dict[str, str], bytes | None]:
        """Headers making a re-fetch conditional, and the intact archived body a 304 confirms."""
        if v is None or not v.sha256 or not (v.etag or v.last_modified):
            return {}, None
        old = self.archive.intact_body(v.sha256)
        if old is None:  # lost or damaged: a 304 would leave nothing, so ask unconditionally
            return {}, None
        asked = {"If-None-Match": v.etag, "If-Modified-Since": v.last_modified}
        return {name: value for name, value in asked.items() if value}, old

    def listed_unchanged(self, row: Row, v: Validators | None) -> Document | None:
        """The archived body (recorded fetched, not requested) of a story a sitemap lists as
        unchanged since it was last fetched whole; None when unknown or not intact."""
        if v is None or not v.sha256 or not v.fetched_at:
            return None
        if not _no_later(row.lastmod, v.fetched_at):
            return None
        body = self.archive.intact_body(v.sha256)
        if body is None:
            return None
        self.frontier.mark_fetched(row.url, v.sha256, row.url, v.fetched_at, None)
        self.not_modified.add(row.url)
        return Document(body, row.url, dt.datetime.fromisoformat(v.fetched_at), row.url)

    # --- withdrawals --------------------------------------------------------------------------
    def set_gone(self, url: str, gone: bool) -> None:
        """Remember whether ``url``'s last fetch answered 404/410 (written only on a change)."""
        if gone != (url in self.gone_before):
            self.frontier.set_gone(url, gone)
            (self.gone_before.add if gone else self.gone_before.discard)(url)

    def withdrawn(self, url: str, result: FetchResult) -> Document:
        """A URL a story came from answered 404/410 twice in a row: recorded gone; the
        withdrawal for the pipeline to record."""
        assert result.status is not None
        with self.frontier.batch():
            self.set_gone(url, True)
            self.frontier.mark(url, "gone", status=result.status)
        self.gone[url] = result.status
        return Document(b"", result.final_url or url, result.fetched_at, url, withdrawn=True)

    # --- index pages --------------------------------------------------------------------------
    def index_read(self, row: Row, links: list[tuple[str, str | None]], sitemaps: bool) -> None:
        """Queue the in-scope ``(url, lastmod)`` links an index page lists, at its depth: as
        sitemaps (a sitemap index) or as story JSON URLs."""
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

    # --- processing -------------------------------------------------------------------------
    def poisoned(self, item: Document, exc: Exception) -> None:
        """Processing this body raised on its own: it fails alone, not the crawl."""
        text = " ".join(str(exc).split())[:300] or type(exc).__name__
        self.failed(item.key or "", status=None, kind="process-error", reason=text)

    def outcome(self, outcome: Outcome) -> bool:
        """Record one processed body; True when it was stored as a story."""
        url = outcome.key
        assert url is not None
        if outcome.withdrawal:
            self._withdrawal(url, outcome)
            return False
        if outcome.reason is not None:
            kind = "not-a-story" if outcome.not_a_story else "invalid-story"
            self.failed(
                url, status=None, kind=kind, reason=outcome.reason, json_path=outcome.json_path
            )
            return False
        assert outcome.story_url is not None
        if outcome.duplicate_of is not None:
            reason = f"same story as {outcome.duplicate_of}"
            self.frontier.mark(url, "duplicate", story=outcome.story_url, reason=reason)
            return False
        self._stored(url, outcome.story_url, outcome)
        return True

    def _withdrawal(self, url: str, outcome: Outcome) -> None:
        row = self.frontier.row(url)
        status = self.gone.pop(url, None) or (row.status if row else None)
        if outcome.status == "withdrawn" and outcome.story_url is not None:
            self.frontier.mark(url, "withdrawn", story=outcome.story_url, status=status)
        else:  # no story stored from it (any more): an HTTP failure, as ever
            self.failed(url, status=status, kind="http", reason=f"HTTP {status}")

    def _stored(self, url: str, story: str, outcome: Outcome) -> None:
        """Mark ``url`` done with its story and queue the story's links one hop deeper."""
        frontier = self.frontier
        depth = frontier.depth_of(url) or 0
        if depth == 0 and url.startswith("file:"):  # a local seed: its site is in scope
            self._add_host(story)
        related = list(self._children(outcome, depth))
        put = outcome.status or "unchanged"
        if put == "unchanged" and url in self.not_modified:
            put = "not-modified"
        frontier.mark_done(url, story, put, related)
        frontier.claim(story, url, outcome.story_id)
        self.progress.stored += 1
        with contextlib.suppress(ValueError):  # a story URL that has no JSON URL: no alias
            own = json_url(story, self.json_suffix)
            if own != url:
                frontier.add_final(own, depth, "alias", url, f"same story as {url}")

    def _add_host(self, story: str) -> None:
        try:
            host = canonicalize(story).split("/")[2]
        except (ValueError, IndexError):
            return
        if host and host not in self.scope.hosts:
            self.scope = self.scope.with_host(host)
            self.frontier.set_setting("hosts", json.dumps(sorted(self.scope.hosts)))

    def _children(self, outcome: Outcome, depth: int) -> Iterable[str | list[str]]:
        """Queue the in-scope links ``--follow`` asks for one hop deeper (related stories,
        the edition and newsroom pages); record the rest as skipped."""
        base = outcome.story_url or outcome.key or ""
        links = [("related", link) for link in outcome.related] if "related" in self.follow else []
        links += [(kind, link) for kind, link in outcome.index_links if kind in self.follow]
        for kind, link in links:
            target = urljoin(base, link.strip())
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


def is_gone(result: FetchResult) -> bool:
    """The server answered that the URL is gone: 404 or 410, not a failed fetch."""
    return result.error is None and result.status in _GONE


def _no_later(lastmod: str | None, fetched_at: str) -> bool:
    """True when a sitemap's ``lastmod`` (UTC ISO) is no later than ``fetched_at``."""
    if not lastmod:
        return False
    try:
        listed, fetched = dt.datetime.fromisoformat(lastmod), dt.datetime.fromisoformat(fetched_at)
    except ValueError:
        return False
    return listed.tzinfo is not None and fetched.tzinfo is not None and listed <= fetched


def _no_story_here(result: FetchResult, kind: str) -> bool:
    """The JSON URL of a seed page answered as if there is no story there: 404/410, or an
    HTML page (a site that answers every path with one)."""
    if result.status in _GONE:
        return True
    return kind == "content-type" and _media_type(result) in ("text/html", "application/xhtml+xml")


def _failure(result: FetchResult, not_modified: bool) -> tuple[str, str] | None:
    """``(kind, reason)`` if the response cannot be a story, else None."""
    if result.error is not None:
        return result.kind, result.error
    if not_modified:
        return None
    if result.status != 200:
        return "http", f"HTTP {result.status}"
    ctype = _media_type(result)
    if ctype and not (ctype.endswith("+json") or ctype in _JSONISH):
        return "content-type", f"not JSON: Content-Type {ctype}"
    if result.body is None:
        return "http", "empty response"
    return None


def _media_type(result: FetchResult) -> str:
    return result.headers.get("content-type", "").split(";")[0].strip().lower()
