"""A seeded corpus of paragraphs with planted unsupported sentences, and its ground truth.

For the support check's tests and benchmark (``bench/bench_support.py``). Each case is one
paragraph citing 1-4 claims of one manifest (claims from :mod:`hcsample.claims`:
numbers with units, model names, negations, quotes); about half the paragraphs carry one
plant on one cited claim: a changed number, a swapped name, a flipped negation, a changed
quote, a sentence about something else in place of the claim's (``unrelated``), or a cited
claim the manifest's reply lacks (``missing``: the claim is restated but its id is not in the
reply, so the check must say "not checkable", never "unsupported"). Every other
(paragraph, claim) pair is truly supported.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from hcgraph.claims.support import Verdict, check_text
from hcsample.claims import PLANTS, Claim, make_claim, plantable, restate
from hcsample.corpus import NAME_HEADS, NAME_TAILS

KINDS = (*PLANTS, "missing")
SUPPORTED = "supported"
NOT_CHECKABLE = "not checkable"


@dataclass(frozen=True)
class Case:
    """One paragraph, the claim ids it cites (in order), the reply's claims (id → text; a
    ``missing`` claim is absent) and the truth per cited claim id (a kind or ``supported``)."""

    text: str
    cited: tuple[str, ...]
    reply: dict[str, str]
    truth: dict[str, str]


#: Phrasings the check's verb families were not written for ("held-out"): with
#: ``held_out=True`` every paragraph is rewritten with them, plants included.
HELD_OUT = (
    (" reaches ", " lands at "),
    (" achieves ", " lands at "),
    (" scores ", " clocks "),
    (" hits ", " clocks "),
    (" outperforms ", " edges out "),
    (" beats ", " edges out "),
    (" surpasses ", " edges out "),
    (" eliminates ", " does away with "),
    (" removes ", " does away with "),
    (" cuts serving cost by ", " slashes serving cost by "),
    (" reduces serving cost ", " slashes serving cost "),
    (" does not require ", " has no need for "),
    (" improve on their base models ", " top their base models "),
    (" trains a ", " fits a "),
    (" lifts ", " pushes "),
    (" raises ", " pushes "),
)


def cases(n: int, seed: int, plant_rate: float = 0.5, held_out: bool = False) -> Iterator[Case]:
    """``n`` paragraphs; the same ``(n, seed, held_out)`` give the same cases."""
    rng = random.Random(f"planted:{seed}")
    for index in range(n):
        subject = (
            NAME_HEADS[int(rng.random() * len(NAME_HEADS))]
            + (NAME_TAILS[int(rng.random() * len(NAME_TAILS))])
        )
        size = 2 + int(rng.random() * 5)
        pool = _distinct(subject, size, seed * 1_000_003 + index * 16)
        ids = [f"{seed}-{index}-{c}" for c in range(len(pool))]
        count = min(len(pool), 1 + int(rng.random() * 4))
        first = int(rng.random() * (len(pool) - count + 1))
        chosen = list(range(first, first + count))
        plant, target = "", 0
        if rng.random() < plant_rate:
            plant = KINDS[int(rng.random() * len(KINDS))]
            target = int(rng.random() * count)
            if plant != "missing" and not plantable(pool[chosen[target]], plant):
                plant = ""
        claims = [pool[c] for c in chosen]
        text = restate(
            claims,
            rng,
            plant="" if plant == "missing" else plant,
            target=target,
            commentary=0.35,
        )
        if held_out:
            for old, new in HELD_OUT:
                text = text.replace(old, new)
        cited = tuple(ids[c] for c in chosen)
        reply = {ids[c]: pool[c].text for c in range(len(pool))}
        truth = dict.fromkeys(cited, SUPPORTED)
        if plant:
            truth[cited[target]] = plant
        if plant == "missing":
            del reply[cited[target]]
        yield Case(text, cited, reply, truth)


def _distinct(subject: str, size: int, key: int) -> list[Claim]:
    """``size`` claims of one manifest, no two of the same template (so each claim's
    numbers and wording are its own, as in a real manifest)."""
    claims: dict[int, Claim] = {}
    ordinal = 0
    while len(claims) < size and ordinal < 40:
        claim = make_claim(subject, ordinal, key + ordinal)
        claims.setdefault(claim.form, claim)
        ordinal += 1
    return list(claims.values())


def judge(case: Case) -> dict[str, str]:
    """The verdict per cited claim id as the lead's rule gives it: a claim id the reply
    lacks is ``not checkable``; the rest are checked, ``supported`` or the first reason."""
    checkable = [(cid, case.reply[cid]) for cid in case.cited if cid in case.reply]
    verdicts: list[Verdict] = check_text(case.text, checkable)
    result = {cid: NOT_CHECKABLE for cid in case.cited}
    for verdict in verdicts:
        result[verdict.claim_id] = SUPPORTED if verdict.supported else verdict.reason
    return result
