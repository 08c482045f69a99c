"""The support check as a user meets it: the CLI's ``manifests fetch --dir`` and
``manifests check --all`` on the store ``hcgraph ingest`` leaves, against that ingest itself.

N generated stories are written to files with their manifests' replies; each command runs as
its own process (``python -m hcgraph``), its CPU taken from the kernel (children's rusage).
Baseline, same run, same store: the ``ingest`` of the stories. Reported: CPU and wall per
command, per story, and the (passage, claim) pairs checked per CPU second end to end.

Usage::

    python bench/bench_support_store.py [--stories 1000] [--seed 5]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hcsample.corpus import generate_corpus


def _run(*args: str) -> tuple[float, float, str]:
    """(CPU s, wall s, stdout) of one ``python -m hcgraph`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "hcgraph", *args], capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 3):
        raise SystemExit(f"{args[0]} failed: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=5)
    opts = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hc-support-"))
    try:
        corpus = generate_corpus(opts.stories, seed=opts.seed)
        stories, replies, store = work / "stories", work / "replies", str(work / "store")
        corpus.write(stories)
        replies.mkdir()
        for manifest_id, body in corpus.replies().items():
            (replies / f"{manifest_id}.json").write_bytes(body)
        rows = [("ingest (baseline)", *_run("ingest", str(stories), "--store", store))]
        rows.append(("manifests fetch --dir", *_run("manifests", "fetch", "--dir", str(replies),
                                                    "--store", store)))  # fmt: skip
        rows.append(("manifests check --all", *_run("manifests", "check", "--all",
                                                    "--store", store)))  # fmt: skip
        rows.append(("manifests check (nothing new)", *_run("manifests", "check",
                                                            "--store", store)))  # fmt: skip
        pairs = sum(
            int(word) for line in rows[2][3].splitlines() if line.startswith("verdicts")
            for word in [line.split()[1]]
        )  # fmt: skip
        base = rows[0][1]
        print(f"{opts.stories} stories (seed {opts.seed}), {pairs:,} (passage, claim) pairs\n")
        print("| command | CPU s | wall s | CPU ms a story | vs ingest CPU |")
        print("|---|---:|---:|---:|---:|")
        for name, cpu, wall, _ in rows:
            print(f"| {name} | {cpu:.2f} | {wall:.2f} | {1000 * cpu / opts.stories:.2f} | "
                  f"{cpu / base:.2f}x |")  # fmt: skip
        print(
            f"\nend to end, `manifests check --all`: {pairs / rows[2][1]:,.0f} pairs per CPU s "
            "(process start and the store's reads and writes included)"
        )
        print(json.dumps({"pairs": pairs, "rows": [r[:3] for r in rows]}))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
