"""What a crawl starts from: its options and its seeds.

Seeds are URLs (stories, pages, sitemaps, robots.txt) or local story files, which are read
into the archive as if they were fetched.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from .._io import NotRegular, read_regular
from .._version import __version__
from ..archive import Archive, FetchRecord
from ..errors import CrawlError
from ..ingest import discover, shown_path
from ..urls import DEFAULT_JSON_SUFFIX, canonicalize, json_url
from .discovery import DEFAULT_STORY_PATTERN, seed_role
from .fetch import FetchPolicy
from .frontier import Frontier

__all__ = ["CrawlOptions", "Seeds", "read_local", "user_agent"]


def user_agent(contact: str | None = None) -> str:
    """The User-Agent: hcgraph, its version, and how to reach whoever runs the crawl."""
    extra = f"; +{contact}" if contact else ""
    return f"hcgraph/{__version__} (provenance graph crawler{extra})"


@dataclass(frozen=True)
class CrawlOptions:
    """Everything that shapes a crawl. Defaults are those of ``hcgraph crawl``.

    Attributes:
        depth: follow related links up to this many hops from a seed (seed = 0).
        max_stories: stop after this many stories are stored (None: no cap).
        concurrency: requests in flight overall.
        per_host: requests in flight to one host (default: ``concurrency``).
        rate: request starts per second per host (None: unlimited).
        allow_hosts: hosts in scope besides the seeds' hosts.
        mirrors: ``ORIGIN=MIRROR`` rewrites (fetch from MIRROR, keep ORIGIN's IRIs).
        ignore_robots: do not read robots.txt (for one's own mirror).
        json_suffix: page URL + this = the story's JSON URL.
        contact: an e-mail or URL added to the User-Agent.
        conditional: send If-None-Match / If-Modified-Since from earlier crawls.
        policy: timeouts, retries, back-off, body cap, redirects.
        report: where to write the JSON report (default ``STORE/crawl-report.json``).
        follow: what a stored story's links lead to (``related``, ``edition``, ``newsroom``,
            ``sitemap``); a seed index page or sitemap is read as one whatever this says.
        story_pattern: a regular expression on a page URL's path: links that are stories.
        store_worker: where the pipeline runs: ``process`` (:mod:`~hcgraph.crawling.worker`)
            or ``thread`` (always, for a crawl handed an open :class:`~hcgraph.store.Store`).
    """

    depth: int = 2
    max_stories: int | None = None
    concurrency: int = 8
    per_host: int | None = None
    rate: float | None = None
    allow_hosts: tuple[str, ...] = ()
    mirrors: tuple[str, ...] = ()
    ignore_robots: bool = False
    json_suffix: str = DEFAULT_JSON_SUFFIX
    contact: str | None = None
    conditional: bool = True
    policy: FetchPolicy = field(default_factory=FetchPolicy)
    report: Path | None = None
    follow: tuple[str, ...] = ("related",)
    story_pattern: str = DEFAULT_STORY_PATTERN
    store_worker: Literal["process", "thread"] = "process"

    def fingerprint(self, seeds: Sequence[str]) -> str:
        """What identifies "the same crawl" for resume: seeds and what decides the result
        (not politeness, mirrors or timeouts: they change how, not what)."""
        key = {
            "seeds": sorted(seeds),
            "depth": self.depth,
            "max_stories": self.max_stories,
            "allow_hosts": sorted(self.allow_hosts),
            "json_suffix": self.json_suffix,
            "ignore_robots": self.ignore_robots,
        }
        # Only when not the default: a crawl left unfinished by an earlier version resumes.
        if self.follow != ("related",):
            key["follow"] = list(self.follow)
        if self.story_pattern != DEFAULT_STORY_PATTERN:
            key["story_pattern"] = self.story_pattern
        return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()

    def describe(self) -> dict[str, Any]:
        """The options as plain JSON data (for the report)."""
        return {**asdict(self), "report": str(self.report) if self.report else None}


@dataclass
class Seeds:
    """A crawl's seeds: URL seeds as frontier keys (in order) with each key's role (see
    :mod:`.frontier`), and the local story files."""

    urls: list[str] = field(default_factory=list)
    roles: dict[str, str] = field(default_factory=dict)
    paths: list[Path] = field(default_factory=list)

    @classmethod
    def parse(cls, seeds: Sequence[str], suffix: str, pattern: re.Pattern[str]) -> Seeds:
        """Read the seeds given to a crawl.

        Raises:
            CrawlError: a seed that is empty, neither a URL nor a file, or not a valid URL.
        """
        out = cls()
        for seed in seeds:
            if not seed.strip():  # Path("") is the current directory: it would be crawled
                raise CrawlError(
                    f"seed {seed!r} is empty: give a story URL or a local story file "
                    "(an unset shell variable?)"
                )
            if Path(seed).exists():
                out.paths.extend(discover([seed]))
                continue
            if "://" not in seed:
                raise CrawlError(f"seed {seed!r}: not an http(s) URL and no such file or directory")
            try:  # a story's JSON URL (role story, or page: an index page if it has no JSON),
                role = seed_role(seed, pattern, suffix)  # else a sitemap's or robots.txt's URL
                key = json_url(seed, suffix) if role in ("story", "page") else canonicalize(seed)
            except ValueError as exc:
                raise CrawlError(f"seed {seed!r}: {exc}") from None
            out.urls.append(key)
            out.roles.setdefault(key, role)
        return out

    def shown(self) -> list[str]:
        """The seeds as the report shows them (and the fingerprint reads them)."""
        return [*self.urls, *(shown_path(p) for p in self.paths)]


def read_local(path: Path, archive: Archive, frontier: Frontier, cap: int) -> None:
    """A local seed file goes into the archive and the frontier as if it was fetched."""
    uri = path.resolve().as_uri()
    frontier.add(uri, 0)
    now = dt.datetime.now(dt.UTC).isoformat()
    try:
        body = read_regular(path, cap + 1)
    except NotRegular as exc:
        frontier.mark_failed(uri, status=None, kind="file", reason=str(exc))
        return
    except OSError as exc:
        frontier.mark_failed(uri, status=None, kind="file", reason=f"cannot read: {exc.strerror}")
        return
    if len(body) > cap:
        reason = f"file too large: more than the {cap}-byte cap"
        frontier.mark_failed(uri, status=None, kind="too-large", reason=reason)
        return
    sha = archive.put_body(body)
    shown = shown_path(path)  # the file's name even when its bytes are not UTF-8
    archive.add_record(
        FetchRecord(url=uri, final_url=uri, fetch_url=shown, status=None, fetched_at=now,
                    sha256=sha, size=len(body))
    )  # fmt: skip
    frontier.mark_fetched(uri, sha, shown, now, None)
