"""Benchmark the store ``hcgraph ingest`` leaves: the saved queries on it against the same
store optimised, and what the compaction at the end of the ingest costs.

Builds, from one generated corpus (``hcsample.corpus``, seed 4) written as JSON files:

* ``left``: ``hcgraph ingest`` as shipped (it compacts the store at the end when
  ``Store.compaction_due`` says so);
* ``uncompacted``: the same command with the compaction turned off (a ``sitecustomize``
  sets ``COMPACT_SHARE`` to infinity): the store as ingest left it before the rule;
* ``optimised``: a copy of ``left``, then ``Store.optimize()``: the baseline, measured in the
  same run.

Then each saved query (co-citation aside: ``bench_queries.py`` runs it in a child, capped)
runs on ``left`` and ``optimised`` alternately, and on ``uncompacted``: CPU seconds
(``time.process_time``, all threads), the median of ``--runs`` after one warm-up run each.
Last, one story (the real seed story) is ingested into a copy of ``left``: its cost, whether
the rule compacted, and what a compaction after it would have cost (the ``always``
rule). CPU of the commands is their children's rusage.

Usage::

    python bench/bench_compaction.py [--stories 10000] [--runs 3] [--keep DIR]
                                     [--min-bytes N] [--write-results]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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

SECTION = "## The store a command leaves, compacted (issue 26)"
SEED_STORY = ROOT / "tests" / "fixtures" / "agentic-rl-production.json"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _env(hook: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(hook), str(ROOT), env.get("PYTHONPATH", "")])
    env.setdefault("SOURCE_DATE_EPOCH", "1764000000")
    return env


def _run(env: dict[str, str], *args: object) -> tuple[float, float]:
    """Run ``python *args``; its (CPU, wall) seconds."""
    cpu, wall = _children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, *map(str, args)], check=True, env=env, capture_output=True)
    return _children_cpu() - cpu, time.perf_counter() - wall


def _hook(work: Path, name: str, lines: list[str]) -> Path:
    hook = work / f"hook-{name}"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text("import hcgraph.store as s\n" + "\n".join(lines) + "\n")
    return hook


def _optimise(env: dict[str, str], directory: Path) -> tuple[float, float]:
    code = "import sys; from hcgraph.store import Store; s = Store(sys.argv[1]); s.optimize()"
    code += "; s.close()"
    return _run(env, "-c", code, directory)


def _tables(directory: Path) -> tuple[int, int, int]:
    """(table files, bytes in them, bytes written since the last compaction)."""
    from hcgraph.store import Store

    with Store(directory, read_only=True) as st:
        total, fresh = st.tables()
    return len(list((directory / "oxigraph").glob("*.sst"))), total, fresh


def time_queries(
    stores: dict[str, Path], n: int, seed: int, runs: int
) -> dict[str, dict[str, float]]:
    """query → store name → median CPU seconds (the stores' runs alternate)."""
    from bench_queries import _params

    from hcgraph.queries import run_query, saved_queries
    from hcgraph.store import Store
    from hcsample.corpus import iter_stories

    urls = [str(doc["url"]) for doc in iter_stories(n, seed=seed)]
    opened = {name: Store(path, read_only=True) for name, path in stores.items()}
    out: dict[str, dict[str, float]] = {}
    for query_name, query in saved_queries().items():
        if query_name == "co-citation":
            continue
        times: dict[str, list[float]] = {name: [] for name in opened}
        for round_ in range(runs + 1):  # round 0 warms the caches up
            for name, st in opened.items():
                params = _params(query_name, urls, 2, st)
                started = time.process_time()
                run_query(st, query, params)
                if round_:
                    times[name].append(time.process_time() - started)
        out[query_name] = {name: statistics.median(t) for name, t in times.items()}
        shown = "  ".join(f"{name} {sec:7.3f}" for name, sec in out[query_name].items())
        print(f"  {query_name:26s} {shown}", flush=True)
    for st in opened.values():
        st.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stories", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=4)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", type=Path, default=None, help="work directory to keep and reuse")
    ap.add_argument(
        "--min-bytes", type=int, default=None,
        help="COMPACT_MIN_BYTES in the commands (a small --stories run shows the rule)",
    )  # fmt: skip
    ap.add_argument("--write-results", action="store_true")
    args = ap.parse_args()

    from hcsample.corpus import iter_stories

    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-compaction-"))
    work.mkdir(parents=True, exist_ok=True)
    floor = [] if args.min_bytes is None else [f"s.COMPACT_MIN_BYTES = {args.min_bytes}"]
    shipped = _env(_hook(work, "shipped", floor))
    never = _env(_hook(work, "never", [*floor, "s.COMPACT_SHARE = float('inf')"]))
    r: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}}
    r["load_before"] = os.getloadavg()

    corpus = work / "corpus"
    if not corpus.is_dir():
        corpus.mkdir()
        for i, doc in enumerate(iter_stories(args.stories, seed=args.seed)):
            text = json.dumps(doc, ensure_ascii=False)
            (corpus / f"s{i:06d}.json").write_text(text, encoding="utf-8")
    r["corpus_bytes"] = sum(p.stat().st_size for p in corpus.iterdir())

    stores = {name: work / name for name in ("left", "uncompacted", "optimised", "plus1")}
    for name in stores.values():
        shutil.rmtree(name, ignore_errors=True)
    print("ingest, as shipped / without the compaction:", flush=True)
    r["ingest_left"] = _run(shipped, "-m", "hcgraph", "ingest", corpus, "--store", stores["left"])
    r["ingest_uncompacted"] = _run(
        never, "-m", "hcgraph", "ingest", corpus, "--store", stores["uncompacted"]
    )
    print(f"  {r['ingest_left']} / {r['ingest_uncompacted']} (CPU, wall s)", flush=True)
    shutil.copytree(stores["uncompacted"], work / "scratch", dirs_exist_ok=False)
    r["optimise_uncompacted"] = _optimise(shipped, work / "scratch")
    shutil.rmtree(work / "scratch")
    shutil.copytree(stores["left"], stores["optimised"])
    r["optimise_left"] = _optimise(shipped, stores["optimised"])
    r["tables"] = {name: _tables(stores[name]) for name in ("left", "uncompacted", "optimised")}

    print("saved queries, CPU s (median of alternating runs):", flush=True)
    r["queries"] = time_queries(
        {k: stores[k] for k in ("left", "optimised", "uncompacted")},
        args.stories, args.seed, args.runs,
    )  # fmt: skip

    print("one story into the compacted store:", flush=True)
    shutil.copytree(stores["left"], stores["plus1"])
    r["plus1_ingest"] = _run(
        shipped, "-m", "hcgraph", "ingest", SEED_STORY, "--store", stores["plus1"]
    )
    r["plus1_tables"] = _tables(stores["plus1"])
    shutil.copytree(stores["plus1"], work / "scratch")
    r["plus1_optimise"] = _optimise(shipped, work / "scratch")
    shutil.rmtree(work / "scratch")
    r["load_after"] = os.getloadavg()
    (work / "results.json").write_text(json.dumps(r, indent=1))
    publish(SECTION, render(r), args.write_results)


