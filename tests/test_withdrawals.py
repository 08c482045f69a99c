"""Withdrawn stories: a stored story whose URL answers 404/410 on a later crawl (confirmed
by a second answer) is marked ``prov:invalidatedAtTime``, its graph kept; queries, check,
audit, maps and stats count current stories unless ``--include-withdrawn``; a story served
again is current again, as a new revision. Real loopback server and the real CLI."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hcgraph.archive import Archive
from hcgraph.crawling import FetchPolicy
from hcgraph.ingest import ingest_bytes, ingest_paths, withdraw_stories
from hcgraph.queries import CURRENT_ONLY, including_withdrawn, run_query, saved_queries
from hcgraph.rebuilding import rebuild
from hcgraph.stats import graph_stats
from hcgraph.store import Store
from hcgraph.viz import citation_graph
from hcsample.corpus import DEFAULT_BASE_URL, generate_corpus
from tests.crawlserver import CrawlServer, Reply, Site, page, quads_of, story
from tests.support.groundtruth import ground_truth

Run = Callable[..., subprocess.CompletedProcess[str]]
FIXTURES = Path(__file__).parent / "fixtures"
SEED_URL = "https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/"
INVALIDATED = "<http://www.w3.org/ns/prov#invalidatedAtTime>"


def _json(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def _reuse(rows: dict[str, Any]) -> dict[str, int]:
    """source-reuse JSON results → manifest id → stories."""
    return {
        b["manifest_id"]["value"]: int(b["stories"]["value"]) for b in rows["results"]["bindings"]
    }


def _expected_reuse(stories: list[dict[str, Any]], withdrawn: set[str]) -> dict[str, int]:
    citing = ground_truth(stories, withdrawn).manifest_citing_stories
    return {m: len(urls) for m, urls in citing.items() if len(urls) >= 2}


def _json_path(url: str) -> str:
    """The URL path of a generated story's JSON on the site."""
    return url.removeprefix(DEFAULT_BASE_URL) + "index.json"


