"""Issue 28, in-process: what discovery reads from index pages and sitemaps, and what it
refuses (entities, gzip bombs), and which URL variants are the same story."""

from __future__ import annotations

import gzip
import json
import re

import pytest
from protego import Protego

from hcgraph.crawling.discovery import (
    DEFAULT_STORY_PATTERN,
    html_links,
    lastmod_utc,
    parse_follow,
    parse_sitemap,
    seed_role,
    story_page,
)
from hcgraph.crawling.frontier import Frontier
from hcgraph.crawling.identity_check import identity_mismatch, variant_of
from hcgraph.crawling.robots import sitemaps_of
from hcgraph.errors import CrawlError
from tests.crawlserver import index_html, sitemap_xml, story

PATTERN = re.compile(DEFAULT_STORY_PATTERN)
SITE = "https://site.example"


def test_html_links_come_from_anchors_only_not_comments_or_scripts() -> None:
    body = index_html("../x/", "/stories/2026-10-20/a/", "https://other.example/p/")
    links = html_links(body, f"{SITE}/editions/e/")
    assert f"{SITE}/editions/x/" in links and f"{SITE}/stories/2026-10-20/a/" in links
    assert "https://other.example/p/" in links
    assert not [u for u in links if "in-a-" in u]  # commented out, inside a script
    assert f"{SITE}/style.css" not in links  # <link>, not <a>


def test_html_base_href_and_charset() -> None:
    body = '<base href="/stories/2026-10-20/"><a href="b/">é</a>'.encode("latin-1")
    assert html_links(body, f"{SITE}/x/", "latin-1") == [f"{SITE}/stories/2026-10-20/b/"]
    assert html_links(b'<a href="y/">', f"{SITE}/x/", "no-such-charset") == [f"{SITE}/x/y/"]


def test_story_page_shape() -> None:
    ok = story_page(f"{SITE}/stories/2026-10-20/a/index.json", PATTERN)
    assert ok == f"{SITE}/stories/2026-10-20/a/"
    assert story_page(f"{SITE}/stories/2026-10-20/a", PATTERN) == f"{SITE}/stories/2026-10-20/a/"
    for bad in (
        f"{SITE}/about/",
        f"{SITE}/stories/a/",
        f"{SITE}/stories/2026-10-20/a/index.md",
        f"{SITE}/stories/2026-10-20/a/?page=2",
        "javascript:alert(1)",
        "mailto:x@y",
    ):
        assert story_page(bad, PATTERN) is None, bad  # fmt: skip


def test_seed_roles() -> None:
    assert seed_role(f"{SITE}/sitemap.xml", PATTERN) == "sitemap"
    assert seed_role(f"{SITE}/s/index.xml.gz", PATTERN) == "sitemap"
    assert seed_role(f"{SITE}/robots.txt", PATTERN) == "robots"
    assert seed_role(f"{SITE}/stories/2026-10-20/a/", PATTERN) == "story"
    assert seed_role(f"{SITE}/stories/a/index.json", PATTERN) == "story"
    assert seed_role(f"{SITE}/editions/2026-10-20T00/", PATTERN) == "page"
    assert seed_role(f"{SITE}/stories/a/", PATTERN) == "page"  # a story unless it has no JSON


def test_parse_follow() -> None:
    assert parse_follow("sitemap, related") == ("related", "sitemap")
    with pytest.raises(CrawlError, match="feeds"):
        parse_follow("related,feeds")
    with pytest.raises(CrawlError):
        parse_follow(",")


def test_sitemap_and_index_plain_and_gzipped() -> None:
    urlset = sitemap_xml([(f"{SITE}/a/", "2026-10-20"), (f"{SITE}/b/", None)])
    for body in (urlset, gzip.compress(urlset)):
        parsed = parse_sitemap(body, 10_000)
        assert not parsed.index
        assert parsed.entries == [(f"{SITE}/a/", "2026-10-20"), (f"{SITE}/b/", None)]
    index = parse_sitemap(sitemap_xml([(f"{SITE}/s.xml", None)], index=True), 10_000)
    assert index.index and index.entries == [(f"{SITE}/s.xml", None)]


@pytest.mark.parametrize(
    "body",
    [
        # billion laughs
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>&lol2;</loc></url></urlset>",
        # an external entity
        b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b"<urlset><url><loc>&x;</loc></url></urlset>",
    ],
)
def test_sitemap_with_a_doctype_is_refused(body: bytes) -> None:
    with pytest.raises(CrawlError, match="DOCTYPE"):
        parse_sitemap(body, 10_000)


def test_gzip_bomb_stops_at_the_cap() -> None:
    bomb = gzip.compress(b"<urlset>" + b" " * 20_000_000 + b"</urlset>")
    assert len(bomb) < 100_000
    with pytest.raises(CrawlError, match="cap"):
        parse_sitemap(bomb, 1_000_000)


