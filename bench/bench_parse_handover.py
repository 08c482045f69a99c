"""What one parse per crawled body could save, and what each way of getting there costs.

    python bench/bench_parse_handover.py [--stories 1000] [--rounds 5]

A crawled body is parsed twice: :func:`hcgraph.crawling.identity_check.declared_url` reads its
``url`` on the crawler's event loop (pydantic-core's ``from_json``), then the store worker's
pipeline parses and validates it (:func:`hcgraph.model.parse_story`) after the body has been
pickled to it. One parse per body can come two ways (issue 41, item 3):

* **the identity check reads what the single parse produced**: the crawler parses, and the
  parsed document crosses to the worker instead of being parsed there: as the validated
  :class:`~hcgraph.model.Story` (the pipeline skips its parse), or as ``from_json``'s tree
  (the pipeline validates that tree, ``Story.model_validate``, instead of the bytes, after
  the same scans of the raw bytes ``parse_story`` makes). The body's bytes cross either
  way (they are archived and hashed);
* **the parse moves to where both need it**: the check runs in the pipeline on the Story
  it parses anyway; the crawler's parse goes, nothing is added on the wire but the fetched
  URLs.

Each row is CPU microseconds per body (the best of ``--rounds``, ``time.process_time``) over
the same generated stories (:func:`hcsample.corpus.iter_stories`, serialised as the crawl
benchmarks serve them). The baseline, measured in the same run, is today's path: the
identity parse + the pickle round trip of the body + ``parse_story``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pydantic_core import from_json  # noqa: E402

from hcgraph.crawling.identity_check import declared_url  # noqa: E402
from hcgraph.model import Story, _suspect, check_shape, parse_story  # noqa: E402
from hcgraph.pipeline import Document  # noqa: E402
from hcsample.corpus import _dumps, iter_stories  # noqa: E402


def _best(rounds: int, items: Sequence[Any], fn: Callable[[Any], object]) -> float:
    """CPU µs per item of ``fn`` over ``items``, the best of ``rounds``. Each result is
    dropped at once: a list of 1,000 live stories makes the collector's passes dearer and
    the figures depend on it (a pipeline batch holds its stories only while it maps them)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for item in items:
            fn(item)
        best = min(best, time.process_time() - start)
    return best / len(items) * 1e6


def _wire(obj: Any) -> Any:
    """A pickle round trip: what the pipe to the store worker does to a message."""
    return pickle.loads(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    bodies = [_dumps(story).encode() for story in iter_stories(args.stories)]
    n, when = len(bodies), dt.datetime.now(dt.UTC)
    docs = [Document(b, f"http://x/{i}/index.json", when, f"k{i}") for i, b in enumerate(bodies)]
    stories = [parse_story(b, "x") for b in bodies]
    trees = [from_json(b) for b in bodies]

    def validate_tree(pair: tuple[bytes, Any]) -> None:
        # parse_story's scans of the raw bytes stay (what the Rust parser takes but a story
        # may not hold: hostile depth, NaN, 1e400, lone surrogates); the bytes cross anyway
        check_shape(pair[0], "x")
        _suspect(pair[0])
        Story.model_validate(pair[1])

    r = args.rounds
    t = {
        "identity parse": _best(r, bodies, declared_url),
        "wire: body": _best(r, docs, _wire),
        "parse_story": _best(r, bodies, lambda b: parse_story(b, "x")),
        "wire: body + Story": _best(r, list(zip(docs, stories, strict=True)), _wire),
        "wire: body + tree": _best(r, list(zip(docs, trees, strict=True)), _wire),
        "validate tree": _best(r, list(zip(bodies, trees, strict=True)), validate_tree),
    }
    today = t["identity parse"] + t["wire: body"] + t["parse_story"]
    ways = [
        ("today: identity parse, body on the wire, parse_story", today),
        (
            "parse on the loop, Story on the wire (no parse in the worker)",
            t["parse_story"] + t["wire: body + Story"],
        ),
        (
            "from_json on the loop, tree on the wire, worker validates the tree",
            t["identity parse"] + t["wire: body + tree"] + t["validate tree"],
        ),
        (
            "check in the pipeline: body on the wire, parse_story",
            t["wire: body"] + t["parse_story"],
        ),
    ]
    print(f"{n} stories, {sum(map(len, bodies)) / n / 1024:.1f} KiB a body, best of {args.rounds}")
    print()
    print("| step | CPU µs a body |")
    print("|---|---:|")
    for name, value in t.items():
        print(f"| {name} | {value:.1f} |")
    print()
    print("| way | CPU µs a body | vs today |")
    print("|---|---:|---:|")
    for name, value in ways:
        print(f"| {name} | {value:.1f} | {value / today:.3f}x ({value - today:+.1f} µs) |")


if __name__ == "__main__":
    main()
