"""Benchmark the data path against the engine's own floor, measured in the same run.

For each corpus size (seeded generated stories written as files, like a real ingest):

* **ingest**: ``hcgraph ingest`` of the files into a fresh on-disk store (the library call
  the CLI makes), in its own process: wall and CPU seconds, stories/s, peak RSS.
* **floor**: the same quads as one N-Quads file (the store's own dump), bulk-loaded by
  Oxigraph into a fresh on-disk store (``Store.bulk_load``, strict and ``lenient``): what
  the engine alone needs to write them. ingest/floor is the share of the engine's speed
  hcgraph reaches; the *CPU ceiling* is the best share this machine allows: ingest does the
  floor's work plus parsing and mapping, so it cannot take less wall time than its CPU
  seconds spread over every core.
* **segmented floor**: the same dump bulk-loaded (lenient) in segments of
  ``hcgraph.pipeline.SEGMENT`` quads from bytes: what the engine needs for the loads ingest
  makes to keep peak RSS under 1 GB (one load of everything grows past it), with its own
  peak RSS. ingest/segmented floor is how much the Python side costs on top of those loads.
* **exports**: the engine's N-Quads dump of the store (the floor for reading it all out),
  then hcgraph's Turtle and N-Triples exports of the union; Turtle / dump is the ratio the
  issue sets (≤ 1.5x).
* **rdflib** (sizes up to ``--rdflib``): the baseline Turtle export with rdflib's default
  in-memory store of the same triples (parse the N-Triples export, time ``serialize``).

Usage::

    python bench/bench_datapath.py --sizes 1000 10000 [--big 100000] [--rdflib 1000]
        [--write-results]

Every side runs in its own subprocess, so each peak RSS is its own; the load average is
printed with the results (the machine is shared: read the same-run ratios, not seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import write_section  # noqa: E402

SEED = 42


def _usage() -> tuple[float, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, r.ru_maxrss / 1024


def _write_corpus(n: int, directory: Path) -> None:
    """Seeded stories as files, written the way the real site publishes them."""
    from hcsample.corpus import iter_stories

    directory.mkdir(parents=True)
    for i, story in enumerate(iter_stories(n, seed=SEED)):
        path = directory / f"{i // 1000:03d}" / f"{story['slug']}-{i}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(story, ensure_ascii=False, indent=2), encoding="utf-8")


def side_ingest(stories: Path, store: Path) -> dict[str, Any]:
    from hcgraph.ingest import ingest_paths
    from hcgraph.store import Store

    t0, (c0, _) = time.perf_counter(), _usage()
    with Store(store) as st:
        report = ingest_paths(st, [stories])
        quads = len(st)
    wall = time.perf_counter() - t0
    cpu, rss = _usage()
    assert report.ok, report.failures[:3]
    return {"wall": wall, "cpu": cpu - c0, "rss": rss, "quads": quads,
            "stories": report.count("added")}  # fmt: skip


def side_floor(store: Path, work: Path) -> dict[str, Any]:
    import pyoxigraph as ox

    out: dict[str, Any] = {"dump": side_dump(store, work)["dump"]}
    dump = work / "floor.nq"
    for name, lenient in (("load", False), ("load_lenient", True)):
        target = work / f"floor-{name}"
        t0, c0 = time.perf_counter(), time.process_time()
        fresh = ox.Store(str(target))
        fresh.bulk_load(path=str(dump), format=ox.RdfFormat.N_QUADS, lenient=lenient)
        fresh.flush()
        out[name] = time.perf_counter() - t0
        out[name + "_cpu"] = time.process_time() - c0  # the loader's threads included
        del fresh
        shutil.rmtree(target)
    out["nq_mb"] = dump.stat().st_size / 2**20
    return out


def side_dump(store: Path, work: Path) -> dict[str, Any]:
    """The store's quads as one N-Quads file (``work/floor.nq``, for :func:`side_segments`)."""
    import pyoxigraph as ox

    db = ox.Store.read_only(str(store / "oxigraph"))
    t0 = time.perf_counter()
    db.dump(str(work / "floor.nq"), ox.RdfFormat.N_QUADS)
    seconds = time.perf_counter() - t0
    del db
    return {"dump": seconds, "quads": _lines(work / "floor.nq")}


