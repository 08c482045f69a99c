"""Issue 14, item 1: robots.txt matched by RFC 9309 (protego), served by the real loopback
server and read through the crawler's own Fetcher and mirror."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from hcgraph.crawling.fetch import Fetcher, Politeness
from hcgraph.crawling.robots import Robots
from hcgraph.urls import Mirror, Mirrors
from tests.crawlserver import FAST, ORIGIN, CrawlServer, Reply, Site, page, stories_in, story

pytestmark = pytest.mark.slow

OURS_AND_STAR = """\
User-agent: otherbot
Disallow: /

User-agent: hcgraph
Allow: /open/
Disallow: /open/private/
Disallow: /*/secret/
Disallow: /end$
Disallow: /caf%C3%A9/
Disallow: /a%3cd
Allow: /tie/
Disallow: /tie/

User-agent: *
Disallow: /star-only/
"""

CASES = [
    ("/open/page/", True),
    ("/open/private/", False),
    ("/open/private/deep/", False),  # longest match wins, not the first rule
    ("/wild/x/secret/", False),  # '*' is a wildcard
    ("/secret/", True),
    ("/end", False),  # '$' anchors the end
    ("/end/more/", True),
    ("/café/", False),  # percent-encoding: compared decoded
    ("/caf%C3%A9/", False),
    ("/a%3Cd", False),
    ("/tie/x/", True),  # Allow and Disallow of the same length: Allow wins
    ("/star-only/", True),  # our own group is used, not '*'
    ("/elsewhere/", True),
]


def _why_not(server: CrawlServer, robots_txt: bytes, paths: list[str]) -> list[bool]:
    prefix = server.prefix("robots")
    server.route(
        f"{prefix}/robots.txt", Reply(body=robots_txt, headers={"Content-Type": "text/plain"})
    )
    mirrors = Mirrors((Mirror.parse(f"{ORIGIN}={server.base}{prefix}"),))

    async def main() -> list[bool]:
        async with httpx.AsyncClient(follow_redirects=False, trust_env=False) as client:
            fetcher = Fetcher(client, Politeness(4, None), FAST, lambda u: None, mirrors)
            robots = Robots(fetcher)
            return [await robots.why_not(ORIGIN + p) is None for p in paths]

    return asyncio.run(main())


def test_rfc9309_matching(crawl_server: CrawlServer) -> None:
    got = _why_not(crawl_server, OURS_AND_STAR.encode(), [p for p, _ in CASES])
    assert dict(zip([p for p, _ in CASES], got, strict=True)) == dict(CASES)


def test_star_group_when_no_group_names_us(crawl_server: CrawlServer) -> None:
    text = b"User-agent: otherbot\nDisallow: /\n\nUser-agent: *\nDisallow: /x/\n"
    assert _why_not(crawl_server, text, ["/x/1", "/y/"]) == [False, True]


def test_large_robots_txt(crawl_server: CrawlServer) -> None:
    filler = "".join(f"# comment line {n:08d} to pad the file out\n" for n in range(11_500))
    text = f"User-agent: *\n{filler}Disallow: /late/\n".encode()
    assert 490_000 < len(text) < 512 * 1024
    assert _why_not(crawl_server, text, ["/late/x", "/early/"]) == [False, True]


def test_crawl_honours_longest_match(crawl_server: CrawlServer, tmp_path: Path) -> None:
    site = Site(crawl_server)
    crawl_server.route(
        f"{site.prefix}/robots.txt",
        Reply(
            body=b"User-agent: *\nAllow: /stories/\nDisallow: /stories/*private*\n",
            headers={"Content-Type": "text/plain"},
        ),
    )
    site.add("a", story("a", page("b"), page("very-private")))
    site.add("b", story("b"))
    site.add("very-private", story("very-private"))
    report = site.crawl(tmp_path)
    assert stories_in(tmp_path) == {page("a"), page("b")}
    assert site.hits("very-private") == 0
    assert report.counts["skipped"] == 1
