"""Issue 14, item 4: URL canonicalisation (w3lib plus the site's trailing-slash rule)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hcgraph.urls import canonicalize
from tests.crawlserver import CrawlServer, Site, page, story


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("https://h.example/a//b", "https://h.example/a//b/"),  # empty segment kept
        ("https://h.example/s/?a", "https://h.example/s/?a"),  # no '=' added
        ("https://h.example/s/?q=a%20b", "https://h.example/s/?q=a%20b"),  # not '+'
        ("https://h.example/s/?q=a+b", "https://h.example/s/?q=a+b"),
        ("https://h.example/s/?b=2&a=1", "https://h.example/s/?a=1&b=2"),  # order
        ("https://h.example/%64ir/", "https://h.example/dir/"),  # unreserved decoded
        ("https://h.example/s/?%64=%7e", "https://h.example/s/?d=~"),
        ("https://h.example/a%2fb/", "https://h.example/a%2Fb/"),  # reserved kept, hex upper
        ("https://h.example/café/", "https://h.example/caf%C3%A9/"),
        ("https://h.example/s/?utm_source=x&UTM_Medium=y&gclid=1&k=v", "https://h.example/s/?k=v"),
        ("https://h.example./s", "https://h.example/s/"),
        ("HTTP://H.example:80/s/index.json#frag", "http://h.example/s/index.json"),
        ("https://u:p@h.example:443/s", "https://h.example/s/"),
        ("https://h.example/a/./b/../c", "https://h.example/a/c/"),
    ],
)
def test_canonical_form(raw: str, canonical: str) -> None:
    assert canonicalize(raw) == canonical
    assert canonicalize(canonical) == canonical  # idempotent


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://h.example/s/?a=1&b=2", "https://h.example/s/?b=2&a=1"),
        ("https://h.example/%73tories/x/", "https://h.example/stories/x/"),
        ("https://h.example/stories/x", "https://h.example/stories/x/"),
    ],
)
def test_same_resource_same_key(a: str, b: str) -> None:
    assert canonicalize(a) == canonicalize(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://h.example/a//b/", "https://h.example/a/b/"),
        ("https://h.example/s/?a", "https://h.example/s/?a="),
        ("https://h.example/s/?q=a%2Bb", "https://h.example/s/?q=a+b"),
    ],
)
def test_different_resources_stay_apart(a: str, b: str) -> None:
    assert canonicalize(a) != canonicalize(b)


@pytest.mark.slow
def test_skipped_entries_are_canonical(crawl_server: CrawlServer, tmp_path: Path) -> None:
    site = Site(crawl_server)
    off = ["https://OFF.example/x?b=1&a=2", "https://off.example:443/x/?a=2&b=1#f"]
    site.add("a", story("a", *off, page("b")))
    site.add("b", story("b", "https://off.example/%78/?a=2&b=1&utm_source=z"))
    report = site.crawl(tmp_path)
    assert report.exit_code == 0
    assert [s["url"] for s in report.skipped] == ["https://off.example/x/?a=2&b=1"]
    assert report.counts["skipped"] == 1
