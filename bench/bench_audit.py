"""Benchmark ``trace``, ``audit`` and ``history`` (issue 13).

One story: the real seed story inside a generated corpus of ``--stories`` stories (default
10,000), on disk and opened read-only as the CLI does: trace of the story, of a paragraph, of
its most-cited manifest and of a claim; audit of that one story; history of it. Target: each
under 1 s. Corpus: ``audit`` of every story, on disk and in memory (target < 10 s), and the
HTML report. Baseline in the same run: :func:`tests.support.groundtruth.ground_truth` over the same
story dicts in plain Python (the independent oracle, no graph), and ``ingest`` of the corpus.

Usage::

    python bench/bench_audit.py [--stories 10000] [--seed 13] [--runs 3] [--write-results]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import publish  # noqa: E402

SECTION = "## Trace, audit, history (issue 13)"
SEED_URL = "https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/"


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    """Median wall time of ``runs`` calls, and the last result."""
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def render(r: dict[str, Any]) -> str:
    """The bench/RESULTS.md section: what was run, then one table per measure."""
    a = r["args"]
    lines = [
        SECTION,
        "",
        f"`python bench/bench_audit.py --stories {a['stories']} --seed {a['seed']} --runs "
        f"{a['runs']}`: the real seed story plus {a['stories']:,} generated stories "
        f"({r['quads']:,} quads), layout v2 (shared things stated once, issue 9). "
        f"Load average {r['load_before']:.1f} before, {r['load_after']:.1f} after "
        "(2 cores, shared with other work).",
        "",
        "| one story (on disk, read-only; median) | time | target |",
        "| --- | ---: | ---: |",
    ]
    for name, sec in r["one"].items():
        lines.append(f"| {name} | {sec * 1000:.0f} ms | < 1 s |")
    lines += [
        "",
        "| whole corpus | time | note |",
        "| --- | ---: | --- |",
        f"| `audit` (every story), on disk | {r['audit_disk']:.1f} s | target < 10 s; "
        f"{r['findings']:,} findings in {r['failing']:,} stories |",
        f"| `audit`, in-memory store | {r['audit_memory']:.1f} s | same quads |",
        f"| HTML report | {r['html']:.1f} s | {r['html_bytes'] / 1e6:.1f} MB |",
        f"| baseline: `ground_truth()` over the JSON dicts | {r['ground_truth']:.1f} s | plain "
        "Python, no graph |",
        f"| context: `ingest` of the corpus | {r['ingest']:.0f} s | on disk |",
        "",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stories", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--write-results", action="store_true")
    args = ap.parse_args()

    from hcgraph import Store, ingest_bytes
    from hcgraph.provenance import audit, history, trace, write_report
    from hcsample.corpus import generate_corpus
    from tests.support.groundtruth import ground_truth

    r: dict[str, Any] = {"args": vars(args), "load_before": os.getloadavg()[0]}
    work = Path(tempfile.mkdtemp(prefix="bench-audit-"))
    seed = json.loads((ROOT / "tests" / "fixtures" / "agentic-rl-production.json").read_text())
    stories = generate_corpus(args.stories, args.seed, include_seed=seed).stories
    docs = [(json.dumps(s, ensure_ascii=False).encode(), f"s{i}.json")
            for i, s in enumerate(stories)]  # fmt: skip
    print(f"== {len(stories)} stories", flush=True)
    r["ground_truth"], _ = timed(lambda: ground_truth(stories), 1)
    t = time.perf_counter()
    with Store(work / "store") as st:
        ingest_bytes(st, docs)
    r["ingest"] = time.perf_counter() - t
    print(f"ingest {r['ingest']:.1f} s; ground truth {r['ground_truth']:.2f} s", flush=True)

    with Store(work / "store", read_only=True) as st:
        r["quads"] = len(st)
        part = SEED_URL + "#s2-p1"
        mtr = trace(st, SEED_URL)
        popular = max(mtr.manifests, key=lambda m: trace(st, m, limit=1).total_stories)
        claim = sorted(mtr.stories[0].parts[0].claim_ids)[0]
        n_pop = trace(st, popular, limit=1).total_stories
        n_claim = trace(st, claim, limit=1).total_stories
        one = {
            "trace story": lambda: trace(st, SEED_URL),
            "trace paragraph": lambda: trace(st, part),
            f"trace manifest (cited by {n_pop} stories; 20 detailed, the CLI default)": (
                lambda: trace(st, popular, limit=20)
            ),
            f"trace claim (cited by {n_claim} stories; 20 detailed)": (
                lambda: trace(st, claim, limit=20)
            ),
            "audit one story": lambda: audit(st, [SEED_URL]),
            "history (revision chain; no archive in this store)": lambda: history(st, SEED_URL),
        }
        r["one"] = {}
        for name, fn in one.items():
            r["one"][name], _ = timed(fn, args.runs)
            print(f"  {name}: {r['one'][name]:.3f} s", flush=True)
        r["audit_disk"], report = timed(lambda: audit(st), 1)
        print(f"audit, on disk: {r['audit_disk']:.1f} s", flush=True)
        r["findings"] = len(report.findings)
        r["failing"] = sum(1 for s in report.stories if s.findings)
        html = work / "audit.html"
        r["html"], _ = timed(lambda: write_report(report, html), 1)
        r["html_bytes"] = html.stat().st_size
    with Store(None) as mem:
        ingest_bytes(mem, docs)
        r["audit_memory"], _ = timed(lambda: audit(mem), 1)
    print(f"audit, in memory: {r['audit_memory']:.1f} s", flush=True)
    r["load_after"] = os.getloadavg()[0]
    shutil.rmtree(work, ignore_errors=True)
    publish(SECTION, render(r), args.write_results)


if __name__ == "__main__":
    main()
