"""Benchmark: ``hcgraph push`` to a real Oxigraph server vs ``oxigraph load`` of the same data.

The baseline, measured in the same run, is the server side's own ceiling: ``oxigraph load``
(Oxigraph's bulk loader, no transactions, no HTTP) of the same graphs as N-Quads shards into
a fresh location. The push goes over HTTP into a running ``oxigraph serve`` started by this
script on 127.0.0.1 (a fresh one per push): ``bulk`` is a first push as ``hcgraph push``
makes it by default (the server's bulk loader, ``POST /store?no_transaction``, in chunks);
``gsp`` and ``update`` are the per-graph protocols (``--bulk never``), one transaction per
request. Targets: bulk >= 60% of the load rate (issue 26), per-graph >= 30% (issue 6).
``--repeat N`` runs the load and the pushes N times, interleaved (the machine is shared:
the spread shows the noise).

Both sides are counted (issue 38): beside the wall time, every row has the CPU seconds of
the client (the push's process, its reading thread included) and of the
server (``oxigraph serve``'s process, from just before the push until it is idle again
after it, so work the server finishes after answering is counted too); the load's row has
its own process's CPU. Two ratios: the rate by wall (load seconds / push seconds) and
triples per CPU second summed over both sides (load CPU / (client + server CPU)).
``--floor`` adds what the client cannot avoid, measured in the same run: the engine's dump
of the whole store (N-Quads) and the push's reading of it (per graph: sorted N-Triples,
hashed, framed as TriG) without sending anything. ``--before DIR`` adds pushes with the
hcgraph code in DIR (e.g. ``git archive`` of the code before), alternating with this tree's:
every push runs in a child process on its code tree, its CPU taken around the push.

Usage::

    python bench/bench_push.py                       # 10k stories: bulk, GSP, SPARQL Update
    python bench/bench_push.py --stories 1000 --methods bulk,gsp --concurrency 1,4
    python bench/bench_push.py --methods bulk --repeat 3 --floor --store /tmp/s10k  # reuse

Every push is checked afterwards: per-graph triple counts on the server equal the store's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pyoxigraph

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hcgraph import Store, ingest_bytes
from hcgraph.dump import write_shards
from hcgraph.push import remote_counts, resolve_endpoint
from hcgraph.push.protocols import bulk_body, local_graphs
from hcsample.corpus import iter_stories

ROOT = Path(__file__).resolve().parent.parent  # this tree: the code a push runs by default


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(location: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        ["oxigraph", "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{url}/query", params={"query": "ASK {}"}).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("oxigraph serve did not start")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(timeout=30)


def build_store(directory: Path, stories: int, seed: int) -> tuple[int, int, float]:
    started = time.perf_counter()
    if not directory.exists():
        docs = ((json.dumps(d).encode(), str(d["url"])) for d in iter_stories(stories, seed))
        with Store(directory) as store:
            report = ingest_bytes(store, docs)
            assert not report.failures, report.failures[:3]
    with Store(directory, read_only=True) as store:
        return len(store.graph_names()), len(store), time.perf_counter() - started


@dataclass(frozen=True)
class Row:
    """One timed run: wall seconds, CPU seconds of the client and of the server (a load has
    its own process's CPU as ``server``), the load average when it ended."""

    label: str
    seconds: float
    client_cpu: float
    server_cpu: float
    load: float

    @property
    def cpu(self) -> float:
        return self.client_cpu + self.server_cpu


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_load(shards: list[Path], location: Path) -> Row:
    """``oxigraph load`` of the shards: wall and its own CPU (the only child reaped here)."""
    before = _children_cpu()
    started = time.perf_counter()
    subprocess.run(
        ["oxigraph", "load", "--location", str(location), "--file", *map(str, shards)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    seconds = time.perf_counter() - started
    cpu = _children_cpu() - before
    return Row(f"oxigraph load, {len(shards)} N-Quads shards (baseline)", seconds, 0.0, cpu,
               os.getloadavg()[0])  # fmt: skip


def settle(server: psutil.Process, quiet: float = 0.02, step: float = 0.5) -> float:
    """Wait until ``server`` is idle (under ``quiet`` CPU s per ``step``; 60 s at most) and
    return its CPU seconds then: a bulk load may go on flushing after the last answer."""
    cpu = _cpu(server)
    for _ in range(int(60 / step)):
        time.sleep(step)
        now = _cpu(server)
        if now - cpu < quiet:
            return now
        cpu = now
    return cpu


#: The push, run in a child process on the hcgraph code at ``PYTHONPATH`` (this tree's, or
#: ``--before``'s): its own CPU seconds (every thread) around the push, and the report.
CHILD = """
import json, sys, time
from hcgraph import Store
from hcgraph.push import PushOptions, PushState, push_graphs, resolve_endpoint
store_dir, url, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
with Store(store_dir, read_only=True) as store:
    before = time.process_time()
    r = push_graphs(store, resolve_endpoint(url), PushOptions(**options), state=PushState(None))
    cpu = time.process_time() - before
print(json.dumps({"cpu": cpu, "ok": r.ok, "pushed": r.pushed, "graphs": r.graphs, "bulk": r.bulk}))
"""


def run_push(
    store_dir: Path,
    work: Path,
    method: str,
    concurrency: int,
    batch: int,
    bulk_mb: int = 0,
    tree: Path = ROOT,
) -> Row:
    location = work / f"server-{method}-{concurrency}"
    proc, url = start_server(location)
    try:
        protocol = "gsp" if method == "bulk" else method
        bulk = "always" if method == "bulk" else "never"  # auto: bulk from 500 graphs
        options: dict[str, object] = {
            "protocol": protocol,
            "concurrency": concurrency,
            "batch": batch,
            "bulk": bulk,
        }
        if bulk_mb:
            options["bulk_bytes"] = bulk_mb * 1024 * 1024
        server = psutil.Process(proc.pid)
        server_before = settle(server)
        started = time.perf_counter()
        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(store_dir), url, json.dumps(options)],
            env={**os.environ, "PYTHONPATH": str(tree)},
            check=True,
            capture_output=True,
        )
        seconds = time.perf_counter() - started
        server_cpu = settle(server) - server_before
        report = json.loads(child.stdout)
        assert report["ok"] and report["pushed"] == report["graphs"], report
        assert (report["bulk"] == report["graphs"]) == (method == "bulk"), report
        with Store(store_dir, read_only=True) as store:
            local = {g: 0 for g in store.graph_names()}
            for q in store.ox:
                local[q.graph_name.value] += 1  # type: ignore[union-attr]

        async def counts() -> dict[str, int]:
            async with httpx.AsyncClient(timeout=600) as client:
                return await remote_counts(client, resolve_endpoint(url))

        assert asyncio.run(counts()) == local, "remote counts differ from the store"
        if method == "bulk":
            label = f"hcgraph push (first push: bulk load) --concurrency {concurrency}"
            label += f", {bulk_mb} MB requests" if bulk_mb else ""
        else:
            label = f"hcgraph push --bulk never --protocol {method} --concurrency {concurrency}"
        if method == "update":
            label += f" --batch {batch}"
        if tree != ROOT:
            label += f" [code at {tree}]"
        return Row(label, seconds, report["cpu"], server_cpu, os.getloadavg()[0])
    finally:
        stop(proc)
        shutil.rmtree(location, ignore_errors=True)


def run_floor(store_dir: Path, work: Path) -> list[Row]:
    """The client's unavoidable part, nothing sent: the engine's N-Quads dump of the whole
    store, and the push's own reading (sorted N-Triples per graph, hashed, framed as TriG)."""
    rows = []
    with Store(store_dir, read_only=True) as store:
        before, started = time.process_time(), time.perf_counter()
        store.ox.dump(str(work / "floor.nq"), format=pyoxigraph.RdfFormat.N_QUADS)
        rows.append(Row("floor: the engine's N-Quads dump of the store (client only)",
                        time.perf_counter() - started, time.process_time() - before, 0.0,
                        os.getloadavg()[0]))  # fmt: skip
        (work / "floor.nq").unlink()
        before, started = time.process_time(), time.perf_counter()
        size = sum(len(bulk_body([graph])) for graph in local_graphs(store))
        assert size > 0
        rows.append(Row("floor: the push's reading, hashing and TriG (client only, not sent)",
                        time.perf_counter() - started, time.process_time() - before, 0.0,
                        os.getloadavg()[0]))  # fmt: skip
    return rows


def report(row: Row, load: Row, rows: list[tuple[Row, Row]]) -> None:
    rows.append((row, load))
    print(f"{row.label}: {row.seconds:.1f} s, {row.client_cpu:.1f} + {row.server_cpu:.1f} CPU s, "
          f"{load.cpu / row.cpu:.0%} of the load by CPU", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--methods", default="bulk,gsp,update")
    parser.add_argument("--concurrency", default="4", help="comma-separated values to try")
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--floor", action="store_true", help="time the client's floor too")
    parser.add_argument("--bulk-mb", default="0", help="bulk request sizes to try (0: default)")
    parser.add_argument("--store", type=Path, help="reuse (or build and keep) the store here")
    parser.add_argument("--shards", type=Path, help="reuse (or write and keep) the load's shards")
    parser.add_argument(
        "--before",
        type=Path,
        help="also push with the hcgraph code in this directory (e.g. `git archive` of the code "
        "before), alternating with this tree's in each repeat",
    )
    args = parser.parse_args()
    trees = [ROOT] if args.before is None else [args.before.resolve(), ROOT]

    with tempfile.TemporaryDirectory(prefix="bench-push-") as tmp:
        work = Path(tmp)
        store_dir = args.store or work / "store"
        graphs, quads, ingest_s = build_store(store_dir, args.stories, args.seed)
        print(f"corpus: {args.stories} stories -> {graphs} graphs, {quads:,} triples "
              f"(generated + ingested in {ingest_s:.0f} s)", flush=True)  # fmt: skip
        if args.shards is not None and args.shards.is_dir():
            shards = sorted(args.shards.glob("graph-*.nq"))
        else:
            with Store(store_dir, read_only=True) as store:
                dump = args.shards or work / "dump"
                shards = write_shards(store, dump, 500_000, compress=False)

        rows: list[tuple[Row, Row]] = []  # a row, the load just before it
        for repeat in range(args.repeat):
            shutil.rmtree(work / "loaded", ignore_errors=True)
            load = run_load(shards, work / "loaded")
            rows.append((load, load))
            print(f"{load.label}: {load.seconds:.1f} s, {load.cpu:.1f} CPU s", flush=True)
            runs = [
                (method, int(conc), int(mb), tree)
                for method in args.methods.split(",")
                for conc in args.concurrency.split(",")
                for mb in (args.bulk_mb.split(",") if method == "bulk" else ["0"])
                for tree in (trees if repeat % 2 == 0 else trees[::-1])
            ]
            for method, conc, mb, tree in runs:
                row = run_push(store_dir, work, method, conc, args.batch, mb, tree)
                report(row, load, rows)
            for row in run_floor(store_dir, work) if args.floor else []:
                report(row, load, rows)

    print()
    print(f"{args.stories} stories, {graphs} graphs, {quads:,} triples; 127.0.0.1, same run; "
          f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())} at the end")  # fmt: skip
    print()
    print("| method | wall s | CPU s: client + server | triples/s | triples per CPU s "
          "| vs load: wall | vs load: CPU, both sides | load avg |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row, load in rows:
        both = f"{row.client_cpu:.1f} + {row.server_cpu:.1f}" if row is not load else (
            f"{row.server_cpu:.1f} (its process)")  # fmt: skip
        print(f"| {row.label} | {row.seconds:.1f} | {both} | {quads / row.seconds:,.0f} "
              f"| {quads / row.cpu:,.0f} | {load.seconds / row.seconds:.0%} "
              f"| {load.cpu / row.cpu:.0%} | {row.load:.1f} |")  # fmt: skip
    print()
    for tree in trees:
        code = "this tree" if tree == ROOT else f"code at {tree}"
        pushes = [
            (r, ld)
            for r, ld in rows
            if r.label.startswith("hcgraph push (first")
            and ("[code at" in r.label) != (tree == ROOT)
        ]
        if pushes:
            wall = sorted(ld.seconds / r.seconds for r, ld in pushes)
            cpu = sorted(ld.cpu / r.cpu for r, ld in pushes)
            print(
                f"first push vs load ({code}), {len(pushes)} pairs: wall {wall[0]:.0%}-"
                f"{wall[-1]:.0%}, CPU both sides {cpu[0]:.0%}-{cpu[-1]:.0%} "
                f"(median {cpu[len(cpu) // 2]:.0%})"
            )


if __name__ == "__main__":
    main()
