"""Tests for the synthetic corpus generator and the dict-based ground truth."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest

from hcgraph.errors import OutputError
from hcsample.corpus import ODDITIES, Corpus, generate_corpus, iter_stories
from tests.support.groundtruth import GroundTruth, ground_truth

FIXTURE = Path(__file__).parent / "fixtures" / "agentic-rl-production.json"
ID_RE = re.compile(r"^\d{19}$")


@pytest.fixture(scope="module")
def real_story() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return generate_corpus(200, seed=7)


@pytest.fixture(scope="module")
def truth(corpus: Corpus) -> GroundTruth:
    return ground_truth(corpus.stories)


def _dump(stories: list[dict[str, Any]]) -> str:
    return json.dumps(stories, ensure_ascii=False, indent=2)


def _paragraphs(story: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for s in story["sections"] for p in s["paragraphs"]]


def _all_cites(story: dict[str, Any]) -> list[dict[str, Any]]:
    cites = [c for p in _paragraphs(story) for c in p["cites"]]
    return cites + [c for k in story["key_facts"] for c in k["cites"]]


# ----- determinism ----------------------------------------------------------------------


def test_same_seed_gives_identical_bytes() -> None:
    assert _dump(generate_corpus(60, seed=3).stories) == _dump(generate_corpus(60, seed=3).stories)


def test_different_seed_gives_different_corpus() -> None:
    assert _dump(generate_corpus(60, seed=3).stories) != _dump(generate_corpus(60, seed=4).stories)


def test_iter_stories_equals_generate_corpus(real_story: dict[str, Any]) -> None:
    for options in ({}, {"hostile": False, "oddities": False}, {"include_seed": real_story}):
        expected = generate_corpus(120, seed=11, **options).stories
        assert list(iter_stories(120, seed=11, **options)) == expected


# ----- shape ----------------------------------------------------------------------------


def test_generated_stories_have_fixture_shape(corpus: Corpus, real_story: dict[str, Any]) -> None:
    for story in corpus.stories:
        assert set(real_story) <= set(story), set(real_story) - set(story)
        assert story["sample"] is True
        assert story["schema"] == "hangingcontext.desk/1"
        assert story["type"] == "story"
        assert set(story["links"]) == set(real_story["links"])
        assert set(story["writer"]) == {"agent", "run_id"}
        for block in ("run_these_manifests", "sponsor", "reuse", "labels"):
            assert set(story[block]) >= set(real_story[block]), block
        run_these = story["run_these_manifests"]
        assert run_these["manifest_ids"] == [m["manifest_id"] for m in story["manifests"]]
        assert set(story["decision_card"]) >= set(real_story["decision_card"])
        for section in story["sections"]:
            assert {"heading", "paragraphs"} <= set(section)
            for paragraph in section["paragraphs"]:
                assert {"markdown", "cites"} <= set(paragraph)
        for fact in story["key_facts"]:
            assert set(fact) == {"text", "self_reported", "cites"}
        for cite in _all_cites(story):
            assert set(cite) == {"manifest_id", "claim_ids"}
            assert cite["claim_ids"]
        for manifest in story["manifests"]:
            assert set(manifest) >= set(real_story["manifests"][0])
        for related in story["related"]:
            assert set(related) == {"url", "headline", "slug"}
        assert 1 <= len(story["related"]) <= 4


def test_ids_are_19_digit_strings_except_planted_ints(corpus: Corpus) -> None:
    int_ids = []
    ids = []
    for story in corpus.stories:
        ids.append(story["id"])
        ids += [m["manifest_id"] for m in story["manifests"]]
        for cite in _all_cites(story):
            ids += [cite["manifest_id"], *cite["claim_ids"]]
    for value in ids:
        if isinstance(value, int):
            int_ids.append(value)
            assert value > 2**53 and ID_RE.match(str(value))
        else:
            assert isinstance(value, str) and ID_RE.match(value), value
    assert int_ids, "the planted integer ids are missing"
    story_ids = [str(s["id"]) for s in corpus.stories]
    assert len(set(story_ids)) == len(story_ids)


def test_urls_are_sample_urls(corpus: Corpus) -> None:
    slugs = [s["slug"] for s in corpus.stories]
    assert len(set(slugs)) == len(slugs)
    for story in corpus.stories:
        url = story["url"]
        assert url.startswith("https://news.example.org/stories/")
        assert url.endswith(f"/{story['slug']}/")
        assert story["links"]["json"] == url + "index.json"
        assert story["links"]["html"] == url
        assert all(r["url"].startswith("https://news.example.org/") for r in story["related"])
        assert all(
            m["source_url"].startswith("https://papers.example.org/") for m in story["manifests"]
        )
        assert "hangingcontext.com" not in json.dumps(story)
        assert "synthetic" in story["disclosure"].lower()


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_hostile_text_present_and_valid(corpus: Corpus) -> None:
    text = "\n".join(_strings(corpus.stories))
    needles = ['"""', "'''", "\\", "\r", "\t", "<script>", "onerror", "DROP ALL", "@prefix"]
    for needle in [*needles, "\U0001f600", "\u6f22", "\u05e9", '"> . <urn:x>', "} ; DROP"]:
        assert needle in text, needle
    text.encode("utf-8")  # raises on lone surrogates
    assert "\x00" not in text
    hostile = [s for s in corpus.stories if "<" in s["headline"] or '"' in s["headline"]]
    assert hostile
    calm = generate_corpus(50, seed=7, hostile=False)
    assert "<script>" not in _dump(calm.stories)


