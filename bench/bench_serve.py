"""Benchmark: ``hcgraph serve`` against ``oxigraph serve-read-only`` on the same store.

The baseline, measured in the same run, is the Oxigraph server itself (Rust, the PyPI
package ``oxigraph``) serving the very same database read-only with
``--union-default-graph``; ``hcgraph serve`` (the guard, the worker processes) is started
through its CLI, as a user runs it (one HTTP front, batched hand-off to the workers, on
uvloop), and as variants (``bench/_serve_variant.py``) that change one piece each: one
query worker instead of two (the scheduling question); the variant runner can also take
batching away, run asyncio's own loop or swap the parser (h11).
``ASK, a new text each`` sends a text never sent before in every request (a numbered
comment, by a wrk Lua script): the path of a query the server has not seen, beside the
repeated one.
The load generator is ``wrk`` (compiled, so it takes less of the CPU the servers need;
Debian package ``wrk``): 48 connections, cheap queries (an ASK, a SELECT ... LIMIT 10;
``--heavy``: also a saved query that reads much of the store), each with a new connection
per request (``Connection: close``) and with keep-alive. The servers take turns,
``--rounds`` times each; the table gives the median rate, with the server's CPU seconds
(its whole process tree, psutil) beside it, and the largest resident memory of each
server's process tree. Targets (issue 38): >= 90% of Oxigraph's rate in both modes,
<= 1.5x its CPU per request, <= 150 MB at 2 workers.

Errors are wrk's connect, write and timeout errors plus non-2xx answers.

Floors, measured in the same rounds: the engine (pyoxigraph's ``Store.query`` plus the JSON
answer, in a loop in one process: the CPU any server through pyoxigraph spends at least)
always; with ``--floor`` also the cheapest Python fronts (``bench/_floor_server.py``: the
guard's minimum and a fixed ASK answer, without and with a pipe round trip to a store
worker) and uvicorn on httptools answering a fixed ASK (``bench/_floor_uvicorn.py``): the
ceiling of a Python HTTP front on this machine. ``--before REV`` runs that git revision's
``hcgraph serve`` too, in the same rounds (A/B).

Usage::

    python bench/bench_serve.py [--stories 1000] [--seconds 5] [--rounds 3] [--heavy]
        [--floor] [--before REV] [--write-results]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import publish  # noqa: E402

from hcgraph import Store, ingest_bytes  # noqa: E402
from hcsample.corpus import iter_stories  # noqa: E402

QUERIES = {
    "ASK": "ASK { ?s ?p ?o }",
    "SELECT LIMIT 10": "SELECT * WHERE { ?s ?p ?o } LIMIT 10",
    "ASK, a new text each": "ASK { ?s ?p ?o }",
}
# every request a text never sent before (the ASK, a numbered comment after it: wrk's Lua):
# nothing the server keeps for a repeated query helps (its query string read, the guard's
# verdict, a worker's knowing it quick), beside the repeated query
NEW_TEXTS = {"ASK, a new text each"}
LUA = """
local threads, counter = 0, 0
function setup(thread) threads = threads + 1; thread:set("id", threads) end
function request()
  counter = counter + 1
  return wrk.format(nil, "%s" .. id .. "-" .. counter)
