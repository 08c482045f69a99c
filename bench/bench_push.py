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

Usage::

    python bench/bench_push.py                       # 10k stories: bulk, GSP, SPARQL Update
    python bench/bench_push.py --stories 1000 --methods bulk,gsp --concurrency 1,4

Every push is checked afterwards: per-graph triple counts on the server equal the store's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hcgraph import Store, ingest_bytes
from hcgraph.dump import write_shards
from hcgraph.push import PushOptions, PushState, push_graphs, remote_counts, resolve_endpoint
from hcsample.corpus import iter_stories


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
    docs = ((json.dumps(d).encode(), str(d["url"])) for d in iter_stories(stories, seed))
    with Store(directory) as store:
        report = ingest_bytes(store, docs)
        assert not report.failures, report.failures[:3]
        return len(store.graph_names()), len(store), time.perf_counter() - started


def run_load(shards: list[Path], location: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        ["oxigraph", "load", "--location", str(location), "--file", *map(str, shards)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def run_push(store_dir: Path, work: Path, method: str, concurrency: int, batch: int) -> float:
    location = work / f"server-{method}-{concurrency}"
    proc, url = start_server(location)
    try:
        endpoint = resolve_endpoint(url)
        protocol = "gsp" if method == "bulk" else method
        bulk = "always" if method == "bulk" else "never"  # auto: bulk from 500 graphs
        options = PushOptions(protocol=protocol, concurrency=concurrency, batch=batch, bulk=bulk)
        with Store(store_dir, read_only=True) as store:
            started = time.perf_counter()
            report = push_graphs(store, endpoint, options, state=PushState(None))
            seconds = time.perf_counter() - started
            assert report.ok and report.pushed == report.graphs, report
            assert (report.bulk == report.graphs) == (method == "bulk"), report
            local = {g: 0 for g in store.graph_names()}
            for q in store.ox:
                local[q.graph_name.value] += 1  # type: ignore[union-attr]

        async def counts() -> dict[str, int]:
            async with httpx.AsyncClient(timeout=600) as client:
                return await remote_counts(client, endpoint)

        assert asyncio.run(counts()) == local, "remote counts differ from the store"
        return seconds
    finally:
        stop(proc)
        shutil.rmtree(location, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--methods", default="bulk,gsp,update")
    parser.add_argument("--concurrency", default="4", help="comma-separated values to try")
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-push-") as tmp:
        work = Path(tmp)
        graphs, quads, ingest_s = build_store(work / "store", args.stories, args.seed)
        print(f"corpus: {args.stories} stories -> {graphs} graphs, {quads:,} triples "
              f"(generated + ingested in {ingest_s:.0f} s)", flush=True)  # fmt: skip
        with Store(work / "store", read_only=True) as store:
            shards = write_shards(store, work / "dump", 500_000, compress=False)

        rows: list[tuple[str, float, float]] = []  # label, seconds, the load's seconds
        for _ in range(args.repeat):
            shutil.rmtree(work / "loaded", ignore_errors=True)
            load_s = run_load(shards, work / "loaded")
            rows.append((f"oxigraph load, {len(shards)} N-Quads shards (baseline)", load_s, load_s))
            print(f"load: {load_s:.1f} s", flush=True)
            for method in args.methods.split(","):
                for conc in (int(c) for c in args.concurrency.split(",")):
                    seconds = run_push(work / "store", work, method, conc, args.batch)
                    if method == "bulk":
                        label = f"hcgraph push (first push: bulk load) --concurrency {conc}"
                    else:
                        label = f"hcgraph push --bulk never --protocol {method}"
                        label += f" --concurrency {conc}"
                    if method == "update":
                        label += f" --batch {args.batch}"
                    rows.append((label, seconds, load_s))
                    print(f"{label}: {seconds:.1f} s", flush=True)

    print()
    print(f"{args.stories} stories, {graphs} graphs, {quads:,} triples; 127.0.0.1, same run; "
          f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())} at the end")  # fmt: skip
    print()
    print("| method | seconds | triples/s | graphs/s | vs load (the load just before) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, seconds, load_s in rows:
        ratio = load_s / seconds
        print(f"| {label} | {seconds:.1f} | {quads / seconds:,.0f} | {graphs / seconds:,.0f} "
              f"| {ratio:.0%} |")  # fmt: skip


if __name__ == "__main__":
    main()