@pytest.mark.slow
def test_a_story_gone_from_its_site_is_withdrawn_then_current_again(
    crawl_server: CrawlServer, run_cli: Run, tmp_path: Path
) -> None:
    corpus = generate_corpus(24, seed=5)
    stories = corpus.stories
    prefix = crawl_server.prefix("withdraw")
    crawl_server.mount(prefix, corpus.site_files())
    urls = [str(s["url"]) for s in stories]
    truth = ground_truth(stories)
    # the victim cites a reused manifest, so source-reuse changes when it goes
    reused = truth.source_reuse()
    victim = next(u for u in urls if truth.story_cited_manifests[u] & reused)
    store = tmp_path / "store"
    crawl = (
        "crawl", *urls, "--depth", "0", "--store", store, "--retries", "1",
        "--mirror", f"{DEFAULT_BASE_URL}={crawl_server.base}{prefix}",
    )  # fmt: skip
    first = run_cli(*crawl)
    assert first.returncode == 0, first.stderr

    victim_path = prefix + _json_path(victim)
    crawl_server.route(victim_path, Reply(410, b"gone", {"Content-Type": "text/html"}, etag=False))
    hits = crawl_server.count(victim_path)
    second = run_cli(*crawl)
    assert second.returncode == 0, second.stderr  # a withdrawal is no failure
    assert "withdrawn (404/410, kept, marked)" in second.stdout
    assert crawl_server.count(victim_path) == hits + 2  # confirmed by a retry
    report = json.loads((store / "crawl-report.json").read_text())
    assert report["counts"]["withdrawn"] == 1 and report["counts"]["failed"] == 0
    assert [(w["story"], w["status"]) for w in report["withdrawn"]] == [(victim, 410)]

    stats = _json(run_cli("stats", "--format", "json", "--store", store))
    assert (stats["stories"], stats["withdrawn"]) == (len(urls) - 1, 1)
    every = _json(run_cli("stats", "--format", "json", "--include-withdrawn", "--store", store))
    assert every["stories"] == len(urls)
    assert every["quads"] == stats["quads"]  # the graph is kept

    reuse = run_cli("query", "source-reuse", "--format", "json", "--store", store)
    assert _reuse(_json(reuse)) == _expected_reuse(stories, {victim})
    assert _reuse(_json(reuse)) != _expected_reuse(stories, set())
    all_reuse = run_cli(
        "query", "source-reuse", "--format", "json", "--include-withdrawn", "--store", store
    )
    assert _reuse(_json(all_reuse)) == _expected_reuse(stories, set())

    check = _json(run_cli("check", "--format", "json", "--shacl", "off", "--store", store))
    assert check["stories"] == len(urls) - 1 and victim not in check["findings"]
    check_all = _json(
        run_cli("check", "--format", "json", "--shacl", "off", "--include-withdrawn",
                "--store", store)
    )  # fmt: skip
    assert check_all["stories"] == len(urls)

    shown = run_cli("history", victim, "--store", store)
    assert shown.returncode == 0, shown.stderr
    assert "withdrawn since" in shown.stdout
    history = _json(run_cli("history", victim, "--format", "json", "--store", store))
    assert history["withdrawn_at"] and history["versions"][-1]["withdrawn"]

    crawled = quads_of(store)
    assert any(INVALIDATED in q and q.startswith(f"<{victim}>") for q in crawled)
    assert run_cli("rebuild", "--store", store).returncode == 0
    assert quads_of(store) == crawled  # rebuild replays the withdrawal from the archive

    # served again, edited: current again, a new revision of the withdrawn version
    back = next(s for s in stories if s["url"] == victim)
    edited = json.dumps({**back, "headline": "Back, edited"}).encode()
    crawl_server.route(victim_path, Reply(body=edited))
    third = run_cli(*crawl)
    assert third.returncode == 0, third.stderr
    report = json.loads((store / "crawl-report.json").read_text())
    assert report["counts"]["withdrawn"] == 0 and report["counts"]["replaced"] == 1
    stats = _json(run_cli("stats", "--format", "json", "--store", store))
    assert stats["stories"] == len(urls) and "withdrawn" not in stats
    reuse = run_cli("query", "source-reuse", "--format", "json", "--store", store)
    assert _reuse(_json(reuse)) == _expected_reuse(stories, set())
    with Store(store, read_only=True) as st:
        assert st.withdrawn_at(victim) is None
        sha = st.raw_sha256(victim) or ""
        chain = st.revision_chain(victim, sha)
        assert len(chain) == 2 and chain[0][2] is None and chain[1][2] is not None
    history = _json(run_cli("history", victim, "--format", "json", "--store", store))
    assert history["withdrawn_at"] is None
    assert [bool(v["withdrawn"]) for v in history["versions"]] == [True, False]
    crawled = quads_of(store)
    assert run_cli("rebuild", "--store", store).returncode == 0
    assert quads_of(store) == crawled


@pytest.fixture
def site(crawl_server: CrawlServer) -> Site:
    return Site(crawl_server)


FAST = FetchPolicy(timeout=0.5, retries=1, backoff_base=0.01)


@pytest.mark.slow
def test_5xx_timeouts_robots_and_one_404_do_not_withdraw(site: Site, tmp_path: Path) -> None:
    slugs = ("b", "c", "d", "e", "f")
    site.add("a", story("a", *(page(s) for s in slugs)))
    for slug in slugs:
        site.add(slug, story(slug))
    assert site.crawl(tmp_path, policy=FAST).counts["added"] == 6
    site.add("b", b"", Reply(503), status=503)  # every time
    site.add("c", story("c"), delay=2.0)  # slower than the timeout, every time
    site.add("d", story("d"), Reply(404, b"nope", etag=False))  # one 404, then fine again
    site.server.route(
        f"{site.prefix}/robots.txt",
        Reply(
            body=b"User-agent: *\nDisallow: /stories/e/\n", headers={"Content-Type": "text/plain"}
        ),
    )
    site.add("f", story("f"), Reply(404, b"nope", etag=False), Reply(503), Reply(503))
    report = site.crawl(tmp_path, policy=FAST)
    assert report.counts["withdrawn"] == 0
    failed = {f["url"].split("/")[-2] for f in report.failures}
    assert {"b", "c"} <= failed and "d" not in failed
    assert any("/stories/e/" in s["url"] for s in report.skipped)  # robots.txt refuses it
    with Store(tmp_path, read_only=True) as st:
        assert st.withdrawn_stories() == {}
        assert graph_stats(st)["stories"] == 6
    # f answered 404, then 503 (a failure): the next 404 is not confirmed by the one before
    site.add("f", story("f"), Reply(404, b"nope", etag=False))
    again = site.crawl(tmp_path, policy=FAST)
    assert again.counts["withdrawn"] == 0


