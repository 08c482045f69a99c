"""Review of crawl/push/fetch (2026-12-07): hostile servers that crashed the whole crawl.

Each case is a real loopback site whose one misbehaving answer used to raise out of a
fetching task (a ValueError or OverflowError nobody caught), which cancelled every other
fetch and ended the crawl with a traceback. The promise: that URL fails (or the bad value is
ignored), the rest of the crawl goes on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hcgraph.crawling.discovery import html_links, lastmod_utc
from hcgraph.retry import Backoff, retry_after_seconds
from tests.crawlserver import (
    ORIGIN,
    CrawlServer,
    Reply,
    Site,
    index_html,
    page,
    sitemap_xml,
    stories_in,
    story,
)

D = "2026-10-20"
HUGE_DATE = "Wed, 21 Oct 99999999999999999999 07:28:00 GMT"


def dated(slug: str) -> str:
    return f"{D}/{slug}"


# --- units (fast) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "\u00b2",  # str.isdigit() is true for a superscript two; float() refuses it
        "\u00b9\u00b2\u00b3",
        HUGE_DATE,  # datetime() overflows a C long
        "Wed, 21 Oct 2015 07:28:00 +99999999999999999999",
    ],
)
def test_unreadable_retry_after_is_ignored(value: str) -> None:
    assert retry_after_seconds(value) is None
    assert Backoff(base=1.0).wait(1, value) is not None  # the back-off, not a crash


def test_retry_after_still_read() -> None:
    assert retry_after_seconds(" 7 ") == 7.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_lastmod_out_of_range_is_unreadable(value: str) -> None:
    assert lastmod_utc(value) is None


def test_bad_base_href_is_ignored() -> None:
    body = b'<base href="http://[::1"><a href="/stories/x/">x</a>'
    assert html_links(body, "https://a.example/e/") == ["https://a.example/stories/x/"]


# --- real loopback server (slow) ----------------------------------------------------------


@pytest.fixture
def site(crawl_server: CrawlServer) -> Site:
    return Site(crawl_server)


@pytest.mark.slow
@pytest.mark.parametrize("value", ["\u00b2", HUGE_DATE])
def test_crawl_survives_unreadable_retry_after(site: Site, tmp_path: Path, value: str) -> None:
    site.add("a", story("a", page("b"), page("c")))
    site.add("b", story("b"), Reply(503, b"busy", {"Retry-After": value}))
    site.add("c", story("c"))
    report = site.crawl(tmp_path)
    assert stories_in(tmp_path) == {page("a"), page("b"), page("c")}
    assert report.counts["failed"] == 0
    assert site.hits("b") == 2  # retried after the back-off


@pytest.mark.slow
def test_crawl_survives_a_malformed_redirect(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a", page("b"), page("c")))
    site.add("b", b"", status=302, headers={"Location": "http://[::1/x"}, etag=False)
    site.add("c", story("c"))
    report = site.crawl(tmp_path)
    assert stories_in(tmp_path) == {page("a"), page("c")}
    (failure,) = report.failures
    assert failure["url"] == page("b") + "index.json"
    assert "location" in failure["reason"].lower()  # httpx refuses it before we see it


@pytest.mark.slow
def test_crawl_survives_a_malformed_base_href(site: Site, tmp_path: Path) -> None:
    edition = f"{ORIGIN}/editions/{D}T00/"
    html = index_html(f"/stories/{dated('x')}/").replace(
        b"<head>", b'<head><base href="http://[::1">'
    )
    site.add_file(f"/editions/{D}T00/", html, "text/html")
    site.add(dated("x"), story(dated("x")))
    report = site.crawl(tmp_path, edition)
    assert stories_in(tmp_path) == {page(dated("x"))}
    assert report.counts["failed"] == 0


@pytest.mark.slow
def test_crawl_survives_a_lastmod_out_of_range(site: Site, tmp_path: Path) -> None:
    entries = [
        (page(dated("x")), "0001-01-01T00:00:00+01:00"),
        (page(dated("y")), "2026-10-20"),
    ]
    site.add_file("/sitemap.xml", sitemap_xml(entries), "application/xml")
    site.add(dated("x"), story(dated("x")))
    site.add(dated("y"), story(dated("y")))
    report = site.crawl(tmp_path, f"{ORIGIN}/sitemap.xml")
    assert stories_in(tmp_path) == {page(dated("x")), page(dated("y"))}
    assert report.counts["failed"] == 0


@pytest.mark.slow
def test_robots_txt_over_the_body_cap_still_read(site: Site, tmp_path: Path) -> None:
    """RFC 9309 (and robots.py): the first 512 KiB of a large robots.txt are read; one
    larger than the crawl's body cap was refused as too large and then allowed everything."""
    rules = b"User-agent: *\nDisallow: /stories/b/\n"
    filler = b"# padding\n" * 1_100_000  # 11 MB: over the default 10 MB body cap
    site.add_file("/robots.txt", rules + filler, "text/plain")
    site.add("a", story("a", page("b"), page("c")))
    site.add("b", story("b"))
    site.add("c", story("c"))
    report = site.crawl(tmp_path)
    assert site.hits("b") == 0
    assert stories_in(tmp_path) == {page("a"), page("c")}
    assert report.counts["skipped"] == 1


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_an_absurd_crawl_delay_fails_the_host_instead_of_stalling(
    site: Site, tmp_path: Path
) -> None:
    """``Crawl-delay: 1e308`` was honoured: the second request to the host waited for ever."""
    site.add_file("/robots.txt", b"User-agent: *\nCrawl-delay: 1e308\n", "text/plain")
    site.add("a", story("a"))
    report = site.crawl(tmp_path)
    assert site.hits("a") == 0
    (failure,) = report.failures
    assert failure["url"] == page("a") + "index.json"
    assert "Crawl-delay of 1e+308 s, longer than the 300 s limit" in failure["reason"]


