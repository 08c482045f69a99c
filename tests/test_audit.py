"""``hcgraph audit``: planted violations found exactly, against independent ground truth."""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
from collections import defaultdict
from collections.abc import Iterator
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from hcgraph import Store, ingest_bytes
from hcgraph.errors import ProvenanceError
from hcgraph.provenance.auditing import AuditOptions, AuditReport, audit
from hcgraph.provenance.scope import MAX_REPEAT_WINDOW
from hcsample.corpus import ODDITIES, generate_corpus
from tests.conftest import SEED, SEED_URL
from tests.support.groundtruth import ground_truth

N = 120
MAX_AGE = 4


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, Any]]:
    seed = json.loads(SEED.read_text())
    return generate_corpus(N, seed=11, include_seed=seed).stories


@pytest.fixture(scope="module")
def astore(corpus: list[dict[str, Any]]) -> Iterator[Store]:
    with Store(None) as st:
        docs = [(json.dumps(s).encode(), f"s{i}.json") for i, s in enumerate(corpus)]
        assert not ingest_bytes(st, docs).failures
        yield st


@pytest.fixture(scope="module")
def report(astore: Store) -> AuditReport:
    return audit(astore, options=AuditOptions(max_source_age=MAX_AGE))


def _found(report: AuditReport, check: str, key: str | None = None) -> set[Any]:
    out: set[Any] = set()
    for f in report.findings:
        if f.check == check:
            out.add((f.story, f.evidence[key]) if key else f.story)
    return out


def _published(story: dict[str, Any]) -> dt.datetime:
    return dt.datetime.fromisoformat(story["published_at"])


def test_dangling_uncited_declared_match_ground_truth(
    report: AuditReport, corpus: list[dict[str, Any]]
) -> None:
    gt = ground_truth(corpus)
    assert gt.cited_unlisted and gt.uncited_paragraphs and gt.declared_mismatch
    assert _found(report, "dangling-manifest", "manifest_id") == set(gt.cited_unlisted)
    uncited = {(u, f"{u}#s{s + 1}-p{p + 1}") for u, s, p in gt.uncited_paragraphs}
    assert _found(report, "uncited-paragraph", "paragraph") == uncited
    for field in ("publishers", "source_count", "cited_manifest_ids"):
        check = {"publishers": "declared-publishers", "source_count": "declared-source-count",
                 "cited_manifest_ids": "declared-cited-manifests"}[field]  # fmt: skip
        want = {u for u, fields in gt.declared_mismatch.items() if field in fields}
        assert want and _found(report, check) == want, field


def test_source_age_matches_the_json(report: AuditReport, corpus: list[dict[str, Any]]) -> None:
    lags = {}
    for story in corpus:
        day = _published(story).astimezone(dt.UTC).date()
        for m in story["manifests"]:
            lags[(story["url"], str(m["manifest_id"]))] = (
                day - dt.date.fromisoformat(m["published_date"])
            ).days
    old = {k for k, d in lags.items() if d > MAX_AGE}
    after = {k for k, d in lags.items() if d < 0}
    assert old and after  # the generated corpus has both at this threshold
    assert _found(report, "source-too-old", "manifest_id") == old
    assert _found(report, "source-after-story", "manifest_id") == after
    assert sorted(d for *_, d in report.source_ages) == sorted(lags.values())


def test_claim_conflicts_by_majority(report: AuditReport, corpus: list[dict[str, Any]]) -> None:
    gt = ground_truth(corpus)
    assert gt.claim_manifest_conflicts
    expected = set()
    for claim in gt.claim_manifest_conflicts:
        under: defaultdict[str, set[str]] = defaultdict(set)
        for story in corpus:
            for section in story["sections"]:
                for para in section["paragraphs"]:
                    for cite in para["cites"]:
                        if claim in map(str, cite["claim_ids"]):
                            under[str(cite["manifest_id"])].add(story["url"])
            for fact in story["key_facts"]:
                for cite in fact["cites"]:
                    if claim in map(str, cite["claim_ids"]):
                        under[str(cite["manifest_id"])].add(story["url"])
        sizes = sorted((len(v) for v in under.values()), reverse=True)
        owner = max(under, key=lambda m: len(under[m])) if sizes[0] > sizes[1] else None
        expected |= {(u, claim) for m, urls in under.items() if m != owner for u in urls}
    assert _found(report, "claim-conflict", "claim_id") == expected


