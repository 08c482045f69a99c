"""The sample's claim texts (issue 37): paragraphs and key facts restate the claims they
cite, a small planted share does not, and ``Corpus.replies()`` gives the manifest replies a
user would fetch (the real one for the seed story's manifest, none for its other four)."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hcgraph.claims.reply import ManifestReply, parse_reply
from hcgraph.claims.support import check_text
from hcsample import claims as sample_claims
from hcsample import corpus as sample
from hcsample.claims import Lcg, make_claim, packaged_replies, sentence
from hcsample.corpus import Corpus, generate_corpus

FIXTURE = Path(__file__).parent / "fixtures" / "agentic-rl-production.json"
REAL = "1792439777014362933"


@pytest.fixture(scope="module")
def seed_story() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def corpus(seed_story: dict[str, Any]) -> Corpus:
    return generate_corpus(150, seed=11, hostile=False, oddities=False, include_seed=seed_story)


@pytest.fixture(scope="module")
def replies(corpus: Corpus) -> dict[str, ManifestReply]:
    return {mid: parse_reply(data, mid, mid) for mid, data in corpus.replies().items()}


def _texts(story: dict[str, Any]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    paragraphs = [p for s in story["sections"] for p in s["paragraphs"]]
    items = [("paragraph", p["markdown"], p["cites"]) for p in paragraphs]
    return items + [("key fact", k["text"], k["cites"]) for k in story["key_facts"]]


def _pairs(cites: list[dict[str, Any]], replies: dict[str, ManifestReply]) -> list[tuple[str, str]]:
    pairs = []
    for cite in cites:
        reply = replies.get(str(cite["manifest_id"]))
        for claim_id in cite["claim_ids"]:
            text = reply.claims.get(str(claim_id)) if reply else None
            if text is not None:
                pairs.append((str(claim_id), text))
    return pairs


def test_paragraphs_restate_their_claims_and_a_few_are_planted(
    corpus: Corpus, replies: dict[str, ManifestReply]
) -> None:
    paragraphs, unsupported, reasons = 0, 0, Counter[str]()
    unread = {m["manifest_id"] for m in corpus.stories[0]["manifests"]} - set(replies)
    for story in corpus.stories[1:]:
        for kind, text, cites in _texts(story):
            pairs = _pairs(cites, replies)
            if not pairs:  # cites only seed manifests with no reply: filler text
                assert {c["manifest_id"] for c in cites} <= unread, text
                continue
            verdicts = check_text(text, pairs)
            bad = [v for v in verdicts if not v.supported]
            if kind == "key fact":
                assert not bad, (text, bad)  # key facts are never planted
                continue
            paragraphs += 1
            if bad:
                unsupported += 1
                reasons.update(v.reason for v in bad)
    assert paragraphs > 1000
    assert 0.01 * paragraphs <= unsupported <= 0.06 * paragraphs, (unsupported, paragraphs)
    assert set(reasons) <= {"number", "entity", "negation", "unrelated"}
    assert {"number", "entity", "negation"} <= set(reasons)


def test_the_seed_story_keeps_its_real_text_and_its_real_reply(
    corpus: Corpus, seed_story: dict[str, Any], replies: dict[str, ManifestReply]
) -> None:
    assert corpus.stories[0] == seed_story
    raw = corpus.replies()
    assert raw[REAL] == packaged_replies()[REAL]
    listed = [m["manifest_id"] for m in seed_story["manifests"]]
    assert [mid in raw for mid in listed] == [True, False, False, False, False]
    for _, text, cites in _texts(seed_story):
        assert all(v.supported for v in check_text(text, _pairs(cites, replies)))


def test_generated_stories_citing_the_real_manifest_restate_its_real_claims(
    seed_story: dict[str, Any],
) -> None:
    big = generate_corpus(400, seed=3, hostile=False, oddities=False, include_seed=seed_story)
    real = parse_reply(big.replies()[REAL], REAL, REAL)
    restated = 0
    for story in big.stories[1:]:
        for _, text, cites in _texts(story):
            for cite in cites:
                if cite["manifest_id"] == REAL:
                    for claim_id in cite["claim_ids"]:
                        assert str(real.claims[claim_id]).rstrip(".") in text
                        restated += 1
    assert restated > 0


def test_replies_are_deterministic_and_in_the_reply_shape(
    corpus: Corpus, replies: dict[str, ManifestReply]
) -> None:
    again = generate_corpus(150, seed=11, hostile=False, oddities=False)
    pool_ids = {m.manifest_id for m in corpus.pool}
    assert {k: v for k, v in again.replies().items()} == {
        k: v for k, v in corpus.replies().items() if k in pool_ids
    }
    assert REAL not in again.replies()  # no seed story, no real reply
    for manifest in corpus.pool:
        reply = replies[manifest.manifest_id]
        assert list(reply.claims) == list(manifest.claims)
        assert all(text for text in reply.claims.values())
        assert reply.source.title == manifest.title
        assert reply.brief


def test_the_id_bases_agree() -> None:
    assert sample_claims._MANIFEST_ID_BASE == sample.MANIFEST_ID_BASE
    assert sample_claims._CLAIM_ID_BASE == sample.CLAIM_ID_BASE


@pytest.mark.parametrize("plant", ["number", "entity", "negation", "unrelated", "quote"])
def test_each_plant_is_found(plant: str) -> None:
    found = 0
    for key in range(60):
        claim = make_claim("LoongSage", key, 1000 + key)
        if not sample_claims.plantable(claim, plant):
            continue
        planted = sentence(claim, Lcg(key), plant, claim.text)
        assert planted != claim.text
        [verdict] = check_text(planted, [("c", claim.text)])
        found += not verdict.supported
        [faithful] = check_text(sentence(claim, random.Random(key)), [("c", claim.text)])
        assert faithful.supported, (claim.text, faithful.mismatches)
    assert found >= 5


def test_the_docs_example_is_in_the_demo_sample(seed_story: dict[str, Any]) -> None:
    """docs/support-check.md quotes a planted sentence of the demo's sample site."""
    demo = generate_corpus(60, 7, include_seed=seed_story)  # as hcgraph.demo.sample_site
    replies = {mid: parse_reply(data, mid, mid) for mid, data in demo.replies().items()}
    [story] = [s for s in demo.stories if s["slug"] == "sample-00005-alignment"]
    sentence_text = "The paper reports that on TerminalBench-2.1, MetaBench-8B achieves 13.1%."
    docs = (Path(__file__).parent.parent / "docs" / "support-check.md").read_text()
    assert sentence_text in docs
    [(_, text, cites)] = [t for t in _texts(story) if sentence_text in t[1]]
    found = [m for v in check_text(text, _pairs(cites, replies)) for m in v.mismatches]
    assert [(m.kind, m.span, m.claim_span) for m in found] == [("number", "13.1%", "15.3%")]
