"""The support check: does a paragraph say what the claims it cites say? (deterministic)

Pure (no I/O) and fast. :func:`check_text` takes one paragraph's (or key fact's) Markdown and
the claims it cites, ``(claim id, claim text)`` pairs, and returns one :class:`Verdict` per
claim: the best-overlapping sentence is checked for a changed number, name, negation or
quote. The rules, and what the check cannot see, are in ``docs/support-check.md``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .plaintext import Plain, plain, sentences

__all__ = ["METHOD", "METHOD_VERSION", "OVERLAP_MIN", "Mismatch", "Verdict", "check_text"]

METHOD = "hcgraph-support"  # the method's name, recorded in PROV
METHOD_VERSION = "1"  # bump when verdicts can change
#: Below this weighted overlap no sentence states the claim (set on bench seed 1).
OVERLAP_MIN = 0.5


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One way the citing sentence differs from the claim; spans are the citing text's, or
    the claim's when ``start == -1``."""

    kind: str  # "number", "entity", "negation", "quote" or "unrelated"
    span: str  # the offending text ("79.3%"); for "unrelated" the best sentence (or "")
    start: int  # offset of span in the citing text; -1 when the span is only in the claim
    end: int  # its end offset (-1 with start)
    claim_span: str  # what the claim says there ("77.3%"), "" when nothing
    detail: str  # one line for people


@dataclass(frozen=True, slots=True)
class Verdict:
    """The check of one cited claim against the text that cites it."""

    claim_id: str
    supported: bool
    sentence: str  # the sentence of the text that best states the claim ("" if none)
    sentence_start: int  # its offset in the text (-1 if none)
    overlap: float  # lexical overlap score in [0, 1], rounded to 3 places
    mismatches: tuple[Mismatch, ...]  # empty iff supported

    @property
    def reason(self) -> str:
        """The first mismatch's kind, ``""`` when supported."""
        return self.mismatches[0].kind if self.mismatches else ""


# ---------------------------------------------------------------- vocabulary


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOP = _words(
    """a an the and or but of in on at to for with by from as is are was were be been being it
    its it's this that these those which who whom whose what than then so such into onto
    over under about also their there they them he she his her we our you your i has have
    had do does did can could would should may might will shall must per via each any all
    both more most other some own same very just only while where when how why if up out
    upon within across between among through during before after again further once here yet
    still even much many well too s t"""
)
_NEGATIONS = _words(
    """not no never without cannot none nor neither nobody nothing nowhere unable lack lacks
    lacked lacking"""
)
_NOT_NEGATING = frozenset({"only", "just", "merely"})  # "not only X but Y" affirms X
_FAIL = frozenset({"fail", "fails", "failed", "failing"})
_WEAK = frozenset(
    {"author", "paper", "preprint", "accord", "show", "study", "knowledge", "word", "claim"}
)  # attribution words: where a sentence's clauses come from, not what they say
_CLAUSE_WORDS = frozenset({"and", "but", "while", "whereas", "although", "though"})
_NUMBER_NAMES = """two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty
    ninety"""
