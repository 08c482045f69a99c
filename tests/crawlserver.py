"""A real HTTP server on loopback for crawl tests, with faults injected per path.

One server runs for the whole test session (fixture ``crawl_server`` in conftest). Each test
mounts its own site under its own path prefix, and points the crawler at it with a mirror
(``https://site.example=http://127.0.0.1:PORT/prefix``), so IRIs stay realistic and tests
never see each other's pages. Every request is logged with its arrival time, so tests can
count hits per path and measure gaps between retries on the server side.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from itertools import count
from pathlib import Path
from typing import Any

from hcgraph.crawling import CrawlOptions, CrawlReport, FetchPolicy, crawl
from hcgraph.store import Store
from tests.support.loopback import LoopbackServer

__all__ = [
    "ORIGIN",
    "CrawlServer",
    "Hit",
    "Reply",
    "Route",
    "Site",
    "index_html",
    "page",
    "quads_of",
    "sitemap_xml",
    "stories_in",
    "story",
]


@dataclass(frozen=True)
class Reply:
    """One canned response."""

    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before sending anything
    gzip: bool = False  # Content-Encoding: gzip
    etag: bool = True  # send an ETag and answer If-None-Match with 304
    chunked: bool = False  # Transfer-Encoding: chunked (no Content-Length)


@dataclass
class Route:
    """Replies for one path: ``first`` are used once each, in order, then ``then`` forever."""

    then: Reply
    first: list[Reply] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self) -> Reply:
        with self.lock:
            return self.first.pop(0) if self.first else self.then


@dataclass(frozen=True)
class Hit:
    """One request the server received."""

    path: str
    at: float  # time.monotonic() on arrival
    headers: dict[str, str]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Any

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        self.server.owner._log(Hit(path, time.monotonic(), dict(self.headers.items())))
        route = self.server.owner.routes.get(path)
        missing = Reply(404, b"<html>not found</html>", {"Content-Type": "text/html"}, etag=False)
        reply = route.next() if route else missing
        if reply.delay:
            time.sleep(reply.delay)
        body = reply.body
        headers = {"Content-Type": "application/json", **reply.headers}
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        if reply.etag and reply.status == 200:
            headers.setdefault("ETag", etag)
            if self.headers.get("If-None-Match") == etag:
                self._send(304, b"", {"ETag": etag})
                return
        if reply.gzip:
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        self._send(reply.status, body, headers, chunked=reply.chunked)

    def _send(
        self, status: int, body: bytes, headers: Mapping[str, str], *, chunked: bool = False
    ) -> None:
        try:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not chunked:
                self.wfile.write(body)
                return
            for start in range(0, len(body), 16 * 1024):
                piece = body[start : start + 16 * 1024]
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            self.close_connection = True


class CrawlServer(LoopbackServer):
    """The session's loopback server. ``base`` is ``http://127.0.0.1:PORT``."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.hits: list[Hit] = []
        self._lock = threading.Lock()
        self._ids = count(1)
        super().__init__(_Handler, 0)

    def _log(self, hit: Hit) -> None:
        with self._lock:
            self.hits.append(hit)

    def prefix(self, name: str = "site") -> str:
        """A fresh path prefix (``/name-N``) for one test's site."""
        return f"/{name}-{next(self._ids)}"

    def route(self, path: str, then: Reply, *first: Reply) -> None:
        """Serve ``path``: the ``first`` replies once each, then ``then``."""
        self.routes[path] = Route(then, list(first))

    def mount(self, prefix: str, files: Mapping[str, bytes], **reply: object) -> None:
        """Serve ``files`` (URL path → bytes, e.g. from ``Corpus.site_files()``) under prefix."""
        for path, body in files.items():
            self.routes[prefix + path] = Route(Reply(body=body, **reply))  # type: ignore[arg-type]

    def hits_for(self, predicate: Callable[[str], bool]) -> list[Hit]:
        """Requests whose path matches ``predicate``."""
        with self._lock:
            return [h for h in self.hits if predicate(h.path)]

    def count(self, path: str) -> int:
        """How many requests ``path`` received."""
        return len(self.hits_for(lambda p: p == path))


# --- helpers for tests that build small sites -------------------------------------------
ORIGIN = "https://site.example"
FAST = FetchPolicy(timeout=2.0, retries=3, backoff_base=0.01)


def page(slug: str) -> str:
    return f"{ORIGIN}/stories/{slug}/"