@pytest.mark.slow
def test_served_again_with_the_same_bytes_a_304_makes_it_current(
    site: Site, tmp_path: Path
) -> None:
    site.add("a", story("a", page("b")))
    site.add("b", story("b"))
    site.crawl(tmp_path, policy=FAST)
    site.add("b", b"", Reply(404, b"nope", etag=False), status=404, etag=False)
    assert site.crawl(tmp_path, policy=FAST).counts["withdrawn"] == 1
    # the next crawl: the 404 before confirms the first 404 at once, no retry
    hits = site.hits("b")
    assert site.crawl(tmp_path, policy=FAST).counts["withdrawn"] == 1
    assert site.hits("b") == hits + 1
    site.add("b", story("b"))  # the same bytes: the server answers the old ETag with a 304
    back = site.crawl(tmp_path, policy=FAST)
    assert back.counts["withdrawn"] == 0 and back.counts["replaced"] == 1
    hit = site.server.hits_for(lambda p: p == site.path("b"))[-1]
    assert hit.headers.get("If-None-Match")
    with Store(tmp_path, read_only=True) as st:
        assert st.withdrawn_stories() == {}
        assert len(run_query(st, "source-stories", {"manifest_id": "1811111111111111111"})) == 2
    crawled = quads_of(tmp_path)
    rebuild(tmp_path)
    assert quads_of(tmp_path) == crawled
    records = [r.status for r in Archive(tmp_path / "archive").records() if "/b/" in r.url]
    assert records == [200, 404, 404, 404, 304]


