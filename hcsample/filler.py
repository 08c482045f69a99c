"""Filler text of the bundled sample: angles, deks, and paragraphs with no claim text.

Story angles and deks, and the text of paragraphs that cite nothing (or only claims whose
text no reply gives).

A bank built once from a fixed seed, so a story picks whole texts instead of composing
words (composing every sentence per story was the main cost of generation); corpora still
differ by seed because the picks do. Paragraphs that cite claims restate them instead
(:mod:`hcsample.claims`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TypeVar

__all__ = ["SENT_OBJECTS", "SENT_SUBJECTS", "SENT_VERBS", "text_bank"]

_T = TypeVar("_T")

SENT_SUBJECTS: tuple[str, ...] = (
    "A new preprint",
    "The authors",
    "A benchmark team",
    "An open-weights lab",
    "A systems group",
    "The paper",
    "A second study",
    "An industry report",
)
SENT_VERBS: tuple[str, ...] = ("reports", "claims", "finds", "argues", "measures", "shows")
SENT_OBJECTS: tuple[str, ...] = (
    "a {n}% gain on long-horizon tasks",
    "a {n}-point lift over its baseline",
    "{n}x lower serving cost at equal quality",
    "that {n} of 100 tasks remain unsolved",
    "a {n}% drop in hallucinated citations",
    "stable training for {n} thousand steps",
    "a {n}% win rate against the previous release",
)


def _pick(rng: random.Random, items: Sequence[_T]) -> _T:
    """Uniform choice (as :mod:`hcsample.corpus` draws)."""
    return items[int(rng.random() * len(items))]


def _sentence(rng: random.Random) -> str:
    """One plain sentence of filler news text with a number in it."""
    obj = _pick(rng, SENT_OBJECTS).format(n=3 + int(rng.random() * 95))
    return f"{_pick(rng, SENT_SUBJECTS)} {_pick(rng, SENT_VERBS)} {obj}."


@dataclass(frozen=True, slots=True)
class TextBank:
    """Pre-built filler texts, so a story picks whole texts instead of composing words.

    Built once from a fixed seed: composing every sentence per story was the main cost of
    generation. Corpora still differ by seed because the picks do.
    """

    sentences: tuple[str, ...]
    paragraphs: tuple[str, ...]
    deks: tuple[str, ...]
    facts: tuple[str, ...]


@cache
def text_bank() -> TextBank:
    """The shared, deterministic filler-text bank."""
    rng = random.Random("hcgraph-sample:text-bank")
    sentences = tuple(_sentence(rng) for _ in range(1024))
    paragraphs = tuple(
        " ".join(_pick(rng, sentences) for _ in range(2 + int(rng.random() * 2)))
        for _ in range(2048)
    )
    deks = tuple(f"{_pick(rng, sentences)} {_pick(rng, sentences)}" for _ in range(512))
    facts = tuple(
        f"In a preprint, {_pick(rng, SENT_OBJECTS).format(n=3 + int(rng.random() * 95))}."
        for _ in range(512)
    )
    return TextBank(sentences=sentences, paragraphs=paragraphs, deks=deks, facts=facts)
