"""Every saved query's CPU time on a store as ``hcgraph ingest`` left it (issue 26's target).

Each saved query runs through ``run_query`` (as ``hcgraph query`` runs it) on the store at
``--store``, opened read-only as the CLI opens it: the median of ``--runs``
``time.process_time()`` runs, the first (cold) one included, no warm-up (range in brackets).
Parameterised queries get the store's most cited manifest, its most reused claim and a story
citing that manifest (``bench_queries._examples``: finding them runs ``source-reuse``,
``claim-reuse`` and ``source-stories`` once first). The table gives the rows and the longest
cell (characters) of each answer, against the target: under 1 s CPU, no cell over 4 KB.

Usage::

    hcgraph ingest --store /tmp/s10k corpus/        # or the store bench_engines.py builds
    python bench/cpu_saved_queries.py --store /tmp/s10k --runs 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_queries import _examples  # noqa: E402

from hcgraph.queries import run_query, saved_queries  # noqa: E402
from hcgraph.store import Store  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    load = os.getloadavg()[0]
    rows = []
    with Store(args.store, read_only=True) as store:
        saved = saved_queries()
        examples = dict(_examples(store))
        top = {"manifest_id": examples["manifest_id"]}
        citing = run_query(store, saved["source-stories"], top, limit=1).records()
        examples["story"] = str(citing[0]["story"])
        quads = len(store)
        for name, query in saved.items():
            params = {p.name: examples[p.name] for p in query.params if p.name in examples}
            times = []  # the first run included: no warm-up a user would not get
            for _ in range(args.runs):
                started = time.process_time()
                answer = run_query(store, query, params)
                times.append(time.process_time() - started)
            cells = (getattr(term, "value", "") for row in answer.terms for term in row)
            widest = max((len(cell) for cell in cells), default=0)
            med = statistics.median(times)
            rows.append(
                f"| `{name}` | {med:.3f} ({min(times):.3f} to {max(times):.3f}) | {len(answer):,} "
                f"| {widest} | {'yes' if med < 1 and widest <= 4096 else '**no**'} |"
            )
            print(rows[-1], flush=True)
    print(
        f"\n{args.store}: {quads:,} quads; median of {args.runs} CPU runs, no warm-up; "
        f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end\n"
    )
    print("| query | CPU s | rows | largest cell | < 1 s, ≤ 4 KB |")
    print("| --- | ---: | ---: | ---: | :---: |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
