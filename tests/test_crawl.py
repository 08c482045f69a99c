"""End-to-end crawl tests against the real loopback HTTP server (tests/crawlserver.py),
with faults injected per path. Each test mounts its own site under its own prefix and
crawls it through a mirror, so the IRIs are those of ``https://site.example``."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from hcgraph.archive import Archive
from hcgraph.crawling import CrawlReport, FetchPolicy, crawler
from hcgraph.crawling.frontier import Frontier
from hcgraph.rebuilding import rebuild
from hcgraph.store import Store
from tests.crawlserver import CrawlServer, Reply, Site, page, stories_in, story


@pytest.fixture
def site(crawl_server: CrawlServer) -> Site:
    return Site(crawl_server)


def failure(report: CrawlReport, slug: str) -> dict[str, Any]:
    return next(f for f in report.failures if f"/stories/{slug}/" in f["url"])


def test_503_twice_then_200(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a"), Reply(503), Reply(503))
    report = site.crawl(tmp_path)
    assert report.exit_code == 0 and report.counts["added"] == 1
    assert site.hits("a") == 3
    assert stories_in(tmp_path) == {page("a")}


def test_429_retry_after_is_honoured(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a"), Reply(429, headers={"Retry-After": "1"}))
    report = site.crawl(tmp_path)
    assert report.exit_code == 0
    hits = site.server.hits_for(lambda p: p == site.path("a"))
    assert len(hits) == 2
    # measured on the server: the retry came no earlier than Retry-After asked
    assert hits[1].at - hits[0].at >= 0.95


def test_slow_response_beyond_timeout_then_fine(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a"), Reply(200, story("a"), delay=1.5))
    report = site.crawl(tmp_path, policy=FetchPolicy(timeout=0.5, retries=2, backoff_base=0.01))
    assert report.exit_code == 0 and report.counts["added"] == 1
    assert site.hits("a") == 2


def test_timeouts_every_time_fail_with_reason(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a", page("slow")))
    site.add("slow", story("slow"), delay=1.0)
    report = site.crawl(tmp_path, policy=FetchPolicy(timeout=0.3, retries=1, backoff_base=0.01))
    assert report.exit_code == 3
    f = failure(report, "slow")
    assert f["kind"] == "timeout" and "timed out" in f["reason"]
    assert stories_in(tmp_path) == {page("a")}


def test_bad_bodies_are_failures_and_the_crawl_goes_on(site: Site, tmp_path: Path) -> None:
    site.add(
        "a",
        story("a", page("malformed"), page("html"), page("notstory"), page("invalid"), page("b")),
    )
    site.add("malformed", b'{"schema": "hangingcontext.desk/1", "type": ')
    site.add("html", b"<html><body>hello</body></html>", headers={"Content-Type": "text/html"})
    feed = {"schema": "other/2", "type": "feed", "id": "7", "url": page("feed"), "headline": "F"}
    site.add("notstory", json.dumps(feed).encode())
    bad = json.loads(story("invalid"))
    bad["sections"][0]["paragraphs"][0]["cites"][0]["claim_ids"] = [1.5]
    site.add("invalid", json.dumps(bad).encode())
    site.add("b", story("b"))
    report = site.crawl(tmp_path)
    assert report.exit_code == 3
    assert stories_in(tmp_path) == {page("a"), page("b")}
    assert "invalid JSON" in failure(report, "malformed")["reason"]
    html = failure(report, "html")
    assert html["status"] == 200 and "not JSON: Content-Type text/html" in html["reason"]
    assert failure(report, "notstory")["kind"] == "not-a-story"
    invalid = failure(report, "invalid")
    assert invalid["json_path"] == "sections[0].paragraphs[0].cites[0].claim_ids[0]"
    # every body, good or bad, is in the raw archive
    saved = json.loads((tmp_path / "crawl-report.json").read_text())
    assert {f["url"] for f in saved["failures"]} == {f["url"] for f in report.failures}
    archive = Archive(tmp_path / "archive")
    records = list(archive.records())
    assert len(records) == 6 and all(archive.get_body(r.sha256) for r in records if r.sha256)


def test_redirect_chain_is_followed_and_loop_detected(site: Site, tmp_path: Path) -> None:
    p = site.prefix
    site.add("a", story("a", page("r1"), page("loop1")))
    site.server.route(
        site.path("r1"), Reply(301, headers={"Location": f"{p}/stories/r2/index.json"})
    )
    site.server.route(site.path("r2"), Reply(302, headers={"Location": "../target/index.json"}))
    site.add("target", story("target"))
    site.server.route(
        site.path("loop1"), Reply(302, headers={"Location": f"{p}/stories/loop2/index.json"})
    )
    site.server.route(
        site.path("loop2"), Reply(307, headers={"Location": f"{p}/stories/loop1/index.json"})
    )
    report = site.crawl(tmp_path)
    assert stories_in(tmp_path) == {page("a"), page("target")}
    assert "redirect loop" in failure(report, "loop1")["reason"]
    assert site.hits("target") == 1 and site.hits("loop1") == 1


def test_redirect_off_site_is_refused(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a", page("away")))
    site.server.route(site.path("away"), Reply(302, headers={"Location": "http://127.0.0.2:9/x"}))
    report = site.crawl(tmp_path)
    assert "refused" in failure(report, "away")["reason"]


def test_gzip_body(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a"), gzip=True)
    report = site.crawl(tmp_path)
    assert report.exit_code == 0 and stories_in(tmp_path) == {page("a")}
    hit = site.server.hits_for(lambda p: p == site.path("a"))[0]
    assert "gzip" in hit.headers.get("Accept-Encoding", "")


def test_oversized_body_is_aborted(site: Site, tmp_path: Path) -> None:
    big = story("big", dek="x" * 50_000)
    site.add("a", story("a", page("big"), page("bomb")))
    site.add("big", big)
    site.add("bomb", story("bomb", dek="y" * 200_000), gzip=True)  # small on the wire
    report = site.crawl(tmp_path, policy=FetchPolicy(max_bytes=20_000, retries=0))
    assert failure(report, "big")["kind"] == "too-large"
    assert failure(report, "bomb")["kind"] == "too-large"
    assert stories_in(tmp_path) == {page("a")}


def test_related_link_cycles_terminate(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a", page("b")))
    site.add("b", story("b", page("c"), page("a")))
    site.add("c", story("c", page("a"), page("b"), page("c")))
    report = site.crawl(tmp_path, depth=10)
    assert report.exit_code == 0 and report.counts["added"] == 3
    assert [site.hits(s) for s in "abc"] == [1, 1, 1]


def test_404_related_links_are_reported(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a", page("missing")))
    report = site.crawl(tmp_path)
    assert report.exit_code == 3
    f = failure(report, "missing")
    assert f["status"] == 404 and f["linked_from"] == page("a") + "index.json"


def test_off_site_and_file_links_are_never_fetched(site: Site, tmp_path: Path) -> None:
    before = len(site.server.hits)
    site.add(
        "a",
        story("a", "file:///etc/passwd", "https://evil.example/stories/x/", "javascript:alert(1)",
              f"{site.server.base}/stories/loopback/", "../b/"),
    )  # fmt: skip
    site.add("b", story("b"))
    report = site.crawl(tmp_path)
    assert report.exit_code == 0
    assert stories_in(tmp_path) == {page("a"), page("b")}  # the relative link resolved
    reasons = {s["url"]: s["reason"] for s in report.skipped}
    assert "not allowed" in reasons["file:///etc/passwd"]
    assert "off-site" in reasons["https://evil.example/stories/x/"]
    assert "off-site" in reasons[f"{site.server.base}/stories/loopback/"]
    paths = {h.path for h in site.server.hits[before:]}
    assert paths <= {site.path("a"), site.path("b"), f"{site.prefix}/robots.txt"}


def test_one_story_under_two_urls(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a", page("b"), page("b-twin")))
    site.add("b", story("b"))
    b_id = json.loads(story("b"))["id"]
    site.add("b-twin", story("b-twin", id=b_id))  # the same story (same id) at its own URL
    report = site.crawl(tmp_path)
    assert report.exit_code == 0
    # b and b-twin are fetched concurrently: whichever is processed first is stored
    stored = stories_in(tmp_path)
    assert stored in ({page("a"), page("b")}, {page("a"), page("b-twin")})
    assert report.counts["duplicates"] == 1
    assert "same story as" in report.duplicates[0]["reason"]
    # Served under another page's URL, the same bytes are refused (issue 14: identity).


def test_robots_txt_disallow(site: Site, tmp_path: Path) -> None:
    site.server.route(
        f"{site.prefix}/robots.txt",
        Reply(
            body=b"User-agent: *\nDisallow: /stories/private/\n",
            headers={"Content-Type": "text/plain"},
        ),
    )
    site.add("a", story("a", page("private"), page("b")))
    site.add("private", story("private"))
    site.add("b", story("b"))
    report = site.crawl(tmp_path)
    assert stories_in(tmp_path) == {page("a"), page("b")}
    assert site.hits("private") == 0
    assert "robots.txt" in report.skipped[0]["reason"]
    ignored = site.crawl(tmp_path / "ignored", ignore_robots=True)
    assert ignored.counts["added"] == 3


def test_user_agent_names_hcgraph_and_contact(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a"))
    site.crawl(tmp_path, contact="ops@example.org")
    ua = site.server.hits_for(lambda p: p == site.path("a"))[0].headers["User-Agent"]
    assert ua.startswith("hcgraph/") and "ops@example.org" in ua


def test_max_stories_caps_the_crawl(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a", *(page(f"s{i}") for i in range(8))))
    for i in range(8):
        site.add(f"s{i}", story(f"s{i}"))
    report = site.crawl(tmp_path, max_stories=4, concurrency=2)
    assert report.counts["stories"] == 4 and len(stories_in(tmp_path)) == 4
    assert report.counts["not_fetched"] == 5


def test_recrawl_is_conditional_and_records_revisions(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a", page("b")))
    site.add("b", story("b"))
    first = site.crawl(tmp_path)
    assert first.counts["added"] == 2
    site.add("b", story("b", headline="Story b, corrected"))  # b changes on the server
    second = site.crawl(tmp_path)
    assert second.counts["not_modified"] == 1 and second.counts["replaced"] == 1
    hits = site.server.hits_for(lambda p: p == site.path("a"))
    assert hits[-1].headers.get("If-None-Match")  # the validator from the first crawl
    with Store(tmp_path, read_only=True) as st:
        rows = list(st.query("SELECT ?h WHERE { ?s schema:headline ?h }"))
        assert {str(r[0].value) for r in rows} == {"Story a", "Story b, corrected"}
        revisions = list(st.query("SELECT ?new ?old WHERE { ?new prov:wasRevisionOf ?old }"))
        assert len(revisions) == 1


def test_a_304_reads_the_archived_body_once(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old body is read (and its hash checked) before the conditional request; on a 304
    that same copy is processed, not read from the archive a second time."""
    site.add("a", story("a", page("b")))
    site.add("b", story("b"))
    assert site.crawl(tmp_path).counts["added"] == 2
    reads: list[str] = []
    real = Archive.get_body

    def get_body(self: Archive, sha256: str) -> bytes:
        reads.append(sha256)
        return real(self, sha256)

    monkeypatch.setattr(Archive, "get_body", get_body)
    again = site.crawl(tmp_path)
    assert again.counts["not_modified"] == 2 and again.exit_code == 0
    assert len(reads) == 2 and len(set(reads)) == 2  # each old body once
    with Store(tmp_path, read_only=True) as st:
        assert len(list(st.query("SELECT ?h WHERE { ?s schema:headline ?h }"))) == 2


