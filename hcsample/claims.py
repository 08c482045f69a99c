"""Claim texts for the bundled sample, and paragraphs that restate them (or plant a change).

The sample site's manifests need claims with text so the support check
(:mod:`hcgraph.claims.support`) has something true to confirm and something false to find.
A claim here is a template plus slot values (a system name, a model, a benchmark, a
percentage, …), so a paragraph can restate it in other words: a paraphrase of the same
template (reordered clauses, other verbs, "percent" for "%", a number word for a digit), an
"In a preprint, …" preamble, two claims merged in one sentence, and a commentary sentence
that cites nothing. A *plant* restates a claim falsely, in one of the ways the check is
built to find: a changed number, a swapped name, a flipped negation, a changed quote, or a
sentence about something else in place of the claim's.

Everything is a pure function of its arguments (a ``random.Random`` passed in, or an integer
key): the sample stays deterministic per seed. Used by :mod:`hcsample.corpus` and by the
support-check benchmark's corpus (``tests/support/planted.py``).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import hcgraph

__all__ = [
    "PLANTS",
    "PLANT_RATE",
    "Claim",
    "Lcg",
    "SampleTexts",
    "make_claim",
    "packaged_replies",
    "plantable",
    "restate",
    "sentence",
]

#: The ways a restatement can be planted false.
PLANTS = ("number", "entity", "negation", "unrelated", "quote")

BENCHMARKS = (
    "TerminalBench-2.1",
    "SWE-Bench-Verified",
    "GSM8K",
    "MMLU-Pro",
    "HumanEval-Plus",
    "BrowseComp",
    "GPQA-Diamond",
    "LiveCodeBench",
    "TAU-Bench",
    "WebArena",
    "OSWorld",
    "AIME-2025",
)
BASE_MODELS = ("Qwen3-30B-A3B", "Llama-3.1-8B", "Mistral-7B", "Gemma-2-9B", "Phi-4", "OLMo-2-13B")
SETTINGS = ("Deep Research", "web navigation", "code repair", "multi-turn tool use", "math proof")
QUOTES = (
    "a drop-in replacement for GRPO",
    "the missing layer of agent training",
    "cheap enough to run on one node",
    "a verifier for everything else",
    "boring in the best way",
    "the end of reward hacking",
)
SIZES = (7, 8, 13, 14, 27, 32, 70, 72)
NUMBER_WORDS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
OTHER_NAMES = ("Quartz", "Helix", "Nimbus", "Vortex", "Cobalt", "Aurora", "Tensor", "Granite")
PREAMBLES = ("", "", "", "In a preprint, ", "According to the authors, ", "The paper reports that ")
COMMENTARY = (
    "My reasoning: this removes a whole failure surface from training pipelines.",
    "The pattern to watch: structure is standing in for the verifier.",
    "This is the unglamorous part that decides whether a method survives production.",
    "None of this has been replicated yet.",
    "Two caveats apply.",
    "That is not a small change for teams running agents.",
    "Compare the GRPO baselines before drawing conclusions.",
    "Whether it holds at 70B is an open question.",
    'One reviewer called the setup "ambitious".',
    "It is worth reading the appendix before quoting any of it.",
)
UNRELATED = (
    "A benchmark team measures a 41% drop in hallucinated citations.",
    "Serving costs fell sharply across the industry this quarter.",
    "An open-weights lab shows stable training for 12 thousand steps.",
    "The conference moved its deadline by two weeks.",
    "Several groups now publish their evaluation harnesses alongside their weights.",
    "A systems group argues that data pipelines, not models, are the bottleneck.",
    "Regulators asked for clearer disclosure of training data sources.",
    "Hardware shortages pushed some labs toward smaller models.",
)

# Each template: the claim's own wording, paraphrases (same facts, other words) and flipped
# wordings (the negation plant: the claim's polarity reversed). Slots: S system, M model,
# B benchmark, Q base model, T setting, p percentage, d points, x factor, n count word,
# k size, g GPU count, q quote.
_TEMPLATES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "{M} reaches {p}% on {B}.",
        (
            "{M} scores {p}% on {B}.",
            "On {B}, {M} achieves {p}%.",
            "The {M} model hits {p} percent on {B}.",
            "{M} posts {p}% on the {B} benchmark.",
        ),
        ("{M} does not reach {p}% on {B}.", "{M} fails to reach {p}% on {B}."),
    ),
    (
        "The {S} model family improves on its base models by {p}% on average.",
        (
            "The {S} family averages a {p}% gain over its base models.",
            "On average, {S} models improve on their base models by {p}%.",
            "{S} models lift their base models by {p} percent on average.",
        ),
        ("The {S} model family does not improve on its base models by {p}% on average.",),
    ),
    (
        "{S} lifts {Q} by {d} points in the {T} setting.",
        (
            "In the {T} setting, {S} raises {Q} by {d} points.",
            "{S} improves {Q} by {d} points in the {T} setting.",
            "{S} boosts {Q} by {d} points in the {T} setting.",
        ),
        ("{S} does not lift {Q} by {d} points in the {T} setting.",),
    ),
    (
        "The {S} family surpasses the second-best model of comparable size by {p}%.",
        (
            "{S} beats the next-best model of comparable size by {p}%.",
            "By {p}%, the {S} family outperforms the second-best model of comparable size.",
        ),
        ("The {S} family never surpasses the second-best model of comparable size by {p}%.",),
    ),
    (
        "{M} outperforms larger open models on {n} long-form research benchmarks.",
        (
            "On {n} long-form research benchmarks, {M} beats larger open models.",
            "{M} surpasses larger open models on {n} long-form research benchmarks.",
        ),
        ("{M} does not outperform larger open models on {n} long-form research benchmarks.",),
    ),
    (
        "{S} cuts serving cost by {x}x at equal quality.",
        (
            "{S} reduces serving cost {x}-fold at equal quality.",
            "At equal quality, {S} lowers serving cost by {x}x.",
        ),
        ("{S} does not cut serving cost by {x}x at equal quality.",),
    ),
    (
        "{S}'s fully asynchronous pipeline eliminates synchronous idle bubbles.",
        (
            "{S} eliminates synchronous idle bubbles with a fully asynchronous pipeline.",
            "With its fully asynchronous pipeline, {S} removes synchronous idle bubbles.",
        ),
        ("{S}'s fully asynchronous pipeline cannot eliminate synchronous idle bubbles.",),
    ),
    (
        "{S} does not require a learned critic.",
        ("{S} needs no learned critic.", "{S} works without a learned critic."),
        ("{S} requires a learned critic.", "{S} needs a learned critic."),
    ),
    (
        'The authors describe {S} as "{q}".',
        ('{S} is, in the authors\' words, "{q}".', 'In the authors\' words, {S} is "{q}".'),
        ('The authors do not describe {S} as "{q}".',),
    ),
    (
        "{S} is, to the authors' knowledge, the first framework to ground process rewards in "
        "a formal schema.",
        (
            "To the authors' knowledge, {S} is the first framework grounding process rewards "
            "in a formal schema.",
            "{S} is the first framework (to the authors' knowledge) to ground process rewards "
            "in a formal schema.",
        ),
        ("{S} is not the first framework to ground process rewards in a formal schema.",),
    ),
    (
        "{S} trains a {k}B-parameter model on {g} GPUs.",
        (
            "On {g} GPUs, {S} trains a {k}B-parameter model.",
            "{S} fits {k}B parameters on {g} GPUs.",
        ),
        ("{S} cannot train a {k}B-parameter model on {g} GPUs.",),
    ),
)
_NUMBER_SLOTS = ("p", "d", "x", "n", "k", "g")
_NAME_SLOTS = ("M", "S")


class Lcg:
    """A small seeded generator with ``random()``, cheaper to seed than ``random.Random``
    (the sample seeds one per claim): 64-bit LCG (Knuth's MMIX constants), top 53 bits."""

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        self._state = (seed * 0x9E3779B97F4A7C15 + 1) & _MASK

    def random(self) -> float:
        """The next float in [0, 1)."""
        self._state = (self._state * 6364136223846793005 + 1442695040888963407) & _MASK
        return (self._state >> 11) / 9007199254740992.0


_MASK = (1 << 64) - 1
_Rng = random.Random | Lcg


@dataclass(frozen=True, slots=True)
class Claim:
    """One claim: a template and its slot values; ``text`` is the claim as its manifest
    states it."""

    form: int
    slots: tuple[tuple[str, str], ...]

    @property
    def text(self) -> str:
        """The claim's own wording."""
        return _TEMPLATES[self.form][0].format(**dict(self.slots))

    def with_slot(self, name: str, value: str) -> Claim:
        """The same claim with one slot changed."""
        return Claim(self.form, tuple((k, value if k == name else v) for k, v in self.slots))


def make_claim(subject: str, ordinal: int, key: int) -> Claim:
    """The ``ordinal``-th claim of a manifest about ``subject`` (a CamelCase system name),
    its values drawn from ``key``: the same arguments give the same claim."""
    rng = Lcg(key)
    form = (ordinal * 7 + int(rng.random() * len(_TEMPLATES))) % len(_TEMPLATES)
    slots = {
        "S": subject,
        "M": f"{subject}-{SIZES[int(rng.random() * len(SIZES))]}B",
        "B": BENCHMARKS[int(rng.random() * len(BENCHMARKS))],
        "Q": BASE_MODELS[int(rng.random() * len(BASE_MODELS))],
        "T": SETTINGS[int(rng.random() * len(SETTINGS))],
        "p": f"{10 + rng.random() * 85:.1f}",
        "d": f"{1 + rng.random() * 14:.2f}",
        "x": str(2 + int(rng.random() * 9)),
        "n": NUMBER_WORDS[int(rng.random() * len(NUMBER_WORDS))],
        "k": str(SIZES[int(rng.random() * len(SIZES))]),
        "g": str(16 * (1 + int(rng.random() * 32))),
        "q": QUOTES[int(rng.random() * len(QUOTES))],
    }
    used = _slots_of(_TEMPLATES[form][0])
    return Claim(form, tuple((k, v) for k, v in slots.items() if k in used))


def _slots_of(template: str) -> set[str]:
    return {part.split("}")[0] for part in template.split("{")[1:]}


def sentence(claim: Claim, rng: _Rng, plant: str = "", taken: str = "") -> str:
    """One sentence restating ``claim`` (a paraphrase, maybe with a preamble); with
    ``plant``, restating it falsely that way. ``taken``: the other cited claims' text, which
    a planted number or name must not coincide with."""
    canonical, paraphrases, flipped = _TEMPLATES[claim.form]
    if plant == "unrelated":
        return UNRELATED[int(rng.random() * len(UNRELATED))]
    if plant == "negation":
        return _preamble(rng, flipped[int(rng.random() * len(flipped))].format(**dict(claim.slots)))
    if plant in ("number", "entity", "quote"):
        claim = _changed(claim, plant, rng, taken)
    forms = (canonical, *paraphrases)
    text = forms[int(rng.random() * len(forms))].format(**dict(claim.slots))
    if claim.form == 4 and rng.random() < 0.3:  # a count as digits: "four" → "4"
        word = dict(claim.slots)["n"]
        text = text.replace(f" {word} ", f" {NUMBER_WORDS.index(word) + 2} ")
    return _preamble(rng, text)


def plantable(claim: Claim, plant: str) -> bool:
    """Whether ``plant`` can be made on ``claim`` (a number to change, a name, a quote)."""
    slots = dict(claim.slots)
    if plant == "number":
        return any(k in slots for k in _NUMBER_SLOTS)
    if plant == "quote":
        return "q" in slots
    return True


def _changed(claim: Claim, plant: str, rng: _Rng, taken: str) -> Claim:
    slots = dict(claim.slots)
    if plant == "quote" and "q" in slots:
        words = slots["q"].split()
        words[-1] = "upgrade" if words[-1] != "upgrade" else "rewrite"
        return claim.with_slot("q", " ".join(words))
    if plant == "number":
        name = next(k for k in _NUMBER_SLOTS if k in slots)
        return claim.with_slot(name, _other_number(name, slots[name], rng, taken))
    if "M" in slots:
        subject, size = slots["M"].rsplit("-", 1)
        sizes = [f"{s}B" for s in SIZES if f"{s}B" != size and f"-{s}B" not in taken]
        return claim.with_slot("M", f"{subject}-{sizes[int(rng.random() * len(sizes))]}")
    others = [n for n in OTHER_NAMES if n not in taken and n not in slots["S"]]
    head = others[int(rng.random() * len(others))]
    tail = re.search(r"(?:[A-Z][a-z]+|[A-Z]+)$", slots["S"])
    return claim.with_slot("S", head + (tail.group() if tail else "Lab"))


def _other_number(name: str, value: str, rng: _Rng, taken: str) -> str:
    for _ in range(50):
        if name == "n":
            new = NUMBER_WORDS[int(rng.random() * len(NUMBER_WORDS))]
        elif "." in value:
            decimals = len(value.split(".")[1])
            delta = (1 + rng.random() * 8) * (1 if rng.random() < 0.5 else -1)
            new = f"{max(0.5, float(value) + delta):.{decimals}f}"
        else:
            new = str(
                max(2, int(value) + (1 + int(rng.random() * 9)) * (-1) ** int(rng.random() * 2))
            )
        if new != value and _value(new) not in _values(taken):
            return new
    return str(int(float(value)) + 1000)


def _value(number: str) -> float:
    if number in NUMBER_WORDS:
        return float(NUMBER_WORDS.index(number) + 2)
    return float(number)


def _values(text: str) -> set[float]:
    """Every number a text states, digits or words (a planted number must be new)."""
    words = re.findall(r"\d+(?:\.\d+)?|[a-z]+", text)
    return {_value(w) for w in words if w[0].isdigit() or w in NUMBER_WORDS}


def _preamble(rng: _Rng, text: str) -> str:
    preamble = PREAMBLES[int(rng.random() * len(PREAMBLES))]
    if not preamble:
        return text
    if text.startswith(("The authors", "To the authors", "In the authors")):
        return text
    first = text.split(" ", 1)[0]
    if first in ("The", "On", "In", "By", "At", "With", "To"):
        text = text[0].lower() + text[1:]
    return preamble + text


def _merged(a: Claim, b: Claim, rng: _Rng) -> str:
    """One sentence stating two claims."""
    sa, sb = dict(a.slots), dict(b.slots)
    if a.form == b.form == 0 and sa["M"] == sb["M"]:
        return f"{sa['M']} reaches {sa['p']}% on {sa['B']} and {sb['p']}% on {sb['B']}."
    first = sentence(a, rng).rstrip(".")
    second = sentence(b, rng)
    if second.startswith(("The ", "On ", "In ", "By ", "At ", "With ", "To ", "According ")):
        second = second[0].lower() + second[1:]
    return f"{first}; {second}" if rng.random() < 0.5 else f"{first}, and {second}"


def restate(
    claims: Sequence[Claim],
    rng: _Rng,
    *,
    plant: str = "",
    target: int = 0,
    commentary: float = 0.3,
    merge: float = 0.25,
) -> str:
    """A paragraph restating every claim of ``claims`` (in order; two neighbours sometimes
    merged in one sentence), with a commentary sentence at a random place with probability
    ``commentary``; with ``plant``, claim ``target`` is restated falsely that way (never
    merged, so the other claims stay truly stated)."""
    taken = " ".join(c.text for c in claims)
    sentences: list[str] = []
    index = 0
    while index < len(claims):
        claim = claims[index]
        if plant and index == target:
            sentences.append(sentence(claim, rng, plant, taken))
            index += 1
            continue
        nxt = index + 1
        if nxt < len(claims) and not (plant and nxt == target) and rng.random() < merge:
            sentences.append(_merged(claim, claims[nxt], rng))
            index += 2
            continue
        sentences.append(sentence(claim, rng))
        index += 1
    if rng.random() < commentary:
        note = COMMENTARY[int(rng.random() * len(COMMENTARY))]
        sentences.insert(int(rng.random() * (len(sentences) + 1)), note)
    return " ".join(sentences)


# ---------------------------------------------------------------- the bundled sample

#: The share of sample paragraphs that restate one claim falsely (so the demo finds some).
PLANT_RATE = 0.03
_SAMPLE_PLANTS = ("number", "entity", "negation")
_REPLIES = Path(hcgraph.__file__).parent / "data" / "manifest-replies"  # wherever hcgraph is
_VARIANTS = 4  # restatements kept per claim: a paragraph picks among them, cheaply
_PLANT_CUTOFF = round(PLANT_RATE * 1024)  # a draw whose low 10 bits are below this plants


class PoolManifest(Protocol):
    """What a sample manifest offers here (``hcsample.corpus``'s pool records)."""

    @property
    def manifest_id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def source_name(self) -> str: ...
    @property
    def source_url(self) -> str: ...
    @property
    def published_date(self) -> str: ...
    @property
    def claims(self) -> tuple[str, ...]: ...


class SampleTexts:
    """Claim texts of the sample's manifests, paragraphs and key facts restating them, and
    the manifest replies a user would fetch: all pure functions of the pool and the ids.

    A pool manifest's subject is its title's name (``LoongSage: …``); its claim ``i`` is
    :func:`make_claim` of that subject, seeded by the claim id. The seed story's manifest
    with a packaged real reply (``hcgraph/data/manifest-replies/<id>.json``) restates the
    real claims verbatim; a claim of any other manifest has no text here.
    """

    def __init__(self, pool: Sequence[PoolManifest]) -> None:
        self._owner = {int(m.manifest_id): m for m in pool}
        self._claims: dict[str, Claim | str | None] = {}
        self._sentences: dict[str, list[str | None]] = {}

    def claim(self, claim_id: str) -> Claim | str | None:
        """The claim (structured for a pool manifest, the real text for a packaged reply),
        or ``None`` when no text is known."""
        if claim_id in self._claims:
            return self._claims[claim_id]
        found: Claim | str | None = None
        if claim_id.isdigit():
            offset = int(claim_id) - _CLAIM_ID_BASE
            owner = self._owner.get(_MANIFEST_ID_BASE + offset // 8) if offset >= 0 else None
            if owner is not None and claim_id in owner.claims:
                found = make_claim(_subject(owner.title), offset % 8, int(claim_id))
            else:
                found = _real_claims().get(claim_id)
        self._claims[claim_id] = found
        return found

    def _variants(self, claim_id: str) -> list[str | None]:
        """The claim's restatements, each made when first picked (``[]``: no text)."""
        known = self._sentences.get(claim_id)
        if known is None:
            claim = self.claim(claim_id)
            if claim is None:
                known = []
            elif isinstance(claim, str):
                known = [claim, f"In a preprint, {claim}"]
            else:
                known = [None] * _VARIANTS
            self._sentences[claim_id] = known
        return known

    def paragraph(self, cites: Sequence[dict[str, Any]], draw: float, fallback: str) -> str:
        """A paragraph restating the claims ``cites`` name, in order (``draw`` in [0, 1)
        picks the wording, whether a commentary sentence is added and, for
        :data:`PLANT_RATE` of the draws, which claim is restated falsely); ``fallback``
        when no cited claim has a text."""
        return self._restate(cites, draw, fallback, plants=True)

    def key_fact(self, cites: Sequence[dict[str, Any]], draw: float, fallback: str) -> str:
        """A key fact restating its claims (never planted)."""
        return self._restate(cites, draw, fallback, plants=False)

    def _restate(
        self, cites: Sequence[dict[str, Any]], draw: float, fallback: str, plants: bool
    ) -> str:
        bits = int(draw * 4503599627370496)  # 52 of the draw's 53 random bits
        if plants and (bits & 1023) < _PLANT_CUTOFF:
            return self._planted(cites, bits, fallback)
        variants_of = self._sentences
        out: list[str] = []
        seen: set[str] = set()
        for cite in cites:
            for raw in cite.get("claim_ids", ()):
                cid = raw if type(raw) is str else str(raw)
                if cid in seen:
                    continue
                seen.add(cid)
                variants = variants_of.get(cid)
                if variants is None:
                    variants = self._variants(cid)
                if not variants:
                    continue
                bits >>= 2
                pick = bits % len(variants)
                text = variants[pick]
                if text is None:
                    claim = self._claims[cid]
                    assert isinstance(claim, Claim)
                    text = variants[pick] = sentence(claim, Lcg(int(cid) * 8 + pick))
                out.append(text)
        if not out:
            return fallback
        bits >>= 2
        if plants and bits % 10 < 3:
            out.insert(bits % (len(out) + 1), COMMENTARY[(bits >> 4) % len(COMMENTARY)])
        return " ".join(out)

    def _planted(self, cites: Sequence[dict[str, Any]], bits: int, fallback: str) -> str:
        """A paragraph with one structured claim restated falsely (a number, name or
        negation changed), the others as usual."""
        ids = dict.fromkeys(str(c) for cite in cites for c in cite.get("claim_ids", ()))
        known = [(cid, c) for cid in ids if (c := self.claim(cid)) is not None]
        targets = [i for i, (_, c) in enumerate(known) if isinstance(c, Claim)]
        if not targets:
            return self._restate(cites, (bits | 1023) / 4503599627370496, fallback, True)
        target = targets[(bits >> 10) % len(targets)]
        rng = Lcg(bits)
        taken = " ".join(c if isinstance(c, str) else c.text for _, c in known)
        out = []
        for index, (cid, claim) in enumerate(known):
            if index == target:
                assert isinstance(claim, Claim)
                kind = _SAMPLE_PLANTS[int(rng.random() * len(_SAMPLE_PLANTS))]
                out.append(
                    sentence(claim, rng, kind if plantable(claim, kind) else "entity", taken)
                )
            else:
                variants = self._variants(cid)
                pick = int(rng.random() * len(variants))
                text = variants[pick]
                if text is None:
                    assert isinstance(claim, Claim)
                    text = variants[pick] = sentence(claim, Lcg(int(cid) * 8 + pick))
                out.append(text)
        return " ".join(out)

    def reply(self, manifest: PoolManifest) -> bytes:
        """The manifest API's reply for a pool manifest, in the shape of
        ``shared/fixtures/manifest-reply.json`` (see :mod:`hcgraph.claims.reply`)."""
        claims = []
        for cid in manifest.claims:
            claim = self.claim(cid)
            text = claim.text if isinstance(claim, Claim) else claim
            claims.append({"claim_id": cid, "text": text})
        name, _, rest = manifest.title.partition(":")
        doc = {
            "manifest_id": manifest.manifest_id,
            "source": {
                "name": manifest.source_name,
                "url": manifest.source_url,
                "title": manifest.title,
                "published_date": manifest.published_date,
            },
            "signal": {"claims": claims},
            "brief": f"A preprint presenting {name.strip()}:{rest}.",
        }
        return json.dumps(doc, ensure_ascii=False).encode("utf-8")


def packaged_replies() -> dict[str, bytes]:
    """The real manifest replies packaged with hcgraph (manifest id → reply bytes)."""
    return {path.stem: path.read_bytes() for path in sorted(_REPLIES.glob("*.json"))}


@cache
def _real_claims() -> dict[str, str]:
    claims: dict[str, str] = {}
    for data in packaged_replies().values():
        for claim in json.loads(data)["signal"]["claims"]:
            claims[str(claim["claim_id"])] = str(claim["text"])
    return claims


def _subject(title: str) -> str:
    """The system a sample manifest is about: its title's name (``LoongSage: …``)."""
    name = title.split(":", 1)[0].split(" ", 1)[0]
    return name if name.isalnum() else "Sample"


# The sample's id bases (hcsample.corpus keeps the same numbers; a test checks they agree).
_MANIFEST_ID_BASE = 1_810_000_000_000_000_000
_CLAIM_ID_BASE = 1_820_000_000_000_000_000
