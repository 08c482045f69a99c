"""Benchmark the saved queries and ``hcgraph check`` against rdflib's default store.

Each saved query (``queries/*.rq``) runs on a generated corpus in hcgraph's embedded
Oxigraph store — on disk, opened read-only as the CLI does (median of ``--runs``), and the
same quads in Oxigraph's in-memory store — and, as the baseline measured in the same run, in
rdflib's default in-memory store (``rdflib.Dataset(default_union=True)``, the same quads,
parsed from the store's N-Quads dump). The query text is identical on both engines; the row
counts are compared.

rdflib is slow: its runs are capped (``--baseline-timeout``, SIGALRM) and default to one run
per query; a capped query reports "> cap" and its ratio is a lower bound. Because rdflib
needs ~1.4 KB of RAM per quad, the baseline runs on ``--baseline-stories`` (default 2,000);
hcgraph runs on that corpus too (same triples, for the ratio) and on ``--stories`` (default
10,000, for the < 1 s target). ``hcgraph check`` is timed on the big corpus.

Stores are filled through hcgraph's ingest pipeline (``ingest_bytes``), and measured as that
leaves them — as ``hcgraph ingest`` does, it compacts the store when the rule says so
(``Store.compaction_due``), the bench does not optimise them itself; ``--keep DIR`` keeps the
built stores there and reuses them on the next run.

Usage::

    python bench/bench_queries.py [--stories 10000] [--baseline-stories 2000] [--runs 5]
                                  [--write-results]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import publish  # noqa: E402

SECTION = "## Queries and checks, layout v2 (issue 9)"

_PREFIXES = """PREFIX hc: <https://w3id.org/hcgraph/ns#>
PREFIX dcterms: <http://purl.org/dc/terms/>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX schema: <https://schema.org/>
"""

# The floor of a query whose answer is large: the same rows' stored columns read back from
# the store (the joins it cannot avoid, no computation), materialised as ``run_query`` does.
# Oxigraph's on-disk store decodes each IRI and long string of a row with a RocksDB look-up,
# so a query cannot answer faster than its own rows can be read.
FLOORS = {
    # source-lag: every (story, listed manifest) row with the five stored columns it shows,
    # the publisher read the cheapest way (the manifest's own, not the one the story lists
    # it with: the same rows when no two stories disagree, as in the generated corpus)
    "source-lag": """SELECT ?story ?published ?manifest_id ?publisher ?issued WHERE {
  ?story hc:listsManifest ?manifest .
  { SELECT ?story ?published WHERE { ?story schema:datePublished ?published } }
  { SELECT ?manifest ?manifest_id ?issued ?publisher
    WHERE { ?manifest prov:hadPrimarySource ?source ; dcterms:identifier ?manifest_id ;
                      dcterms:publisher ?pub . ?pub schema:name ?publisher .
            ?source dcterms:issued ?issued } } }""",
    # claim-reuse: only its count per claim (the distinct stories citing each claim, as the
    # query counts them), without the ids, the manifests' ids or the >= 2 filter
    "claim-reuse": """SELECT ?claim (COUNT(DISTINCT ?story) AS ?stories)
WHERE { ?story hc:citesClaimUnder ?use .
        { SELECT ?use ?claim WHERE { ?use hc:claim ?claim } } }
