"""Issue 28: URL variants are duplicates, and discovery through index pages and sitemaps.

Everything runs through the real ``hcgraph crawl`` against a loopback site: a story's
``links.edition`` and ``links.newsroom`` HTML pages, robots.txt ``Sitemap:`` lines, a gzipped
sitemap index and the sitemaps it lists, all naming stories no related link reaches.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import cli_env
from tests.crawlserver import (
    ORIGIN,
    CrawlServer,
    Reply,
    Site,
    index_html,
    page,
    quads_of,
    sitemap_xml,
    stories_in,
    story,
)

pytestmark = pytest.mark.slow  # a loopback server and the real CLI

D = "2026-10-20"
EDITION = f"{ORIGIN}/editions/{D}T00/"
NEWSROOM = f"{ORIGIN}/n/ai/"


def dated(slug: str) -> str:
    return f"{D}/{slug}"


def crawl_cli(
    run_cli: Any, site: Site, store: Path, *seeds: str, follow: str | None = None, **kw: Any
) -> tuple[Any, dict[str, Any]]:
    args: list[object] = [
        "crawl", *seeds, "--mirror", site.mirror, "--retries", "0", "--timeout", "5",
        "--store", store,
    ]  # fmt: skip
    if follow is not None:
        args += ["--follow", follow]
    for key, value in kw.items():
        flag = "--" + key.replace("_", "-")
        args += [flag] if value is True else [flag, value]
    done = run_cli(*args)
    report = json.loads((store / "crawl-report.json").read_text())
    return done, report


# --- item 2: URL variants ---------------------------------------------------------------


@pytest.fixture
def site(crawl_server: CrawlServer) -> Site:
    return Site(crawl_server)


def test_url_variants_of_a_story_are_duplicates_not_mismatches(
    site: Site, tmp_path: Path, run_cli: Any
) -> None:
    dup, dupq = story("dup"), story("dupq")
    site.add(
        "a",
        story(
            "a",
            page("dup"),
            f"{ORIGIN}//stories/dup/",  # a duplicate slash: fetched, serves dup
            f"{ORIGIN}/stories/dupq/?b=2&a=1",  # a query the server ignores: serves dupq
            "HTTPS://SITE.EXAMPLE:443/stories/dup/?utm_source=feed&fbclid=x",  # folded
        ),
    )
    site.add("dup", dup)
    site.add("dupq", dupq)
    # The server collapses slashes, as many do: //stories/dup/ is the same file.
    site.server.route(f"{site.prefix}//stories/dup/index.json", Reply(body=dup))
    done, report = crawl_cli(run_cli, site, tmp_path, page("a"), ignore_robots=True)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert report["failures"] == []
    assert stories_in(tmp_path) == {page("a"), page("dup"), page("dupq")}
    assert report["counts"]["duplicates"] == 2, report["duplicates"]
    urls = {d["url"]: d for d in report["duplicates"]}
    assert set(urls) == {
        f"{ORIGIN}//stories/dup/index.json",
        f"{ORIGIN}/stories/dupq/index.json?a=1&b=2",
    }
    assert urls[f"{ORIGIN}//stories/dup/index.json"]["story"] == page("dup")
    assert urls[f"{ORIGIN}/stories/dupq/index.json?a=1&b=2"]["story"] == page("dupq")
    assert "duplicates" in done.stdout
    # the variant the canonicaliser folds is the same URL: dup is fetched once under its
    # own URL; dupq under its variant (the server drops the query) and then its own URL
    assert site.hits("dup") == 1 and site.hits("dupq") == 2


def test_rebuild_after_a_crawl_with_variants_gives_the_same_graph(
    site: Site, tmp_path: Path, run_cli: Any
) -> None:
    dup = story("dup")
    # the variant is linked first, so it is fetched (and archived) before the story's own URL
    site.add("a", story("a", f"{ORIGIN}//stories/dup/"))
    site.add("dup", dup)
    site.server.route(f"{site.prefix}//stories/dup/index.json", Reply(body=dup))
    done, report = crawl_cli(run_cli, site, tmp_path, page("a"), ignore_robots=True)
    assert done.returncode == 0 and report["counts"]["duplicates"] == 1, done.stderr
    crawled = quads_of(tmp_path)
    rebuilt = run_cli("rebuild", "--store", tmp_path)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert quads_of(tmp_path) == crawled


def test_a_real_conflict_stays_an_identity_mismatch(
    site: Site, tmp_path: Path, run_cli: Any
) -> None:
    fake = json.loads(story("other"))
    fake["url"] = page("victim")  # another story's URL, on another path
    site.add("a", story("a", page("other"), f"{ORIGIN}//stories/victim2/"))
    site.add("other", json.dumps(fake).encode())
    wrong = json.loads(story("victim2"))
    wrong["url"] = page("victim3")  # a variant path that serves a different story
    site.server.route(
        f"{site.prefix}//stories/victim2/index.json", Reply(body=json.dumps(wrong).encode())
    )
    done, report = crawl_cli(run_cli, site, tmp_path, page("a"), ignore_robots=True)
    assert done.returncode == 3, done.stderr
    kinds = {f["url"]: f["kind"] for f in report["failures"]}
    assert kinds == {
        page("other") + "index.json": "identity-mismatch",
        f"{ORIGIN}//stories/victim2/index.json": "identity-mismatch",
    }
    assert report["counts"]["duplicates"] == 0
    assert stories_in(tmp_path) == {page("a")}


# --- item 3: discovery ------------------------------------------------------------------


def discovery_site(server: CrawlServer) -> Site:
    """A seed whose related link reaches r1 only; its edition and newsroom pages, robots.txt
    and a gzipped sitemap index list stories nothing else links to."""
    site = Site(server)
    links = {"edition": EDITION, "newsroom": NEWSROOM}
    site.add(dated("seed"), story(dated("seed"), page(dated("r1")), links=links))
    for slug in ("r1", "e1", "e2", "n1", "s1", "s2", "s3"):
        site.add(dated(slug), story(dated(slug)))
    html = "text/html; charset=utf-8"
    site.add_file(
        f"/editions/{D}T00/",
        index_html(
            f"../../stories/{D}/e1/",  # relative to the page
            f"{ORIGIN}/stories/{D}/e2/",
            f"/stories/{D}/seed/",  # already crawled
            "/about/",  # not a story page
            f"/stories/{D}/e1/index.md",  # not a story page either
            f"https://other.example/stories/{D}/offsite/",  # out of scope
            "javascript:alert(1)",
            "mailto:desk@site.example",
        ),
        html,
    )
    site.add_file("/n/ai/", index_html(f"/stories/{D}/n1/", f"/stories/{D}/e1/"), html)
    site.add_file(
        "/robots.txt",
        f"User-agent: *\nAllow: /\nSitemap: {ORIGIN}/sitemap-index.xml.gz\n".encode(),
        "text/plain",
    )
    index = sitemap_xml(
        [(f"{ORIGIN}/sitemaps/stories.xml", None), (f"{ORIGIN}/sitemaps/more.xml.gz", None)],
        index=True,
    )
    site.add_file("/sitemap-index.xml.gz", gzip.compress(index), "application/gzip")
    site.add_file(
        "/sitemaps/stories.xml",
        sitemap_xml(
            [
                (page(dated("s1")), "2026-10-20T08:00:00+00:00"),
                (page(dated("s2")), "2026-10-20"),
                (EDITION, None),  # an index page, not a story: not followed from a sitemap
                (f"https://other.example/stories/{D}/x/", None),
            ]
        ),
        "application/xml",
    )
    site.add_file(
        "/sitemaps/more.xml.gz",
        gzip.compress(sitemap_xml([(page(dated("s3")), None), (page(dated("s1")), None)])),
        "application/x-gzip",
    )
    return site


@pytest.fixture
def dsite(crawl_server: CrawlServer) -> Site:
    return discovery_site(crawl_server)


def found(report: dict[str, Any]) -> dict[str, str]:
    return {s["story"]: s["found_by"] for s in report["stories"]}


def test_a_story_seed_follows_related_links_only_by_default(
    dsite: Site, tmp_path: Path, run_cli: Any
) -> None:
    done, report = crawl_cli(run_cli, dsite, tmp_path, page(dated("seed")))
    assert done.returncode == 0, done.stderr
    assert stories_in(tmp_path) == {page(dated("seed")), page(dated("r1"))}
    assert found(report) == {page(dated("seed")): "seed", page(dated("r1")): "related"}
    server = dsite.server
    assert server.count(f"{dsite.prefix}/editions/{D}T00/") == 0
    assert server.count(f"{dsite.prefix}/sitemap-index.xml.gz") == 0


def test_follow_edition_and_newsroom_finds_exactly_the_listed_stories(
    dsite: Site, tmp_path: Path, run_cli: Any
) -> None:
    done, report = crawl_cli(
        run_cli, dsite, tmp_path, page(dated("seed")), follow="related,edition,newsroom"
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    want = {page(dated(s)) for s in ("seed", "r1", "e1", "e2", "n1")}
    assert stories_in(tmp_path) == want
    how = found(report)
    # e1 is on both pages: found by whichever was read first (they are fetched at once)
    assert how.pop(page(dated("e1"))) in ("edition", "newsroom")
    assert how == {
        page(dated("seed")): "seed",
        page(dated("r1")): "related",
        page(dated("e2")): "edition",
        page(dated("n1")): "newsroom",
    }
    assert sum(report["found_by"].values()) == 5
    assert report["found_by"]["edition"] + report["found_by"]["newsroom"] == 3
    pages = {p["url"]: p for p in report["index_pages"]}
    assert set(pages) == {EDITION, NEWSROOM}
    assert pages[EDITION]["stories"] == 3  # e1, e2 and the seed; nothing else on it
    # nothing off-site, commented out, scripted or non-story was requested
    hits = [h.path for h in dsite.server.hits_for(lambda p: p.startswith(dsite.prefix))]
    assert not [h for h in hits if "in-a-" in h or "about" in h or h.endswith(".md")]
    assert report["skipped"] == []
    assert "found by" in done.stdout


def test_follow_sitemap_reads_robots_txt_and_a_gzipped_sitemap_index(
    dsite: Site, tmp_path: Path, run_cli: Any
) -> None:
    done, report = crawl_cli(run_cli, dsite, tmp_path, page(dated("seed")), follow="sitemap")
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert stories_in(tmp_path) == {page(dated(s)) for s in ("seed", "s1", "s2", "s3")}
    assert found(report) == {
        page(dated("seed")): "seed",
        page(dated("s1")): "sitemap",
        page(dated("s2")): "sitemap",
        page(dated("s3")): "sitemap",
    }
    kinds = {p["url"]: p["kind"] for p in report["index_pages"]}
    assert kinds == {
        f"{ORIGIN}/robots.txt": "robots",
        f"{ORIGIN}/sitemap-index.xml.gz": "sitemap",
        f"{ORIGIN}/sitemaps/stories.xml": "sitemap",
        f"{ORIGIN}/sitemaps/more.xml.gz": "sitemap",
    }
    assert dsite.hits(dated("r1")) == 0  # related links were not asked for
    assert dsite.server.count(f"{dsite.prefix}/editions/{D}T00/") == 0


@pytest.mark.parametrize(
    ("seed", "want"),
    [
        (EDITION, {"e1", "e2", "seed"}),
        (f"{ORIGIN}/sitemap-index.xml.gz", {"s1", "s2", "s3"}),
        (f"{ORIGIN}/sitemaps/stories.xml", {"s1", "s2"}),
        (f"{ORIGIN}/robots.txt", {"s1", "s2", "s3"}),
    ],
)
def test_an_index_page_or_sitemap_given_as_a_seed_is_read_as_one(
    dsite: Site, tmp_path: Path, run_cli: Any, seed: str, want: set[str]
) -> None:
    done, report = crawl_cli(run_cli, dsite, tmp_path, seed, depth=0)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert stories_in(tmp_path) == {page(dated(s)) for s in want}
    assert report["failures"] == []
    assert dsite.hits(dated("r1")) == 0  # depth 0: listed stories are seeds, no hop more


def test_a_missing_seed_page_fails_naming_its_json_and_the_page(
    dsite: Site, tmp_path: Path, run_cli: Any
) -> None:
    done, report = crawl_cli(run_cli, dsite, tmp_path, f"{ORIGIN}/editions/gone/")
    assert done.returncode == 3
    (failure,) = report["failures"]
    assert failure["url"] == f"{ORIGIN}/editions/gone/" and failure["status"] == 404
    assert f"no story JSON at {ORIGIN}/editions/gone/index.json (HTTP 404)" in failure["reason"]
    assert report["counts"]["stories"] == 0


def test_robots_txt_rules_apply_to_index_pages(dsite: Site, tmp_path: Path, run_cli: Any) -> None:
    dsite.add_file(
        "/robots.txt",
        b"User-agent: *\nDisallow: /editions/\nDisallow: /stories/2026-10-20/n1/\n",
        "text/plain",
    )
    done, report = crawl_cli(
        run_cli, dsite, tmp_path, page(dated("seed")), follow="edition,newsroom"
    )
    assert done.returncode == 0, done.stderr
    # the newsroom lists e1 too: allowed, so it is crawled
    assert stories_in(tmp_path) == {page(dated("seed")), page(dated("e1"))}
    assert dsite.server.count(f"{dsite.prefix}/editions/{D}T00/") == 0
    skipped = {s["url"] for s in report["skipped"]}
    assert skipped == {EDITION, page(dated("n1")) + "index.json"}


def test_story_pattern_option_chooses_what_looks_like_a_story(
    dsite: Site, tmp_path: Path, run_cli: Any
) -> None:
    done, _ = crawl_cli(
        run_cli, dsite, tmp_path, EDITION, depth=0, story_pattern=r"^/stories/[^/]+/e1/$"
    )
    assert done.returncode == 0, done.stderr
    assert stories_in(tmp_path) == {page(dated("e1"))}
    wrong = _crawl_args(EDITION, "--story-pattern", "([", "--store", tmp_path / "x")
    assert wrong.returncode != 0 and "--story-pattern" in wrong.stderr
    assert "Traceback" not in wrong.stderr
    unknown = _crawl_args(EDITION, "--follow", "related,feeds", "--store", tmp_path / "y")
    assert unknown.returncode != 0 and "feeds" in unknown.stderr
    assert "Traceback" not in unknown.stderr


def _crawl_args(*args: object) -> subprocess.CompletedProcess[str]:
    """``hcgraph crawl ARGS`` in a subprocess (options refused before anything is fetched)."""
    return subprocess.run(
        [sys.executable, "-m", "hcgraph", "crawl", *map(str, args)],
        capture_output=True, text=True, env=cli_env(), timeout=60,
    )  # fmt: skip


def test_max_stories_counts_stories_not_index_pages(
    dsite: Site, tmp_path: Path, run_cli: Any
) -> None:
    done, report = crawl_cli(
        run_cli, dsite, tmp_path, f"{ORIGIN}/sitemap-index.xml.gz", max_stories=2,
        concurrency=1,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert report["counts"]["stories"] == 2 and len(stories_in(tmp_path)) == 2
    assert report["counts"]["not_fetched"] == 1


def test_recrawl_skips_what_lastmod_says_is_unchanged(
    dsite: Site, tmp_path: Path, run_cli: Any
) -> None:
    seed = f"{ORIGIN}/sitemaps/stories.xml"
    done, first = crawl_cli(run_cli, dsite, tmp_path, seed, depth=0)
    assert done.returncode == 0 and first["counts"]["added"] == 2
    # Later: s1 is listed as unchanged since long before the crawl, s2 changed after it,
    # and s4 is new.
    dsite.add(dated("s2"), story(dated("s2"), headline="Edited"))
    dsite.add(dated("s4"), story(dated("s4")))
    dsite.add_file(
        "/sitemaps/stories.xml",
        sitemap_xml(
            [
                (page(dated("s1")), "2020-01-01T00:00:00Z"),
                (page(dated("s2")), "2999-01-01"),
                (page(dated("s4")), "2020-01-01"),
            ]
        ),
        "application/xml",
    )
    before = dsite.hits(dated("s1")), dsite.hits(dated("s2")), dsite.hits(dated("s4"))
    done, second = crawl_cli(run_cli, dsite, tmp_path, seed, depth=0)
    assert done.returncode == 0, done.stderr
    after = dsite.hits(dated("s1")), dsite.hits(dated("s2")), dsite.hits(dated("s4"))
    assert (after[0] - before[0], after[1] - before[1], after[2] - before[2]) == (0, 1, 1)
    c = second["counts"]
    assert (c["not_modified"], c["replaced"], c["added"]) == (1, 1, 1), c
    assert stories_in(tmp_path) == {page(dated(s)) for s in ("s1", "s2", "s4")}
    # --no-conditional asks for everything again
    done, _ = crawl_cli(run_cli, dsite, tmp_path, seed, depth=0, no_conditional=True)
    assert done.returncode == 0 and dsite.hits(dated("s1")) == after[0] + 1


# --- resume after kill -9 ---------------------------------------------------------------


def test_a_discovery_crawl_resumes_after_sigkill(crawl_server: CrawlServer, tmp_path: Path) -> None:
    from hcsample.corpus import DEFAULT_BASE_URL, generate_corpus

    corpus = generate_corpus(40, seed=28)
    prefix = crawl_server.prefix("discover")
    crawl_server.mount(prefix, corpus.site_files(), delay=0.04)
    urls = [str(s["url"]) for s in corpus.stories]
    # one edition page lists the first half, a sitemap the second half (no related links:
    # --follow leaves them out)
    crawl_server.route(
        prefix + "/editions/all/",
        Reply(body=index_html(*urls[:20]), headers={"Content-Type": "text/html"}),
    )
    crawl_server.route(
        prefix + "/sitemap.xml",
        Reply(body=sitemap_xml([(u, None) for u in urls[20:]]),
              headers={"Content-Type": "application/xml"}),
    )  # fmt: skip
    mirror = f"{DEFAULT_BASE_URL}={crawl_server.base}{prefix}"
    seeds = [f"{DEFAULT_BASE_URL}/editions/all/", f"{DEFAULT_BASE_URL}/sitemap.xml"]

    def command(store: Path) -> list[str]:
        return [
            sys.executable, "-m", "hcgraph", "crawl", *seeds, "--depth", "0",
            "--follow", "edition", "--mirror", mirror, "--ignore-robots",
            "--concurrency", "2", "--retries", "0", "--store", str(store),
        ]  # fmt: skip

    def hits() -> list[str]:
        return [h.path for h in crawl_server.hits_for(lambda p: p.startswith(prefix + "/"))]

    start = len(hits())
    store = tmp_path / "killed"
    proc = subprocess.Popen(
        command(store), env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while len(hits()) - start < 15 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    db = sqlite3.connect(store / "crawl" / "frontier.sqlite")
    kept = {u for (u,) in db.execute("SELECT url FROM urls WHERE state IN ('done', 'fetched')")}
    queued = db.execute("SELECT COUNT(*) FROM urls WHERE state = 'queued'").fetchone()[0]
    db.close()
    assert kept and queued, "killed mid-crawl"

    again = subprocess.run(command(store), env=cli_env(), capture_output=True, text=True,
                           timeout=180)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "(resumed)" in again.stdout
    paths = Counter(hits()[start:])
    whole = subprocess.run(command(tmp_path / "whole"), env=cli_env(), capture_output=True,
                           text=True, timeout=180)  # fmt: skip
    assert whole.returncode == 0, whole.stderr
    assert quads_of(store) == quads_of(tmp_path / "whole")
    assert stories_in(store) == set(urls)
    for url in kept:  # nothing fetched before the kill was fetched again
        assert paths[prefix + url.split(DEFAULT_BASE_URL, 1)[1]] == 1, url
