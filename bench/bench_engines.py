"""Benchmark: every saved query, in every parameter form, on five SPARQL engines side by side.

The bench half of ``tests/test_engines.py`` (which checks the same rows at 1k stories in CI):
one seeded corpus (``hcsample.corpus``, seed 26 plus the fixture story, as the test builds it)
of ``--stories`` stories (default 10,000) is written as story files and ingested by the CLI
(``hcgraph ingest DIR --store STORE``: the store exactly as the CLI leaves it). Then every
case of :func:`tests.support.engines.cases` is answered by:

- **hcgraph** embedded: ``run_query`` on the store opened read-only, rows materialised as
  terms (the reference rows);
- **oxigraph** ``serve-read-only --union-default-graph`` on the same database, over HTTP;
- **virtuoso** 7.2 (Debian), filled with the bulk-load recipe of ``docs/pushing.md``
  (``write_shards`` → ``ld_dir`` → ``rdf_loader_run`` → ``checkpoint``), over HTTP; its
  ``virtuoso.ini`` is the test's (``tests/virtuoso.py``) with ``NumberOfBuffers`` 170,000
  (1.3 GB, the packaged file's line for 2 GB of RAM) instead of the test's 10,000;
- **jena** TDB2 4.5 (Debian), ``tdb2.tdbloader`` of the N-Quads dump, every query in one JVM;
- **comunica** 5 (npm) over an N3.js store of the N-Quads dump, every query in one Node
  process. Comunica is an in-memory engine without indexes fit for these joins; it gets its
  own, smaller corpus (``--comunica-stories``, built the same way, with hcgraph's answers on
  it as its reference).

What a time is: the median of ``--runs`` (default 3) answers of one case. For hcgraph, the
``run_query`` call; for the servers, the HTTP request with its whole body read (the client
on the same box; JSON parsing is not timed); for Jena and Comunica, the engine's own clock
inside its one process around evaluating and serialising the results (JVM and Node start,
loading and JIT warm-up of the first run are not in it; the process's wall time is printed
apart). Each case's rows are compared as the test compares them (sets of lexical texts,
list cells sorted): ``=`` or ``≠ (n rows vs m)``, n hcgraph's.

Usage::

    python bench/bench_engines.py [--stories 10000] [--comunica-stories 200] [--runs 3]
                                  [--engines hcgraph,oxigraph,virtuoso,jena,comunica]
                                  [--keep DIR] [--write-results]
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pyoxigraph as ox

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import publish  # noqa: E402

from hcgraph.dump import write_shards  # noqa: E402
from hcgraph.queries import run_query, saved_queries  # noqa: E402
from hcgraph.store import Store  # noqa: E402
from hcsample.corpus import iter_stories  # noqa: E402
from tests import virtuoso  # noqa: E402
from tests.conftest import SEED, SEED_URL, free_port  # noqa: E402
from tests.support import engines  # noqa: E402

SECTION = "## Five engines, every saved query (issue 26)"
ENGINES = ("hcgraph", "oxigraph", "virtuoso", "jena", "comunica")
VIRTUOSO_SETTINGS = {
    ("parameters", "numberofbuffers"): "170000",
    ("parameters", "maxdirtybuffers"): "130000",
}


@dataclass
class Corpus:
    """A store built by the CLI, its N-Quads dump, the cases and hcgraph's own answers."""

    stories: int
    work: Path
    store_dir: Path
    nquads: Path
    cases: list[engines.Case]
    local: dict[str, engines.Rows] = field(default_factory=dict)
    loads: dict[str, float] = field(default_factory=dict)


@dataclass
class Result:
    """One engine's median seconds per case, its rows, and notes (load, process wall time)."""

    seconds: dict[str, float] = field(default_factory=dict)
    rows: dict[str, engines.Rows] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def build(stories: int, work: Path) -> Corpus:
    """Write the stories as files, ``hcgraph ingest`` them, dump N-Quads, bind the cases."""
    work.mkdir(parents=True, exist_ok=True)
    store_dir, nquads, files = work / "store", work / "graph.nq", work / "stories"
    loads: dict[str, float] = {}
    if not (store_dir / "oxigraph").is_dir():
        shutil.rmtree(files, ignore_errors=True)
        files.mkdir()
        seed = json.loads(SEED.read_text())
        for i, story in enumerate(iter_stories(stories - 1, seed=26, include_seed=seed)):
            (files / f"{i:06d}.json").write_text(json.dumps(story))
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        command = ["hcgraph", "ingest", str(files), "--store", str(store_dir)]
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        loads["hcgraph ingest (CLI)"] = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"hcgraph ingest failed: {done.stderr[-2000:]}")
        shutil.rmtree(files)
    with Store(store_dir, read_only=True) as st:
        if not nquads.is_file():
            loads["N-Quads dump"] = _timed(
                lambda: st.ox.dump(output=str(nquads), format=ox.RdfFormat.N_QUADS)
            )
        top_source = run_query(st, "source-reuse", limit=1).records()[0]["manifest_id"]
        top_claim = run_query(st, "claim-reuse", limit=1).records()[0]["claim_id"]
        examples = {"story": SEED_URL, "manifest_id": top_source, "claim_id": top_claim, "k": "3"}
        cases = engines.cases(saved_queries(), examples)
    return Corpus(stories, work, store_dir, nquads, cases, loads=loads)


