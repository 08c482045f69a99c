"""Benchmark the deterministic support check (issue 37) on a corpus with planted faults.

Corpus: ``tests/support/planted.py``: ``--paragraphs`` paragraphs (default 20,000), each
citing 1-4 claims of one manifest; about half carry one plant (a changed number, a swapped
name, a flipped negation, a changed quote, an unrelated sentence in place of the claim's,
or a cited claim the reply lacks). Measured per kind: recall (planted pairs judged
unsupported; "kind right": with that reason), false alarms (truly supported pairs judged
unsupported), a missing claim judged "not checkable" (never unsupported), and pairs checked
per CPU second. Baselines in the same run, on the same pairs: a naive exact-substring check
(the claim's text, less its full stop, verbatim in the paragraph) and token-set Jaccard
(best sentence's word-set Jaccard with the claim >= 0.5).

The check's thresholds were tuned on seed 1; the default reported seed is 2.

Usage::

    python bench/bench_support.py [--paragraphs 20000] [--seed 2] [--write-results]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import publish  # noqa: E402

from hcgraph.claims.plaintext import plain, sentences  # noqa: E402
from tests.support.planted import (  # noqa: E402
    KINDS,
    NOT_CHECKABLE,
    SUPPORTED,
    Case,
    cases,
    judge,
)

SECTION = "## Support check: planted unsupported sentences (issue 37)"
_WORDS = re.compile(r"[^\W_]+")


def substring_judge(case: Case) -> dict[str, str]:
    """Supported iff the claim's text (less its full stop) is verbatim in the paragraph."""
    out = {}
    for cid in case.cited:
        if cid not in case.reply:
            out[cid] = NOT_CHECKABLE
        else:
            claim = case.reply[cid].rstrip(".")
            out[cid] = SUPPORTED if claim in case.text else "unsupported"
    return out


def jaccard_judge(case: Case, threshold: float = 0.5) -> dict[str, str]:
    """Supported iff some sentence's word set has Jaccard >= ``threshold`` with the claim's."""
    text = plain(case.text).text
    sents = [set(_WORDS.findall(text[a:b].lower())) for a, b in sentences(text)]
    out = {}
    for cid in case.cited:
        if cid not in case.reply:
            out[cid] = NOT_CHECKABLE
            continue
        words = set(_WORDS.findall(case.reply[cid].lower()))
        best = max((len(words & s) / len(words | s) for s in sents if s), default=0.0)
        out[cid] = SUPPORTED if best >= threshold else "unsupported"
    return out


