"""Discovery: the story links of index pages (HTML), sitemaps and robots.txt.

The parsers turn a body into the links it names: HTML through the standard library's
tokenizer (only ``<a href>`` and ``<base href>``), sitemaps through expat with any
``<!DOCTYPE>`` refused (no entity is ever expanded), gzip inflated in bounded pieces up to
the body cap. :class:`IndexReader` fetches those pages and has the recorder queue the story
pages they list (``--story-pattern``). What is read, and how: "Discovery" in docs/crawling.md.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit
from xml.parsers import expat

from ..errors import CrawlError
from ..urls import DEFAULT_JSON_SUFFIX, canonicalize, page_url

if TYPE_CHECKING:
    from .fetch import FetchResult
    from .frontier import Row
    from .recorder import Recorder
    from .robots import Robots

__all__ = [
    "DEFAULT_STORY_PATTERN",
    "FOLLOW_KINDS",
    "MAX_ENTRIES",
    "IndexReader",
    "Sitemap",
    "html_links",
    "lastmod_utc",
    "parse_follow",
    "parse_sitemap",
    "seed_role",
    "seed_sitemaps",
    "story_page",
    "story_pattern",
]

#: What ``--follow`` may name: a story's related links, its edition and newsroom pages, and
#: the sitemaps of the seeds' hosts (robots.txt ``Sitemap:`` lines, else ``/sitemap.xml``).
FOLLOW_KINDS = ("related", "edition", "newsroom", "sitemap")
#: A story page's path on the site (``/stories/2026-10-20/agentic-rl-production/``).
DEFAULT_STORY_PATTERN = r"^/stories/\d{4}-\d{2}-\d{2}/[^/]+/$"
#: Entries read from one sitemap (the sitemaps protocol's own limit).
MAX_ENTRIES = 50_000
_SITEMAP_SUFFIXES = (".xml", ".xml.gz")


def parse_follow(text: str | tuple[str, ...]) -> tuple[str, ...]:
    """``related,edition`` → ``("related", "edition")`` (in :data:`FOLLOW_KINDS` order).

    Raises:
        CrawlError: an unknown kind, or none.
    """
    items = text.split(",") if isinstance(text, str) else list(text)
    kinds = {k.strip().lower() for k in items if k.strip()}
    unknown = sorted(kinds - set(FOLLOW_KINDS))
    if unknown or not kinds:
        raise CrawlError(
            f"--follow {','.join(unknown) or '(nothing)'}: choose from {','.join(FOLLOW_KINDS)}"
        )
    return tuple(k for k in FOLLOW_KINDS if k in kinds)


def story_pattern(pattern: str) -> re.Pattern[str]:
    """The compiled ``--story-pattern``.

    Raises:
        CrawlError: not a regular expression.
    """
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise CrawlError(f"--story-pattern {pattern!r}: not a regular expression: {exc}") from None


def story_page(
    link: str, pattern: re.Pattern[str], suffix: str = DEFAULT_JSON_SUFFIX
) -> str | None:
    """The canonical page URL of ``link`` if it looks like a story page, else None."""
    try:
        page = page_url(link, suffix)
    except ValueError:
        return None
    parts = urlsplit(page)
    return page if not parts.query and pattern.search(parts.path) else None


def seed_role(url: str, pattern: re.Pattern[str], suffix: str = DEFAULT_JSON_SUFFIX) -> str:
    """How a seed URL is read (its role: see :mod:`.frontier`): ``sitemap``, ``robots``,
    ``story`` (a JSON URL, or a page URL matching ``pattern``), else ``page``."""
    path = urlsplit(canonicalize(url)).path
    if path.endswith(_SITEMAP_SUFFIXES):
        return "sitemap"
    if path == "/robots.txt":
        return "robots"
    return "story" if path.endswith(".json") or story_page(url, pattern, suffix) else "page"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("a", "base"):
            return
        href = next((v for k, v in attrs if k == "href" and v), None)
        if href is None:
            return
        if tag == "base":
            if self.base is None:
                self.base = href.strip()
        elif len(self.hrefs) < MAX_ENTRIES:
            self.hrefs.append(href.strip())


def html_links(body: bytes, page: str, charset: str | None = None) -> list[str]:
    """The ``<a href>`` targets of an HTML page, resolved against the page URL (or its
    ``<base href>``), in document order; at most :data:`MAX_ENTRIES`."""
    try:
        text = body.decode(charset or "utf-8", "replace")
    except (LookupError, ValueError):  # a charset Python does not know, or idna, punycode…
        text = body.decode("utf-8", "replace")  # (codecs that refuse "replace": UnicodeError)
    parser = _Links()
    parser.feed(text)
    parser.close()
    base = page
    if parser.base:
        with contextlib.suppress(ValueError):  # a malformed <base href>: links resolve as if none
            base = urljoin(page, parser.base)
    out = []
    for href in parser.hrefs:
        with contextlib.suppress(ValueError):  # a malformed URL (a bad IPv6 literal): no link
            out.append(urljoin(base, href))
    return out


@dataclass
class Sitemap:
    """A parsed sitemap or (``index``) sitemap index: ``entries`` are ``(loc, lastmod)``."""

    index: bool = False
    entries: list[tuple[str, str | None]] = field(default_factory=list)


def _inflate(body: bytes, cap: int) -> bytes:
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = bytearray()
    data = body
    while data:
        out += inflater.decompress(data, 64 * 1024)
        if len(out) > cap:
            raise CrawlError(f"gzipped sitemap larger than the {cap}-byte cap once inflated")
        data = inflater.unconsumed_tail
        if inflater.eof:
            break
    return bytes(out)


def parse_sitemap(body: bytes, cap: int) -> Sitemap:
    """Parse a sitemap or sitemap index (gzipped if it starts with the gzip magic).

    Raises:
        CrawlError: not gzip or XML, a ``<!DOCTYPE>`` (entities are never expanded), not a
            sitemap, or more than ``cap`` bytes once inflated.
    """
    if body[:2] == b"\x1f\x8b":
        try:
            body = _inflate(body, cap)
        except zlib.error as exc:
            raise CrawlError(f"not a valid gzip file: {exc}") from None
    result = Sitemap()
    stack: list[str] = []
    current: dict[str, str] = {}
    text: list[str] = []

    def start(name: str, attrs: dict[str, str]) -> None:
        local = name.rsplit(" ", 1)[-1]
        if not stack:
            if local not in ("urlset", "sitemapindex"):
                raise CrawlError(f"not a sitemap: the root element is <{local}>")
            result.index = local == "sitemapindex"
        stack.append(local)
        text.clear()

    def end(name: str) -> None:
        local = stack.pop()
        if len(stack) == 2 and local in ("loc", "lastmod"):
            current[local] = "".join(text).strip()
        elif len(stack) == 1 and local in ("url", "sitemap"):
            if current.get("loc") and len(result.entries) < MAX_ENTRIES:  # the rest: ignored
                result.entries.append((current["loc"], current.get("lastmod") or None))
            current.clear()
        text.clear()

    def refuse_doctype(*_: object) -> None:
        raise CrawlError("a sitemap with a <!DOCTYPE> is refused (no entities are expanded)")

    parser = expat.ParserCreate(namespace_separator=" ")
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text.append
    parser.StartDoctypeDeclHandler = refuse_doctype
    parser.EntityDeclHandler = refuse_doctype
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        parser.Parse(body, True)
    except expat.ExpatError as exc:
        raise CrawlError(f"not well-formed XML: {exc}") from None
    return result


def lastmod_utc(text: str | None) -> str | None:
    """A sitemap ``<lastmod>`` (W3C datetime) as UTC ISO 8601, comparable as text; a date
    alone counts as the end of that day (a story changed that day is never skipped); None
    for anything unreadable."""
    if not text:
        return None
    value = text.strip()
    try:
        if len(value) == 10:  # YYYY-MM-DD
            day = dt.date.fromisoformat(value)
            when = dt.datetime.combine(day, dt.time(23, 59, 59), dt.UTC)
        else:
            when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            if when.tzinfo is None:
                when = when.replace(tzinfo=dt.UTC)
        return when.astimezone(dt.UTC).replace(microsecond=0).isoformat()
    except (ValueError, OverflowError):  # year 1 at +01:00 is before datetime.min in UTC
        return None


def seed_sitemaps(urls: Sequence[str], ignore_robots: bool) -> list[tuple[str, str]]:
    """``--follow sitemap``: ``(url, role)`` for each seed origin's robots.txt (read for its
    ``Sitemap:`` lines), or with ``--ignore-robots`` its ``/sitemap.xml``."""
    origins = dict.fromkeys("{0.scheme}://{0.netloc}".format(urlsplit(url)) for url in urls)
    if ignore_robots:
        return [(origin + "/sitemap.xml", "sitemap") for origin in origins]
    return [(origin + "/robots.txt", "robots") for origin in origins]


class IndexReader:
    """Fetches index pages, sitemaps and robots.txt with ``robots``' fetcher and has
    ``recorder`` queue what they list. Their bodies are not archived: nothing is rebuilt
    from them."""

    def __init__(self, robots: Robots, recorder: Recorder) -> None:
        self.fetcher = robots.fetcher
        self.robots = robots
        self.recorder = recorder

    async def read(self, row: Row) -> None:
        """Read an index page, a sitemap or robots.txt and queue what it lists (in the
        transaction that marks it read: a crash leaves it queued, whole)."""
        found = await self._links(row)
        if found is not None:
            with self.recorder.frontier.batch():
                self.recorder.index_read(row, *found)

    async def _links(self, row: Row) -> tuple[list[tuple[str, str | None]], bool] | None:
        """What ``row`` lists, ``(url, lastmod)``, and whether those are sitemaps; None
        (recorded as failed) if it cannot be read."""
        if row.role == "robots":
            return await self._robots_sitemaps(row.url), True
        result = await self._get(row)
        if result is None or result.body is None:
            return None
        if row.role == "sitemap":
            try:
                sitemap = parse_sitemap(result.body, self.fetcher.policy.max_bytes)
            except CrawlError as exc:
                self.recorder.failed(row.url, status=result.status, kind="sitemap", reason=str(exc))
                return None
            return sitemap.entries, sitemap.index
        charset = _charset(result.headers.get("content-type", ""))
        hrefs = html_links(result.body, result.final_url or row.url, charset)
        return [(href, None) for href in hrefs], False

    async def _robots_sitemaps(self, url: str) -> list[tuple[str, str | None]]:
        """The sitemaps a robots.txt names; the origin's ``/sitemap.xml`` when it names none."""
        found = await self.robots.sitemaps(url)
        if not self.robots.enabled:  # read for its Sitemap lines only: a fetch like any other
            self.recorder.fetched()
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
        return [(s, None) for s in found or [origin + "/sitemap.xml"]]

    async def _get(self, row: Row) -> FetchResult | None:
        """Fetch an index page or sitemap; None (recorded as failed) unless it is a 200."""
        result = await self.fetcher.get(row.url)
        self.recorder.fetched()
        if result.error is None and result.status == 200 and result.body is not None:
            return result
        kind = result.kind if result.error is not None else "http"
        reason = result.error or f"HTTP {result.status}"
        seed = self.recorder.frontier.row(row.parent) if row.via == "seed" and row.parent else None
        if seed is not None and seed.role == "page":  # say why it was read as a page
            reason = f"no story JSON at {seed.url} ({seed.reason}); the page: {reason}"
        self.recorder.failed(row.url, status=result.status, kind=kind, reason=reason)
        return None


def _charset(content_type: str) -> str | None:
    """The ``charset`` parameter of a Content-Type header, if any."""
    for param in content_type.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            return value.strip(" \"'") or None
    return None
