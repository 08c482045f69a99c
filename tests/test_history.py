"""``hcgraph history``: a real crawl (loopback server) sees a story change twice."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from hcgraph import Store, ingest_bytes
from hcgraph.errors import ProvenanceError
from hcgraph.model import parse_story
from hcgraph.provenance.versions import diff_stories, history, word_diff
from tests.crawlserver import CrawlServer, Site, page, story

pytestmark = pytest.mark.slow

M1, M2 = "1811111111111111111", "1813333333333333333"
C1, C2, C3 = "1822222222222222222", "1824444444444444444", "1825555555555555555"


def _v1() -> bytes:
    return story("a", sections=[{"heading": "h", "paragraphs": [
        {"markdown": "The first claim stands.", "cites": [
            {"manifest_id": M1, "claim_ids": [C1]}]},
        {"markdown": "A second paragraph, soon gone.", "cites": [
            {"manifest_id": M1, "claim_ids": [C3]}]}]}])  # fmt: skip


def _v2() -> bytes:
    return story("a", sections=[{"heading": "h", "paragraphs": [
        {"markdown": "The first claim stands, corrected.", "cites": [
            {"manifest_id": M1, "claim_ids": [C1]}]},
        {"markdown": "A second paragraph, soon gone.", "cites": [
            {"manifest_id": M1, "claim_ids": [C3]}]},
        {"markdown": "New evidence from a second source.", "cites": [
            {"manifest_id": M2, "claim_ids": [C2]}]}]}],
        manifests=[{"manifest_id": M1, "source_name": "arxiv"},
                   {"manifest_id": M2, "title": "Second", "source_name": "blog"}],
        corrections=[{"date": "2026-10-22", "text": "Fixed the first paragraph."}])  # fmt: skip


def _v3() -> bytes:
    doc = json.loads(_v2())
    doc["headline"] = "Story a, updated"
    del doc["sections"][0]["paragraphs"][1]
    return json.dumps(doc).encode()


@pytest.fixture
def site(crawl_server: CrawlServer) -> Site:
    return Site(crawl_server)


def test_crawl_sees_a_story_change_twice(site: Site, tmp_path: Path, invoke: Any) -> None:
    bodies = [_v1(), _v2(), _v3()]
    for body in bodies:
        site.add("a", body)
        assert site.crawl(tmp_path, page("a")).exit_code == 0
    site.crawl(tmp_path, page("a"))  # unchanged: a 304 re-confirms version 3
    with Store(tmp_path, read_only=True) as st:
        h = history(st, page("a"))
    shas = [hashlib.sha256(b).hexdigest() for b in bodies]
    assert [v.sha256 for v in h.versions] == shas
    assert [v.in_graph for v in h.versions] == ["revision", "revision", "current"]
    assert [v.fetches for v in h.versions] == [1, 1, 2]
    assert all(v.archived and v.first_seen for v in h.versions)
    assert h.versions[0].first_seen < h.versions[1].first_seen < h.versions[2].first_seen  # type: ignore[operator]
    assert h.versions[0].changes == []
    v2 = {(c.kind, c.what) for c in h.versions[1].changes}
    assert v2 == {
        ("paragraph edited", "s1-p1"),
        ("paragraph added", "s1-p3"),
        ("citation added", f"{M2}/{C2}"),
        ("source added", M2),
        ("correction added", "2026-10-22"),
    }
    edited = next(c for c in h.versions[1].changes if c.kind == "paragraph edited")
    assert edited.diff == "The first claim [-stands.-] {+stands, corrected.+}"
    v3 = {(c.kind, c.what) for c in h.versions[2].changes}
    assert v3 == {
        ("headline changed", "headline"),
        ("paragraph removed", "s1-p2"),
        ("citation removed", f"{M1}/{C3}"),
    }
    # The CLI: table, json, md.
    res = invoke("history", page("a"), "--store", tmp_path)
    assert res.exit_code == 0 and shas[2][:12] in res.output and "paragraph edited" in res.output
    res = invoke("history", page("a"), "--format", "json", "--store", tmp_path)
    assert [v["sha256"] for v in json.loads(res.output)["versions"]] == shas
    res = invoke("history", page("a"), "--format", "md", "--store", tmp_path)
    assert "{+stands, corrected.+}" in res.output.replace("\\", "")
    res = invoke("history", page("zzz"), "--store", tmp_path)
    assert res.exit_code == 1


def test_ingested_files_have_a_chain_and_their_text_but_no_bodies(seed_bytes: bytes) -> None:
    doc = json.loads(seed_bytes)
    with Store(None) as st:
        ingest_bytes(st, [(seed_bytes, "v1.json")])
        doc["headline"] = "Changed"
        ingest_bytes(st, [(json.dumps(doc).encode(), "v2.json")])
        h = history(st, doc["url"])
        with pytest.raises(ProvenanceError):
            history(st, "https://nowhere.example/")
    assert [v.in_graph for v in h.versions] == ["revision", "current"]
    assert not any(v.archived for v in h.versions)
    assert [c.kind for c in h.versions[1].changes] == ["headline changed"]
    assert h.versions[1].sources == ["v2.json"]


def test_word_diff_and_diff_of_identical_stories(seed_bytes: bytes) -> None:
    assert word_diff("a b c", "a x c") == "a [-b-] {+x+} c"
    s = parse_story(seed_bytes, "seed")
    assert diff_stories(s, s) == []