def test_repeats_match_brute_force(corpus: list[dict[str, Any]], astore: Store) -> None:
    gt = ground_truth(corpus)
    for threshold, window in ((0.8, 7), (0.5, 1), (0.34, 3)):
        rep = audit(astore, options=AuditOptions(repeat_window=window,
                                                 repeat_threshold=threshold))  # fmt: skip
        expected = set()
        for a, b in combinations(corpus, 2):
            ca, cb = gt.story_cited_manifests[a["url"]], gt.story_cited_manifests[b["url"]]
            if abs(_published(a) - _published(b)) > dt.timedelta(days=window):
                continue
            if len(ca & cb) / len(ca | cb) < threshold:
                continue
            early, late = sorted((a, b), key=lambda s: (_published(s), s["url"]))
            expected.add((late["url"], early["url"]))
        assert _found(rep, "repeat", "earlier_story") == expected, threshold
        if threshold < 0.5:
            assert expected


def test_forced_oddities_are_found(report: AuditReport, corpus: list[dict[str, Any]]) -> None:
    checks = {"dangling_cite": "dangling-manifest", "claim_conflict": "claim-conflict",
              "uncited_paragraph": "uncited-paragraph",
              "publishers_mismatch": "declared-publishers",
              "source_count_mismatch": "declared-source-count",
              "cited_ids_mismatch": "declared-cited-manifests"}  # fmt: skip
    by_story = {s.url: {f.check for f in s.findings} for s in report.stories}
    for kind, check in checks.items():
        index = 1 + 3 * ODDITIES.index(kind)
        url = corpus[1 + index]["url"]  # corpus[0] is the seed story
        assert check in by_story[url], (kind, url)


def test_trust_label(corpus: list[dict[str, Any]]) -> None:
    expected = set()
    for s in corpus:
        text = s["labels"]["trust_text"]
        n = int(re.search(r"(\d+) sources", text).group(1))  # type: ignore[union-attr]
        if (
            n != len(s["manifests"])
            or text.split("\u00b7")[0].strip().lower() != s["labels"]["trust"]
        ):
            expected.add(s["url"])
    seed = json.loads(SEED.read_text())
    bad = copy.deepcopy(seed)
    bad["url"] = "https://news.example.org/stories/2026-10-20/trust/"
    bad["labels"]["trust_text"] = "Developing \u00b7 7 sources"
    with Store(None) as st:
        docs = [(json.dumps(s).encode(), f"s{i}") for i, s in enumerate([*corpus, bad])]
        ingest_bytes(st, docs)
        rep = audit(st)
    found = [f for f in rep.findings if f.check == "trust-label"]
    assert {f.story for f in found} == expected | {bad["url"]}
    assert sorted(f.message for f in found if f.story == bad["url"]) == [
        "trust text 'developing' disagrees with the trust label 'confirmed'",
        "trust text says 7 sources but 5 manifests are listed",
    ]


def test_real_fixture_passes(seed_bytes: bytes) -> None:
    with Store(None) as st:
        ingest_bytes(st, [(seed_bytes, "seed.json")])
        rep = audit(st)
    assert rep.exit_code == 0 and rep.findings == []
    assert [s.url for s in rep.stories] == [SEED_URL]
    assert rep.stories[0].sources == 5 and rep.stories[0].newsroom == "artificial-intelligence"


def test_subset_and_unknown_story(astore: Store, corpus: list[dict[str, Any]]) -> None:
    rep = audit(astore, [corpus[5]["url"]])
    assert [s.url for s in rep.stories] == [corpus[5]["url"]]
    assert rep.total_stories == len(corpus)
    with pytest.raises(ProvenanceError):
        audit(astore, ["https://nowhere.example/"])
    with pytest.raises(ProvenanceError):
        audit(astore, options=AuditOptions(repeat_threshold=0))


