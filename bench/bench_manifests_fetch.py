"""Benchmark: ``fetch_manifests`` of 10k manifests vs plain httpx GETs of the same URLs.

A loopback manifest API (``bench/_manifest_server.py``: asyncio, pre-rendered replies, the
bearer key checked, in its own process so its CPU is not the client's) serves ``--count``
generated replies of ~1 KB. Two clients fetch every one of them, ``--rounds`` times, in this
process, alternating every ``--block`` ids (the machine is shared: load that comes and goes
then weighs on both alike):

* **plain httpx**: one ``httpx.Client`` (the same headers), ``client.get(url).content`` in a
  loop: no archive, no parsing (the baseline, the issue's "plain httpx");
* **fetch_manifests**: ``fetch_manifests(ids, manifest_archive(fresh store),
  FetchOptions(rate=0))``: each reply streamed with its cap, archived (body + record, synced
  once a second), read with ``parse_reply``; the report is checked (every id fetched).

Wall and CPU (``time.process_time``: this process, the client only) per run, the ratio to
the plain loop of the same round; target: within 1.2x in wall and CPU (issue 37 item 4).

Usage::

    python bench/bench_manifests_fetch.py                      # 10k manifests, 2 rounds
    python bench/bench_manifests_fetch.py --count 2000 --rounds 1 --write-results
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _manifest_server import manifest_id  # noqa: E402
from _results import publish  # noqa: E402

from hcgraph.claims.fetching import (  # noqa: E402
    FetchOptions,
    archived_replies,
    fetch_manifests,
    manifest_archive,
)

KEY = "bench-key-0123456789abcdef"
ENV = "HCGRAPH_BENCH_MANIFEST_KEY"
HEADING = "## Manifest fetch vs plain httpx (issue 37 item 1"


def start_server(count: int) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "_manifest_server.py"), "0", KEY, str(count)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    return proc, f"http://127.0.0.1:{port}"


def plain(api: str, ids: list[str]) -> int:
    headers = {"Authorization": f"Bearer {KEY}", "Accept": "application/json"}
    total = 0
    with httpx.Client(headers=headers, timeout=30.0) as client:
        for ident in ids:
            resp = client.get(f"{api}/manifests/by-id/{ident}")
            resp.raise_for_status()
            total += len(resp.content)
    return total


def ours(api: str, ids: list[str], work: Path) -> int:
    store = Path(tempfile.mkdtemp(dir=work))
    try:
        archive = manifest_archive(store)
        report = fetch_manifests(
            ids, archive, FetchOptions(api=api, key_env=ENV, rate=0), environ={ENV: KEY}
        )
        assert report.fetched == ids and not report.failed and not report.bad_shape, report.lines()
        archive.close()
        return len(report.fetched)
    finally:
        shutil.rmtree(store, ignore_errors=True)


def timed(run: Callable[[], int]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000, help="manifests to fetch per run")
    parser.add_argument("--rounds", type=int, default=2, help="times each fetches all of them")
    parser.add_argument(
        "--block",
        type=int,
        default=500,
        help="ids per call, alternating plain/ours (the machine is shared: fine alternation "
        "keeps load changes out of the ratio); 0 = one call per run",
    )
    parser.add_argument("--write-results", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args()
    ids = [manifest_id(n) for n in range(args.count)]
    size = args.block or args.count
    blocks = [ids[at : at + size] for at in range(0, len(ids), size)]
    proc, api = start_server(args.count)
    work = Path(tempfile.mkdtemp(prefix="bench-manifests-"))
    rows: list[tuple[str, float, float, float, float]] = []
    try:
        # a warm-up of each (imports, the server's first connections), not counted
        plain(api, ids[:200])
        ours(api, ids[:200], work)
        check = manifest_archive(work / "check")
        fetch_manifests(ids[:50], check, FetchOptions(api=api, key_env=ENV, rate=0),
                        environ={ENV: KEY})  # fmt: skip
        assert len(archived_replies(check)) == 50
        for _ in range(args.rounds):
            totals = {"plain httpx": [0.0, 0.0], "fetch_manifests": [0.0, 0.0]}
            for n, block in enumerate(blocks):
                runs = [
                    ("plain httpx", lambda b=block: plain(api, b)),
                    ("fetch_manifests", lambda b=block: ours(api, b, work)),
                ]
                for name, run in reversed(runs) if n % 2 else runs:
                    wall, cpu = timed(run)
                    totals[name][0] += wall
                    totals[name][1] += cpu
            pw, pc = totals["plain httpx"]
            for name, (wall, cpu) in totals.items():
                rows.append((name, wall, cpu, wall / pw, cpu / pc))
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(work, ignore_errors=True)
    publish(HEADING, render(args, rows), args.write_results)


def render(args: argparse.Namespace, rows: list[tuple[str, float, float, float, float]]) -> str:
    lines = [
        f"{HEADING}, 2026-12-06)",
        "",
        f"`python bench/bench_manifests_fetch.py --count {args.count} --rounds {args.rounds} "
        f"--block {args.block}`, load {os.getloadavg()[0]:.1f} at the end (2 cores shared); "
        f"each row fetches all {args.count:,} manifests (in calls of {args.block or args.count}, "
        "alternating with the other client):",
        "",
        "| run | wall s | CPU s | replies/s | wall / plain | CPU / plain |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, wall, cpu, rw, rc in rows:
        lines.append(
            f"| {name} | {wall:.2f} | {cpu:.2f} | {args.count / wall:,.0f} | {rw:.2f} | {rc:.2f} |"
        )
    ours_rows = [r for r in rows if r[0] == "fetch_manifests"]
    wall_med = statistics.median(r[3] for r in ours_rows)
    cpu_med = statistics.median(r[4] for r in ours_rows)
    lines += ["", f"Median fetch_manifests / plain httpx: wall {wall_med:.2f}x, CPU {cpu_med:.2f}x "
              "(target ≤ 1.2x).", ""]  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    main()
