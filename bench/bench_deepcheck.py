"""What issue 38's guards cost: ``check --deep`` beside a full read of the store (``export``),
and ``hcgraph query`` under its memory limit (a child process) beside in-process
(``--query-memory 0``), on one store, alternating, in one run.

    python bench/bench_deepcheck.py --stories 400 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> tuple[float, float]:
    """Wall and CPU (user + system of the child) seconds of ``python -m hcgraph ARGS`` (its
    exit code is not asked: ``check`` exits 1 on the sample's planted findings)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    before = os.times()
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "hcgraph", *args], check=False, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--stories", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    opts = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from hcgraph.ingest import ingest_bytes
    from hcgraph.store import Store
    from hcsample.corpus import generate_corpus

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        corpus = generate_corpus(opts.stories, seed=38)
        with Store(store) as st:
            ingest_bytes(st, ((json.dumps(s).encode(), str(s["url"])) for s in corpus.stories))
            quads = len(st)
        out = str(Path(tmp) / "all.nq")
        runs = {
            "export --format nquads (one full read, baseline)": (
                "export", "--format", "nquads", "--out", out, "--store", str(store)),
            "check --deep --shacl off --only duplicate-ids": (
                "check", "--deep", "--shacl", "off", "--only", "duplicate-ids",
                "--store", str(store)),
            "check --shacl off --only duplicate-ids (baseline)": (
                "check", "--shacl", "off", "--only", "duplicate-ids", "--store", str(store)),
            "query publisher-reach --query-memory 0 (in-process, baseline)": (
                "query", "publisher-reach", "--query-memory", "0", "--store", str(store)),
            "query publisher-reach (child process, default limit)": (
                "query", "publisher-reach", "--store", str(store)),
        }  # fmt: skip
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
        for _ in range(opts.rounds):
            for name, args in runs.items():
                times[name].append(_run(*args))
    load = os.getloadavg()[0]
    print(f"{opts.stories} stories, {quads:,} quads; {opts.rounds} rounds; load {load:.1f}\n")
    print("| run | median wall s | median CPU s |")
    print("| --- | ---: | ---: |")
    for name, got in times.items():
        wall = statistics.median(w for w, _ in got)
        cpu = statistics.median(c for _, c in got)
        print(f"| {name} | {wall:.2f} | {cpu:.2f} |")


if __name__ == "__main__":
    main()