def test_write_and_site_files(tmp_path: Path) -> None:
    small = generate_corpus(5, seed=1)
    paths = small.write(tmp_path)
    assert paths == sorted(paths) and len(paths) == 5
    loaded = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    assert sorted(s["slug"] for s in loaded) == sorted(s["slug"] for s in small.stories)
    files = small.site_files()
    for story in small.stories:
        path = story["url"].removeprefix("https://news.example.org") + "index.json"
        assert json.loads(files[path]) == story


def test_write_to_an_unwritable_directory_is_an_output_error(tmp_path: Path) -> None:
    """Corpus.write goes through the atomic writer: an unwritable path is an OutputError
    naming it, and a file it cannot replace (a directory in the way) is left as it was."""
    small = generate_corpus(2, seed=1)
    with pytest.raises(OutputError, match="/proc/nope"):
        small.write(Path("/proc/nope/corpus"))
    (tmp_path / f"{small.stories[0]['slug']}.json").mkdir()
    with pytest.raises(OutputError, match="cannot write"):
        small.write(tmp_path)
    assert list(tmp_path.glob(".*.tmp")) == []


# ----- corpus statistics and planted oddities ---------------------------------------------


def test_manifest_popularity_is_skewed(truth: GroundTruth) -> None:
    reach = sorted(len(urls) for urls in truth.manifest_citing_stories.values())
    assert reach[-1] >= 5 * statistics.median(reach)
    assert truth.source_reuse(10)


def test_related_links_have_cycles_and_missing_targets(truth: GroundTruth) -> None:
    edges = truth.related_edges
    assert any(a in edges.get(b, ()) for a, targets in edges.items() for b in targets)
    assert truth.related_not_ingested
    assert len(truth.within_hops([next(iter(edges))], 2)) > 1


@pytest.mark.parametrize(("n_stories", "seed"), [(200, 7), (50, 0), (50, 1)])
def test_every_oddity_planted(n_stories: int, seed: int) -> None:
    stories = generate_corpus(n_stories, seed=seed).stories
    truth = ground_truth(stories)
    assert len(ODDITIES) == 13
    assert any("x_future_field" in s for s in stories)
    assert any(set(p) - {"markdown", "cites"} for s in stories for p in _paragraphs(s))
    assert any(set(s["labels"]) - {"trust", "trust_text", "newsroom"} for s in stories)
    assert truth.cited_unlisted
    assert truth.listed_uncited
    assert truth.claim_manifest_conflicts
    assert any(not sec["paragraphs"] for s in stories for sec in s["sections"])
    assert truth.uncited_paragraphs
    assert truth.unsupported_key_facts
    mismatched = set().union(*truth.declared_mismatch.values())
    assert mismatched == {"publishers", "source_count", "cited_manifest_ids"}
    assert any(isinstance(s["id"], int) for s in stories)
    assert any(
        isinstance(c, int) for s in stories for c in _paragraphs(s)[0]["cites"][0]["claim_ids"]
    )