def run_hcgraph(corpus: Corpus, runs: int) -> Result:
    """The reference: ``run_query`` on the store, read-only, as the CLI opens it."""
    result = Result()
    library = saved_queries()
    with Store(corpus.store_dir, read_only=True) as st:
        for case in corpus.cases:
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                answer = run_query(st, library[case.name], case.params)
                times.append(time.perf_counter() - started)
            result.seconds[case.key] = statistics.median(times)
            result.rows[case.key] = engines.normalise(
                tuple(engines.term_text(t) for t in row) for row in answer.terms
            )
    corpus.local = result.rows
    return result


def _over_http(
    url: str,
    corpus: Corpus,
    runs: int,
    result: Result,
    timeout: float,
    on_timeout: Callable[[], None] | None = None,
) -> None:
    """Each case ``runs`` times over HTTP; one that takes over ``timeout`` s is run once and
    noted as not answered (``on_timeout`` then restarts the server, which would otherwise
    go on computing it)."""
    for case in corpus.cases:
        times: list[float] = []
        reply = None
        with httpx.Client(timeout=timeout, trust_env=False) as client:
            for _ in range(runs):
                started = time.perf_counter()
                try:
                    reply = client.post(
                        url,
                        data={"query": case.text},
                        headers={"Accept": "application/sparql-results+json"},
                    )
                except httpx.TimeoutException:
                    reply = None
                    break
                times.append(time.perf_counter() - started)
        if reply is None:
            result.errors[case.key] = f"> {timeout:.0f} s"
            print(f"  {url}: {case.key}: > {timeout} s", file=sys.stderr, flush=True)
            if on_timeout is not None:
                on_timeout()
            continue
        if reply.status_code != 200:
            result.errors[case.key] = f"HTTP {reply.status_code}: {reply.text[:200]}"
            continue
        partial = reply.headers.get("X-SQL-Message")  # Virtuoso's "anytime" partial answer
        if partial:
            result.notes.append(f"{case.key}: {reply.headers.get('X-SQL-State')} {partial}")
        result.seconds[case.key] = statistics.median(times)
        result.rows[case.key] = engines.json_rows(reply.json())
        print(f"  {url}: {case.key}: {times}", file=sys.stderr, flush=True)


