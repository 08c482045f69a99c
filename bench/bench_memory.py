"""Peak memory of ``hcgraph ingest`` as the number of stories grows, beside the engine's own.

    python bench/bench_memory.py --sizes 1000 2000 5000 10000 20000 [--baseline-tree DIR]

Issue 9 asks that ingest's peak RSS be flat in the number of stories. For each size, each in
a fresh process, on the same seeded files (``bench_datapath``'s corpus):

* ``hcgraph ingest`` of the files, as a user runs it (this tree; with ``--baseline-tree``,
  another checkout's too): its peak RSS, exact (``wait4``), wall and CPU seconds;
* the engine's floor: the store's quads bulk-loaded by Oxigraph in ingest's segments of
  :data:`hcgraph.pipeline.SEGMENT` quads, handed over as bytes (``bench_datapath``'s
  segmented floor), with no hcgraph code: its peak RSS.

Peak RSS is set by the segment size once segments fill (after ~2k stories); what grows after
that is the thing to compare. The floor grows too (RocksDB keeps each file's index and filter
blocks in memory), so ingest's growth is read against the floor's growth in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import bench_datapath as dp  # noqa: E402
from _results import write_section  # noqa: E402


def ingest_cli(tree: Path, stories: Path, store: Path) -> dict[str, Any]:
    """``hcgraph ingest`` from ``tree`` in a child process: wall s, CPU s, exact peak RSS."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("SOURCE_DATE_EPOCH", None)
    cmd = [sys.executable, "-m", "hcgraph", "ingest", str(stories), "--store", str(store)]
    with tempfile.TemporaryFile() as said:  # not a pipe: a full one would block the child
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=said, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)  # reaped here, with its own rusage
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        said.seek(0)
        out = said.read().decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"ingest ({tree}) failed: {out}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss": usage.ru_maxrss / 1024, "said": out.strip()}  # fmt: skip


def measure(n: int, trees: dict[str, Path], root: Path) -> dict[str, Any]:
    """One size: each tree's ingest, then the engine's segmented floor on the same quads."""
    work = root / f"n{n}"
    stories = work / "stories"
    print(f"[{n}] writing {n} story files ...", flush=True)
    dp._write_corpus(n, stories)
    row: dict[str, Any] = {"n": n, "load_before": os.getloadavg()[0]}
    for name, tree in trees.items():
        print(f"[{n}] ingest ({name}) ...", flush=True)
        store = work / f"store-{name}"
        row[name] = ingest_cli(tree, stories, store)
        r = row[name]  # printed as it comes: a 100k run takes an hour
        line = f"[{n}] {name}: {r['wall']:.1f} s, {r['cpu']:.1f} CPU s, {r['rss']:.0f} MB"
        print(line, flush=True)
        if name == "current":
            row["dump"] = dp._child("dump", str(store), str(work))
        shutil.rmtree(store)
    print(f"[{n}] the engine's segmented floor ...", flush=True)
    row["floor"] = dp._child("segments", str(work))
    row["load_after"] = os.getloadavg()[0]
    shutil.rmtree(work)
    print(json.dumps(row), flush=True)
    return row


def render(rows: list[dict[str, Any]], names: list[str]) -> str:
    """The table, then each side's growth from the smallest size to the largest."""
    head = ["stories", "quads", "engine floor peak RSS MB"]
    head += [f"{name}: ingest s (CPU s), peak RSS MB, over the floor" for name in names]
    lines = ["| " + " | ".join([*head, "load avg"]) + " |", "|" + "---:|" * (len(head) + 1)]
    for r in rows:
        cells = [f"{r['n']:,}", f"{r['dump']['quads']:,}", f"{r['floor']['rss']:.0f}"]
        for name in names:
            s, over = r[name], r[name]["rss"] - r["floor"]["rss"]
            cells.append(f"{s['wall']:.1f} ({s['cpu']:.1f}), {s['rss']:.0f}, {over:+.0f}")
        cells.append(f"{r['load_before']:.1f}-{r['load_after']:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    first, last = rows[0], rows[-1]
    growth = [f"engine floor {last['floor']['rss'] - first['floor']['rss']:+.0f} MB"]
    growth += [f"{name} {last[name]['rss'] - first[name]['rss']:+.0f} MB" for name in names]
    span = f"{first['n']:,} to {last['n']:,} stories"
    lines += ["", f"Peak RSS from {span}: " + ", ".join(growth) + "."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[2000, 5000, 10000, 20000])
    parser.add_argument("--baseline-tree", type=Path, help="another hcgraph checkout")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    trees = {"current": ROOT}
    if args.baseline_tree:
        trees = {"baseline": args.baseline_tree.resolve(), **trees}
    with tempfile.TemporaryDirectory(prefix="hcgraph-mem-") as tmp:
        rows = [measure(n, trees, Path(tmp)) for n in sorted(args.sizes)]
    table = render(rows, list(trees))
    print(table)
    if args.write_results:
        title = "## Ingest's peak memory against the number of stories (issue 9)"
        write_section(
            title,
            f"{title}\n\n`python bench/bench_memory.py --sizes {' '.join(map(str, args.sizes))}`"
            f" on the 2-core box, {time.strftime('%Y-%m-%d')}.\n\n{table}\n",
        )


if __name__ == "__main__":
    main()
