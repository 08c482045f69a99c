"""Issue 14, item 3: a fetched story is accepted only under the URL it was fetched from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hcgraph.archive import Archive
from hcgraph.crawling.identity_check import identity_mismatch
from hcgraph.store import Store
from tests.crawlserver import CrawlServer, Reply, Site, page, stories_in, story

pytestmark = pytest.mark.slow


@pytest.fixture
def site(crawl_server: CrawlServer) -> Site:
    return Site(crawl_server)


def _failure(report: Any, slug: str) -> dict[str, Any]:
    return next(f for f in report.failures if f"/stories/{slug}/" in f["url"])


def test_imposter_cannot_replace_victim(site: Site, tmp_path: Path) -> None:
    victim = story("victim")
    fake = json.loads(story("imposter"))
    fake["url"] = page("victim")
    fake["id"] = json.loads(victim)["id"]
    fake["headline"] = "Forged"
    site.add("a", story("a", page("imposter"), page("victim")))
    site.add("imposter", json.dumps(fake).encode())
    site.add("victim", victim)
    report = site.crawl(tmp_path, concurrency=1)
    assert stories_in(tmp_path) == {page("a"), page("victim")}
    f = _failure(report, "imposter")
    assert f["kind"] == "identity-mismatch"
    assert page("victim") in f["reason"] and "/stories/imposter/" in f["reason"]
    with Store(tmp_path, read_only=True) as st:
        rows = st.query(
            f"SELECT ?h WHERE {{ <{page('victim')}> <https://schema.org/headline> ?h }}"
        )
        assert [str(r[0].value) for r in rows] == ["Story victim"]
    # the body is kept in the archive
    archive = Archive(tmp_path / "archive")
    (rec,) = [r for r in archive.records() if r.url.endswith("/imposter/index.json")]
    assert rec.sha256 is not None and archive.get_body(rec.sha256) == json.dumps(fake).encode()


def test_off_scope_iri_is_refused(site: Site, tmp_path: Path) -> None:
    doc = json.loads(story("mint"))
    doc["url"] = "https://evil.example/stories/mint/"
    site.add("a", story("a", page("mint")))
    site.add("mint", json.dumps(doc).encode())
    report = site.crawl(tmp_path)
    assert stories_in(tmp_path) == {page("a")}
    assert _failure(report, "mint")["kind"] == "identity-mismatch"


def test_redirect_in_scope_is_accepted(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a", page("old")))
    site.add("old", b"", Reply(301, headers={"Location": f"{site.prefix}/stories/new/index.json"}))
    site.add("new", story("new"))
    report = site.crawl(tmp_path)
    assert report.exit_code == 0, report.failures
    assert stories_in(tmp_path) == {page("a"), page("new")}


@pytest.mark.parametrize(
    ("fetched", "declared", "ok"),
    [
        (["https://s.example/stories/x/index.json"], "https://s.example/stories/x/", True),
        (["https://s.example/stories/x/index.json"], "https://S.example:443/stories/x", True),
        (["https://s.example/stories/x/index.json"], "https://s.example/stories/y/", False),
        (
            ["https://s.example/stories/x/index.json", "https://s.example/stories/y/index.json"],
            "https://s.example/stories/y/",
            True,
        ),
    ],
)
def test_identity_rule(fetched: list[str], declared: str, ok: bool) -> None:
    body = story("x", url=declared)
    assert (identity_mismatch(body, fetched) is None) is ok


@pytest.mark.parametrize(
    "encode",
    [
        pytest.param(lambda text: text.encode("utf-16"), id="utf-16"),
        pytest.param(lambda text: text.encode("utf-32-le"), id="utf-32"),
    ],
)
def test_identity_is_checked_in_every_encoding_processing_accepts(encode: Any) -> None:
    """The check reads bodies with a fast parser; what that parser refuses but processing
    still stores (its lenient path) must be checked all the same."""
    from hcgraph.model import parse_story

    doc = json.loads(story("x", url="https://s.example/stories/victim/"))
    body = encode(json.dumps(doc, ensure_ascii=False))
    assert parse_story(body, "imposter").url == "https://s.example/stories/victim/"
    mismatch = identity_mismatch(body, ["https://s.example/stories/x/index.json"])
    assert mismatch is not None and "stories/victim/" in mismatch


def test_identity_check_survives_hostile_nesting() -> None:
    deep = b'{"schema": "hangingcontext.desk/1", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert identity_mismatch(deep, ["https://s.example/stories/x/index.json"]) is None


def test_local_file_may_not_replace_crawled_story(site: Site, tmp_path: Path, invoke: Any) -> None:
    site.add("a", story("a"))
    site.crawl(tmp_path / "store")
    local = json.loads(story("a"))
    local["headline"] = "Local edit"
    path = tmp_path / "a.json"
    path.write_text(json.dumps(local))
    result = invoke("ingest", path, "--store", tmp_path / "store")
    assert result.exit_code == 3
    assert "crawled from" in result.stderr and "--replace" in result.stderr
    same = tmp_path / "same.json"
    same.write_bytes(story("a"))  # identical bytes: unchanged, not refused
    assert invoke("ingest", same, "--store", tmp_path / "store").exit_code == 0
    result = invoke("ingest", path, "--replace", "--store", tmp_path / "store")
    assert result.exit_code == 0 and "1 replaced" in result.stdout