end
"""
HEAVY = "source-reuse"  # a saved query that reads much of the store (--heavy: also run it)
MODES = {"new connection": True, "keep-alive": False}  # mode -> Connection: close
# the floor: the cheapest Python front (bench/_floor_server.py), a fixed ASK answer, no
# worker; with the guard call, and without (pure HTTP): ASK rows only. "floor + worker": the
# floor plus a pipe round trip to a store worker process (all rows).
FLOORS = {"floor (guard)": "guard", "floor (no guard)": "plain", "floor + worker": "worker",
          "floor (uvicorn)": "uvicorn"}  # fmt: skip
FRONTS = 1  # the floors' HTTP processes: as many as `hcgraph serve` runs, one
WORKERS = 2  # query workers: the memory target is at 2 workers
BEFORE = "hcgraph before"  # --before REV: that revision's hcgraph, in the same rounds
# variants of the shipped server (bench/_serve_variant.py): parser or piece, workers;
# "1 worker": is the rate bound by CPU or by the scheduling of 3 processes on shared cores?
VARIANTS = {"1 worker": ("httptools", 1)}
CLI = "hcgraph serve"  # the CLI as a user runs it (httptools, one front)
TITLE = (
    "`hcgraph serve` with a new query text in every request beside the repeated query, against"
    " `oxigraph serve-read-only`"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {proc.args}")
        try:
            if httpx.get(url, params={"query": "ASK {}"}, trust_env=False).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"server did not start: {proc.args}")


def start(kind: str, store: Path, before: Path | None) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    tree = ROOT
    if kind == "floor (uvicorn)":
        cmd = [sys.executable, "-m", "uvicorn", "_floor_uvicorn:app", "--app-dir",
               str(Path(__file__).parent), "--port", str(port), "--http", "httptools",
               "--loop", "asyncio", "--no-access-log", "--log-level", "warning",
               "--workers", str(FRONTS)]  # fmt: skip
    elif kind in FLOORS:
        # a store only for the worker floor: given one, the others would use workers too
        store_arg = [str(store / "oxigraph")] if FLOORS[kind] == "worker" else []
        cmd = [sys.executable, str(Path(__file__).parent / "_floor_server.py"), str(port),
               FLOORS[kind], str(FRONTS), *store_arg]  # fmt: skip
    elif kind == "oxigraph":
        oxigraph = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
        cmd = [
            oxigraph, "serve-read-only", "--location", str(store / "oxigraph"),
            "--bind", f"127.0.0.1:{port}", "--union-default-graph",
        ]  # fmt: skip
    elif kind in VARIANTS:
        parser, workers = VARIANTS[kind]
        cmd = [sys.executable, str(Path(__file__).parent / "_serve_variant.py"), str(port),
               str(store), parser, str(workers)]  # fmt: skip
    else:
        tree = before if kind == BEFORE and before is not None else ROOT
        cmd = [sys.executable, "-m", "hcgraph", "serve", "--port", str(port), "--store", str(store),
               "--workers", str(WORKERS)]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(tree) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # in the tree's own directory: `python -m` puts the working directory first on sys.path
    # (before PYTHONPATH), so elsewhere --before would run this checkout's hcgraph
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            cwd=tree)  # fmt: skip
    url = f"http://127.0.0.1:{port}/query"
    wait_ready(url, proc)
    return proc, url


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and its children so far, ended children
    included (a killed query worker's time moves to its parent's children times)."""
    procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    total = 0.0
    for proc in procs:
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def settle(pid: int, url: str) -> None:
    """Wait (at most 30 s) until no process of the server started in the last 2 s: wrk
    leaves queries in flight at the end of a run, whose workers serve stops and replaces;
    that start-up belongs to no run."""
    for _ in range(300):
        now = time.time()
        try:
            tree = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
            if all(now - p.create_time() > 2 for p in tree):
                break
        except psutil.NoSuchProcess:
            pass
        time.sleep(0.1)
    httpx.get(url, params={"query": "ASK {}"}, trust_env=False, timeout=60)


def tree_memory(pid: int) -> tuple[float, float, int]:
    """Resident memory of a process and its children: RSS summed (MB; shared pages counted
    in every process), PSS summed (MB; shared pages split), the number of processes."""
    procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    rss = pss = 0.0
    for proc in procs:
        try:
            info = proc.memory_full_info()
        except psutil.NoSuchProcess:
            continue
        rss += info.rss / 2**20
        pss += getattr(info, "pss", info.rss) / 2**20
    return rss, pss, len(procs)


ENGINE_FLOOR = """
import io, sys, time, pyoxigraph as ox
store = ox.Store.read_only(sys.argv[1])
query, seconds = sys.argv[2], float(sys.argv[3])
n, start = 0, time.process_time()
while time.process_time() - start < seconds:
    result = store.query(query, use_default_graph_as_union=True)
    result.serialize(io.BytesIO(), ox.QueryResultsFormat.JSON)
    n += 1
print(n / (time.process_time() - start))
"""