@pytest.mark.slow
def test_rebuild_keeps_a_withdrawal_made_by_hand(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a", page("b")))
    site.add("b", story("b"))
    site.crawl(tmp_path, policy=FAST)
    with Store(tmp_path) as st:
        assert withdraw_stories(st, [page("b")]).count("withdrawn") == 1
    before = quads_of(tmp_path)
    report = rebuild(tmp_path)
    assert report.withdrawn == 1
    assert quads_of(tmp_path) == before


@pytest.mark.slow
def test_ingest_withdraw(run_cli: Run, tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert run_cli("ingest", FIXTURES, "--store", store).returncode == 0
    gone = run_cli("ingest", "--withdraw", SEED_URL, "--store", store)
    assert gone.returncode == 0, gone.stderr
    assert "1 withdrawn, 0 failed" in gone.stdout
    stats = _json(run_cli("stats", "--format", "json", "--store", store))
    assert (stats["stories"], stats["withdrawn"]) == (0, 1)
    reach = run_cli("query", "publisher-reach", "--format", "csv", "--store", store)
    assert reach.stdout.splitlines()[1:] == []
    reach = run_cli(
        "query", "publisher-reach", "--format", "csv", "--include-withdrawn", "--store", store
    )
    assert len(reach.stdout.splitlines()) > 1
    unknown = run_cli("ingest", "--withdraw", "https://nowhere.example/x/", "--store", store)
    assert unknown.returncode == 3
    assert (
        "failed: https://nowhere.example/x/: no story in the store has this URL" in unknown.stderr
    )
    assert "Traceback" not in unknown.stderr
    nothing = run_cli("ingest", "--store", store)
    assert nothing.returncode == 2 and "--withdraw URL" in nothing.stderr  # a usage error
    again = run_cli("ingest", FIXTURES, "--store", store)  # the same file: current again
    assert "1 replaced" in again.stdout
    stats = _json(run_cli("stats", "--format", "json", "--store", store))
    assert stats["stories"] == 1 and "withdrawn" not in stats


def test_withdrawn_stories_leave_maps_audit_and_queries(tmp_path: Path) -> None:
    corpus = generate_corpus(12, seed=3)
    folder = tmp_path / "stories"
    folder.mkdir()
    for i, doc in enumerate(corpus.stories):
        (folder / f"{i}.json").write_text(json.dumps(doc))
    gone = {str(corpus.stories[2]["url"]), str(corpus.stories[5]["url"])}
    with Store(tmp_path / "store") as st:
        ingest_paths(st, [folder])
        report = withdraw_stories(st, sorted(gone))
        assert report.count("withdrawn") == 2 and not report.failures
        assert withdraw_stories(st, sorted(gone)).count("withdrawn") == 2  # idempotent
        assert set(st.withdrawn_stories()) == gone
        truth = ground_truth(corpus.stories, gone)
        rows = run_query(st, "source-reuse").records()
        assert {r["manifest_id"]: r["stories"] for r in rows} == {
            m: len(u) for m, u in truth.manifest_citing_stories.items() if len(u) >= 2
        }
        reach = {
            r["name"]: (r["stories"], r["manifests"], r["claims"])
            for r in run_query(st, "publisher-reach").records()
        }
        assert reach == truth.publisher_reach  # claims: from the shared descriptions, all kept
        lag = {(r["story"], r["manifest_id"]) for r in run_query(st, "source-lag").records()}
        assert lag == set(truth.source_lag_days)
        uncited = run_query(st, "uncited-paragraphs").records()
        assert {r["story"] for r in uncited} == {u for u, _, _ in truth.uncited_paragraphs}
        graph = citation_graph(st, "reuse")
        drawn = {n for n, a in graph.nodes(data=True) if a["type"] == "Story"}
        assert drawn == set(truth.story_urls) and not drawn & gone
        every = citation_graph(st, "reuse", include_withdrawn=True)
        assert gone <= set(every.nodes)
        from hcgraph.provenance import audit

        audited = {s.url for s in audit(st).stories}
        assert audited == set(truth.story_urls)


@pytest.mark.slow
def test_push_sends_the_withdrawal(oxigraph: Any, run_cli: Run, tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert run_cli("ingest", FIXTURES, "--store", store).returncode == 0
    first = run_cli("push", "--endpoint", oxigraph.url, "--store", store)
    assert first.returncode == 0, first.stderr
    assert run_cli("ingest", "--withdraw", SEED_URL, "--store", store).returncode == 0
    second = run_cli("push", "--endpoint", oxigraph.url, "--verify", "--store", store)
    assert second.returncode == 0, second.stderr
    assert "pushed 1 graphs" in second.stdout  # the story graph, which holds the marker
    rows = oxigraph.select(
        "SELECT ?t WHERE { GRAPH ?g { ?s <http://www.w3.org/ns/prov#invalidatedAtTime> ?t } }"
    )
    assert len(rows) == 1


def test_every_saved_query_about_stories_leaves_withdrawn_ones_out() -> None:
    for name, query in saved_queries().items():
        if "?story" not in query.text:
            continue
        assert CURRENT_ONLY in query.text, name
        assert "invalidatedAtTime" not in including_withdrawn(query.text), name


def _cells(row: tuple[Any, ...]) -> tuple[str, ...]:
    """A row as texts, list cells' items sorted (GROUP_CONCAT's order is the engine's)."""
    texts = ("" if v is None else str(v.value if hasattr(v, "value") else v) for v in row)
    return tuple(" ".join(sorted(t.split(" "))) for t in texts)


def test_saved_queries_leave_withdrawn_stories_out_in_another_engine() -> None:
    """The saved query files as they are, in rdflib, give hcgraph's rows: the MINUS lines
    work on any SPARQL 1.1 engine, not only through hcgraph."""
    import io

    import rdflib

    from hcgraph.exporting import export

    corpus = generate_corpus(16, seed=9)
    gone = [str(corpus.stories[1]["url"]), str(corpus.stories[4]["url"])]
    with Store(None) as st:
        docs = [(json.dumps(s).encode(), f"{i}.json") for i, s in enumerate(corpus.stories)]
        assert ingest_bytes(st, docs).ok
        assert withdraw_stories(st, gone).count("withdrawn") == 2
        buf = io.BytesIO()
        export(st, "nquads", buf)
        dataset = rdflib.Dataset(default_union=True)
        dataset.parse(data=buf.getvalue(), format="nquads")
        differs = 0
        for name, query in saved_queries().items():
            if any(p.required for p in query.params):
                continue
            ours = run_query(st, query)
            mine = sorted(_cells(tuple(row.values())) for row in ours.records())
            theirs = sorted(_cells(tuple(r)) for r in dataset.query(query.text))  # type: ignore[arg-type]
            assert mine == theirs, name
            every = run_query(st, query, include_withdrawn=True)
            differs += len(every) != len(ours)
        assert differs >= 3  # the withdrawn stories do change answers