def measure(
    name: str, judge_fn: Callable[[Case], dict[str, str]], corpus: list[Case]
) -> dict[str, object]:
    """Run one judge over the corpus: counts per truth kind, and CPU seconds."""
    pairs = sum(len([c for c in case.cited if c in case.reply]) for case in corpus)
    start = time.process_time()
    judged = [judge_fn(case) for case in corpus]
    cpu = time.process_time() - start
    planted: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for case, result in zip(corpus, judged, strict=True):
        for cid, truth in case.truth.items():
            verdict = result[cid]
            planted[truth] += 1
            if truth == "missing":
                caught[truth] += verdict == NOT_CHECKABLE
                right[truth] += verdict not in (SUPPORTED, NOT_CHECKABLE)  # wrongly unsupported
            elif truth == SUPPORTED:
                caught[truth] += verdict != SUPPORTED  # false alarm
            else:
                caught[truth] += verdict not in (SUPPORTED, NOT_CHECKABLE)
                right[truth] += verdict == truth
    return {
        "name": name,
        "pairs": pairs,
        "cpu": cpu,
        "planted": planted,
        "caught": caught,
        "right": right,
    }


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def render(results: list[dict[str, object]], paragraphs: int, seed: int) -> str:
    """The results table as Markdown."""
    names = [str(r["name"]) for r in results]
    lines = [
        SECTION,
        "",
        "2026-12-06. `python bench/bench_support.py --paragraphs "
        f"{paragraphs} --seed {seed}` (thresholds tuned on seed 1; reported on seed {seed}).",
        "",
        "| measure | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    first = results[0]
    planted = first["planted"]
    assert isinstance(planted, Counter)
    for kind in KINDS:
        if kind == "missing":
            continue
        cells = []
        for r in results:
            caught, right = r["caught"], r["right"]
            assert isinstance(caught, Counter) and isinstance(right, Counter)
            cell = _pct(caught[kind], planted[kind])
            if r is first:
                cell += f" (kind right {_pct(right[kind], planted[kind])})"
            cells.append(cell)
        lines.append(f"| recall: {kind} (n={planted[kind]}) | " + " | ".join(cells) + " |")
    cells = []
    for r in results:
        caught, right = r["caught"], r["right"]
        assert isinstance(caught, Counter) and isinstance(right, Counter)
        cells.append(
            f"{_pct(caught['missing'], planted['missing'])} not checkable, "
            f"{right['missing']} unsupported"
        )
    lines.append(f"| missing claim (n={planted['missing']}) | " + " | ".join(cells) + " |")
    cells = []
    for r in results:
        caught = r["caught"]
        assert isinstance(caught, Counter)
        cells.append(_pct(caught[SUPPORTED], planted[SUPPORTED]))
    lines.append(
        f"| false alarms (of {planted[SUPPORTED]} supported pairs) | " + " | ".join(cells) + " |"
    )
    cells = []
    for r in results:
        pairs, cpu = r["pairs"], r["cpu"]
        assert isinstance(pairs, int) and isinstance(cpu, float)
        cells.append(f"{pairs / cpu:,.0f}" if cpu else "-")
    lines.append("| pairs per CPU second | " + " | ".join(cells) + " |")
    lines += ["", _verdict_line(first)]
    return "\n".join(lines) + "\n"


def _verdict_line(result: dict[str, object]) -> str:
    """One line: the issue's targets, met or not, for hcgraph's check."""
    planted, caught, right = result["planted"], result["caught"], result["right"]
    pairs, cpu = result["pairs"], result["cpu"]
    assert isinstance(planted, Counter) and isinstance(caught, Counter)
    assert isinstance(right, Counter) and isinstance(pairs, int) and isinstance(cpu, float)
    recall = min(caught[k] / planted[k] for k in ("number", "entity", "negation", "unrelated"))
    alarms = caught[SUPPORTED] / planted[SUPPORTED]
    rate = pairs / cpu if cpu else 0.0
    met = recall >= 0.95 and alarms <= 0.02 and rate >= 5000 and not right["missing"]
    return (
        f"Targets (recall >= 95% per kind, false alarms <= 2%, missing never unsupported, "
        f">= 5,000 pairs per CPU s): {'met' if met else 'NOT met'} (lowest recall "
        f"{100 * recall:.1f}%, false alarms {100 * alarms:.2f}%, {rate:,.0f} pairs/CPU s). "
        "The exact-substring baseline finds every plant but calls three in four faithful "
        "paraphrases unsupported; token Jaccard misses most changed numbers, names and "
        "negations. The corpus's templates and the check's verb families were written "
        "together; the held-out rewrite below and the real seed story "
        "(tests/test_support.py) are the checks against other prose."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paragraphs", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=2, help="thresholds were tuned on seed 1")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    corpus = list(cases(args.paragraphs, args.seed))
    results = [
        measure("hcgraph-support", judge, corpus),
        measure("exact substring", substring_judge, corpus),
        measure("token Jaccard >= 0.5", jaccard_judge, corpus),
    ]
    held = list(cases(args.paragraphs, args.seed, held_out=True))
    held_results = [
        measure("hcgraph-support", judge, held),
        measure("exact substring", substring_judge, held),
        measure("token Jaccard >= 0.5", jaccard_judge, held),
    ]
    text = render(results, args.paragraphs, args.seed)
    text += (
        "\nThe same corpus rewritten with phrasings the check's verb families were not "
        "written for (`HELD_OUT` in tests/support/planted.py: lands at, edges out, does "
        "away with, slashes, has no need for, …):\n\n"
        + "\n".join(render(held_results, args.paragraphs, args.seed).splitlines()[4:-2])
        + "\n"
    )
    publish(SECTION, text, args.write_results)


if __name__ == "__main__":
    main()