def engine_floor(store: Path, query: str, seconds: float) -> float:
    """Queries per CPU second of pyoxigraph alone: one process, the store read-only, each
    query run and its answer written as SPARQL JSON (as a worker does), no HTTP."""
    out = subprocess.run(
        [sys.executable, "-c", ENGINE_FLOOR, str(store / "oxigraph"), query, str(seconds)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return float(out)


def run_wrk(
    url: str, query: str, seconds: int, close: bool, pid: int, new_texts: bool = False
) -> dict[str, float]:
    """One wrk run; ``new_texts``: every request's text a new one (a numbered comment)."""
    target = f"{url}?query={quote(query)}"
    cpu = tree_cpu(pid)
    header = ["-H", "Connection: close"] if close else []
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as lua:
        lua.write(LUA % ("/query?query=" + quote(query + " #")))
        lua.flush()
        script = ["-s", lua.name] if new_texts else []
        out = subprocess.run(
            ["wrk", "-t2", "-c48", f"-d{seconds}s", "--timeout", "30s", *header, *script,
             target],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    done = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    errors = {"connect": 0, "read": 0, "write": 0, "timeout": 0}
    if found := re.search(r"connect (\d+), read (\d+), write (\d+), timeout (\d+)", out):
        errors = dict(zip(errors, map(int, found.groups()), strict=True))
    non2xx = int(m.group(1)) if (m := re.search(r"Non-2xx or 3xx responses: (\d+)", out)) else 0
    hard = errors["connect"] + errors["write"] + errors["timeout"] + non2xx
    cpu_s = tree_cpu(pid) - cpu
    return {"rate": rate, "done": done, "errors": hard, "reads": errors["read"],
            "cpu": cpu_s / max(done, 1) * 1e6, "cpu_s": cpu_s}  # fmt: skip


def build(directory: Path, stories: int) -> None:
    with Store(directory) as st:
        ingest_bytes(st, ((json.dumps(s).encode(), str(s["url"])) for s in iter_stories(stories)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stories", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", metavar="REV", help="also run this git revision's hcgraph")
    parser.add_argument("--floor", action="store_true", help="also run the floor servers")
    parser.add_argument("--heavy", action="store_true", help=f"also run the saved {HEAVY}")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    kinds = ["oxigraph", *(FLOORS if args.floor else []), *([BEFORE] if args.before else []),
             CLI, *VARIANTS]  # fmt: skip
    queries = dict(QUERIES)
    if args.heavy:
        from hcgraph.queries import load_query

        queries[HEAVY] = load_query(HEAVY).text
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        build(store, args.stories)
        before = None
        if args.before:
            before = Path(tmp) / "before"
            before.mkdir()
            # hcgraph/data/queries is a symlink to ../../queries: both go
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.before, "hcgraph", "queries"],
                capture_output=True, check=True,
            ).stdout  # fmt: skip
            subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
        servers = {kind: start(kind, store, before) for kind in kinds}
        memory: dict[str, tuple[float, float, int]] = {}
        floors: dict[str, float] = {}
        try:
            for name, query in queries.items():  # same answers from all, before timing
                if name in NEW_TEXTS:
                    continue
                bodies = {
                    kind: httpx.get(
                        url,
                        params={"query": query},
                        trust_env=False,
                        headers={"Accept": "text/csv"},
                        timeout=120,
                    ).text
                    for kind, (_proc, url) in servers.items()
                    if kind not in FLOORS
                }
                assert len(set(bodies.values())) == 1, name
            results: dict[tuple[str, str, str], list[dict[str, float]]] = {}
            for _ in range(args.rounds):
                for name, query in queries.items():
                    for mode, close in MODES.items():
                        for kind, (proc, url) in servers.items():
                            if FLOORS.get(kind, "worker") != "worker" and name != "ASK":
                                continue
                            settle(proc.pid, url)
                            results.setdefault((name, mode, kind), []).append(
                                run_wrk(
                                    url, query, args.seconds, close, proc.pid, name in NEW_TEXTS
                                )
                            )
                            rss = tree_memory(proc.pid)
                            memory[kind] = max(memory.get(kind, rss), rss)
                    # the engine alone, in the same round
                    if name not in NEW_TEXTS:
                        rate = engine_floor(store, query, args.seconds)
                        floors[name] = max(floors.get(name, 0.0), rate)
                loads.append(os.getloadavg()[0])
        finally:
            for proc, _url in servers.values():
                proc.terminate()
                proc.wait(timeout=30)
    rows = []
    for name in queries:
        for mode in MODES:
            base = results[(name, mode, "oxigraph")]
            base_rate = statistics.median(r["rate"] for r in base)
            base_cpu = statistics.median(r["cpu"] for r in base)
            for kind in servers:
                if (name, mode, kind) not in results:
                    continue
                runs = results[(name, mode, kind)]
                rate = statistics.median(r["rate"] for r in runs)
                ratios = sorted(r["rate"] / o["rate"] for r, o in zip(runs, base, strict=True))
                cpu = statistics.median(r["cpu"] for r in runs)
                cpu_s = statistics.median(r["cpu_s"] for r in runs)
                errors = sum(r["errors"] for r in runs)
                done = sum(int(r["done"]) for r in runs)
                rows.append(
                    f"| {name} | {mode} | {kind} | {rate:.0f} | {cpu_s:.1f} | {cpu:.0f} |"
                    f" {rate / base_rate:.0%} | {ratios[0]:.0%}-{ratios[-1]:.0%} |"
                    f" {cpu / base_cpu:.2f}x | {errors} / {done} |"
                )
        if name in floors:
            rows.append(
                f"| {name} | (no HTTP) | engine floor: pyoxigraph in 1 process |"
                f" {floors[name]:.0f} per CPU s | | {1e6 / floors[name]:.0f} | | | | |"
            )
    mem_rows = [
        f"| {kind} | {rss:.0f} | {pss:.0f} | {n} |"
        for kind, (rss, pss, n) in memory.items()
        if kind not in FLOORS
    ]
    heavy = (" --heavy" if args.heavy else "") + (" --floor" if args.floor else "")
    section = "\n".join(
        [
            f"## {TITLE} (issue 38, 2026-12-07)",
            "",
            f"`python bench/bench_serve.py --stories {args.stories} --seconds {args.seconds}"
            f" --rounds {args.rounds}{heavy}{' --before ' + args.before if args.before else ''}`:"
            f" {args.stories} stories, wrk with 48 connections, a new connection per request"
            f" or keep-alive, {args.rounds} rounds of {args.seconds} s with the servers taking"
            f" turns, median q/s; {os.cpu_count()} CPUs (shared), load average"
            f" {min(loads):.1f}-{max(loads):.1f}. CPU s: the server's whole process tree"
            " (user + system, psutil) during one run (median); CPU µs/q: per answered request;"
            " ratio: q/s over Oxigraph's (median; per round: the range of same-round ratios);"
            " CPU x: CPU per request over Oxigraph's. Errors: connect/write/timeout and non-2xx."
            f" hcgraph runs {WORKERS} query workers; `{CLI}` is the CLI (one front); the"
            " variants (`bench/_serve_variant.py`)"
            " change one piece each: `1 worker` runs one query worker (is the rate bound by"
            " CPU, or by the scheduling of the front and its workers on shared cores?)."
            " `ASK, a new text each`: every request a text never sent before (a numbered"
            " comment; wrk's Lua)."
            " Engine floor: pyoxigraph's `Store.query` plus"
            " the JSON answer written, in a loop in one process (best round): no server can"
            " answer for less CPU through pyoxigraph.",
            "",
            "| query | mode | server | q/s | CPU s | CPU µs/q | ratio | ratio per round |"
            " CPU x | errors |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
            *rows,
            "",
            "Resident memory, the server's process tree, largest after any run:",
            "",
            "| server | RSS MB (summed) | PSS MB (shared pages split) | processes |",
            "|---|---:|---:|---:|",
            *mem_rows,
            "",
        ]
    )
    publish(f"## {TITLE}", section, args.write_results)


if __name__ == "__main__":
    main()