def test_recrawl_fetches_whole_what_the_archive_holds_damaged(site: Site, tmp_path: Path) -> None:
    """A 304 would confirm an archived copy whose bytes a disk damaged: the re-crawl asks
    unconditionally instead (and a damaged body never stops the crawl)."""
    site.add("a", story("a", headline="Story a, kept whole"))
    assert site.crawl(tmp_path).counts["added"] == 1
    (pack,) = (tmp_path / "archive" / "packs").glob("*.pack")
    data = pack.read_bytes()
    at = data.index(b"kept whole")
    pack.write_bytes(data[:at] + b"\0" * 10 + data[at + 10 :])
    again = site.crawl(tmp_path)
    assert again.exit_code == 0 and again.counts["not_modified"] == 0
    hits = site.server.hits_for(lambda p: p == site.path("a"))
    assert len(hits) == 2 and not hits[-1].headers.get("If-None-Match")
    archive = Archive(tmp_path / "archive")
    (latest,) = [r for r in archive.records() if r.url.endswith("/a/index.json")][-1:]
    assert latest.sha256 is not None and b"kept whole" in archive.get_body(latest.sha256)


def test_a_resume_fetches_again_a_body_the_archive_holds_damaged(
    site: Site, tmp_path: Path
) -> None:
    """An interrupted run left a URL fetched but not processed, and its archived body was
    damaged since: the resume fetches it again instead of failing on it."""
    site.add("a", story("a", page("b")))
    site.add("b", story("b", headline="Story b, kept whole"))
    assert site.crawl(tmp_path).counts["added"] == 2
    b = f"https://site.example{site.path('b').removeprefix(site.prefix)}"
    frontier = Frontier(tmp_path / "crawl" / "frontier.sqlite")
    (row,) = [r for r in frontier.rows("done") if r.url == b]
    assert row.sha256 is not None
    frontier.mark_fetched(b, row.sha256, b, "2026-12-01T10:00:00+00:00", 200)
    frontier.set_setting("status", "running")  # as an interrupted run leaves it
    frontier.close()
    (pack,) = (tmp_path / "archive" / "packs").glob("*.pack")
    data = pack.read_bytes()
    at = data.index(b"kept whole")
    pack.write_bytes(data[:at] + b"\0" * 10 + data[at + 10 :])
    hits = len(site.server.hits_for(lambda p: p == site.path("b")))
    resumed = site.crawl(tmp_path)
    assert resumed.exit_code == 0 and resumed.resumed
    assert len(site.server.hits_for(lambda p: p == site.path("b"))) == hits + 1
    assert page("b") in stories_in(tmp_path)


