"""Benchmark: ``hcgraph serve`` against ``oxigraph serve-read-only`` on the same store.

The baseline, measured in the same run, is the Oxigraph server itself (Rust, the PyPI
package ``oxigraph``) serving the very same database read-only with
``--union-default-graph``; ``hcgraph serve`` (the guard, the worker processes) is started
through its CLI, as a user runs it. The load generator is ``wrk`` (compiled, so it takes
less of the CPU the servers need; Debian package ``wrk``): 48 connections, a new connection
per request (``Connection: close``), cheap queries (an ASK, a SELECT ... LIMIT 10), plus
one keep-alive row for comparison. The
servers take turns, ``--rounds`` times each; the table gives the median rate. Target
(serve reliability item): >= 80% of the direct server's rate, 0 errors.

Errors are wrk's connect, write and timeout errors plus non-2xx answers. wrk also counts a
"read" error for every connection the server closes in a way it does not expect (Oxigraph's
server resets them): those answers were complete and counted, so they are shown apart.

The floor rows (``bench/_floor_server.py``, skipped with ``--no-floor``) are the cheapest
Python front for the job: the guard's minimum and a fixed ASK answer, without and with a pipe
round trip to a store worker; their rate is the ceiling of a Python guard on this machine.
``--before REV`` runs that git revision's ``hcgraph serve`` too, in the same rounds (A/B).

Usage::

    python bench/bench_serve.py [--stories 200] [--seconds 5] [--rounds 3] [--before main]
        [--no-floor] [--write-results]
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
from hcgraph.sample import iter_stories  # noqa: E402

QUERIES = {
    "ASK": "ASK { ?s ?p ?o }",
    "SELECT LIMIT 10": "SELECT * WHERE { ?s ?p ?o } LIMIT 10",
}
# name -> (query, a new connection per request); the keep-alive row is for comparison only
RUNS = {
    **{name: (query, True) for name, query in QUERIES.items()},
    "ASK, keep-alive": (QUERIES["ASK"], False),
}
# the floor: the cheapest Python front (bench/_floor_server.py), a fixed ASK answer, no
# worker; with the guard call, and without (pure HTTP): ASK rows only. "floor + worker": the
# floor plus a pipe round trip to a store worker process (all rows).
FLOORS = {"floor (guard)": "guard", "floor (no guard)": "plain", "floor + worker": "worker"}
FRONTS = min(2, os.cpu_count() or 1)  # as many HTTP processes as `hcgraph serve` runs
BEFORE = "hcgraph before"  # --before REV: that revision's hcgraph, in the same rounds


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
    if kind in FLOORS:
        cmd = [sys.executable, str(Path(__file__).parent / "_floor_server.py"), str(port),
               FLOORS[kind], str(FRONTS), str(store / "oxigraph")]  # fmt: skip
    elif kind == "oxigraph":
        oxigraph = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
        cmd = [
            oxigraph, "serve-read-only", "--location", str(store / "oxigraph"),
            "--bind", f"127.0.0.1:{port}", "--union-default-graph",
        ]  # fmt: skip
    else:
        tree = before if kind == BEFORE and before is not None else ROOT
        cmd = [sys.executable, "-m", "hcgraph", "serve", "--port", str(port), "--store", str(store)]
    env = dict(os.environ, PYTHONPATH=str(tree) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}/query"
    wait_ready(url, proc)
    return proc, url


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and its children so far."""
    procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    total = 0.0
    for proc in procs:
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def run_wrk(url: str, query: str, seconds: int, close: bool, pid: int) -> dict[str, float]:
    target = f"{url}?query={quote(query)}"
    cpu = tree_cpu(pid)
    header = ["-H", "Connection: close"] if close else []
    out = subprocess.run(
        ["wrk", "-t2", "-c48", f"-d{seconds}s", "--timeout", "30s", *header, target],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    done = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    errors = {"connect": 0, "read": 0, "write": 0, "timeout": 0}
    if found := re.search(r"connect (\d+), read (\d+), write (\d+), timeout (\d+)", out):
        errors = dict(zip(errors, map(int, found.groups()), strict=True))
    non2xx = int(m.group(1)) if (m := re.search(r"Non-2xx or 3xx responses: (\d+)", out)) else 0
    hard = errors["connect"] + errors["write"] + errors["timeout"] + non2xx
    cpu_us = (tree_cpu(pid) - cpu) / max(done, 1) * 1e6
    return {"rate": rate, "done": done, "errors": hard, "reads": errors["read"], "cpu": cpu_us}


def build(directory: Path, stories: int) -> None:
    with Store(directory) as st:
        ingest_bytes(st, ((json.dumps(s).encode(), str(s["url"])) for s in iter_stories(stories)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stories", type=int, default=200)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", metavar="REV", help="also run this git revision's hcgraph")
    parser.add_argument("--no-floor", action="store_true", help="skip the floor servers")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    kinds = ["oxigraph", *([] if args.no_floor else FLOORS), *([BEFORE] if args.before else []),
             "hcgraph"]  # fmt: skip
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        build(store, args.stories)
        before = None
        if args.before:
            before = Path(tmp) / "before"
            before.mkdir()
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "hcgraph"],
                                     capture_output=True, check=True).stdout  # fmt: skip
            subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
        servers = {kind: start(kind, store, before) for kind in kinds}
        try:
            for name, query in QUERIES.items():  # same answers from all, before timing
                bodies = {
                    kind: httpx.get(
                        url,
                        params={"query": query},
                        trust_env=False,
                        headers={"Accept": "text/csv"},
                    ).text
                    for kind, (_proc, url) in servers.items()
                    if kind not in FLOORS
                }
                assert len(set(bodies.values())) == 1, name
            results: dict[tuple[str, str], list[dict[str, float]]] = {}
            for _ in range(args.rounds):
                for name, (query, close) in RUNS.items():
                    for kind, (proc, url) in servers.items():
                        if FLOORS.get(kind, "worker") != "worker" and not name.startswith("ASK"):
                            continue
                        results.setdefault((name, kind), []).append(
                            run_wrk(url, query, args.seconds, close, proc.pid)
                        )
                loads.append(os.getloadavg()[0])
        finally:
            for proc, _url in servers.values():
                proc.terminate()
                proc.wait(timeout=30)
    rows = []
    for name in RUNS:
        base = statistics.median(r["rate"] for r in results[(name, "oxigraph")])
        for kind in servers:
            if (name, kind) not in results:
                continue
            runs = results[(name, kind)]
            rate = statistics.median(r["rate"] for r in runs)
            ratios = sorted(r["rate"] / o["rate"] for r, o in
                            zip(runs, results[(name, "oxigraph")], strict=True))  # fmt: skip
            cpu = statistics.median(r["cpu"] for r in runs)
            errors = sum(r["errors"] for r in runs)
            done = sum(int(r["done"]) for r in runs)
            reads = sum(int(r["reads"]) for r in runs)
            rows.append(
                f"| {name} | {kind} | {rate:.0f} | {cpu:.0f} | {rate / base:.0%} |"
                f" {ratios[0]:.0%}-{ratios[-1]:.0%} | {errors} / {done} ({reads} resets) |"
            )
    section = "\n".join(
        [
            "## `hcgraph serve` against `oxigraph serve-read-only` (serve reliability item)",
            "",
            f"`python bench/bench_serve.py --stories {args.stories} --seconds {args.seconds}"
            f" --rounds {args.rounds}{' --before ' + args.before if args.before else ''}`:"
            f" {args.stories} stories, wrk with 48 connections, a new"
            " connection per request (but the keep-alive row),"
            f" {args.rounds} alternating rounds of {args.seconds} s,"
            f" median q/s; {os.cpu_count()} CPUs (shared), load average"
            f" {min(loads):.1f}-{max(loads):.1f}. Errors: connect/write/timeout and"
            " non-2xx, over all requests; resets: connections wrk saw reset after a complete"
            " answer. CPU µs/q: CPU time of the server's whole process tree (user + system)"
            " per answered request, median of the rounds: the cost, whatever the machine's"
            " load; the q/s ratio depends on how much CPU the load left. Ratio: median q/s"
            " over Oxigraph's; per round: the range of the same-round ratios. Floor: the"
            " cheapest Python front (`bench/_floor_server.py`, a fixed answer, no worker).",
            "",
            "| query | server | q/s | CPU µs/q | ratio | ratio per round | errors |",
            "|---|---|---:|---:|---:|---:|---:|",
            *rows,
            "",
        ]
    )
    publish("## `hcgraph serve` against", section, args.write_results)


if __name__ == "__main__":
    main()