def _lines(path: Path) -> int:
    """Quads in an N-Quads dump: one a line (far cheaper than ``len()`` of an on-disk store,
    which scans it)."""
    with open(path, "rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 24), b""))


def side_segments(work: Path) -> dict[str, Any]:
    """The floor under ingest's memory policy: the same dump, bulk-loaded (lenient) in
    segments of ``hcgraph.pipeline.SEGMENT`` quads handed over as bytes, as ingest does.

    One load of everything is the engine's best, but its memory grows past the 1 GB target;
    this is what the engine needs for the loads ingest is allowed to make.
    """
    import pyoxigraph as ox

    from hcgraph.pipeline import SEGMENT

    dump, target = work / "floor.nq", work / "floor-segments"
    t0, c0 = time.perf_counter(), time.process_time()
    fresh = ox.Store(str(target))
    with open(dump, "rb") as fh:
        while lines := fh.readlines(SEGMENT * 240):  # ~240 bytes a quad
            data = b"".join(lines)
            del lines
            fresh.bulk_load(data, ox.RdfFormat.N_QUADS, lenient=True)
            del data
    fresh.flush()
    out = {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "rss": _usage()[1]}
    del fresh
    shutil.rmtree(target)
    dump.unlink()
    return out


def side_exports(store: Path, work: Path) -> dict[str, Any]:
    from hcgraph.exporting import export
    from hcgraph.store import Store

    out: dict[str, Any] = {}
    with Store(store, read_only=True) as st:
        for fmt in ("nquads", "turtle", "ntriples"):
            t0 = time.perf_counter()
            with open(work / f"graph.{fmt}", "wb") as fh:
                export(st, fmt, fh)
            out[fmt] = time.perf_counter() - t0
    with open(work / "graph.ntriples", "rb") as fh:
        out["triples"] = sum(1 for _ in fh)
    for fmt in ("nquads", "turtle"):
        (work / f"graph.{fmt}").unlink()
    return out


def side_rdflib(work: Path) -> dict[str, Any]:
    import rdflib

    graph = rdflib.Graph()
    t0 = time.perf_counter()
    graph.parse(work / "graph.ntriples", format="nt")
    parse = time.perf_counter() - t0
    t0 = time.perf_counter()
    with open(work / "rdflib.ttl", "wb") as fh:
        graph.serialize(fh, format="turtle")
    turtle = time.perf_counter() - t0
    (work / "rdflib.ttl").unlink()
    return {"parse": parse, "turtle": turtle, "triples": len(graph), "rss": _usage()[1]}


SIDES = {"ingest": side_ingest, "floor": side_floor, "segments": side_segments,
         "exports": side_exports, "rdflib": side_rdflib, "dump": side_dump}  # fmt: skip


def _child(side: str, *args: str) -> dict[str, Any]:
    """Run one side in a fresh interpreter; it prints its result as JSON."""
    code = (
        f"import json, sys; sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / 'bench')!r}];"
        "import bench_datapath as b;"
        f"print(json.dumps(b.SIDES[{side!r}](*map(b.Path, sys.argv[1:]))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{side} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(n: int, rdflib_max: int, root: Path, *, ingest_only: bool = False) -> dict[str, Any]:
    work = root / f"n{n}"
    stories, store = work / "stories", work / "store"
    print(f"[{n}] writing {n} story files ...", flush=True)
    _write_corpus(n, stories)
    row: dict[str, Any] = {"n": n, "cores": os.cpu_count(), "load_before": os.getloadavg()[0]}
    print(f"[{n}] ingest ...", flush=True)
    row["ingest"] = _child("ingest", str(stories), str(store))
    if ingest_only:  # the --big row: rate and peak RSS only (the rest would take hours)
        row["disk_mb"] = sum(p.stat().st_size for p in store.rglob("*") if p.is_file()) / 2**20
        row["load_after"] = os.getloadavg()[0]
        shutil.rmtree(work)
        print(json.dumps(row), flush=True)
        return row
    print(f"[{n}] floor ...", flush=True)
    row["floor"] = _child("floor", str(store), str(work))
    print(f"[{n}] floor in ingest's segments ...", flush=True)
    row["segments"] = _child("segments", str(work))
    print(f"[{n}] exports ...", flush=True)
    row["exports"] = _child("exports", str(store), str(work))
    if n <= rdflib_max:
        print(f"[{n}] rdflib baseline ...", flush=True)
        row["rdflib"] = _child("rdflib", str(work))
    row["disk_mb"] = sum(p.stat().st_size for p in store.rglob("*") if p.is_file()) / 2**20
    row["load_after"] = os.getloadavg()[0]
    shutil.rmtree(work)
    print(json.dumps(row), flush=True)
    return row


def ceiling(row: dict[str, Any]) -> float:
    """The best ingest/floor ratio this machine allows, by CPU.

    Ingest does the floor's work plus parsing and mapping, on ``cores`` cores: it cannot take
    less wall time than its CPU time spread over every core, nor less than the floor itself.
    """
    ing, fl = row["ingest"], row["floor"]
    cores = row.get("cores") or os.cpu_count() or 1
    return float(fl["load"] / max(ing["cpu"] / cores, fl["load"]))


def render(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| stories | quads | ingest s (CPU s) | stories/s | floor load s (lenient) | ingest vs "
        "floor | CPU ceiling | segmented floor s (CPU s, RSS MB) | ingest vs segmented | "
        "peak RSS MB | N-Quads dump s | Turtle s | N-Triples s | "
        "Turtle / dump | rdflib Turtle s | Turtle vs rdflib | load avg |",
        "|" + "---:|" * 17,
    ]
    for r in rows:
        ing = r["ingest"]
        if "floor" not in r:
            lines.append(
                f"| {r['n']:,} | {ing['quads']:,} | {ing['wall']:.1f} ({ing['cpu']:.1f}) | "
                f"{r['n'] / ing['wall']:.0f} | - | - | - | - | - | {ing['rss']:.0f} | "
                "- | - | - | - | - | - | "
                f"{r['load_before']:.1f}-{r['load_after']:.1f} |"
            )
            continue
        fl, ex = r["floor"], r["exports"]
        rd = r.get("rdflib")
        sg = r.get("segments")
        segmented = (
            f"{sg['wall']:.1f} ({sg['cpu']:.1f}, {sg['rss']:.0f}) | {sg['wall'] / ing['wall']:.0%}"
            if sg
            else "- | -"
        )
        lines.append(
            f"| {r['n']:,} | {ing['quads']:,} | {ing['wall']:.1f} ({ing['cpu']:.1f}) | "
            f"{r['n'] / ing['wall']:.0f} | {fl['load']:.1f} ({fl['load_lenient']:.1f}) | "
            f"{fl['load'] / ing['wall']:.0%} | {ceiling(r):.0%} | {segmented} | "
            f"{ing['rss']:.0f} | "
            f"{ex['nquads']:.1f} | "
            f"{ex['turtle']:.1f} | {ex['ntriples']:.1f} | {ex['turtle'] / ex['nquads']:.2f}x | "
            + (f"{rd['turtle']:.1f} | {rd['turtle'] / ex['turtle']:.1f}x | " if rd else "- | - | ")
            + f"{r['load_before']:.1f}-{r['load_after']:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--big", type=int, help="one more, larger size, ingest only (e.g. 100000)")
    parser.add_argument("--json", type=Path, help="also append each row as JSON to this file")
    parser.add_argument("--rdflib", type=int, default=1000, help="largest size for rdflib")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    plan = [(n, False) for n in args.sizes] + ([(args.big, True)] if args.big else [])
    rows = []
    with tempfile.TemporaryDirectory(prefix="hcgraph-bench-") as tmp:
        for n, only in plan:
            rows.append(measure(n, args.rdflib, Path(tmp), ingest_only=only))
            if args.json:
                with args.json.open("a") as fh:
                    fh.write(json.dumps(rows[-1]) + "\n")
    table = render(rows)
    print(table)
    if args.write_results:
        when = time.strftime("%Y-%m-%d")
        write_section(
            "## Data path (issue 9)",
            f"## Data path (issue 9)\n\n`python bench/bench_datapath.py --sizes "
            f"{' '.join(map(str, args.sizes))}"
            + (f" --big {args.big}" if args.big else "")
            + f" --rdflib {args.rdflib}` on the 2-core box, {when}; seeded generated stories "
            f"(seed {SEED}) written as files. Same-run baselines: the engine's floor (the same "
            "quads bulk-loaded by Oxigraph from one N-Quads file; its N-Quads dump) and "
            "rdflib's default store (Turtle).\n\n" + table + "\n",
        )


if __name__ == "__main__":
    main()
