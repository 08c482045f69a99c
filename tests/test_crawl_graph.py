"""What a crawl builds: depth semantics against the generator's ground truth, the graph
rebuilt from the raw archive, and the CLI's exit codes. Real loopback server throughout."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from hcgraph.crawling import CrawlOptions, FetchPolicy, crawl
from hcgraph.rebuilding import rebuild
from hcsample.corpus import DEFAULT_BASE_URL, generate_corpus
from tests.crawlserver import CrawlServer, Site, page, quads_of, stories_in, story
from tests.support.groundtruth import ground_truth

FAST = FetchPolicy(timeout=5.0, retries=1, backoff_base=0.01)


@pytest.fixture(scope="module")
def corpus_site(crawl_server: CrawlServer) -> tuple[list[dict[str, object]], str]:
    """40 generated stories served under one prefix; returns (stories, mirror spec)."""
    corpus = generate_corpus(40, seed=11)
    prefix = crawl_server.prefix("corpus")
    crawl_server.mount(prefix, corpus.site_files())
    return corpus.stories, f"{DEFAULT_BASE_URL}={crawl_server.base}{prefix}"


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_depth_matches_ground_truth(corpus_site, tmp_path: Path, depth: int) -> None:
    stories, mirror = corpus_site
    seeds = [str(stories[0]["url"]), str(stories[7]["url"])]
    options = CrawlOptions(depth=depth, mirrors=(mirror,), policy=FAST)
    crawl(seeds, tmp_path, options)
    expected = ground_truth(stories).within_hops(seeds, depth)
    assert stories_in(tmp_path) == set(expected)
    if depth == 3:
        assert len(expected) > 10  # the test reaches a real part of the corpus


def test_rebuild_gives_the_crawled_graph(corpus_site, tmp_path: Path) -> None:
    stories, mirror = corpus_site
    store = tmp_path / "store"
    options = CrawlOptions(depth=2, mirrors=(mirror,), policy=FAST)
    crawl([str(stories[3]["url"])], store, options)
    crawled = quads_of(store)
    assert crawled
    report = rebuild(store)
    assert report.exit_code == 0 and report.stories == len(stories_in(store))
    assert quads_of(store) == crawled
    # and into a fresh store from the archive alone
    rebuild(tmp_path / "fresh", store / "archive")
    assert quads_of(tmp_path / "fresh") == crawled


def test_rebuild_replays_revisions(crawl_server: CrawlServer, tmp_path: Path) -> None:
    site = Site(crawl_server)
    site.add("a", story("a", page("b")))
    site.add("b", story("b"))
    site.crawl(tmp_path)
    site.add("b", story("b", headline="changed"))
    site.crawl(tmp_path)
    crawled = quads_of(tmp_path)
    assert any("wasRevisionOf" in q for q in crawled)
    report = rebuild(tmp_path)
    assert quads_of(tmp_path) == crawled
    # b's two versions: added, then replaced; a's unchanged re-fetch is not replayed
    assert report.counts == Counter(o.status for o in report.outcomes if o.ok)
    assert report.counts == {"added": 2, "replaced": 1} and report.stories == 2
    # counts only (as the CLI runs it): the same figures and graph, no outcome kept
    lean = rebuild(tmp_path, keep_outcomes=False)
    assert quads_of(tmp_path) == crawled and lean.outcomes == []
    assert (lean.counts, lean.stories, lean.bodies) == (report.counts, 2, report.bodies)


def test_rebuild_names_a_body_damaged_on_disk_and_rebuilds_the_rest(
    crawl_server: CrawlServer, run_cli, tmp_path: Path
) -> None:
    """Zeros over one archived body (a disk that lost a page): that fetch is reported by URL
    and skipped; every other story is rebuilt; the exit code says something is missing."""
    site = Site(crawl_server)
    site.add("a", story("a", page("b")))
    site.add("b", story("b", headline="the damaged one"))
    site.crawl(tmp_path)
    (pack,) = (tmp_path / "archive" / "packs").glob("*.pack")
    data = pack.read_bytes()
    at = data.index(b"the damaged one")
    pack.write_bytes(data[:at] + b"\0" * 15 + data[at + 15 :])
    result = run_cli("rebuild", "--store", tmp_path)
    assert result.returncode == 3 and "Traceback" not in result.stderr
    assert "unreadable body: https://site.example/stories/b/index.json" in result.stderr
    assert "corrupt" in result.stderr
    summary = "rebuilt 1 stories from 2 archived fetches (2 distinct bodies, 0 not stories, "
    assert summary + "1 unreadable)" in " ".join(result.stdout.split())
    assert stories_in(tmp_path) == {page("a")}


def test_rebuild_refuses_to_drop_stories_the_archive_does_not_hold(
    crawl_server: CrawlServer, run_cli, tmp_path: Path
) -> None:
    """A story ingested from a local file, and a crawled one a local file replaced, are not
    in the archive: rebuild names them and changes nothing, unless --drop-unarchived."""
    site = Site(crawl_server)
    site.add("a", story("a", page("b")))
    site.add("b", story("b"))
    site.crawl(tmp_path)
    (tmp_path / "c.json").write_bytes(story("c"))
    (tmp_path / "b.json").write_bytes(story("b", headline="b, edited locally"))
    for name, extra in (("c.json", []), ("b.json", ["--replace"])):
        ingested = run_cli("ingest", tmp_path / name, "--store", tmp_path, *extra)
        assert ingested.returncode == 0, ingested.stderr
    before = quads_of(tmp_path)
    refused = run_cli("rebuild", "--store", tmp_path)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    message = " ".join(refused.stderr.split())
    assert "2 stories in the store are not in the archive" in message
    assert f"{page('b')}, {page('c')}. A rebuild would drop them" in message
    assert quads_of(tmp_path) == before  # nothing touched
    dropped = run_cli("rebuild", "--store", tmp_path, "--drop-unarchived")
    assert dropped.returncode == 0, dropped.stderr
    assert stories_in(tmp_path) == {page("a"), page("b")}  # b as crawled, c left out
    assert "b, edited locally" not in "".join(quads_of(tmp_path))


def test_rebuild_without_archive_is_a_user_error(run_cli, tmp_path: Path) -> None:
    result = run_cli("rebuild", "--store", tmp_path / "none")
    assert result.returncode == 1
    assert result.stderr.startswith("error: ") and "no raw archive" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_crawl_exit_codes_and_report(
    crawl_server: CrawlServer, run_cli, tmp_path: Path
) -> None:
    site = Site(crawl_server)
    site.add("a", story("a", page("b")))
    site.add("b", story("b"))
    ok = run_cli("crawl", page("a"), "--mirror", site.mirror, "--store", tmp_path / "ok")
    assert ok.returncode == 0, ok.stderr
    assert "stories stored" in ok.stdout and "crawl complete" in ok.stdout
    report = json.loads((tmp_path / "ok" / "crawl-report.json").read_text())
    assert report["counts"]["added"] == 2 and report["exit_code"] == 0

    site.add("c", story("c", page("gone")))
    partial = run_cli(
        "crawl", page("c"), "--mirror", site.mirror, "--store", tmp_path / "partial",
        "--report", tmp_path / "r.json", "--retries", "0",
    )  # fmt: skip
    assert partial.returncode == 3
    assert "failed:" in partial.stderr and "/stories/gone/index.json [404]" in partial.stderr
    failures = json.loads((tmp_path / "r.json").read_text())["failures"]
    assert [f["status"] for f in failures] == [404]

    for bad in (["not-a-url-or-file"], ["file:///etc/passwd"], [page("a"), "--mirror", "nope"]):
        result = run_cli("crawl", *bad, "--store", tmp_path / "bad")
        assert result.returncode == 1, bad
        assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr


def test_cli_help_has_examples(run_cli) -> None:
    for command in ("crawl", "rebuild", "demo"):
        result = run_cli(command, "--help")
        assert result.returncode == 0 and "Example:" in result.stdout
