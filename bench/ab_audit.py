"""A/B of ``audit``'s CPU: this tree against a baseline tree, on one generated store.

Builds (once) an on-disk store of ``--stories`` generated stories plus the real seed story,
then alternates processes running ``audit`` from the baseline tree and from this one
(``PYTHONPATH`` set to each tree), ``--rounds`` times: each process times, with
``time.process_time``, the whole-store audit, one story, 20 named stories (the last local
audit) and 21 (the first whole-store one), median of ``--runs``, and prints a digest of each
report's JSON, which must be equal on both sides.

Usage::

    git archive <commit> | tar -x -C /tmp/base   # the baseline tree
    python bench/ab_audit.py --baseline-tree /tmp/base [--stories 1000] [--rounds 4] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED_URL = "https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/"
CASES = ("whole store", "one story", "20 named (local)", "21 named (whole store)")

_WORKER = """
import hashlib, json, statistics, sys, time
from hcgraph import Store
from hcgraph.provenance import audit
store, runs, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with Store(store, read_only=True) as st:
    urls = sorted(s.url for s in audit(st).stories)[:20]
    calls = [lambda: audit(st), lambda: audit(st, [seed]), lambda: audit(st, urls),
             lambda: audit(st, [*urls, seed])]
    out = []
    for call in calls:
        times = []
        for _ in range(runs):
            t = time.process_time()
            report = call()
            times.append(time.process_time() - t)
        digest = hashlib.sha256(report.to_json().encode()).hexdigest()[:12]
        out.append([statistics.median(times), len(report.findings), digest])
print(json.dumps(out))
"""


def build(path: Path, stories: int) -> None:
    """The generated store (this tree's ingest), once."""
    from hcgraph import Store, ingest_bytes
    from hcsample.corpus import generate_corpus

    seed = json.loads((ROOT / "tests" / "fixtures" / "agentic-rl-production.json").read_text())
    corpus = generate_corpus(stories, 13, include_seed=seed).stories
    docs = [(json.dumps(s, ensure_ascii=False).encode(), f"s{i}.json")
            for i, s in enumerate(corpus)]  # fmt: skip
    with Store(path) as st:
        ingest_bytes(st, docs)


def run(tree: Path, store: Path, runs: int) -> list[list[object]]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", _WORKER, str(store), str(runs), SEED_URL],
        env=env, capture_output=True, text=True, check=True, cwd=tempfile.gettempdir(),
    )  # fmt: skip
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline-tree", type=Path, required=True)
    ap.add_argument("--stories", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--store", type=Path, help="keep (or reuse) the store here")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    store = args.store or Path(tempfile.mkdtemp(prefix="ab-audit-")) / "store"
    if not store.exists():
        build(store, args.stories)
    sides: dict[str, list[list[list[object]]]] = {"baseline": [], "current": []}
    loads = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        sides["baseline"].append(run(args.baseline_tree, store, args.runs))
        sides["current"].append(run(ROOT, store, args.runs))
        loads.append(os.getloadavg()[0])
    print(f"{args.stories} stories + the seed; {args.rounds} alternating rounds, median of "
          f"{args.runs} runs each; load {min(loads):.1f}-{max(loads):.1f}\n")  # fmt: skip
    print("| audit | findings | baseline CPU s | current CPU s | current / baseline | same JSON |")
    print("| --- | ---: | ---: | ---: | ---: | :---: |")
    for i, case in enumerate(CASES):
        base = statistics.median(float(r[i][0]) for r in sides["baseline"])  # type: ignore[arg-type]
        cur = statistics.median(float(r[i][0]) for r in sides["current"])  # type: ignore[arg-type]
        digests = {r[i][2] for side in sides.values() for r in side}
        findings = sides["current"][0][i][1]
        same = "yes" if len(digests) == 1 else "**no**"
        print(f"| {case} | {findings} | {base:.3f} | {cur:.3f} | {cur / base:.2f}x | {same} |")


if __name__ == "__main__":
    main()