def test_cli_exit_codes_and_formats(
    tmp_path: Path, invoke: Any, seed_path: Path, corpus: list[dict[str, Any]]
) -> None:
    clean = tmp_path / "clean"
    assert invoke("ingest", seed_path, "--store", clean).exit_code == 0
    res = invoke("audit", "--store", clean)
    assert res.exit_code == 0 and "1 of 1 stories keep every promise" in res.output
    files = tmp_path / "files"
    files.mkdir()
    for i, s in enumerate(corpus[:60]):
        (files / f"{i}.json").write_text(json.dumps(s))
    dirty = tmp_path / "dirty"
    assert invoke("ingest", files, "--store", dirty).exit_code == 0
    html = tmp_path / "audit.html"
    res = invoke("audit", "--format", "json", "--html", html, "--store", dirty)
    assert res.exit_code == 1
    data = json.loads(res.output[: res.output.rindex("}") + 1])
    assert data["summary"]["stories"] == 60 and data["summary"]["findings"] > 0
    assert html.read_text().startswith("<!DOCTYPE html>")
    res = invoke("audit", "--format", "md", "--store", dirty)
    assert res.exit_code == 1 and res.output.startswith("# hcgraph audit")


def test_demo_writes_the_audit_report(tmp_path: Path, seed_path: Path, invoke: Any) -> None:
    from hcgraph.demo import DEMO_STEPS

    step = next(s for s in DEMO_STEPS if s.name == "audit")
    assert invoke("ingest", seed_path, "--store", tmp_path / "store").exit_code == 0
    written = step.run(tmp_path / "store", tmp_path)
    assert written == [tmp_path / "audit.html"]
    assert "Content-Security-Policy" in written[0].read_text()


def test_one_story_lookups_equal_the_whole_store_audit(
    astore: Store, report: AuditReport, corpus: list[dict[str, Any]]
) -> None:
    # A few stories audited by name take the story-by-story path; the answers must be the
    # whole-store audit's, finding for finding (every kind of finding is among them).
    by_check: dict[str, str] = {}
    for f in report.findings:
        by_check.setdefault(f.check, f.story)
    urls = sorted({*by_check.values(), corpus[0]["url"], corpus[7]["url"]})
    assert set(by_check) >= {"dangling-manifest", "claim-conflict", "repeat", "source-too-old",
                             "uncited-paragraph", "declared-publishers"}  # fmt: skip
    opts = AuditOptions(max_source_age=MAX_AGE)
    for url in urls:
        one = audit(astore, [url], opts)
        assert one.findings == [f for f in report.findings if f.story == url], url
        assert one.total_stories == len(corpus)


def test_repeat_window_has_a_maximum(
    astore: Store, tmp_path: Path, invoke: Any, corpus: list[dict[str, Any]]
) -> None:
    """A window past timedelta's range was an OverflowError: now a usage error (exit 2)
    from the CLI and a ProvenanceError from the library; the maximum itself works."""
    assert audit(astore, options=AuditOptions(repeat_window=MAX_REPEAT_WINDOW)).stories
    with pytest.raises(ProvenanceError, match="--repeat-window must be at most 36500"):
        audit(astore, options=AuditOptions(repeat_window=10**9))
    files = tmp_path / "files"
    files.mkdir()
    for i, s in enumerate(corpus[:20]):  # enough stories sharing manifests to compare
        (files / f"{i}.json").write_text(json.dumps(s))
    assert invoke("ingest", files, "--store", tmp_path / "store").exit_code == 0
    res = invoke("audit", "--repeat-window", "1000000000", "--store", tmp_path / "store")
    assert res.exit_code == 2
    assert "Invalid value for '--repeat-window': 1000000000 is not in the range" in res.output
    res = invoke("audit", "--repeat-window", "36500", "--store", tmp_path / "store")
    assert res.exit_code == 1 and "stories keep every promise" in res.output