_NUMBER_WORDS = dict(zip(_NUMBER_NAMES.split(), [*range(2, 21), *range(30, 100, 10)], strict=True))
_UNITS = {  # a unit word → its canonical unit
    alias: unit
    for unit, aliases in (
        ("%", ("%", "percent", "per cent", "pct")),
        ("pt", ("percentage point", "percentage points", "point", "points", "pts", "pp")),
        ("x", ("x", "\u00d7", "times", "fold")),
        ("billion", ("b", "bn", "billion")),
        ("million", ("m", "million")),
        ("thousand", ("k", "thousand")),
        ("trillion", ("t", "trillion")),
    )
    for alias in aliases
}
_UNIT_AFTER = re.compile(
    r"\s?(?:%|\u00d7)|\s(?:percentage points?|per cent|percent|pct|points?|pts|pp|times|"
    r"billion|million|thousand|trillion|bn)\b|(?:x|-fold)\b",
    re.IGNORECASE,
)
_SYNONYMS: dict[str, tuple[str, ...]] = {
    "reach": ("achieve", "attain", "hit", "score", "post", "record", "get"),
    "improve": ("boost", "lift", "raise", "increase", "gain", "enhance"),
    "outperform": ("beat", "surpass", "exceed", "top", "outdo", "outscore"),
    "use": ("employ", "leverage", "utilize", "utilise", "rely"),
    "show": ("find", "demonstrate", "report", "reveal", "indicate", "suggest"),
    "reduce": ("cut", "lower", "decrease", "shrink", "drop", "trim"),
    "enable": ("allow", "let", "permit"),
    "propose": ("introduce", "present", "unveil"),
    "build": ("construct", "create"),
    "provide": ("supply", "give", "deliver"),
    "average": ("mean",),
    "eliminate": ("remove",),
    "require": ("need",),
}

