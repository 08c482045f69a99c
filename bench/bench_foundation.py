"""Benchmark the foundation: ingest, Turtle/N-Triples export and a source-reuse query.

hcgraph (pydantic → mapping → on-disk Oxigraph store → export) against a baseline measured in
the same run: rdflib's default in-memory ``Graph`` built from the same stories. Each side runs
in its own subprocess so peak RSS is its own.

Fairness: both sides parse with the same pydantic model. The baseline then builds rdflib
terms and adds them to the Graph; it is *not* charged for hcgraph's mapping logic (it
converts quads hcgraph already mapped, timing only term creation + ``Graph.add``), which
favours the baseline.

Usage::

    python bench/bench_foundation.py --sizes 1000 10000 [--big 100000] [--write-results]

Prints a table; ``--write-results`` replaces the "Foundation" section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import io
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

QUERY = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX dcterms: <http://purl.org/dc/terms/>
SELECT ?m (COUNT(DISTINCT ?story) AS ?stories) WHERE {
  ?x prov:wasDerivedFrom ?m ; dcterms:isPartOf ?parent .
  OPTIONAL { ?parent dcterms:isPartOf ?grand }
  BIND(COALESCE(?grand, ?parent) AS ?story)
}
GROUP BY ?m HAVING (COUNT(DISTINCT ?story) >= 2)
ORDER BY DESC(?stories) ?m
"""


def _docs(n: int, seed: int) -> list[tuple[bytes, str]]:
    from hcgraph.sample import iter_stories

    return [
        (json.dumps(s, ensure_ascii=False).encode(), f"bench/{i}.json")
        for i, s in enumerate(iter_stories(n, seed=seed))
    ]


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_hcgraph(
    n: int, seed: int, workdir: Path, exports: list[str], *, in_memory: bool = False
) -> dict[str, Any]:
    """hcgraph: ingest, exports to files, the query (median of 5).

    The on-disk store is what the CLI uses; ``in_memory`` runs the same code on Oxigraph's
    in-memory store (``Store(None)``), to show what the engine costs without RocksDB.
    """
    from hcgraph.export import export
    from hcgraph.ingest import ingest_bytes
    from hcgraph.store import Store

    docs = _docs(n, seed)
    side = "hcgraph (Oxigraph in memory)" if in_memory else "hcgraph (Oxigraph on disk)"
    out: dict[str, Any] = {"side": side, "stories": n}
    store_dir = workdir / "store"
    t0 = time.perf_counter()
    writer = Store(None if in_memory else store_dir)
    report = ingest_bytes(writer, docs)
    assert report.ok, report.failures[:3]
    if not in_memory:
        writer.close()
    out["ingest_s"] = time.perf_counter() - t0
    del docs
    with writer if in_memory else Store(store_dir, read_only=True) as store:
        out["quads"] = len(store)
        for fmt in exports:
            t0 = time.perf_counter()
            with open(workdir / f"graph.{fmt}", "wb") as fh:
                export(store, fmt, fh)
            out[f"{fmt}_s"] = time.perf_counter() - t0
        times, rows = [], 0
        for _ in range(5):
            t0 = time.perf_counter()
            rows = sum(1 for _ in store.query(QUERY))
            times.append(time.perf_counter() - t0)
        out["query_s"] = sorted(times)[2]
        out["query_rows"] = rows
    out["triples"] = None
    if "ntriples" in exports:
        with open(workdir / "graph.ntriples", "rb") as fh:
            out["triples"] = sum(1 for _ in fh)
    out["disk_mb"] = (
        sum(p.stat().st_size for p in store_dir.rglob("*") if p.is_file()) / 2**20
        if store_dir.exists()
        else 0.0
    )
    out["peak_rss_mb"] = _rss_mb()
    return out


def run_rdflib(n: int, seed: int, workdir: Path, exports: list[str]) -> dict[str, Any]:
    """The baseline: same parse, rdflib terms + Graph.add, rdflib serialisers and SPARQL."""
    import datetime as dt
    import hashlib

    import pyoxigraph as ox
    import rdflib

    from hcgraph.mapping import IngestInfo, map_story
    from hcgraph.model import parse_story

    docs = _docs(n, seed)
    when = dt.datetime.now(dt.UTC).replace(microsecond=0)
    out: dict[str, Any] = {"side": "rdflib default in-memory Graph", "stories": n}
    graph = rdflib.Graph()
    uri: dict[str, rdflib.URIRef] = {}
    charged = 0.0
    t0 = time.perf_counter()
    for raw, source in docs:
        story = parse_story(raw, source)
        info = IngestInfo(hashlib.sha256(raw).hexdigest(), source, when, len(raw))
        m0 = time.perf_counter()
        quads = map_story(story, info)  # hcgraph's mapping: not charged to the baseline
        charged += time.perf_counter() - m0
        for q in quads:
            o = q.object
            if isinstance(o, ox.Literal):
                dtype = o.datatype.value
                term: rdflib.term.Node = (
                    rdflib.Literal(o.value)
                    if dtype.endswith("#string")
                    else rdflib.Literal(o.value, datatype=rdflib.URIRef(dtype))
                )
            else:
                term = uri.get(o.value) or uri.setdefault(o.value, rdflib.URIRef(o.value))
            s = uri.get(q.subject.value) or uri.setdefault(
                q.subject.value, rdflib.URIRef(q.subject.value)
            )
            p = uri.get(q.predicate.value) or uri.setdefault(
                q.predicate.value, rdflib.URIRef(q.predicate.value)
            )
            graph.add((s, p, term))
    out["ingest_s"] = time.perf_counter() - t0 - charged
    del docs
    out["triples"] = len(graph)
    names = {"turtle": "turtle", "ntriples": "nt"}
    for fmt in exports:
        t0 = time.perf_counter()
        graph.serialize(destination=str(workdir / f"baseline.{fmt}"), format=names[fmt])
        out[f"{fmt}_s"] = time.perf_counter() - t0
    times, rows = [], 0
    for _ in range(3):
        t0 = time.perf_counter()
        rows = len(list(graph.query(QUERY)))
        times.append(time.perf_counter() - t0)
    out["query_s"] = sorted(times)[1]
    out["query_rows"] = rows
    out["peak_rss_mb"] = _rss_mb()
    return out


