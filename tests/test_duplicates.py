"""Duplicate identities are reported at ingest and flagged by ``check``: one ``id`` under two
``url``s (both kept), and one ``url`` twice in one run (the later file wins)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hcgraph.checking import check
from hcgraph.ingest import IngestReport, ingest_bytes, ingest_paths
from hcgraph.store import Store

SEED = Path(__file__).resolve().parent / "fixtures" / "agentic-rl-production.json"
OTHER = "https://hangingcontext.com/stories/2026-10-21/same-id-other-url/"


def _variant(**fields: object) -> bytes:
    story = json.loads(SEED.read_text())
    story.update(fields)
    return json.dumps(story).encode()


def test_same_id_two_urls_is_reported_and_checked() -> None:
    with Store(None) as store:
        report = ingest_bytes(
            store, [(SEED.read_bytes(), "a.json"), (_variant(url=OTHER), "b.json")]
        )
        assert report.ok and len(report.results) == 2  # both kept
        [clash] = report.id_clashes
        assert clash.source == "b.json" and clash.id_clash.startswith("https://hangingcontext.com/")
        assert clash.story_url == OTHER
        # a later run sees the clash against the store
        again = ingest_bytes(store, [(_variant(url=OTHER, headline="changed"), "c.json")])
        assert [r.id_clash for r in again.id_clashes] == [clash.id_clash]
        result = check(store, shacl=False, integrity=["duplicate-ids"])
        flagged = {(f.story, f.focus) for f in result.findings}
        story_id = json.loads(SEED.read_text())["id"]
        assert flagged == {(OTHER, story_id), (clash.id_clash, story_id)}
        assert not result.ok


def test_clean_store_has_no_duplicate_id_findings() -> None:
    with Store(None) as store:
        report = ingest_bytes(store, [(SEED.read_bytes(), "a.json")])
        assert not report.id_clashes and not report.repeats
        assert check(store, shacl=False, integrity=["duplicate-ids"]).findings == []


def test_same_url_twice_in_one_run_is_reported(tmp_path: Path, invoke: object) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "1.json").write_bytes(SEED.read_bytes())
    (tmp_path / "in" / "2.json").write_bytes(_variant(headline="second"))
    with Store(None) as store:
        report = ingest_paths(store, [tmp_path / "in"])
        [repeat] = report.repeats
        assert repeat.source.endswith("2.json") and repeat.repeat_of.endswith("1.json")
        assert not report.id_clashes  # same url: a repeat, not an id clash
    (tmp_path / "in" / "3.json").write_bytes(_variant(url=OTHER))
    result = invoke("ingest", tmp_path / "in", "--store", tmp_path / "st")  # type: ignore[operator]
    assert result.exit_code == 0, result.output
    assert (
        "ingested 3 stories (2 added, 1 replaced, 0 unchanged, 1 repeated url, 1 duplicate id)"
        in (result.output)
    )
    assert "same url" in result.output and "is also the id of" in result.output


def test_a_report_without_results_keeps_the_counts_and_what_needs_acting_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``keep_results=False`` (as ``hcgraph ingest`` runs) drops the per-story outcomes but
    not the counts, the repeats or the id clashes."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")  # both stores: one ingest time
    fourth = json.loads(SEED.read_text())
    fourth.update(url="https://hangingcontext.com/stories/2026-10-22/fourth/", id="x-4")
    docs = [
        (SEED.read_bytes(), "1.json"),
        (_variant(headline="second"), "2.json"),  # same url: a repeat
        (_variant(url=OTHER), "3.json"),  # same id: a clash
        (json.dumps(fourth).encode(), "4.json"),  # neither
    ]
    with Store(None) as full_store, Store(None) as lean_store:
        full = ingest_bytes(full_store, docs)
        lean = ingest_bytes(lean_store, docs, report=IngestReport(keep_results=False))
        assert len(full.results) == 4 and full.stored == lean.stored == 4
        for status in ("added", "replaced", "unchanged"):
            assert lean.count(status) == full.count(status)
        assert full.count("added") == 3  # the repeat replaced the first in this run
        assert [r.source for r in lean.results] == ["2.json", "3.json"]
        assert [r.source for r in lean.repeats] == [r.source for r in full.repeats] == ["2.json"]
        assert [r.source for r in lean.id_clashes] == [r.source for r in full.id_clashes]
        assert set(full_store.quads()) == set(lean_store.quads())