GROUP BY ?claim""",
    # source-reuse: its columns for the reused manifests (the count per manifest; the id,
    # every title and publisher name decoded), without the MIN, the publishers'
    # concatenation or the sort
    "source-reuse": """SELECT ?manifest ?manifest_id ?t ?name ?stories WHERE {
  { SELECT ?manifest (COUNT(?story) AS ?stories)
    WHERE { ?story hc:citesManifest ?manifest } GROUP BY ?manifest HAVING (COUNT(?story) >= 2) }
  ?manifest dcterms:identifier ?manifest_id .
  OPTIONAL { ?manifest dcterms:title ?t }
  OPTIONAL { ?manifest dcterms:publisher ?p . ?p schema:name ?name } }""",
}


def build_store(
    directory: Path | None, n: int, seed: int, *, keep: Path | None = None
) -> tuple[Any, list[str]]:
    """A store holding ``n`` generated stories; returns it and the story URLs.

    Stories go through hcgraph's own ingest pipeline (``ingest_bytes``: shared descriptions
    stated once, summary links, the ledger, the compaction at the end when due), so the
    store is the one ``hcgraph ingest`` leaves. With ``keep`` an on-disk store already built
    there for the same ``n`` and ``seed`` is reused.
    """
    from hcgraph.ingest import ingest_bytes
    from hcgraph.store import Store
    from hcsample.corpus import iter_stories

    when = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    urls = [str(doc["url"]) for doc in iter_stories(n, seed=seed)]
    if keep is not None and directory is not None:
        directory = keep / f"{directory.name}-{n}-{seed}"
        if (directory / "complete").is_file():
            return Store(directory), urls
    store = Store(directory)
    started = time.perf_counter()
    docs = (
        (json.dumps(doc, ensure_ascii=False).encode(), f"bench/{i}.json")
        for i, doc in enumerate(iter_stories(n, seed=seed))
    )
    report = ingest_bytes(store, docs, retrieved_at=when)
    assert not report.failures, report.failures[:3]
    if directory is not None:
        (directory / "complete").write_text(f"{n} {seed}\n")
    print(f"  built {n:,} stories in {time.perf_counter() - started:.0f} s", flush=True)
    return store, urls


#: A most-cited manifest's and claim's id per store (source-stories, claim-stories).
_EXAMPLES: dict[str, dict[str, str]] = {}


def _examples(store: Any) -> dict[str, str]:
    key = str(store.directory)
    if key not in _EXAMPLES:
        from hcgraph.queries import run_query

        top = {
            "manifest_id": ("source-reuse", "manifest_id"),
            "claim_id": ("claim-reuse", "claim_id"),
        }
        _EXAMPLES[key] = {
            param: str(run_query(store, query, limit=1).records()[0][column])
            for param, (query, column) in top.items()
        }
    return _EXAMPLES[key]


def _params(name: str, urls: list[str], k: int, store: Any) -> dict[str, Any]:
    if name == "source-stories":
        return {"manifest_id": _examples(store)["manifest_id"]}
    if name == "claim-stories":
        return {"claim_id": _examples(store)["claim_id"]}
    if name == "story-trail":
        return {"story": urls[len(urls) // 2]}
    if name == "co-citation":  # per-story form (issue 9): the pairs of one story
        return {"k": k, "story": urls[len(urls) // 2]}
    return {}


def time_hcgraph(
    store: Any, urls: list[str], runs: int, k: int, *, isolate: dict[str, int] | None = None
) -> dict[str, tuple[float | None, int | None, int]]:
    """query name → (median seconds, rows, runs); None when it hit its cap.

    ``isolate`` maps query names to a time cap: those run once, in a child process over the
    on-disk store, killed at the cap (co-citation at 10k stories needs GBs and minutes).
    A query whose first run takes over 30 s is not repeated.
    """
    from hcgraph.queries import run_query, saved_queries

    out: dict[str, tuple[float | None, int | None, int]] = {}
    for name, query in saved_queries().items():
        if isolate and name in isolate:
            out[name] = _child_run(store, name, _params(name, urls, k, store), isolate[name])
        else:
            times: list[float] = []
            rows = 0
            while len(times) < runs and sum(times) < 30:
                started = time.perf_counter()
                rows = len(run_query(store, query, _params(name, urls, k, store)))
                times.append(time.perf_counter() - started)
            out[name] = (statistics.median(times), rows, len(times))
        sec, rows_, n = out[name]
        shown = f"{sec:8.3f} s" if sec is not None else "  capped"
        print(f"  {name:26s} {shown}  {rows_ or 0:>9,} rows  ({n} runs)", flush=True)
    return out


def time_floors(store: Any, runs: int) -> dict[str, tuple[float, int]]:
    """query name → (median seconds, rows) of its :data:`FLOORS` query, as ``run_query`` runs it."""
    from hcgraph.queries import parse_query_text, run_query

    out: dict[str, tuple[float, int]] = {}
    for name, body in FLOORS.items():
        floor = parse_query_text(_PREFIXES + body, f"{name}-floor")
        times: list[float] = []
        rows = 0
        for _ in range(runs):
            started = time.perf_counter()
            rows = len(run_query(store, floor))
            times.append(time.perf_counter() - started)
        out[name] = (statistics.median(times), rows)
        print(f"  floor of {name:17s} {out[name][0]:8.3f} s  {rows:>9,} rows", flush=True)
    return out


def _child_run(store: Any, name: str, params: dict[str, Any], cap: int) -> tuple[Any, Any, int]:
    import subprocess

    if store.directory is None:
        return (None, None, 0)
    code = (
        "import json, sys, time; sys.path.insert(0, sys.argv[1]);"
        "from hcgraph.store import Store; from hcgraph.queries import run_query;"
        "st = Store(sys.argv[2], read_only=True); t = time.perf_counter();"
        "n = len(run_query(st, sys.argv[3], json.loads(sys.argv[4])));"
        "print(json.dumps([time.perf_counter() - t, n]))"
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, str(ROOT), str(store.directory), name, json.dumps(params)],
            capture_output=True, text=True, timeout=cap,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return (None, None, 1)
    sec, rows = json.loads(proc.stdout.strip().splitlines()[-1])
    return (sec, rows, 1)


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def time_rdflib(store: Any, urls: list[str], runs: int, cap: int, k: int) -> dict[str, Any]:
    """rdflib Dataset with the same quads: load time, and query name → (seconds|None, rows)."""
    import pyoxigraph as ox
    import rdflib

    from hcgraph.queries import saved_queries

    started = time.perf_counter()
    dataset = rdflib.Dataset(default_union=True)
    dataset.parse(data=store.ox.dump(format=ox.RdfFormat.N_QUADS).decode(), format="nquads")
    load = time.perf_counter() - started
    print(f"  rdflib load {load:.1f} s ({len(dataset):,} quads)", flush=True)
    out: dict[str, Any] = {"load": load}
    previous: Callable[..., Any] | int | None = signal.signal(signal.SIGALRM, _alarm)
    try:
        for name, query in saved_queries().items():
            bindings = {
                key: rdflib.URIRef(v) if key == "story" else rdflib.Literal(v)
                for key, v in _params(name, urls, k, store).items()
            }
            times, rows = [], 0
            try:
                for _ in range(runs):
                    signal.alarm(cap)
                    t0 = time.perf_counter()
                    rows = len(list(dataset.query(query.text, initBindings=bindings)))
                    times.append(time.perf_counter() - t0)
                    signal.alarm(0)
                out[name] = (statistics.median(times), rows)
            except _Timeout:
                out[name] = (None, None)
            except Exception as exc:  # rdflib's own bugs: recorded, the run goes on
                signal.alarm(0)
                out[name] = (None, f"{type(exc).__name__}: {exc}")
            signal.alarm(0)
            sec, rows_or_error = out[name]
            if sec is not None:
                shown = f"{sec:8.2f} s"
            elif isinstance(rows_or_error, str):
                shown = f"fails ({rows_or_error})"
            else:
                shown = f"> {cap} s"
            print(f"  {name:26s} {shown}", flush=True)
    finally:
        signal.signal(signal.SIGALRM, previous or signal.SIG_DFL)
    return out


def time_check(store: Any) -> dict[str, Any]:
    from hcgraph.checking import check

    started = time.perf_counter()
    report = check(store)
    total = time.perf_counter() - started
    return {
        "total": total,
        "seconds": report.seconds,
        "graphs": report.stories,
        "validated": report.shacl_graphs_validated,
        "findings": len(report.findings),
        "violations": report.violations,
    }


def time_pyshacl_sample(store: Any, sample: int) -> float:
    """Seconds per story graph for plain pySHACL (full mode) on ``sample`` graphs."""
    from hcgraph.shacl import load_shapes, validate

    stories = store.story_graphs()[:sample]
    started = time.perf_counter()
    validate(store, load_shapes(), mode="full", stories=stories)
    return (time.perf_counter() - started) / max(1, len(stories))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stories", type=int, default=10_000)
    ap.add_argument("--baseline-stories", type=int, default=2_000)
    ap.add_argument("--seed", type=int, default=4)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--baseline-runs", type=int, default=1)
    ap.add_argument("--baseline-timeout", type=int, default=300)
    ap.add_argument("--k", type=int, default=2, help="co-citation k")
    ap.add_argument(
        "--cocitation-cap", type=int, default=600,
        help="seconds before co-citation on the big corpus is killed (it runs in a child)",
    )  # fmt: skip
    ap.add_argument("--skip-check", action="store_true")
    ap.add_argument("--skip-memory", action="store_true", help="skip the in-memory store run")
    ap.add_argument(
        "--keep", type=Path, default=None,
        help="keep the on-disk stores in this directory and reuse them when present",
    )  # fmt: skip
    ap.add_argument("--write-results", action="store_true")
    args = ap.parse_args()

    from hcgraph.store import Store

    load = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="bench-queries-"))
    results: dict[str, Any] = {"args": vars(args), "load_before": load}

    print(f"== {args.baseline_stories} stories: hcgraph vs rdflib (same quads)", flush=True)
    small, small_urls = build_store(
        work / "small", args.baseline_stories, args.seed, keep=args.keep
    )
    small_dir = small.directory
    small.close()
    small = Store(small_dir, read_only=True)
    results["small_quads"] = len(small)
    print("hcgraph, on disk:", flush=True)
    results["small_disk"] = time_hcgraph(small, small_urls, args.runs, args.k)
    results["small_floors"] = time_floors(small, args.runs)
    results["small_rdflib"] = time_rdflib(
        small, small_urls, args.baseline_runs, args.baseline_timeout, args.k
    )
    small.close()

    print(f"== {args.stories} stories: hcgraph", flush=True)
    big, big_urls = build_store(work / "big", args.stories, args.seed, keep=args.keep)
    big_dir = big.directory
    big.close()
    big = Store(big_dir, read_only=True)
    results["big_quads"] = len(big)
    print("hcgraph, on disk:", flush=True)
    isolate = {"co-citation": args.cocitation_cap}
    results["big_disk"] = time_hcgraph(big, big_urls, args.runs, args.k, isolate=isolate)
    results["big_floors"] = time_floors(big, args.runs)
    if args.skip_memory:
        results["big_memory"] = {name: (None, None, 0) for name in results["big_disk"]}
    else:
        memory, _ = build_store(None, args.stories, args.seed)
        print("hcgraph, in memory:", flush=True)
        results["big_memory"] = time_hcgraph(memory, big_urls, args.runs, args.k, isolate=isolate)
        del memory
    if not args.skip_check:
        print("hcgraph check:", flush=True)
        results["check"] = time_check(big)
        print(json.dumps(results["check"], indent=1, default=str), flush=True)
        results["pyshacl_per_graph"] = time_pyshacl_sample(big, 100)
        print(f"  plain pySHACL: {results['pyshacl_per_graph']:.3f} s per story graph")
    big.close()
    results["load_after"] = os.getloadavg()[0]
    (work / "results.json").write_text(json.dumps(results, indent=1, default=str))
    publish(SECTION, render(results), args.write_results)


def _floor_ratio(r: dict[str, Any], name: str) -> str:
    floor, _rows = r["small_floors"][name]
    base, _ = r["small_rdflib"].get(name, (None, None))
    ceiling = f"{base / floor:,.0f}x" if base else "rdflib did not finish"
    return f" `{name}` {floor:.3f} s ({ceiling})"


def render(r: dict[str, Any]) -> str:
    a = r["args"]
    lines = [
        SECTION,
        "",
        f"`python bench/bench_queries.py --stories {a['stories']} --baseline-stories"
        f" {a['baseline_stories']} --runs {a['runs']} --baseline-timeout"
        f" {a['baseline_timeout']}` (seed {a['seed']}, co-citation k={a['k']} for one story;"
        " stores built through `ingest_bytes`: layout v2, shared things stated once; measured"
        " as the ingest left them, compacted by its own rule, not by the bench)."
        f" Load average {r['load_before']:.1f} before, {r['load_after']:.1f} after"
        " (2 cores, shared with three other engineers' test runs).",
        "",
        f"**Same triples, hcgraph vs rdflib** ({a['baseline_stories']:,} stories,"
        f" {r['small_quads']:,} quads; rdflib load {r['small_rdflib']['load']:.0f} s; hcgraph"
        f" median of {a['runs']}, rdflib {a['baseline_runs']} run(s), capped at"
        f" {a['baseline_timeout']} s):",
        "",
        "| query | rows | hcgraph, on disk | rdflib | ratio |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    ratios, bounds = [], []
    for name, (sec, rows, _n) in r["small_disk"].items():
        base, base_rows = r["small_rdflib"][name]
        if base is None and isinstance(base_rows, str):
            shown, ratio = f"fails: {base_rows}", "-"
        elif base is None:
            shown, ratio = f"> {a['baseline_timeout']} s", f"> {a['baseline_timeout'] / sec:,.0f}x"
            bounds.append(a["baseline_timeout"] / sec)
        else:
            shown, ratio = f"{base:.2f} s", f"{base / sec:,.0f}x"
            ratios.append(base / sec)
            if base_rows != rows:
                ratio += f" (rdflib: {base_rows} rows)"
        lines.append(f"| `{name}` | {rows:,} | {sec:.3f} s | {shown} | {ratio} |")
    lines += [
        "",
        f"Smallest measured ratio: {min(ratios, default=0):,.0f}x (target ≥ 20x); the"
        f" {len(bounds)} capped queries are lower bounds (rdflib did not finish), the"
        f" smallest {min(bounds, default=0):,.0f}x.",
        "",
        "Floors at this size (the answer's own columns read back, median of"
        f" {a['runs']}), and the most any query of that answer can beat rdflib by:"
        + "; ".join(_floor_ratio(r, name) for name in r.get("small_floors", {}))
        + ".",
        "",
        f"**{a['stories']:,} stories** ({r['big_quads']:,} quads), hcgraph only, median of"
        f" {a['runs']}:",
        "",
        "| query | rows | on disk (CLI) | floor: its rows read back | in memory | < 1 s |",
        "| --- | ---: | ---: | ---: | ---: | :---: |",
    ]
    floors = r.get("big_floors", {})
    cap = a["cocitation_cap"]
    for name, (sec, rows, n) in r["big_disk"].items():
        mem = r["big_memory"][name][0]
        disk_s = f"{sec:.3f} s" if sec is not None else f"> {cap} s"
        mem_s = f"{mem:.3f} s" if mem is not None else "not run"
        if n < a["runs"]:
            disk_s += f" ({n} run{'s' * (n != 1)})"
        ok = "yes" if sec is not None and sec < 1 else "no"
        if ok == "no" and mem is not None and mem < 1:
            ok = "in memory"
        rows_s = f"{rows:,}" if rows is not None else "?"
        floor_s = f"{floors[name][0]:.3f} s" if name in floors else ""
        lines.append(f"| `{name}` | {rows_s} | {disk_s} | {floor_s} | {mem_s} | {ok} |")
    if "check" in r:
        c = r["check"]
        parts = ", ".join(f"{k} {v:.1f} s" for k, v in c["seconds"].items())
        lines += [
            "",
            f"**`hcgraph check` on {a['stories']:,} stories: {c['total']:.1f} s** ({parts});"
            f" SHACL pre-selection sent {c['validated']} graph(s) (of {c['graphs']:,} story graphs"
            " and the shared graphs) to pySHACL;"
            f" {c['findings']:,} findings ({c['violations']:,} violations). Plain"
            f" pySHACL costs {r['pyshacl_per_graph']:.3f} s per story graph, i.e. about"
            f" {r['pyshacl_per_graph'] * c['graphs'] / 60:.0f} min for every graph"
            " (`--shacl full`).",
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
