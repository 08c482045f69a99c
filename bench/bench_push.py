"""Benchmark: ``hcgraph push`` to a real Oxigraph server vs ``oxigraph load`` of the same data.

The baseline, measured in the same run, is the server side's own ceiling: ``oxigraph load``
(Oxigraph's bulk loader, no transactions, no HTTP) of the same graphs as N-Quads shards into
a fresh location. The push goes over HTTP into a running ``oxigraph serve`` started by this
script on 127.0.0.1, one transaction per request, as a live server must. Target (issue 6):
push rate >= 30% of the load rate.

Usage::

    python bench/bench_push.py                       # 10k stories, GSP and SPARQL Update
    python bench/bench_push.py --stories 1000 --protocols gsp --concurrency 1,4

Every push is checked afterwards: per-graph triple counts on the server equal the store's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
from hcgraph.sample import iter_stories


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
        return len(store.story_graphs()), len(store), time.perf_counter() - started


def run_load(shards: list[Path], location: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        ["oxigraph", "load", "--location", str(location), "--file", *map(str, shards)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def run_push(store_dir: Path, work: Path, protocol: str, concurrency: int, batch: int) -> float:
    location = work / f"server-{protocol}-{concurrency}"
    proc, url = start_server(location)
    try:
        endpoint = resolve_endpoint(url)
        options = PushOptions(protocol=protocol, concurrency=concurrency, batch=batch)
        with Store(store_dir, read_only=True) as store:
            started = time.perf_counter()
            report = push_graphs(store, endpoint, options, state=PushState(None))
            seconds = time.perf_counter() - started
            assert report.ok and report.pushed == report.graphs, report
            local = {g: 0 for g in store.story_graphs()}
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
    parser.add_argument("--protocols", default="gsp,update")
    parser.add_argument("--concurrency", default="4", help="comma-separated values to try")
    parser.add_argument("--batch", type=int, default=50)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-push-") as tmp:
        work = Path(tmp)
        graphs, quads, ingest_s = build_store(work / "store", args.stories, args.seed)
        print(f"corpus: {args.stories} stories -> {graphs} graphs, {quads:,} triples "
              f"(generated + ingested in {ingest_s:.0f} s)", flush=True)  # fmt: skip
        with Store(work / "store", read_only=True) as store:
            shards = write_shards(store, work / "dump", 500_000, compress=False)

        rows: list[tuple[str, float]] = []
        load_s = run_load(shards, work / "loaded")
        rows.append((f"oxigraph load, {len(shards)} N-Quads shards (baseline)", load_s))
        print(f"load: {load_s:.1f} s", flush=True)
        for protocol in args.protocols.split(","):
            for conc in (int(c) for c in args.concurrency.split(",")):
                seconds = run_push(work / "store", work, protocol, conc, args.batch)
                label = f"hcgraph push --protocol {protocol} --concurrency {conc}"
                if protocol == "update":
                    label += f" --batch {args.batch}"
                rows.append((label, seconds))
                print(f"{label}: {seconds:.1f} s", flush=True)

    print()
    print(f"{args.stories} stories, {graphs} graphs, {quads:,} triples; 127.0.0.1, same run")
    print()
    print("| method | seconds | triples/s | graphs/s | vs load |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, seconds in rows:
        ratio = load_s / seconds
        print(f"| {label} | {seconds:.1f} | {quads / seconds:,.0f} | {graphs / seconds:,.0f} "
              f"| {ratio:.0%} |")  # fmt: skip


if __name__ == "__main__":
    main()