def story(slug: str, *related: str, **fields: Any) -> bytes:
    """A small valid story at ``ORIGIN/stories/<slug>/`` with related links (raw URLs)."""
    doc: dict[str, Any] = {
        "schema": "hangingcontext.desk/1",
        "type": "story",
        "id": str(1_900_000_000_000_000_000 + sum(map(ord, slug)) * 1000 + len(slug)),
        "url": page(slug),
        "headline": f"Story {slug}",
        "slug": slug,
        "manifests": [{"manifest_id": "1811111111111111111", "source_name": "arxiv"}],
        "sections": [{"heading": "h", "paragraphs": [{"markdown": "text", "cites": [
            {"manifest_id": "1811111111111111111", "claim_ids": ["1822222222222222222"]}]}]}],
        "related": [{"url": u, "headline": "rel"} for u in related],
    }  # fmt: skip
    doc.update(fields)
    return json.dumps(doc).encode()


class Site:
    """One test's site on the shared server."""

    def __init__(self, server: CrawlServer) -> None:
        self.server = server
        self.prefix = server.prefix()

    @property
    def mirror(self) -> str:
        return f"{ORIGIN}={self.server.base}{self.prefix}"

    def path(self, slug: str, name: str = "index.json") -> str:
        return f"{self.prefix}/stories/{slug}/{name}"

    def add(self, slug: str, body: bytes, *first: Reply, **reply: Any) -> None:
        self.server.route(self.path(slug), Reply(body=body, **reply), *first)

    def hits(self, slug: str) -> int:
        return self.server.count(self.path(slug))

    def add_file(self, path: str, body: bytes, content_type: str, **reply: Any) -> None:
        """Serve ``body`` at the logical ``path`` (an index page, a sitemap, robots.txt)."""
        headers = {"Content-Type": content_type, **reply.pop("headers", {})}
        self.server.route(self.prefix + path, Reply(body=body, headers=headers, **reply))

    def crawl(self, store: Path, *seeds: str, **options: Any) -> CrawlReport:
        opts = {"mirrors": (self.mirror,), "policy": FAST, **options}
        return crawl(list(seeds) or [page("a")], store, CrawlOptions(**opts))


def hub_site(server: CrawlServer, slugs: Sequence[str]) -> Site:
    """A site on ``server`` whose story ``a`` links to one small story per slug."""
    site = Site(server)
    site.add("a", story("a", *(page(s) for s in slugs)))
    for slug in slugs:
        site.add(slug, story(slug))
    return site


def stories_in(store_dir: Path) -> set[str]:
    """IRIs of the stories in a store."""
    with Store(store_dir, read_only=True) as st:
        return {str(r[0].value) for r in st.query("SELECT ?s WHERE { ?s a hc:Story }")}


def quads_of(store_dir: Path) -> list[str]:
    """Every quad of a store as sorted N-Quads lines (graph equality, byte for byte)."""
    with Store(store_dir, read_only=True) as st:
        return sorted(str(q) for q in st.ox)


def index_html(*links: str, title: str = "index") -> bytes:
    """An HTML index page (an edition, a newsroom) linking to ``links`` (as written), with
    the navigation, comments and scripts real pages have around them."""
    items = "".join(f'<li><a class="story" href="{link}">{link}</a></li>' for link in links)
    return (
        f"<!doctype html><html><head><title>{title}</title>"
        '<link rel="stylesheet" href="/style.css"></head><body>'
        '<nav><a href="/">home</a> <a href="/about/">about</a></nav>'
        '<!-- <a href="/stories/2026-01-01/in-a-comment/">old</a> -->'
        "<script>var s = '<a href=\"/stories/2026-01-02/in-a-script/\">';</script>"
        f"<main><ul>{items}</ul></main></body></html>"
    ).encode()


def sitemap_xml(entries: Sequence[tuple[str, str | None]], *, index: bool = False) -> bytes:
    """A sitemap (``<urlset>``), or a sitemap index (``index=True``): (loc, lastmod) pairs."""
    root, item = ("sitemapindex", "sitemap") if index else ("urlset", "url")
    body = "".join(
        f"<{item}><loc>{loc}</loc>" + (f"<lastmod>{mod}</lastmod>" if mod else "") + f"</{item}>"
        for loc, mod in entries
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<{root} xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</{root}>\n'
    ).encode()