def render(r: dict[str, Any]) -> str:
    a = r["args"]
    n = int(a["stories"])
    (cpu_l, wall_l), (cpu_u, wall_u) = r["ingest_left"], r["ingest_uncompacted"]
    lines = [
        SECTION,
        "",
        f"`python bench/bench_compaction.py --stories {n} --runs {a['runs']}` (seed"
        f" {a['seed']}, {r['corpus_bytes']:,} bytes of JSON). Load average"
        f" {r['load_before'][0]:.1f} before, {r['load_after'][0]:.1f} after (2 cores, shared).",
        "",
        f"- `hcgraph ingest`, as shipped: {cpu_l:.1f} s CPU, {wall_l:.1f} s wall; without the"
        f" compaction: {cpu_u:.1f} s CPU, {wall_u:.1f} s wall.",
        f"- `Store.optimize()` on a copy of the uncompacted store (what the compaction costs"
        f" alone): {r['optimise_uncompacted'][0]:.1f} s CPU, {r['optimise_uncompacted'][1]:.1f} s"
        f" wall; on a copy of the store ingest left (already compact):"
        f" {r['optimise_left'][0]:.1f} s CPU.",
    ]
    for name, (files, total, fresh) in r["tables"].items():
        lines.append(f"- `{name}`: {files} table files, {total:,} bytes ({fresh:,} new).")
    files, total, fresh = r["plus1_tables"]
    lines += [
        f"- One story into the compacted store: {r['plus1_ingest'][0]:.1f} s CPU; {fresh:,} of"
        f" {total:,} table bytes new ({fresh / max(total, 1):.4%}: not compacted); a compaction"
        f" after it would cost {r['plus1_optimise'][0]:.1f} s CPU.",
        "",
        "| query | left by ingest | optimised | ratio | before the rule (uncompacted) | ratio |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, t in r["queries"].items():
        left, opt, unc = t["left"], t["optimised"], t["uncompacted"]
        lines.append(
            f"| `{name}` | {left:.3f} s | {opt:.3f} s | {left / opt:.2f}x | {unc:.3f} s"
            f" | {unc / opt:.2f}x |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
