"""The deterministic support check (issue 37): the real story against its real manifest
reply (no false alarm), each mismatch kind with its span, commentary, Markdown offsets,
hostile text, determinism, and a fuzz that random text never raises."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hcgraph
from hcgraph.claims.reply import parse_reply
from hcgraph.claims.support import METHOD, METHOD_VERSION, Verdict, check_text
from tests.support.planted import KINDS, NOT_CHECKABLE, SUPPORTED, cases, judge

FIXTURES = Path(__file__).parent / "fixtures"
REPLY = Path(hcgraph.__file__).parent / "data" / "manifest-replies" / "1792439777014362933.json"
SCORE = ("s1", "LAR-27B reaches 77.3% on TerminalBench-2.1.")
SWE = ("s2", "LAR-27B reaches 84.2% on SWE-Bench-Verified.")


def _texts_citing(story: dict, manifest_id: str) -> list[tuple[str, list[str]]]:
    """(text, cited claim ids of ``manifest_id``) for every key fact and paragraph."""
    items = [(k["text"], k["cites"]) for k in story["key_facts"]]
    items += [(p["markdown"], p["cites"]) for s in story["sections"] for p in s["paragraphs"]]
    out = []
    for text, cites in items:
        ids = [c for cite in cites if cite["manifest_id"] == manifest_id for c in cite["claim_ids"]]
        if ids:
            out.append((text, ids))
    return out


def _invariants(text: str, verdicts: list[Verdict]) -> None:
    for verdict in verdicts:
        assert verdict.supported == (not verdict.mismatches)
        assert verdict.reason == (verdict.mismatches[0].kind if verdict.mismatches else "")
        assert 0.0 <= verdict.overlap <= 1.0
        if verdict.sentence_start >= 0:
            start = verdict.sentence_start
            assert text[start : start + len(verdict.sentence)] == verdict.sentence
        for m in verdict.mismatches:
            assert m.kind in ("number", "entity", "negation", "quote", "unrelated")
            if m.start >= 0:
                assert text[m.start : m.end] == m.span


def test_method_is_named() -> None:
    assert METHOD == "hcgraph-support"
    assert METHOD_VERSION.isdigit()


def test_the_real_story_is_supported_by_its_real_reply() -> None:
    """Every paragraph and key fact citing manifest 1792439777014362933 restates the reply's
    claims, in other words, with commentary sentences ("To keep this distinct …: the Lean4
    machinery here is not verifying generated code.") next to them: no false alarm."""
    story = json.loads((FIXTURES / "agentic-rl-production.json").read_text())
    reply = parse_reply(REPLY.read_bytes(), str(REPLY))
    texts = _texts_citing(story, reply.manifest_id)
    assert len(texts) == 3  # two paragraphs and the first key fact
    pairs = 0
    for text, ids in texts:
        verdicts = check_text(text, [(i, str(reply.claims[i])) for i in ids])
        _invariants(text, verdicts)
        assert [v.claim_id for v in verdicts] == ids
        for verdict in verdicts:
            assert verdict.supported, (verdict.claim_id, verdict.mismatches)
            assert verdict.overlap >= 0.8
            pairs += 1
    assert pairs == 10


def test_the_real_story_with_a_changed_number_is_not() -> None:
    story = json.loads((FIXTURES / "agentic-rl-production.json").read_text())
    reply = parse_reply(REPLY.read_bytes(), str(REPLY))
    text, ids = _texts_citing(story, reply.manifest_id)[2]
    changed = text.replace("77.3%", "79.3%")
    verdicts = check_text(changed, [(i, str(reply.claims[i])) for i in ids])
    bad = [v for v in verdicts if not v.supported]
    assert [v.claim_id for v in bad] == ["1792440033560591298"]
    [m] = bad[0].mismatches
    assert (m.kind, m.span, m.claim_span) == ("number", "79.3%", "77.3%")
    assert changed[m.start : m.end] == "79.3%"
    assert m.detail == 'the claim says "77.3%", the sentence says "79.3%"'


@pytest.mark.parametrize(
    ("text", "kind", "span", "claim_span"),
    [
        ("LAR-27B reaches 79.3% on TerminalBench-2.1.", "number", "79.3%", "77.3%"),
        ("LAR-27B reaches 77.3 percent on TerminalBench-2.1, up from 71%.", "", "", ""),
        ("LAR-13B reaches 77.3% on TerminalBench-2.1.", "entity", "LAR-13B", "LAR-27B"),
        ("LAR-27B does not reach 77.3% on TerminalBench-2.1.", "negation", "not", ""),
        ("LAR-27B never reaches 77.3% on TerminalBench-2.1.", "negation", "never", ""),
        ("LAR-27B fails to reach 77.3% on TerminalBench-2.1.", "negation", "fails", ""),
        ("LAR-27B isn't reaching 77.3% on TerminalBench-2.1.", "negation", "isn't", ""),
        (
            'LAR-27B reaches 77.3% on TerminalBench-2.1, "a new record".',
            "quote",
            '"a new record"',
            "",
        ),
    ],
)
def test_each_kind_names_its_span(text: str, kind: str, span: str, claim_span: str) -> None:
    [verdict] = check_text(text, [SCORE])
    _invariants(text, [verdict])
    if not kind:  # "77.3 percent" is stated: the other number is said as well, not instead
        assert verdict.supported
        return
    assert verdict.reason == kind
    mismatch = verdict.mismatches[0]
    assert (mismatch.span, mismatch.claim_span) == (span, claim_span)
    assert text[mismatch.start : mismatch.end] == span


def test_a_removed_negation_is_named_in_the_claim() -> None:
    claim = ("c", "TreeOPSD does not require a learned critic.")
    [verdict] = check_text("TreeOPSD requires a learned critic.", [claim])
    [m] = verdict.mismatches
    assert (m.kind, m.span, m.start, m.end, m.claim_span) == ("negation", "not", -1, -1, "not")
    for same in ("TreeOPSD needs no learned critic.", "TreeOPSD works without a learned critic."):
        assert check_text(same, [claim])[0].supported, same


def test_unrelated_names_the_best_sentence() -> None:
    text = "Serving costs fell this quarter. LAR-27B reaches 84.2% on SWE-Bench-Verified."
    first, second = check_text(text, [SCORE, SWE])
    assert second.supported
    assert first.reason == "unrelated"
    assert first.overlap < 0.5
    assert first.mismatches[0].span == first.sentence
    [empty] = check_text("", [SCORE])
    assert (empty.reason, empty.sentence, empty.sentence_start) == ("unrelated", "", -1)


def test_one_sentence_states_two_claims_and_a_change_hits_only_one() -> None:
    text = "LAR-27B reaches 77.3% on TerminalBench-2.1 and 84.2% on SWE-Bench-Verified."
    assert all(v.supported for v in check_text(text, [SCORE, SWE]))
    negated = text.replace("reaches", "does not reach").replace(" and", ", and reaches")
    first, second = check_text(negated, [SCORE, SWE])
    assert (first.reason, second.reason) == ("negation", "")
    changed = text.replace("84.2%", "81.2%")
    first, second = check_text(changed, [SCORE, SWE])
    assert (first.reason, second.reason) == ("", "number")


def test_commentary_sentences_never_make_a_claim_unsupported() -> None:
    text = (
        "My reasoning: this is not a small change, and two caveats apply. "
        'The pattern to watch: Qwen3-30B at 70B is no "easy win". '
        "In a preprint, LAR-27B hits 77.3 percent on TerminalBench-2.1."
    )
    [verdict] = check_text(text, [SCORE])
    assert verdict.supported, verdict.mismatches
    assert verdict.sentence.startswith("In a preprint")


@pytest.mark.parametrize(
    ("text", "claim"),
    [
        ("RubricEM-8B beats larger open models on 4 long-form benchmarks.",
         "RubricEM-8B outperforms larger open models on four long-form benchmarks."),
        ("The family surpasses the second-best model by 5.07 percent.",
         "The LAR family surpasses the second-best model of comparable size by 5.07%."),
        ("TreeOPSD lifts Qwen3-30B-A3B by 4.97 points in the Deep Research setting.",
         "TreeOPSD lifts Qwen3-30B-A3B by 4.97 points in the Deep Research setting."),
        ("LAR-27B reaches about 77% on TerminalBench-2.1.", SCORE[1]),
        ("It trains a 27-billion-parameter model on 64 GPUs.",
         "It trains a 27B-parameter model on 64 GPUs."),
    ],
)  # fmt: skip
def test_paraphrased_numbers_are_the_same_numbers(text: str, claim: str) -> None:
    [verdict] = check_text(text, [("c", claim)])
    assert verdict.supported, verdict.mismatches


def test_a_number_in_a_name_is_a_name() -> None:
    claim = ("c", "TreeOPSD lifts Qwen3-30B-A3B by 4.97 points.")
    [verdict] = check_text("TreeOPSD lifts Qwen3-32B-A3B by 4.97 points.", [claim])
    assert verdict.reason == "entity"
    assert verdict.mismatches[0].span == "Qwen3-32B-A3B"
    [four] = check_text(
        "RubricEM-8B wins on five benchmarks.", [("c", "RubricEM-8B wins on four benchmarks.")]
    )
    assert (four.reason, four.mismatches[0].span, four.mismatches[0].claim_span) == (
        "number",
        "five",
        "four",
    )


def test_markdown_is_stripped_and_offsets_point_into_the_original() -> None:
    text = (
        "## Results\n\nIn a [preprint](https://x.test/a_(b)), `LAR-27B` reaches "
        "**79.3%** on _TerminalBench-2.1_ \\*and more\\*."
    )
    [verdict] = check_text(text, [SCORE])
    [m] = verdict.mismatches
    assert (m.kind, m.span) == ("number", "79.3%")
    assert text[m.start : m.end] == "79.3%"
    assert text[verdict.sentence_start :].startswith(verdict.sentence)
    assert "**79.3%**" in verdict.sentence  # the sentence as it stands in the text


def test_hostile_text_comes_back_as_text() -> None:
    text = (
        "<script>alert(1)</script> LAR-13B reaches 77.3%\x00 on TerminalBench-2.1 "
        "<img src=x onerror=y> \u202e\x1b[31m[x](javascript:alert(1))."
    )
    [verdict] = check_text(text, [SCORE])
    _invariants(text, [verdict])
    assert verdict.reason == "entity"
    assert verdict.mismatches[0].span == "LAR-13B"
    assert "\x00" in verdict.sentence  # unchanged: escaping is each output's job
    hostile_claim = ("c", '<b>LAR-27B</b> reaches 77.3% on \x07TerminalBench-2.1 "x" ')
    _invariants(text, check_text(text, [hostile_claim]))


def test_verdicts_are_deterministic_and_independent_of_citing_order() -> None:
    text = "LAR-27B reaches 79.3% on TerminalBench-2.1 and 84.2% on SWE-Bench-Verified."
    once = check_text(text, [SCORE, SWE])
    assert check_text(text, [SCORE, SWE]) == once
    assert check_text(text, [SWE, SCORE]) == once[::-1]


@pytest.mark.parametrize("held_out", [False, True])
def test_the_planted_corpus_is_found_and_missing_claims_are_not_checkable(held_out: bool) -> None:
    """A small run of the benchmark's corpus (``bench/bench_support.py`` measures it), also
    rewritten with verbs the check does not fold."""
    found = {kind: [0, 0] for kind in (*KINDS, SUPPORTED)}
    for case in cases(400, 7, held_out=held_out):
        judged = judge(case)
        for cid, truth in case.truth.items():
            found[truth][1] += 1
            if truth == "missing":
                assert judged[cid] == NOT_CHECKABLE
            found[truth][0] += judged[cid] not in (SUPPORTED, NOT_CHECKABLE)
    for kind in ("number", "entity", "negation", "unrelated"):
        hit, total = found[kind]
        assert total >= 10 and hit >= 0.9 * total, (kind, hit, total)
    alarms, supported = found[SUPPORTED]
    assert supported > 300 and alarms <= 0.03 * supported


_PIECES = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=8),
    st.text(st.sampled_from(list('*_`[]()<>#!\\"\u201c\u201d.,;:-%0123456789 \n')), max_size=8),
    st.sampled_from(["not ", "LAR-27B ", "77.3% ", "four ", "](x)", "**", " and ", ". A", "'s"]),
)
_TEXT = st.lists(_PIECES, max_size=25).map("".join)


@settings(
    max_examples=int(os.environ.get("HCGRAPH_FUZZ_EXAMPLES", "300")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(text=_TEXT, claims=st.lists(_TEXT, max_size=3))
def test_random_text_never_raises(text: str, claims: list[str]) -> None:
    cited = [(str(i), claim) for i, claim in enumerate(claims)]
    verdicts = check_text(text, cited)
    assert [v.claim_id for v in verdicts] == [c for c, _ in cited]
    _invariants(text, verdicts)