def test_oddities_are_rare_and_can_be_disabled(truth: GroundTruth) -> None:
    assert len(truth.cited_unlisted) < 20
    assert len(truth.declared_mismatch) < 40
    clean = ground_truth(generate_corpus(200, seed=7, oddities=False).stories)
    assert not clean.cited_unlisted and not clean.listed_uncited
    assert not clean.claim_manifest_conflicts and not clean.declared_mismatch
    assert not clean.uncited_paragraphs and not clean.unsupported_key_facts


def test_include_seed(real_story: dict[str, Any]) -> None:
    stories = generate_corpus(100, seed=2, include_seed=real_story).stories
    assert stories[0] == real_story and len(stories) == 101
    seed_manifests = {m["manifest_id"]: m for m in real_story["manifests"]}
    reused = [m for s in stories[1:] for m in s["manifests"] if m["manifest_id"] in seed_manifests]
    assert reused
    assert all(m == seed_manifests[m["manifest_id"]] for m in reused)
    assert any(r["url"] == real_story["url"] for s in stories[1:] for r in s["related"])
    truth = ground_truth(stories)
    assert len(truth.manifest_citing_stories[reused[0]["manifest_id"]]) >= 2


# ----- ground truth on the real fixture ----------------------------------------------------


def test_ground_truth_on_real_fixture(real_story: dict[str, Any]) -> None:
    truth = ground_truth([real_story])
    counts = truth.counts
    assert (counts.stories, counts.sections, counts.paragraphs, counts.key_facts) == (1, 5, 9, 5)
    assert (counts.claims, counts.manifests, counts.publishers) == (24, 5, 4)
    assert (counts.related, counts.unresolved) == (4, 4)
    assert not truth.cited_unlisted and not truth.listed_uncited
    assert not truth.claim_manifest_conflicts
    assert truth.declared_mismatch == {}
    assert not truth.uncited_paragraphs and not truth.unsupported_key_facts
    assert len(truth.related_not_ingested) == 4
    url = real_story["url"]
    assert truth.publisher_reach["huggingface-daily-papers"][:2] == (1, 2)
    assert truth.newsroom_publisher[("artificial-intelligence", "huggingface-daily-papers")] == 1
    assert set(truth.source_lag_days.values()) == {1}
    assert truth.within_hops([url], 3) == {url}
    assert truth.source_reuse(1) == set(real_story["cited_manifest_ids"])
    assert truth.co_citation() == {}


def test_ground_truth_detects_declared_mismatch(real_story: dict[str, Any]) -> None:
    story = json.loads(json.dumps(real_story))
    story["source_count"] = 6
    story["publishers"] = story["publishers"][1:]
    story["sections"][0]["paragraphs"][0]["cites"] = []
    twin = json.loads(json.dumps(story))
    twin["url"] = "https://news.example.org/stories/x/twin/"
    twin["related"].append({"url": story["url"], "headline": "h", "slug": "s"})
    truth = ground_truth([story, twin])
    assert truth.declared_mismatch[story["url"]] == {"publishers", "source_count"}
    assert (story["url"], 0, 0) in truth.uncited_paragraphs
    assert truth.co_citation(5) == {tuple(sorted([story["url"], twin["url"]])): 5}
    assert truth.within_hops([twin["url"]], 1) == {twin["url"], story["url"]}
    assert truth.within_hops([twin["url"]], 0) == {twin["url"]}