def run_oxigraph(corpus: Corpus, runs: int, timeout: float) -> Result:
    """``oxigraph serve-read-only`` on the store's own database directory (restarted after a
    query that timed out)."""
    result = Result()
    port = free_port()
    with Store(corpus.store_dir, read_only=True) as st:
        location = st.db_path
    command = ["oxigraph", "serve-read-only", "--location", str(location), "--bind",
               f"127.0.0.1:{port}", "--union-default-graph"]  # fmt: skip
    servers: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        if servers:
            servers[-1].kill()
            servers[-1].wait(timeout=60)
        servers.append(
            subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
        engines.wait_for(f"http://127.0.0.1:{port}/query?query=ASK%7B%7D", 120.0)

    started = time.perf_counter()
    start()
    try:
        corpus.loads["oxigraph: the same database, start"] = time.perf_counter() - started
        _over_http(f"http://127.0.0.1:{port}/query", corpus, runs, result, timeout, start)
    finally:
        servers[-1].terminate()
        servers[-1].wait(timeout=30)
    return result


def run_virtuoso(corpus: Corpus, runs: int, timeout: float) -> Result:
    """Virtuoso filled with the bulk-load recipe of docs/pushing.md, queried over HTTP."""
    result = Result()
    directory = corpus.work / "virtuoso"
    shutil.rmtree(directory, ignore_errors=True)
    srv = virtuoso.VirtuosoServer(directory, free_port(), free_port(), VIRTUOSO_SETTINGS)
    srv.start()
    try:
        dump = directory / "dump"
        with Store(corpus.store_dir, read_only=True) as st:
            shards = _timed(lambda: write_shards(st, dump, 200_000))
        corpus.loads["virtuoso: write_shards (gzip N-Quads)"] = shards

        def load() -> None:
            srv.sql(
                f"ld_dir('{dump}', 'graph-*.nq.gz', 'https://example.org/unused-default-graph');"
            )
            srv.sql("rdf_loader_run();")
            srv.sql("checkpoint;")

        corpus.loads["virtuoso: ld_dir + rdf_loader_run + checkpoint"] = _timed(load)
        shutil.rmtree(dump)
        _over_http(f"{srv.url}/sparql", corpus, runs, result, timeout)
    finally:
        srv.stop()
        shutil.rmtree(directory, ignore_errors=True)
    return result


def _repeated(corpus: Corpus, runs: int) -> dict[str, str]:
    """Every case ``runs`` times, one after the other, as one engine process's query list."""
    return {f"{r}\t{c.key}": c.text for r in range(runs) for c in corpus.cases}


def _collect(corpus: Corpus, answers: Mapping[str, engines.Answer], result: Result) -> None:
    for case in corpus.cases:
        got = [answers[f"{r}\t{case.key}"] for r in range(99) if f"{r}\t{case.key}" in answers]
        if not got:
            result.errors[case.key] = "no answer"
            continue
        result.seconds[case.key] = statistics.median(a.seconds for a in got)
        result.rows[case.key] = got[0].rows


def run_jena(corpus: Corpus, runs: int, timeout: float, heap: str | None = None) -> Result:
    """TDB2's bulk loader, then every case ``runs`` times in one JVM (``-Xmx`` ``heap``), each
    cancelled after ``timeout`` seconds."""
    result = Result()
    classpath = engines.jena_classpath(corpus.work)
    if classpath is None:
        raise SystemExit("Apache Jena (libapache-jena-java) or javac is not installed")
    location = corpus.work / "tdb2"
    shutil.rmtree(location, ignore_errors=True)
    corpus.loads["jena: tdb2.tdbloader (N-Quads)"] = _timed(
        lambda: engines.jena_load(classpath, corpus.nquads, location)
    )
    items = _repeated(corpus, runs)
    started = time.perf_counter()
    failed: dict[str, str] = {}
    answers = engines.run_jena(classpath, location, items, corpus.work, heap, failed, timeout)
    wall = time.perf_counter() - started
    _collect(corpus, answers, result)
    _failures(failed, result)
    inside = sum(a.seconds for a in answers.values())
    result.notes.append(
        f"jena: one JVM, {len(items)} queries, {wall:.1f} s wall ({inside:.1f} s inside queries)"
    )
    shutil.rmtree(location, ignore_errors=True)
    return result


def _failures(failed: Mapping[str, str], result: Result) -> None:
    """A case none of whose runs answered gets the error of one that failed."""
    for key, message in failed.items():
        case = key.split("\t", 1)[1]
        if case not in result.seconds:
            result.errors[case] = message


def run_comunica(corpus: Corpus, runs: int, timeout: float) -> Result:
    """An N3.js store of the N-Quads, every case ``runs`` times, in one Node process, each
    stopped after ``timeout`` seconds."""
    result = Result()
    if not engines.comunica_available():
        raise SystemExit("Comunica is not installed (scripts/install-test-deps installs it)")
    items = _repeated(corpus, runs)
    started = time.perf_counter()
    failed: dict[str, str] = {}
    answers = engines.run_comunica(corpus.nquads, items, corpus.work, failed, timeout)
    wall = time.perf_counter() - started
    _collect(corpus, answers, result)
    _failures(failed, result)
    inside = sum(a.seconds for a in answers.values())
    corpus.loads["comunica: node start + N3.js parse (wall - queries)"] = wall - inside
    result.notes.append(
        f"comunica: one Node process, {len(items)} queries, {wall:.1f} s wall"
        f" ({inside:.1f} s inside queries)"
    )
    return result


RUNNERS: dict[str, Callable[[Corpus, int, float], Result]] = {
    "oxigraph": run_oxigraph,
    "virtuoso": run_virtuoso,
    "jena": run_jena,
    "comunica": run_comunica,
}


def cell(key: str, result: Result, local: Mapping[str, engines.Rows], reference: bool) -> str:
    """``ms =`` or ``ms ≠ (n rows vs m)`` (n the reference's), or the error."""
    if key in result.errors:
        return f"error: {result.errors[key][:60]}"
    ms = f"{result.seconds[key] * 1000:,.0f}"
    if reference:
        return f"{ms} ({len(result.rows[key])} rows)"
    mine, theirs = local[key], result.rows[key]
    return f"{ms} =" if mine == theirs else f"{ms} ≠ ({len(mine)} rows vs {len(theirs)})"


def differences(result: Result, local: Mapping[str, engines.Rows]) -> list[str]:
    """For each ≠, two example rows on one side only (the test's report)."""
    out = []
    for key, rows in result.rows.items():
        if rows != local[key]:
            out.append(f"{key}: e.g. {sorted(local[key] ^ rows)[:2]}")
    return out


def render(
    args: argparse.Namespace,
    big: Corpus,
    small: Corpus | None,
    results: dict[str, Result],
    load: tuple[float, float],
    quads: int,
) -> str:
    """The RESULTS.md section: command, date, load, the query-by-engine table, loads, notes."""
    names = [e for e in ENGINES if e in results]
    command = " ".join(["python bench/bench_engines.py", *sys.argv[1:]])
    lines = [
        SECTION,
        "",
        f"`{command}`, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, load average "
        f"{load[0]:.1f} at the start and {load[1]:.1f} at the end (2 cores, shared). "
        f"{big.stories:,} stories ({quads:,} quads) for every engine"
        + (f" but Comunica ({small.stories:,} stories)" if small is not None else "")
        + f"; the median of {args.runs} runs per cell, in ms; `=` the same rows as hcgraph's.",
        "",
        "| case | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for i, case in enumerate(big.cases):
        cells = []
        for name in names:
            corpus = small if name == "comunica" and small is not None else big
            # the same form of the same query (its example ids are the smaller corpus's own)
            key = corpus.cases[i].key
            cells.append(cell(key, results[name], corpus.local, name == "hcgraph"))
        lines.append(f"| `{case.key}` | " + " | ".join(cells) + " |")
    lines += ["", "| load | s |", "|---|---:|"]
    for corpus in (big, small):
        if corpus is None:
            continue
        for what, seconds in corpus.loads.items():
            lines.append(f"| {what}, {corpus.stories:,} stories | {seconds:,.1f} |")
    notes = [n for name in names for n in results[name].notes]
    for name in names:
        corpus = small if name == "comunica" and small is not None else big
        notes += [f"{name} ≠ {d}" for d in differences(results[name], corpus.local)]
    if notes:
        lines += [""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stories", type=int, default=10_000)
    parser.add_argument("--comunica-stories", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--timeout", type=float, default=3600, help="seconds a server may take for one answer"
    )
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--keep", type=Path, help="build (or reuse) the corpora here")
    parser.add_argument("--jena-heap", help="the JVM's -Xmx for Jena's queries, e.g. 14g")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    chosen = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = set(chosen) - set(ENGINES)
    if unknown:
        parser.error(f"unknown engines: {', '.join(sorted(unknown))}")
    load_start = os.getloadavg()[0]
    base = args.keep or Path(tempfile.mkdtemp(prefix="hcbench-engines-", dir=ROOT / "bench"))
    try:
        big = build(args.stories, base / f"corpus-{args.stories}")
        with Store(big.store_dir, read_only=True) as st:
            quads = len(st)
        results = {"hcgraph": run_hcgraph(big, args.runs)}
        small = None
        if "comunica" in chosen and args.comunica_stories != args.stories:
            small = build(args.comunica_stories, base / f"corpus-{args.comunica_stories}")
            run_hcgraph(small, 1)
        for name in chosen:
            if name == "hcgraph":
                continue
            print(f"{dt.datetime.now():%H:%M:%S} {name} …", file=sys.stderr, flush=True)
            target = small if name == "comunica" and small is not None else big
            runner = RUNNERS[name]
            if name == "jena":
                runner = functools.partial(run_jena, heap=args.jena_heap)
            results[name] = runner(target, args.runs, args.timeout)
            # the table so far, in case a later engine takes the rest of the evening
            partial = render(args, big, small, results, (load_start, os.getloadavg()[0]), quads)
            (base / "partial.md").write_text(partial)
        section = render(args, big, small, results, (load_start, os.getloadavg()[0]), quads)
        publish(SECTION, section, args.write_results)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
