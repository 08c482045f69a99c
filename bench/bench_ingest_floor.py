"""`hcgraph ingest` against the engine's floor: the same quads bulk-loaded, alternating, one run.

    python bench/bench_ingest_floor.py --sizes 1000 10000 --pairs 3 [--baseline NAME=DIR ...]
    python bench/bench_ingest_floor.py --sizes 1000 --stages 1
    python bench/bench_ingest_floor.py --sizes 1000 10000 --pairs 3 --loads

Each size writes the seeded corpus (``hcsample.corpus``, seed 42) as files. Then, *pairs*
times, in turn:

* **ingest**: ``python -m hcgraph ingest STORIES --store FRESH`` as the user runs it (a whole
  process, interpreter start and imports included, the compaction it ends with included);
* **baselines** (each ``--baseline NAME=DIR``): the same command from another checkout
  (e.g. ``git archive COMMIT | tar -x -C DIR``), in the same order each pair;
* **floor**: a whole process that imports pyoxigraph, bulk-loads the N-Quads that the first
  ingest left (its own dump, so the very same quads) into a fresh store from the file
  (``lenient``, as ingest loads), flushes and optimizes it as ingest's compaction does;
* **loads** (with ``--loads``): the engine alone doing *ingest's own* loads: the N-Quads each
  load of one in-process ingest of this tree was handed (captured once per size, before the
  pairs), loaded in the same order into a fresh store as ``Store.load_nquads`` does (bytes,
  ``lenient``; under 1 MiB one transaction), then flushed and optimized as ingest ends (it
  compacts when due: from ~450 stories, so always at the sizes this bench runs). Ingest
  cannot use less CPU than this without loading differently: what it takes beyond it is its
  Python (imports, parse, mapping, ledger). Which batches share a load depends on timing, so
  a capture is one run's loads (the count is printed).

Wall seconds, and CPU seconds of the child from the kernel (``os.wait4``: every thread of it,
the engine's loader threads included) and its peak RSS. *share* = floor wall / ingest wall
(≥ 0.80 is the target), *CPU ratio* = ingest CPU / floor CPU (≤ 1.25x the target), per pair,
then the median. The machine is shared: read the ratios of a pair, and the load average.

``--stages`` runs one ingest in this process with each stage wrapped in a CPU clock: the main
thread's parse, mapping and batch preparation (``time.thread_time``), the writer thread's
Python and the load's own thread, the compaction (process CPU), imports, and the rest (the
engine's loader threads and RocksDB's background work).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import publish  # noqa: E402
from bench_datapath import SEED, _write_corpus  # noqa: E402

# The floor, as a whole process: argv[1] the N-Quads file, argv[2] the fresh store.
_FLOOR = """
import sys
import pyoxigraph as ox
store = ox.Store(sys.argv[2])
store.bulk_load(path=sys.argv[1], format=ox.RdfFormat.N_QUADS, lenient=True)
store.flush()
store.optimize()
"""
# The engine alone doing ingest's own loads: argv[1] the directory of captured loads, argv[2]
# the fresh store (see the module docstring).
_LOADS = """
import os, sys
import pyoxigraph as ox
store = ox.Store(sys.argv[2])
for name in sorted(os.listdir(sys.argv[1])):
    with open(os.path.join(sys.argv[1], name), "rb") as fh:
        data = fh.read()
    load = store.load if len(data) < 1 << 20 else store.bulk_load
    load(data, ox.RdfFormat.N_QUADS, lenient=True)
    del data
store.flush()
store.optimize()
"""
# One in-process ingest (argv[1] stories, argv[2] store) writing each load's N-Quads to argv[3].
_CAPTURE = """
import os, sys
import hcgraph.store as S
from hcgraph.ingest import IngestReport, ingest_paths
loads = []
real = S.Store.load_nquads
def capture(self, data, *args, **kwargs):
    if data:
        with open(os.path.join(sys.argv[3], f"{len(loads):05d}.nq"), "wb") as fh:
            fh.write(data)
        loads.append(len(data))
    return real(self, data, *args, **kwargs)
