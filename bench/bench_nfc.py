"""What NFC-normalising every literal costs the mapping step (issue 39), A/B in one process.

The mapper writes each literal through :func:`hcgraph.rdftext.literal`, which now passes it
through :func:`hcgraph.rdftext.nfc`. The baseline is the same code with ``nfc`` replaced by
the identity (the mapping as it was), measured in the same run, rounds alternating A B A B so
drift on a shared machine falls on both. Two corpora of generated stories:

* ``generated``: :func:`hcsample.corpus.generate_corpus` as it is (every story holds some
  non-ASCII text, so the ASCII shortcut alone never decides a whole story);
* ``nfd``: the same with NFD text (``Cafe`` + U+0301, ``cre`` + U+0300) appended to every
  headline and paragraph: the worst case, where ``normalize`` runs.

Parsing (pydantic) is done once before timing; the timed part is ``map_story`` over every
story, CPU seconds (``time.process_time``), the median of the rounds.

Usage::

    python bench/bench_nfc.py [--stories 1000] [--rounds 7] [--write-results]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import publish  # noqa: E402

from hcgraph import rdftext  # noqa: E402
from hcgraph.mapping import IngestInfo, map_story  # noqa: E402
from hcgraph.model import Story, parse_story  # noqa: E402
from hcsample.corpus import generate_corpus  # noqa: E402

HEADING = "## NFC literals: the mapping step's CPU"


def _with_nfd(doc: dict[str, Any]) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))
    doc["headline"] = doc.get("headline", "") + " Cafe\u0301"
    for section in doc.get("sections", []):
        for para in section.get("paragraphs", []):
            para["markdown"] = para.get("markdown", "") + " cre\u0300me"
    return doc


def _stories(n: int, nfd: bool) -> list[Story]:
    docs = generate_corpus(n, seed=42).stories
    return [
        parse_story(json.dumps(_with_nfd(d) if nfd else d).encode(), f"s{i}.json")
        for i, d in enumerate(docs)
    ]


def _map_all(stories: list[Story]) -> float:
    info = IngestInfo("ab" * 32, "bench.json", dt.datetime(2026, 12, 6, tzinfo=dt.UTC), 1)
    start = time.process_time()
    for story in stories:
        map_story(story, info)
    return time.process_time() - start


def _ab(stories: list[Story], rounds: int) -> tuple[float, float]:
    """Median CPU seconds: (with NFC, baseline without)."""
    real = rdftext.nfc
    with_nfc: list[float] = []
    without: list[float] = []
    _map_all(stories)  # warm-up: caches, allocator
    try:
        for _ in range(rounds):
            rdftext.nfc = real
            with_nfc.append(_map_all(stories))
            rdftext.nfc = lambda value: value
            without.append(_map_all(stories))
    finally:
        rdftext.nfc = real
    return statistics.median(with_nfc), statistics.median(without)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stories", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    rows = []
    for name, nfd in (("generated", False), ("nfd", True)):
        stories = _stories(args.stories, nfd)
        a, b = _ab(stories, args.rounds)
        n = len(stories)
        rows.append(
            f"| {name} | {n} | {b / n * 1000:.3f} | {a / n * 1000:.3f} | "
            f"{(a - b) / n * 1e6:+.1f} | {(a / b - 1) * 100:+.1f}% |"
        )
    section = "\n".join([
        HEADING, "",
        f"`python bench/bench_nfc.py --stories {args.stories} --rounds {args.rounds}`: "
        "`map_story` over every story, CPU, median of the alternating rounds.", "",
        "| corpus | stories | baseline ms/story | NFC ms/story | µs/story | change |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        *rows, "",
    ])  # fmt: skip
    publish(HEADING, section, args.write_results)


if __name__ == "__main__":
    main()