_WORD = re.compile(r"[^\W_](?:[^\W_]|['\u2019.\-](?=[^\W_])|(?<=\d),(?=\d{3}))*")
_NUMBER = re.compile(r"[-+\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_NUMBER_UNIT = re.compile(r"(\d+(?:\.\d+)?)(%|x|\u00d7|[bBmMkKT]|bn)(?:-[a-z]+)*")
_NUMBER_HYPHEN = re.compile(r"(\d+(?:\.\d+)?)-([a-z]+)(?:-[a-z]+)*")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")
_QUOTE = re.compile(r"\"([^\"]{2,}?)\"|\u201c([^\u201d]{2,}?)\u201d")
_CLAUSE_MARKS = frozenset(",;:\u2014\u2013()")


def _stem(word: str) -> str:
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                continue
            return word[: len(word) - len(suffix)] + repl
    return word


# Endings stripped, the first that leaves 3 letters (``ied``/``ies`` become ``y``).
_ENDINGS = ["ations", "ation", "ings", "ing", "ied", "ies", "ed", "es", "s", "e"]
_SUFFIXES = [(end, "y" if end.startswith("ie") else "") for end in _ENDINGS]
_CANON = {_stem(alt): _stem(head) for head, alts in _SYNONYMS.items() for alt in alts}


@lru_cache(maxsize=65536)
def _form(word: str) -> str:
    """A lower-case word's content form: stemmed, synonyms folded."""
    stem = _stem(word)
    return _CANON.get(stem, stem)


# ---------------------------------------------------------------- analysis


@dataclass(frozen=True, slots=True)
class _Number:
    value: float
    decimals: int
    unit: str  # canonical, "" when none
    start: int  # plain offsets (in the analysed string)
    end: int


# A token: (content forms (empty for stop and negation words), start, end, negates,
# clause break before it, a name). A tuple: the hot loop makes one per word.
_Tok = tuple[tuple[str, ...], int, int, bool, bool, bool]


@dataclass(frozen=True, slots=True)
class _Analysis:
    text: str
    toks: tuple[_Tok, ...]
    weights: dict[str, int]  # content form → weight (2 names and numbers, 1 words)
    names: dict[str, tuple[int, int]]  # lower-case name → span of its first occurrence
    name_forms: frozenset[str]  # names and their hyphen parts, lower case
    numbers: tuple[_Number, ...]
    negations: int
    quotes: tuple[tuple[str, int, int], ...]  # normalised quote, span
    total: int  # the sum of the weights


def _unit(word: str) -> str:
    return _UNITS.get(word.lower(), word.lower())


# What a word is, whatever its place: its lower-case form, its content forms as a name and as
# a word, whether it may be a number, how it may negate (0 no, 1 yes, 2 unless "not only",
# 3 if "to" follows), whether it is a name inside a sentence and as its first word, and the
# length of its possessive "'s" (0 or 2).
_WordInfo = tuple[str, tuple[str, ...], tuple[str, ...], bool, int, bool, bool, int]


@lru_cache(maxsize=65536)
def _word_info(word: str) -> _WordInfo:
    lower = word.lower().replace("\u2019", "'").removesuffix("'s")
    numeric = word[0].isdigit() or word[0] in "+-\u2212" or lower in _NUMBER_WORDS
    parts = [p for p in lower.split("-") if p and p not in _STOP]
    name_forms = (lower, *(p for p in parts if p != lower))
    word_forms = tuple(_form(p) for p in parts)
    mid, first = _is_name(word, False), _is_name(word, True)
    possessive = 2 if word.endswith(("'s", "\u2019s")) else 0
    return lower, name_forms, word_forms, numeric, _negation(lower), mid, first, possessive


def _negation(lower: str) -> int:
    if lower in ("not", "no"):
        return 2
    if lower in _NEGATIONS or lower.endswith(("n't", "-free")):
        return 1
    return 3 if lower in _FAIL else 0


def _analyse(text: str) -> _Analysis:
    """Tokens, weighted content forms, names, numbers, negations and quotes of ``text``."""
    toks: list[_Tok] = []
    weights: dict[str, int] = {}
    names: dict[str, tuple[int, int]] = {}
    name_forms: set[str] = set()
    numbers: list[_Number] = []
    negations = 0
    first = True
    last_end = 0
    previous = ""
    for match in _WORD.finditer(text):
        start, end = match.span()
        if start < last_end:
            continue  # the unit word of a number ("77.3 percent")
        clause, first = _gap(text, last_end, start, previous, first)
        word = match.group()
        lower, as_name, as_word, numeric, negation, name_mid, name_first, possessive = _word_info(
            word
        )
        negates = negation == 1 or _negates(negation, text, end)
        number = _number(word, text, start, end) if numeric else None
        forms, weight, is_name = as_word, 1, False
        if number is not None:
            numbers.append(number)
            end = number.end
            forms, weight = (f"#{number.value:g}",), 2
        elif negates or lower in _STOP:
            forms = ()
        elif name_first if first else name_mid:
            names.setdefault(lower, (start, end - possessive))
            name_forms.update(as_name)
            forms, weight, is_name = as_name, 2, True
        toks.append((forms, start, end, negates, clause, is_name))
        _weigh(weights, forms, weight)
        negations += negates
        first = False
        previous = lower
        last_end = end
    return _Analysis(
        text,
        tuple(toks),
        weights,
        names,
        frozenset(name_forms),
        tuple(numbers),
        negations,
        _quotes(text),
        sum(weights.values()),
    )


def _weigh(weights: dict[str, int], forms: tuple[str, ...], weight: int) -> None:
    """Raise each of ``forms`` to ``weight`` in ``weights`` (names and numbers weigh most)."""
    for form in forms:
        if weights.get(form, 0) < weight:
            weights[form] = weight


def _gap(text: str, last_end: int, start: int, previous: str, first: bool) -> tuple[bool, bool]:
    """Whether a clause breaks before the word at ``start``, and whether it opens a sentence."""
    if start - last_end == 1 and text[last_end] == " ":
        return previous in _CLAUSE_WORDS, first
    gap = text[last_end:start]
    clause = previous in _CLAUSE_WORDS or any(ch in _CLAUSE_MARKS for ch in gap)
    return clause, first or "." in gap or "!" in gap or "?" in gap or "\n\n" in gap


def _negates(negation: int, text: str, end: int) -> bool:
    """Whether a "not"/"no" (2) or a "fail" (3) ending at ``end`` negates (0: never)."""
    if not negation:
        return False
    if negation == 2:
        following = _WORD.match(text, end + 1) if text[end : end + 1] == " " else None
        return following is None or following.group().lower() not in _NOT_NEGATING
    return text.startswith(" to ", end)


def _quotes(text: str) -> tuple[tuple[str, int, int], ...]:
    if '"' not in text and "\u201c" not in text:
        return ()
    return tuple(
        (_norm_quote(m.group(1) or m.group(2)), m.start(), m.end()) for m in _QUOTE.finditer(text)
    )


def _number(word: str, text: str, start: int, end: int) -> _Number | None:
    lower = word.lower()
    if lower in _NUMBER_WORDS:
        return _Number(float(_NUMBER_WORDS[lower]), 0, "", start, end)
    if _NUMBER.fullmatch(word):
        return _digits(word, text, start, end)
    attached = _NUMBER_UNIT.fullmatch(word) or _NUMBER_HYPHEN.fullmatch(word)
    if attached and not _ORDINAL.fullmatch(word):
        digits = attached.group(1)
        return _Number(float(digits), _decimals(digits), _unit(attached.group(2)), start, end)
    return None


def _digits(word: str, text: str, start: int, end: int) -> _Number | None:
    """A number written in digits, with the unit that follows it; None for a year."""
    digits = word.replace(",", "").replace("\u2212", "-")
    value = float(digits)
    decimals = _decimals(digits)
    after = _UNIT_AFTER.match(text, end)
    if after is None:
        year = decimals == 0 and 1900 <= value <= 2099 and "," not in word
        return None if year else _Number(value, decimals, "", start, end)
    return _Number(value, decimals, _unit(after.group().strip().lstrip("-")), start, after.end())


def _decimals(digits: str) -> int:
    return len(digits.split(".")[1]) if "." in digits else 0


def _is_name(word: str, first: bool) -> bool:
    if any(ch.isdigit() for ch in word):
        return any(ch.isalpha() for ch in word) and not _ORDINAL.fullmatch(word)
    return _is_caps(word) or (not first and word[:1].isupper())


def _is_caps(word: str) -> bool:
    """ALLCAPS (two letters or more) or CamelCase."""
    letters = [ch for ch in word if ch.isalpha()]
    upper = sum(ch.isupper() for ch in letters)
    return upper >= 2 and (upper == len(letters) or word[1:].lower() != word[1:])


def _norm_quote(quote: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", quote.lower()))


_claim = lru_cache(maxsize=8192)(_analyse)


# ---------------------------------------------------------------- the check

_Where = Callable[[int, int], tuple[str, int, int]]  # sentence span → (text, start, end)


@dataclass(frozen=True, slots=True)
class _Cited:
    """All the claims one text cites: what any of them states."""

    claims: list[_Analysis]
    forms: set[str]  # content forms and name forms
    numbers: list[_Number]
    quotes: list[str]  # each claim's text, normalised as quotes are


def check_text(text: str, claims: Sequence[tuple[str, str]]) -> list[Verdict]:
    """One paragraph's (or key fact's) Markdown text against the claims it cites
    (``(claim id, claim text)`` pairs, in citing order): one verdict per claim, same order.

    >>> [v] = check_text("LAR-27B reaches **79.3%** on TerminalBench-2.1.",
    ...                  [("c1", "LAR-27B reaches 77.3% on TerminalBench-2.1.")])
    >>> v.supported, v.reason, v.mismatches[0].span, v.mismatches[0].start
    (False, 'number', '79.3%', 18)
    """
    stripped = plain(text)
    spans = sentences(stripped.text)
    sents = [_analyse(stripped.text[a:b]) for a, b in spans]
    analysed = [_claim(claim_text) for _, claim_text in claims]
    cited = _Cited(
        analysed,
        set().union(*(a.weights for a in analysed), *(a.name_forms for a in analysed)),
        [n for a in analysed for n in a.numbers],
        [_norm_quote(claim_text) for _, claim_text in claims],
    )
    return [
        _verdict(claim_id, claim, cited, text, stripped, spans, sents)
        for (claim_id, _), claim in zip(claims, analysed, strict=True)
    ]


def _overlap(claim: _Analysis, sent: _Analysis) -> float:
    if not claim.total:
        return 0.0
    have = sent.weights
    names = sent.name_forms
    hit = sum(w for f, w in claim.weights.items() if f in have or f in names)
    return hit / claim.total


def _verdict(
    claim_id: str,
    claim: _Analysis,
    cited: _Cited,
    text: str,
    stripped: Plain,
    spans: list[tuple[int, int]],
    sents: list[_Analysis],
) -> Verdict:
    best, score = -1, 0.0
    for index, sent in enumerate(sents):
        value = _overlap(claim, sent)
        if value > score:
            best, score = index, value
    if best < 0:
        found = (Mismatch("unrelated", "", -1, -1, "", "no sentence of the text states the claim"),)
        return Verdict(claim_id, False, "", -1, 0.0, found)
    a, b = spans[best]
    s_start, s_end = stripped.orig_span(a, b)
    sentence = text[s_start:s_end]
    overlap = round(score, 3)
    if score < OVERLAP_MIN:
        detail = f"no sentence states the claim (best overlap {overlap:.2f} < {OVERLAP_MIN})"
        found = (Mismatch("unrelated", sentence, s_start, s_end, "", detail),)
        return Verdict(claim_id, False, sentence, s_start, overlap, found)
    sent = sents[best]

    def where(start: int, end: int) -> tuple[str, int, int]:
        o_start, o_end = stripped.orig_span(a + start, a + end)
        return text[o_start:o_end], o_start, o_end

    scope = _scope(claim, cited.claims, sent)
    checks = (
        _number_mismatch(claim, sent, cited.numbers, where),
        _entity_mismatch(claim, sent, cited.forms, where),
        _negation_mismatch(claim, sent, scope, where),
    )
    mismatches = [m for m in checks if m is not None]
    mismatches += _quote_mismatches(sent, scope, cited.quotes, where)
    return Verdict(claim_id, not mismatches, sentence, s_start, overlap, tuple(mismatches))


def _same(claimed: _Number, stated: _Number) -> bool:
    if claimed.unit and stated.unit and claimed.unit != stated.unit:
        return False
    if stated.value == claimed.value:
        return True
    # a restatement with fewer decimals that rounds to the claim's value ("77%" for 77.3%)
    return stated.decimals < claimed.decimals and abs(stated.value - claimed.value) <= 0.5 * (
        10.0**-stated.decimals
    )


def _number_mismatch(
    claim: _Analysis, sent: _Analysis, cited_numbers: list[_Number], where: _Where
) -> Mismatch | None:
    for claimed in claim.numbers:
        if any(_same(claimed, stated) for stated in sent.numbers):
            continue
        rivals = [s for s in sent.numbers if not any(_same(c, s) for c in cited_numbers)]
        if not rivals:
            continue
        rival = min(rivals, key=lambda s: (s.unit != claimed.unit, abs(s.value - claimed.value)))
        span, start, end = where(rival.start, rival.end)
        said = claim.text[claimed.start : claimed.end]
        return Mismatch(
            "number", span, start, end, said, f'the claim says "{said}", the sentence says "{span}"'
        )
    return None


def _entity_mismatch(
    claim: _Analysis, sent: _Analysis, cited_forms: set[str], where: _Where
) -> Mismatch | None:
    missing = [n for n in claim.names if n not in sent.name_forms and n not in sent.weights]
    rivals = [(n, span) for n, span in sent.names.items() if not _cited_name(n, cited_forms)]
    if not missing or not rivals:
        return None
    name = missing[0]
    _, (r_start, r_end) = max(rivals, key=lambda item: _likeness(name, item[0]))
    span, start, end = where(r_start, r_end)
    said = claim.text[slice(*claim.names[name])]
    return Mismatch(
        "entity", span, start, end, said, f'the claim names "{said}", the sentence "{span}"'
    )


def _cited_name(name: str, cited_forms: set[str]) -> bool:
    """Whether a cited claim holds ``name``, or each of its hyphen parts."""
    return name in cited_forms or all(p in cited_forms for p in name.split("-") if p)


def _likeness(a: str, b: str) -> tuple[int, int]:
    """How alike two names are: their common prefix, then whether both (or neither) hold digits."""
    shape = int(any(c.isdigit() for c in a) == any(c.isdigit() for c in b))
    prefix = os.path.commonprefix((a, b))  # noqa: RUF071 - characters wanted, not paths
    return len(prefix), shape


def _scope(claim: _Analysis, claims: list[_Analysis], sent: _Analysis) -> tuple[int, int]:
    """The claim's part of the sentence, as token indices ``[lo, hi)``: the clauses from the
    first to the last that hold a word (not a name) only this claim (of those cited) has,
    attribution words ("the authors", "a preprint") not counting; failing that, its names,
    then any of its tokens; ``(0, 0)`` when the sentence has none of its tokens."""
    mine, only_mine = _own_forms(claim, claims)
    toks = sent.toks
    hits = [i for i, t in enumerate(toks) if not mine.isdisjoint(t[0])]
    if not hits:
        return 0, 0
    own = [i for i in hits if not only_mine.isdisjoint(toks[i][0])] or hits
    # a shared subject may head a clause of its own ("X needs no critic; X is the first …"):
    # what the claim says decides
    chosen = [i for i in own if not toks[i][5]] or own
    return _clauses(toks, chosen[0], chosen[-1] + 1)


def _own_forms(claim: _Analysis, claims: list[_Analysis]) -> tuple[set[str], set[str]]:
    """The claim's content and name forms less attribution words, and those of them no other
    cited claim has."""
    others = {form for other in claims if other is not claim for form in other.weights}
    mine = (set(claim.weights) | claim.name_forms) - _WEAK
    return mine, mine - others


def _clauses(toks: tuple[_Tok, ...], lo: int, hi: int) -> tuple[int, int]:
    """The token span ``[lo, hi)`` widened to whole clauses."""
    while lo > 0 and not toks[lo][4]:
        lo -= 1
    while hi < len(toks) and not toks[hi][4]:
        hi += 1
    return lo, hi


def _negation_mismatch(
    claim: _Analysis, sent: _Analysis, scope: tuple[int, int], where: _Where
) -> Mismatch | None:
    lo, hi = scope
    if (not claim.negations and not sent.negations) or lo == hi:
        return None
    cues = [t for t in sent.toks[lo:hi] if t[3]]
    if len(cues) % 2 == claim.negations % 2:
        return None
    if cues:
        span, start, end = where(cues[0][1], cues[0][2])
        return Mismatch(
            "negation", span, start, end, "", f'the sentence says "{span}", the claim does not'
        )
    cue = next(t for t in claim.toks if t[3])
    said = claim.text[cue[1] : cue[2]]
    return Mismatch(
        "negation", said, -1, -1, said, f'the claim says "{said}", the sentence does not'
    )


def _quote_mismatches(
    sent: _Analysis, scope: tuple[int, int], cited_quotes: list[str], where: _Where
) -> list[Mismatch]:
    """The quotes in the claim's clauses, or in the clause next to them, no cited claim holds."""
    toks = sent.toks
    if not sent.quotes or scope[0] == scope[1]:
        return []
    lo, hi = _clauses(toks, max(0, scope[0] - 1), min(len(toks), scope[1] + 1))
    first, last = toks[lo][1], toks[hi - 1][2]
    found = []
    for quote, q_start, q_end in sent.quotes:
        near = q_end > first and q_start < last + 1
        if near and quote and not any(quote in claim for claim in cited_quotes):
            span, start, end = where(q_start, q_end)
            found.append(
                Mismatch("quote", span, start, end, "", f"no cited claim holds the quote {span}")
            )
    return found