def test_not_a_sitemap() -> None:
    with pytest.raises(CrawlError, match="root element"):
        parse_sitemap(b"<html><body/></html>", 1000)
    with pytest.raises(CrawlError, match="well-formed"):
        parse_sitemap(b"<urlset><url>", 1000)
    with pytest.raises(CrawlError, match="gzip"):
        parse_sitemap(b"\x1f\x8bnot gzip at all", 1000)


def test_lastmod() -> None:
    assert lastmod_utc("2026-10-20T08:00:00+02:00") == "2026-10-20T06:00:00+00:00"
    assert lastmod_utc("2026-10-20T08:00:00Z") == "2026-10-20T08:00:00+00:00"
    assert lastmod_utc("2026-10-20") == "2026-10-20T23:59:59+00:00"  # the end of the day
    assert lastmod_utc("yesterday") is None and lastmod_utc(None) is None


def test_robots_sitemap_lines() -> None:
    text = (
        "User-agent: *\nSitemap: https://a/s.xml\nsitemap:https://a/t.xml\nSitemap: https://a/s.xml"
    )
    assert sitemaps_of(Protego.parse(text)) == ["https://a/s.xml", "https://a/t.xml"]


def test_variants_are_the_same_story_conflicts_are_not() -> None:
    body = story("x")  # declares https://site.example/stories/x/
    same = [
        f"{SITE}//stories/x/index.json",
        f"{SITE}/stories//x//index.json",
        f"{SITE}/stories/x/index.json?b=2&a=1",
        "HTTPS://SITE.EXAMPLE:443//stories/x/index.json?utm_source=a",
    ]
    for url in same:
        assert identity_mismatch(body, [url]) is not None  # not the URL it names...
        assert variant_of(body, [url]) == f"{SITE}/stories/x/", url  # ...but the same page
    for url in (
        f"{SITE}/stories/y/index.json",
        "https://other.example/stories/x/index.json",
        "http://site.example/stories/x/index.json",
        f"{SITE}/stories/x/y/index.json",
    ):
        assert variant_of(body, [url]) is None, url  # fmt: skip
    with_query = json.loads(body)
    with_query["url"] = f"{SITE}/stories/x/?a=1"
    assert variant_of(json.dumps(with_query).encode(), [f"{SITE}/stories/x/index.json?a=2"]) is None


def test_an_old_frontier_gets_the_new_columns(tmp_path: object) -> None:
    import sqlite3
    from pathlib import Path

    path = Path(str(tmp_path)) / "f.sqlite"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE urls (url TEXT PRIMARY KEY, depth INTEGER NOT NULL, seq INTEGER NOT NULL,"
        " state TEXT NOT NULL, parent TEXT, sha256 TEXT, source TEXT, fetched_at TEXT,"
        " story TEXT, related TEXT, status INTEGER, kind TEXT, reason TEXT, json_path TEXT,"
        " put TEXT);"
        "CREATE TABLE validators (url TEXT PRIMARY KEY, etag TEXT, last_modified TEXT,"
        " sha256 TEXT);"
        "INSERT INTO urls VALUES ('u', 0, 1, 'queued', NULL, NULL, NULL, NULL, NULL, NULL,"
        " NULL, NULL, NULL, NULL, NULL);"
        "INSERT INTO validators VALUES ('u', '\"e\"', NULL, 'abc');"
    )
    db.commit()
    db.close()
    f = Frontier(path)
    row = f.row("u")
    assert row is not None and row.role is None and row.via is None
    v = f.validators("u")
    assert v is not None and v.etag == '"e"' and v.fetched_at is None
    f.close()


def test_index_children_keep_the_depth_of_their_page() -> None:
    f = Frontier(None)
    f.begin("x", 2)
    f.add("https://s/e/", 2, via="edition", role="index")
    f.mark_read("https://s/e/", ["https://s/stories/a/index.json"])
    f.add("https://s/stories/a/index.json", 2, "https://s/e/", via="edition")
    f.add("https://s/e/", 1)  # found closer: its story moves up with it, not one hop deeper
    assert f.depth_of("https://s/stories/a/index.json") == 1


def test_links_queued_when_their_story_moves_up_keep_their_role() -> None:
    f = Frontier(None)
    f.begin("x", 1)
    f.add("https://s/stories/a/index.json", 1)
    # a story at the depth limit: its edition page and related story were not queued
    links: list[str | list[str]] = [["https://s/e/", "edition", "index"], "https://s/r/index.json"]
    f.mark_done("https://s/stories/a/index.json", "https://s/stories/a/", "added", links)
    assert f.row("https://s/e/") is None
    f.add("https://s/stories/a/index.json", 0)  # found as a seed after all
    edition, related = f.row("https://s/e/"), f.row("https://s/r/index.json")
    assert edition is not None and (edition.role, edition.via, edition.depth) == (
        "index",
        "edition",
        1,
    )
    assert related is not None and (related.role, related.via, related.depth) == (
        "story",
        "related",
        1,
    )
    row = f.row("https://s/stories/a/index.json")
    assert row is not None and row.related == ("https://s/e/", "https://s/r/index.json")
