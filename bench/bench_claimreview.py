"""Benchmark ``export --format claimreview`` and ``package --rocrate`` on generated stories.

The store (N generated stories, their manifests' replies pulled and every story checked) is
built once under bench/_work/ and reused. Baselines measured in the same run on the same
store: ``export --format trig`` (every named graph) and ``export --format jsonld`` (the
union as compact JSON-LD), the exports a user would otherwise hand over.

Usage::

    python bench/bench_claimreview.py [--stories 1000]
"""

from __future__ import annotations

import argparse
import io
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hcgraph.claimreview import count_verdicts
from hcgraph.claims.pulling import pull_manifests
from hcgraph.crate import write_rocrate
from hcgraph.exporting import export
from hcgraph.ingest import ingest_paths
from hcgraph.store import Store
from hcsample.corpus import generate_corpus

WORK = Path(__file__).resolve().parent / "_work" / "claimreview"


def _store(n: int) -> Path:
    base = WORK / str(n)
    if (base / "done").exists():
        return base / "store"
    shutil.rmtree(base, ignore_errors=True)
    corpus = generate_corpus(n, seed=5)
    corpus.write(base / "stories")
    replies = base / "replies"
    replies.mkdir(parents=True)
    for manifest_id, body in corpus.replies().items():
        (replies / f"{manifest_id}.json").write_bytes(body)
    with Store(base / "store") as store:
        ingest_paths(store, [base / "stories"])
        pull_manifests(store, directory=replies)
    (base / "done").touch()
    return base / "store"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=1000)
    args = parser.parse_args()
    store_dir = _store(args.stories)
    rows = []
    with Store(store_dir, read_only=True) as store:
        verdicts = count_verdicts(store)
        for fmt in ("claimreview", "trig", "jsonld"):
            buf = io.BytesIO()
            cpu, wall = time.process_time(), time.perf_counter()
            export(store, fmt, buf)
            rows.append((f"export --format {fmt}", time.perf_counter() - wall,
                         time.process_time() - cpu, len(buf.getvalue())))  # fmt: skip
    crate = WORK / "crate"
    shutil.rmtree(crate, ignore_errors=True)
    cpu, wall = time.process_time(), time.perf_counter()
    report = write_rocrate(store_dir, crate)
    rows.append(("package --rocrate (trig + claimreview + audit)", time.perf_counter() - wall,
                 time.process_time() - cpu, sum(report.files.values())))  # fmt: skip
    print(f"{args.stories} stories, {verdicts} verdicts (one ClaimReview each)\n")
    print("| what | wall s | CPU s | bytes |")
    print("|---|---|---|---|")
    for name, w, c, size in rows:
        print(f"| {name} | {w:.2f} | {c:.2f} | {size / 1e6:.1f} MB |")


if __name__ == "__main__":
    main()
