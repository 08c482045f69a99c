"""URLs: the canonical form, page → JSON resolution, crawl scope, and mirrors.

The canonical form names a related link's IRI (:mod:`hcgraph.mapping`) and keys the
crawler's dedupe. Every URL the crawler keeps is a *logical* URL (the original site's,
canonicalised); mirrors only change where bytes are fetched from. Scope is checked on
logical URLs, after every redirect too: ``http``/``https`` on the allowed hosts only, so a
hostile link (``file:``, ``javascript:``, a userinfo trick) is refused before any request.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from w3lib.url import canonicalize_url, url_query_cleaner

from .errors import CrawlError
from .iris import CACHE_SIZE

__all__ = [
    "DEFAULT_JSON_SUFFIX",
    "TRACKING_PARAMS",
    "Mirror",
    "Mirrors",
    "Scope",
    "canonicalize",
    "host_of",
    "json_url",
    "page_url",
]

DEFAULT_JSON_SUFFIX = "index.json"

#: Query parameters that only track clicks; dropped before dedupe.
TRACKING_PARAMS = frozenset({
    "fbclid", "gclid", "dclid", "msclkid", "mc_cid", "mc_eid", "igshid", "yclid", "_hsenc",
    "_hsmi", "ref_src", "spm",
})  # fmt: skip
_DEFAULT_PORTS = {"http": 80, "https": 443}
_ALLOWED_SCHEMES = ("http", "https")


def _is_tracking(name: str) -> bool:
    low = name.lower()
    return low.startswith("utm_") or low in TRACKING_PARAMS


@lru_cache(maxsize=CACHE_SIZE)
def canonicalize(url: str) -> str:
    """The canonical form of an absolute http(s) URL, used for dedupe.

    ``w3lib.url.canonicalize_url`` (Scrapy's) normalises scheme, host, path and escapes; on
    top of it the default port, userinfo, a host's trailing dot and the fragment are
    dropped, tracking parameters removed and the rest sorted (each kept as written), and a
    last path segment without a file extension gets a ``/``. ``/a//b`` stays as it is.

    >>> canonicalize("HTTPS://Example.org:443/stories/x?utm_source=feed&b=2&a=1#top")
    'https://example.org/stories/x/?a=1&b=2'

    Raises:
        ValueError: not an absolute http(s) URL.
    """
    text = url.strip()
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in _ALLOWED_SCHEMES or not parts.hostname:
        raise ValueError(f"not an absolute http(s) URL: {url!r}")
    host = parts.hostname.lower().rstrip(".")
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    port = parts.port  # raises ValueError on a bad port
    netloc = host if port is None or port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"
    base = canonicalize_url(urlunsplit((scheme, netloc, parts.path or "/", "", "")))
    canon = urlsplit(base)
    path = canon.path or "/"
    last = path.rsplit("/", 1)[-1]
    if "." not in last and not path.endswith("/"):
        path += "/"
    return urlunsplit((scheme, canon.netloc, path, _query(parts.query), ""))


_PCT = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _query(query: str) -> str:
    """Tracking parameters dropped (``w3lib.url.url_query_cleaner``), the rest sorted, each
    ``name=value`` kept as written except for normalised percent-encoding."""
    if not query:
        return ""
    names = {pair.split("=", 1)[0] for pair in query.split("&")}
    tracking = [n for n in names if _is_tracking(unquote(n))]
    if tracking:
        query = urlsplit(url_query_cleaner("http://x/?" + query, tracking, remove=True)).query
    pairs = sorted(_pct(pair) for pair in query.split("&") if pair)
    return "&".join(pairs)


def _pct(text: str) -> str:
    """``%64`` → ``d`` (unreserved), other escapes upper-cased, unsafe characters escaped."""

    def one(m: re.Match[str]) -> str:
        ch = chr(int(m.group(1), 16))
        return ch if ch in _UNRESERVED else "%" + m.group(1).upper()

    return quote(_PCT.sub(one, text), safe="%/:@!$&'()*+,;=?-._~")


def host_of(url: str) -> str:
    """``host[:port]`` of a canonical URL (the politeness and scope key)."""
    return urlsplit(url).netloc


def json_url(url: str, suffix: str = DEFAULT_JSON_SUFFIX) -> str:
    """The JSON document URL for a story page URL (site convention: page URL + ``suffix``).

    A URL whose path already ends in ``.json`` is returned unchanged (canonicalised).
    """
    canon = canonicalize(url)
    parts = urlsplit(canon)
    if parts.path.endswith(".json"):
        return canon
    return urlunsplit(parts._replace(path=parts.path + suffix))


def page_url(url: str, suffix: str = DEFAULT_JSON_SUFFIX) -> str:
    """The inverse of :func:`json_url`: the page URL a JSON URL belongs to."""
    canon = canonicalize(url)
    parts = urlsplit(canon)
    if parts.path.endswith("/" + suffix):
        return urlunsplit(parts._replace(path=parts.path[: -len(suffix)]))
    return canon


@dataclass(frozen=True)
class Scope:
    """Which logical URLs the crawler may fetch: http(s) on the allowed hosts only (``host``
    or ``host:port`` of canonical URLs; a host without a port allows any of its ports)."""

    hosts: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, urls: Iterable[str], extra_hosts: Iterable[str] = ()) -> Scope:
        """The scope of the given seed URLs plus extra hosts."""
        hosts = {host_of(canonicalize(u)) for u in urls}
        hosts |= {h.strip().lower().rstrip(".") for h in extra_hosts if h.strip()}
        return cls(frozenset(hosts))

    def with_host(self, host: str) -> Scope:
        """A scope that also allows ``host``."""
        return Scope(self.hosts | {host})

    def why_not(self, url: str) -> str | None:
        """``None`` if ``url`` may be fetched, else the reason it may not."""
        try:
            parts = urlsplit(url.strip())
        except ValueError:
            return "not a URL"
        scheme = parts.scheme.lower()
        if scheme not in _ALLOWED_SCHEMES:
            return f"scheme {scheme + ':' if scheme else '(none)'} not allowed (http/https only)"
        try:
            canon = canonicalize(url)
        except ValueError as exc:
            return str(exc)
        netloc = host_of(canon)
        hostname = urlsplit(canon).hostname or ""
        if netloc in self.hosts or hostname in self.hosts:
            return None
        return f"host {netloc} is off-site (allowed: {', '.join(sorted(self.hosts)) or 'none'})"


@dataclass(frozen=True)
class Mirror:
    """Fetch ``origin…`` from ``mirror…`` instead (a prefix rewrite); IRIs keep ``origin``."""

    origin: str
    mirror: str

    @classmethod
    def parse(cls, spec: str) -> Mirror:
        """Parse ``ORIGIN=MIRROR`` (e.g. ``https://hangingcontext.com=http://127.0.0.1:8000``).

        Raises:
            CrawlError: the spec is not two absolute http(s) URLs joined by ``=``.
        """
        origin, sep, mirror = spec.partition("=")
        if not sep:
            raise CrawlError(f"--mirror {spec!r}: expected ORIGIN=MIRROR")
        try:
            return cls(_prefix(origin), _prefix(mirror))
        except ValueError as exc:
            raise CrawlError(f"--mirror {spec!r}: {exc}") from None


def _prefix(url: str) -> str:
    canon = canonicalize(url)
    return canon if canon.endswith("/") else canon + "/"


@dataclass(frozen=True)
class Mirrors:
    """A set of :class:`Mirror` rewrites, applied by longest matching prefix."""

    items: tuple[Mirror, ...] = ()

    def to_fetch(self, logical: str) -> str:
        """Where to fetch a logical URL from."""
        for m in sorted(self.items, key=lambda m: -len(m.origin)):
            if logical.startswith(m.origin):
                return m.mirror + logical[len(m.origin) :]
        return logical

    def to_logical(self, fetched: str) -> str:
        """The logical URL for a URL on a mirror (e.g. a redirect target); else unchanged."""
        try:
            canon = canonicalize(fetched)
        except ValueError:
            return fetched
        for m in sorted(self.items, key=lambda m: -len(m.mirror)):
            if canon.startswith(m.mirror):
                return m.origin + canon[len(m.mirror) :]
            if canon + "/" == m.mirror:
                return m.origin
        return fetched