S.Store.load_nquads = capture
with S.Store(sys.argv[2]) as st:
    ingest_paths(st, [sys.argv[1]], report=IngestReport(keep_results=False))
print(len(loads))
"""
# Fixed graph times: every ingest writes the same quads (the floor loads what the first left).
_ENV = {"SOURCE_DATE_EPOCH": "1765065600"}


def _child(argv: list[str], tree: Path | None = None) -> dict[str, float]:
    """Run a process; its wall seconds, CPU seconds (user + system, all threads), peak RSS."""
    env = {**os.environ, **_ENV}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:4]} failed ({proc.returncode}):\n{err.decode()[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024}


def _ingest(stories: Path, store: Path, tree: Path) -> dict[str, float]:
    shutil.rmtree(store, ignore_errors=True)
    argv = [sys.executable, "-m", "hcgraph", "ingest", str(stories), "--store", str(store)]
    return _child(argv, tree)


def _floor(nquads: Path, store: Path) -> dict[str, float]:
    shutil.rmtree(store, ignore_errors=True)
    return _child([sys.executable, "-c", _FLOOR, str(nquads), str(store)])


def _loads(captured: Path, store: Path) -> dict[str, float]:
    shutil.rmtree(store, ignore_errors=True)
    return _child([sys.executable, "-c", _LOADS, str(captured), str(store)])


def _capture(stories: Path, store: Path, out: Path) -> int:
    """Ingest once in process (this tree), keeping what each load was handed; how many loads."""
    shutil.rmtree(store, ignore_errors=True)
    out.mkdir()
    env = {**os.environ, **_ENV, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _CAPTURE, str(stories), str(store), str(out)],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(done.stdout.split()[-1])


def _dump(store: Path, out: Path) -> int:
    """The store's quads as one N-Quads file; how many."""
    import pyoxigraph as ox

    db = ox.Store.read_only(str(store / "oxigraph"))
    db.dump(str(out), ox.RdfFormat.N_QUADS)
    del db
    with open(out, "rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 24), b""))


def measure(
    n: int, pairs: int, work: Path, baselines: dict[str, Path], loads: bool = False
) -> dict[str, Any]:
    """Alternate ingest (and baselines, and ingest's loads) with the floor ``pairs`` times at
    ``n`` stories."""
    stories, store, nquads = work / f"stories-{n}", work / "store", work / "floor.nq"
    captured = work / "loads"
    print(f"[{n}] writing {n} story files ...", flush=True)
    _write_corpus(n, stories)
    row: dict[str, Any] = {"n": n, "pairs": []}
    if loads:
        row["loads"] = _capture(stories, store, captured)
        print(f"[{n}] captured ingest's {row['loads']} loads", flush=True)
    for i in range(pairs):
        pair: dict[str, Any] = {"load": [os.getloadavg()[0]]}
        pair["ingest"] = _ingest(stories, store, ROOT)
        if i == 0:
            row["quads"] = _dump(store, nquads)
        pair["baselines"] = {
            name: _ingest(stories, store, tree) for name, tree in baselines.items()
        }
        pair["floor"] = _floor(nquads, work / "floor-store")
        if loads:
            pair["loads"] = _loads(captured, work / "floor-store")
        pair["load"].append(os.getloadavg()[0])
        row["pairs"].append(pair)
        print(f"[{n}] pair {i}: {json.dumps(pair)}", flush=True)
    shutil.rmtree(stories)
    for path in (store, work / "floor-store"):
        shutil.rmtree(path, ignore_errors=True)
    nquads.unlink()
    shutil.rmtree(captured, ignore_errors=True)
    return row


def render(rows: list[dict[str, Any]]) -> str:
    """One line per pair and a median line per size: each side's wall and CPU seconds, its
    share of the floor's speed (floor wall / its wall) and its CPU against the floor's."""
    names = list(rows[0]["pairs"][0]["baselines"]) if rows else []
    loads = bool(rows) and "loads" in rows[0]["pairs"][0]
    head = "| stories | pair | load | floor s (CPU s) |"
    if loads:  # the engine alone doing ingest's loads, its CPU against the floor's
        head += " ingest's loads s (CPU s) | CPU ratio |"
    head += " ingest s (CPU s) | share | CPU ratio |"
    for name in names:
        head += f" {name} s (CPU s) | share | CPU ratio |"
    lines = [head, "|" + "---:|" * (head.count("|") - 1)]

    def sides(p: dict[str, Any]) -> list[dict[str, float]]:
        return [p["ingest"], *(p["baselines"][name] for name in names)]

    for r in rows:
        for i, p in enumerate(r["pairs"]):
            fl = p["floor"]
            line = (
                f"| {r['n']:,} | {i} | {p['load'][0]:.1f}-{p['load'][1]:.1f} | "
                f"{fl['wall']:.2f} ({fl['cpu']:.2f}) |"
            )
            if loads:
                ld = p["loads"]
                line += f" {ld['wall']:.2f} ({ld['cpu']:.2f}) | {ld['cpu'] / fl['cpu']:.2f}x |"
            for side in sides(p):
                line += (
                    f" {side['wall']:.2f} ({side['cpu']:.2f}) | {fl['wall'] / side['wall']:.2f} |"
                    f" {side['cpu'] / fl['cpu']:.2f}x |"
                )
            lines.append(line)
        line = f"| {r['n']:,} | **median** | |"
        fw = statistics.median(p["floor"]["wall"] for p in r["pairs"])
        fc = statistics.median(p["floor"]["cpu"] for p in r["pairs"])
        line += f" {fw:.2f} ({fc:.2f}) |"
        if loads:
            lw = statistics.median(p["loads"]["wall"] for p in r["pairs"])
            lc = statistics.median(p["loads"]["cpu"] for p in r["pairs"])
            lr = statistics.median(p["loads"]["cpu"] / p["floor"]["cpu"] for p in r["pairs"])
            line += f" {lw:.2f} ({lc:.2f}) | **{lr:.2f}x** |"
        for k in range(len(names) + 1):
            got = [(sides(p)[k], p["floor"]) for p in r["pairs"]]
            wall = statistics.median(s["wall"] for s, _ in got)
            cpu = statistics.median(s["cpu"] for s, _ in got)
            share = statistics.median(f["wall"] / s["wall"] for s, f in got)
            ratio = statistics.median(s["cpu"] / f["cpu"] for s, f in got)
            line += f" {wall:.2f} ({cpu:.2f}) | **{share:.2f}** | **{ratio:.2f}x** |"
        lines.append(line)
    return "\n".join(lines)


# --- --stages: where one ingest's CPU goes ----------------------------------------------------
_STAGES = """
import collections, json, resource, sys, time
c0 = time.process_time()
import hcgraph.cli.ingest
import hcgraph.pipeline as P, hcgraph.store as S, hcgraph.writer as W
imports = time.process_time() - c0
acc = collections.Counter()
def wrap(owner, name, label, clock=time.thread_time):
    fn = getattr(owner, name)
    def timed(*a, **k):
        t = clock()
        try:
            return fn(*a, **k)
        finally:
            acc[label] += clock() - t
    setattr(owner, name, timed)
wrap(P, "parse_story", "main thread: parse + validate (pydantic)")
wrap(P, "map_story", "main thread: mapping")
wrap(W.Batch, "add", "main thread: Batch.add (hash descriptions, encode N-Quads)")
wrap(W.Writer, "submit", "main thread: Writer.submit (join, wait for room)")
wrap(P.Pipeline, "_submit", "main thread: whole batch")
wrap(S.Store, "load_nquads", "writer thread: bulk_load's own thread (parse N-Quads)")
wrap(W.Writer, "_write", "writer thread: whole job")
wrap(S.Store, "optimize", "compaction (process CPU)", time.process_time)
from hcgraph.ingest import IngestReport, ingest_paths
c1, w1 = time.process_time(), time.perf_counter()
with S.Store(sys.argv[2]) as st:
    ingest_paths(st, [sys.argv[1]], report=IngestReport(keep_results=False))
out = {"imports": imports, "ingest": time.process_time() - c1, "wall": time.perf_counter() - w1}
out.update(acc)
print(json.dumps(out))
"""


def stages(n: int, work: Path) -> dict[str, float]:
    """One in-process ingest of ``n`` stories, its CPU by stage (see the module docstring)."""
    stories, store = work / f"stories-{n}", work / "store"
    if not stories.exists():
        _write_corpus(n, stories)
    shutil.rmtree(store, ignore_errors=True)
    env = {**os.environ, **_ENV, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _STAGES, str(stories), str(store)],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def render_stages(n: int, runs: list[dict[str, float]]) -> str:
    keys = list(runs[0])
    med = {k: statistics.median(r[k] for r in runs) for k in keys}
    main_rest = med["main thread: whole batch"] - sum(
        med[k] for k in keys if k.startswith("main thread:") and "whole" not in k
    )
    writer_py = (
        med["writer thread: whole job"]
        - med["writer thread: bulk_load's own thread (parse N-Quads)"]
    )
    known = (
        med["imports"] + med["main thread: whole batch"] + med["writer thread: whole job"]
        + med["compaction (process CPU)"]
    )  # fmt: skip
    lines = [
        f"| stage ({n:,} stories, median of {len(runs)}) | CPU s |",
        "| --- | ---: |",
        f"| whole process (imports + ingest) | {med['imports'] + med['ingest']:.2f} |",
        f"| imports (`hcgraph.cli.ingest` and the write path) | {med['imports']:.2f} |",
    ]
    for k in keys:
        if k.startswith("main thread:") and "whole" not in k:
            lines.append(f"| {k} | {med[k]:.2f} |")
    lines += [
        f"| main thread: the rest of a batch (sha256, identity, outcomes) | {main_rest:.2f} |",
        f"| writer thread: bulk_load's own thread (parses the N-Quads) | "
        f"{med['writer thread: bulk_load' + chr(39) + 's own thread (parse N-Quads)']:.2f} |",
        f"| writer thread: Python (ledger, joining, settling) | {writer_py:.2f} |",
        f"| compaction at the end (process CPU) | {med['compaction (process CPU)']:.2f} |",
        f"| the rest: the loader's sort/write threads, RocksDB background, GC | "
        f"{med['imports'] + med['ingest'] - known:.2f} |",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--pairs", type=int, default=3, help="alternations per size")
    parser.add_argument(
        "--baseline", action="append", default=[], metavar="NAME=DIR",
        help="another checkout's ingest, run in each pair (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--loads", action="store_true",
        help="also run the engine alone doing ingest's own loads and compaction, each pair",
    )  # fmt: skip
    parser.add_argument("--stages", type=int, default=0, help="instead: N in-process stage runs")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hcgraph-floor-") as tmp:
        if args.stages:
            for n in args.sizes:
                runs = []
                for _ in range(args.stages):
                    runs.append(stages(n, Path(tmp)))
                    print(json.dumps(runs[-1]), flush=True)
                print(render_stages(n, runs))
            return
        trees = {name: Path(d) for name, _, d in (b.partition("=") for b in args.baseline)}
        rows = [measure(n, args.pairs, Path(tmp), trees, args.loads) for n in args.sizes]
    heading = "## Ingest against the engine's floor, alternating (bench_ingest_floor.py)"
    cmd = " ".join(["python bench/bench_ingest_floor.py", *sys.argv[1:]])
    publish(heading, f"{heading}\n\n`{cmd}` (seed {SEED})\n\n{render(rows)}\n", args.write_results)


if __name__ == "__main__":
    main()