def _child(side: str, n: int, seed: int, exports: list[str]) -> dict[str, Any]:
    """Run one side in a fresh interpreter; return its JSON result."""
    workdir = Path(tempfile.mkdtemp(prefix=f"hcbench-{side}-{n}-", dir=ROOT / "bench"))
    try:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", side, "--sizes", str(n), "--seed", str(seed),
             "--workdir", str(workdir), "--exports", *exports],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            raise SystemExit(f"{side} {n} failed:\n{proc.stderr[-3000:]}")
        return dict(json.loads(proc.stdout.strip().splitlines()[-1]))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _fmt_row(r: dict[str, Any]) -> str:
    def s(key: str) -> str:
        v = r.get(key)
        return "—" if v is None else f"{v:,.2f}"

    total = r["ingest_s"] + r.get("turtle_s", 0.0)
    return (
        f"| {r['side']} | {r['stories']:,} | {r.get('triples') or 0:,} | {s('ingest_s')} | "
        f"{s('turtle_s')} | {s('ntriples_s')} | {total:,.2f} | {s('query_s')} | "
        f"{r['query_rows']:,} | {r['peak_rss_mb']:,.0f} |"
    )


SIDES = ["hcgraph", "hcgraph-mem", "rdflib"]

HEADER = (
    "| side | stories | triples (union) | ingest s | Turtle s | N-Triples s | ingest+Turtle s "
    "| source-reuse query s | rows | peak RSS MB |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--big", type=int, default=0, help="also run hcgraph alone at this size")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--exports", nargs="+", default=["turtle", "ntriples"])
    ap.add_argument("--write-results", action="store_true")
    ap.add_argument("--child", choices=SIDES)
    ap.add_argument(
        "--sides",
        nargs="+",
        choices=SIDES,
        default=["hcgraph", "rdflib"],
        help="hcgraph (on disk), hcgraph-mem (in memory), rdflib (the baseline)",
    )
    ap.add_argument("--workdir", type=Path)
    args = ap.parse_args()
    if args.child:
        n, wd, ex = args.sizes[0], args.workdir, args.exports
        if args.child == "rdflib":
            result = run_rdflib(n, args.seed, wd, ex)
        else:
            result = run_hcgraph(n, args.seed, wd, ex, in_memory=args.child == "hcgraph-mem")
        print(json.dumps(result))
        return
    lines = [HEADER]
    ratios = []
    for n in args.sizes:
        results = {side: _child(side, n, args.seed, args.exports) for side in args.sides}
        lines += [_fmt_row(r) for r in results.values()]
        print("\n".join(lines[-len(results) :]), flush=True)
        base = results.get("rdflib")
        for side, ours in results.items():
            if base is None or side == "rdflib":
                continue
            assert ours["query_rows"] == base["query_rows"], (ours, base)
            assert ours["triples"] == base["triples"], (ours["triples"], base["triples"])
            build = (base["ingest_s"] + base["turtle_s"]) / (ours["ingest_s"] + ours["turtle_s"])
            ratios.append(
                f"| {ours['side']} | {n:,} | {build:.1f}x | "
                f"{base['ingest_s'] / ours['ingest_s']:.1f}x | "
                f"{base['turtle_s'] / ours['turtle_s']:.1f}x | "
                f"{base['query_s'] / ours['query_s']:.1f}x | {ours['peak_rss_mb']:,.0f} MB |"
            )
    table = "\n".join(lines)
    ratio_table = (
        "| hcgraph store | stories | ingest+Turtle speed-up | ingest | Turtle | query "
        "| hcgraph peak RSS |\n|---|---:|---:|---:|---:|---:|---:|\n" + "\n".join(ratios)
    )
    big = ""
    if args.big:
        r = _child("hcgraph", args.big, args.seed, ["nquads", "turtle"])
        big = (
            f"\n\n{args.big:,} stories, on-disk store, hcgraph alone: "
            f"ingest {r['ingest_s']:,.0f} s "
            f"({args.big / r['ingest_s']:,.0f} stories/s), {r['quads']:,} quads, N-Quads export "
            f"{r['nquads_s']:,.0f} s, Turtle export {r['turtle_s']:,.0f} s, source-reuse query "
            f"{r['query_s']:,.2f} s ({r['query_rows']:,} rows), store {r['disk_mb']:,.0f} MB on "
            f"disk, peak RSS {r['peak_rss_mb']:,.0f} MB."
        )
        print(big.strip())
    print()
    print(table)
    print()
    print(ratio_table)
    if args.write_results:
        _write_results(table, ratio_table, big)


def _write_results(table: str, ratio_table: str, big: str) -> None:
    cpu = os.cpu_count()
    section = (
        "## Foundation (issue 2)\n\n"
        f"`python bench/bench_foundation.py --write-results` on {cpu} cores, "
        f"{time.strftime('%Y-%m-%d')}. Seeded generated stories (`hcgraph.sample`).\n\n"
        f"{table}\n\n{ratio_table}{big}\n"
    )
    write_section("## Foundation (issue 2)", section)


if __name__ == "__main__":
    io.DEFAULT_BUFFER_SIZE = 1 << 16
    main()