@pytest.mark.slow
def test_a_modest_crawl_delay_is_still_honoured(site: Site, tmp_path: Path) -> None:
    site.add_file("/robots.txt", b"User-agent: *\nCrawl-delay: 0.3\n", "text/plain")
    site.add("a", story("a", page("b")))
    site.add("b", story("b"))
    site.crawl(tmp_path)
    hits = site.server.hits_for(lambda p: p.startswith(site.prefix + "/stories/"))
    assert len(hits) == 2 and hits[1].at - hits[0].at >= 0.29


@pytest.mark.slow
@pytest.mark.parametrize("location", ["javascript:alert(1)", "mailto:x@example.org"])
def test_a_redirect_to_a_non_http_scheme_fails_that_url(
    site: Site, tmp_path: Path, location: str
) -> None:
    """httpx resolves every Location it gets (to set ``next_request``) and raised
    ``httpx.InvalidURL`` for these, which is no ``TransportError``: the crawl ended in it."""
    site.add("a", story("a", page("b"), page("c")))
    site.add("b", b"", status=302, headers={"Location": location}, etag=False)
    site.add("c", story("c"))
    report = site.crawl(tmp_path)
    assert stories_in(tmp_path) == {page("a"), page("c")}
    (failure,) = report.failures
    assert failure["url"] == page("b") + "index.json"
    assert failure["kind"] == "redirect" and "redirect" in failure["reason"]
    assert site.hits("b") == 1  # refused, not retried


@pytest.mark.parametrize("charset", ["idna", "punycode"])
def test_an_index_page_in_a_codec_that_cannot_replace_is_read_as_utf8(charset: str) -> None:
    body = b'<a href="/stories/x/">x</a> \xff\xfe'
    assert html_links(body, "https://a.example/", charset) == ["https://a.example/stories/x/"]


@pytest.mark.slow
def test_crawl_survives_an_index_page_with_charset_idna(site: Site, tmp_path: Path) -> None:
    """``charset=idna`` raised UnicodeError (a ValueError, not the LookupError caught) out of
    the index reader, which ended the crawl with a traceback."""
    edition = f"{ORIGIN}/editions/{D}T00/"
    html = index_html(f"/stories/{dated('x')}/") + b"\xff"
    site.add_file(f"/editions/{D}T00/", html, "text/html; charset=idna")
    site.add(dated("x"), story(dated("x")))
    report = site.crawl(tmp_path, edition)
    assert stories_in(tmp_path) == {page(dated("x"))}
    assert report.counts["failed"] == 0