@pytest.mark.timeout(60)
def test_a_fetcher_that_dies_of_an_error_ends_the_crawl_instead_of_hanging_it(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug (or an error nobody foresaw) between a fetch and its hand-over kills one fetcher
    task: the crawl stops with that error; the others no longer wait for its URL for ever."""
    site.add("a", story("a", page("b"), page("c")))
    site.add("b", story("b"))
    site.add("c", story("c"))
    real = crawler.identity_mismatch

    def broken(body: bytes, fetched: list[str], suffix: str) -> str | None:
        if "/b/" in fetched[0]:
            raise RuntimeError("a bug in the identity check")
        return real(body, fetched, suffix)

    monkeypatch.setattr(crawler, "identity_mismatch", broken)
    with pytest.raises(RuntimeError, match="a bug in the identity check"):
        site.crawl(tmp_path)
    monkeypatch.setattr(crawler, "identity_mismatch", real)
    assert site.crawl(tmp_path).exit_code == 0  # the resume finishes the job
    assert stories_in(tmp_path) == {page("a"), page("b"), page("c")}


def test_local_file_seed_follows_links_over_http(site: Site, tmp_path: Path) -> None:
    local = tmp_path / "a.json"
    local.write_bytes(story("a", page("b")))
    site.add("b", story("b"))
    report = site.crawl(tmp_path / "store", str(local))
    assert report.exit_code == 0
    assert stories_in(tmp_path / "store") == {page("a"), page("b")}


def test_local_seed_whose_name_is_not_utf8(site: Site, tmp_path: Path) -> None:
    """A seed file named in bytes that are not UTF-8: crawled, its name kept with a ``\\xff``
    escape in the report and the graph, and the archive rebuilds it."""
    local = Path(os.fsdecode(bytes(tmp_path) + b"/a\xff.json"))
    local.write_bytes(story("a"))
    report = site.crawl(tmp_path / "store", str(local))
    assert report.exit_code == 0 and stories_in(tmp_path / "store") == {page("a")}
    saved = json.loads((tmp_path / "store" / "crawl-report.json").read_text())
    assert saved["seeds"] == [f"{tmp_path}/a\\xff.json"]
    rebuild(tmp_path / "store")
    with Store(tmp_path / "store", read_only=True) as st:
        rows = st.query("SELECT ?l WHERE { ?i hc:sourceLocation ?l }")
        assert [str(r[0].value) for r in rows] == [f"{tmp_path}/a\\xff.json"]


def test_fifo_seed_is_a_failure_not_a_hang(site: Site, tmp_path: Path) -> None:
    """A FIFO among the seed files is refused as ingest refuses it: opening it would block
    the crawl for good, before its event loop (and its signal handling) runs."""
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    site.add("a", story("a"))
    reports: list[CrawlReport] = []
    crawling = threading.Thread(
        target=lambda: reports.append(site.crawl(tmp_path / "store", str(fifo), page("a"))),
        daemon=True,
    )
    crawling.start()
    crawling.join(60)
    if crawling.is_alive():  # blocked in open(): a writer lets it go, and the test fails
        with open(fifo, "wb"):
            pass
        crawling.join(60)
        pytest.fail("the crawl blocked on a FIFO seed")
    (refused,) = [f for f in reports[0].failures if f["url"] == fifo.resolve().as_uri()]
    assert refused["reason"] == "not a regular file (a FIFO): not read"
    assert stories_in(tmp_path / "store") == {page("a")}


def test_robots_txt_unreachable_is_a_failure_not_a_skip(site: Site, tmp_path: Path) -> None:
    site.server.route(f"{site.prefix}/robots.txt", Reply(503))
    site.add("a", story("a"))
    report = site.crawl(tmp_path, policy=FetchPolicy(retries=1, backoff_base=0.01))
    assert report.exit_code == 3
    assert failure(report, "a")["kind"] == "robots" and site.hits("a") == 0


def test_second_crawl_on_the_same_store_is_refused(site: Site, tmp_path: Path) -> None:
    from hcgraph.crawling.crawler import _lock
    from hcgraph.errors import CrawlError

    site.add("a", story("a"))
    held = _lock(tmp_path / "crawl" / "lock")  # as a running crawl holds it
    try:
        with pytest.raises(CrawlError, match="another crawl is running"):
            site.crawl(tmp_path)
    finally:
        held.close()
    assert site.crawl(tmp_path).exit_code == 0


def test_cli_failure_line_gives_each_problem_its_own_path(
    site: Site, tmp_path: Path, run_cli: Any
) -> None:
    """Several schema errors in one crawled story: the failure line names each with its
    own JSON path, as ingest does; the first path used to trail the whole list ("msg1;
    related[1].url: msg2; related[2].url: msg3 at related[0].url")."""
    bad = json.loads(story("bad"))
    bad["related"] = [{"url": n, "headline": "rel"} for n in (1, 2, 3)]
    site.add("bad", json.dumps(bad).encode())
    proc = run_cli("crawl", page("bad"), "--mirror", site.mirror, "--store", tmp_path / "s")
    assert proc.returncode == 3, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("failed:")]
    (tmp_path / "bad.json").write_bytes(json.dumps(bad).encode())
    ingest = run_cli("ingest", tmp_path / "bad.json", "--store", tmp_path / "i")
    expected = [line.split(": ", 2)[2] for line in ingest.stderr.splitlines()]
    assert len(expected) == 3 and expected[0].startswith("related[0].url: ")
    assert lines == [f"failed: {page('bad')}index.json [200]: {'; '.join(expected)}"]
    assert " at related" not in proc.stderr


def test_cli_failure_line_escapes_what_the_server_sent(
    site: Site, tmp_path: Path, run_cli: Any
) -> None:
    """A Content-Type header carrying escape sequences (h11 lets ESC, BEL and 8-bit bytes
    through): the failure line shows them as ``\\x1b`` text, never as raw control codes."""
    site.add("a", story("a"), headers={"Content-Type": "text/\x1b[31mx\x1b]0:pwned\x07\x9b2J"})
    proc = run_cli("crawl", page("a"), "--mirror", site.mirror, "--store", tmp_path / "s")
    assert proc.returncode == 3, proc.stderr
    for raw in ("\x1b", "\x07", "\x9b"):
        assert raw not in proc.stdout + proc.stderr
    assert "Content-Type text/\\x1b[31mx\\x1b]0:pwned\\x07\\x9b2j" in proc.stderr  # lower-cased
