"""Crawl benchmark: hcgraph crawl against nginx, with its two floors measured in the same run.

    python bench/bench_crawl.py [--stories 5000] [--concurrency 8]

Serves N generated stories as static files from nginx (Debian ``nginx-light``, not installed by
``scripts/install-test-deps``: ``sudo apt-get install nginx-light``; started here on a free
loopback port with a temporary config, stopped afterwards), then measures:

* ``hcgraph ingest`` of the same N stories from local files — the processing floor;
* a bare asyncio + httpx loop fetching the same N URLs with the same concurrency — the
  network floor for a Python client;
* ``hcgraph crawl`` of the site (seeds: every story URL, so all N are crawled; the
  generator's related links are followed too and are all already known or 404);
* ``hcgraph crawl --max-stories 1000`` — peak memory at 1k vs N stories (flat = good).

Each hcgraph step runs as its own ``python -m hcgraph`` process; peak RSS is the highest sum
over that process tree, sampled every 20 ms, and separately that of the top process alone.
Every step also records the CPU seconds it used (user + system: the hcgraph process with all
its threads, from ``getrusage``; the bare loop's own process time; nginx's worker processes,
from ``psutil``), because the crawl target is bounded by CPU on a small machine: a crawl must
do at least what ingest does plus one HTTP exchange per story (client and server), so on
``k`` cores it cannot beat ``k / (ingest CPU + client CPU + server CPU)`` stories a second.
Prints a Markdown table, that CPU ceiling, and the ratios against the targets (crawl >= 90%
of ingest, issue 9).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hcsample.corpus import DEFAULT_BASE_URL, generate_corpus  # noqa: E402

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
CONF = """
worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  types {{ application/json json; text/plain txt; }}
  default_type application/octet-stream;
  etag on;
  keepalive_requests 100000;
  server {{
    listen 127.0.0.1:{port};
    root {work}/site;
  }}
}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_site(
    n: int, seed: int, prefix: str
) -> tuple[Path, list[str], subprocess.Popen[bytes], str]:
    """Generate ``n`` stories as local files (``WORK/files``) and as a static site served by
    nginx on a free loopback port; return (work dir, story URLs, nginx, its base URL)."""
    (ROOT / "bench" / "_work").mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=prefix, dir=ROOT / "bench" / "_work"))
    work.chmod(0o755)  # nginx's worker runs as an unprivileged user and must read the site
    corpus = generate_corpus(n, seed)
    corpus.write(work / "files")
    for path, body in corpus.site_files().items():
        target = work / "site" / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
    seeds = [str(s["url"]) for s in corpus.stories]
    del corpus
    port = free_port()
    (work / "nginx.conf").write_text(CONF.format(work=work, port=port))
    nginx = subprocess.Popen([NGINX, "-c", str(work / "nginx.conf"), "-p", str(work)])
    base = f"http://127.0.0.1:{port}"
    for _ in range(100):  # wait for nginx to listen
        try:
            httpx.get(base + "/", timeout=0.2)
            break
        except httpx.TransportError:
            time.sleep(0.05)
    return work, seeds, nginx, base


class Run:
    """What one measured step used: wall seconds, CPU seconds (own and nginx's), peak RSS."""

    def __init__(self, seconds: float, cpu: float, rss: float | None, top: float | None) -> None:
        self.seconds, self.cpu, self.rss, self.top = seconds, cpu, rss, top
        self.server_cpu = 0.0


def children_cpu() -> float:
    """CPU seconds (user + system) of every child process this script has waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def tree_cpu(proc: psutil.Process) -> float:
    """CPU seconds used so far by a running process and its children (nginx)."""
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            times = p.cpu_times()
            total += times.user + times.system
    return total


def run_measured(args: list[str], env: dict[str, str]) -> Run:
    """Run a command; return its wall time, CPU time, peak RSS of its process tree in MB
    and peak RSS of the top process alone in MB."""
    cpu0 = children_cpu()
    start = time.perf_counter()
    proc = subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    root = psutil.Process(proc.pid)
    peak = top = 0
    while proc.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
            top = max(top, root.memory_info().rss)
        except psutil.Error:
            pass
        time.sleep(0.02)
    seconds = time.perf_counter() - start
    if proc.stdout:
        proc.stdout.read()
    if proc.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(args[:4])}… failed with exit code {proc.returncode}")
    return Run(seconds, children_cpu() - cpu0, peak / 2**20, top / 2**20)


def bare_fetch(urls: list[str], concurrency: int) -> Run:
    """The network floor, with the CPU time this process spent on it."""
    cpu0 = time.process_time()
    seconds = asyncio.run(_bare_fetch(urls, concurrency))
    return Run(seconds, time.process_time() - cpu0, None, None)


async def _bare_fetch(urls: list[str], concurrency: int) -> float:
    """The network floor: fetch every URL with plain httpx, ``concurrency`` at a time."""
    queue: asyncio.Queue[str] = asyncio.Queue()
    for url in urls:
        queue.put_nowait(url)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, trust_env=False) as client:

        async def worker() -> None:
            while not queue.empty():
                response = await client.get(queue.get_nowait())
                assert response.status_code == 200 and response.content

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    n = args.stories
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("SOURCE_DATE_EPOCH", None)
    print(f"generating {n} stories …", flush=True)
    work, seeds, nginx, base = serve_site(n, args.seed, "crawl-")
    rows: list[tuple[str, int, Run]] = []
    try:
        print(f"nginx on {base} (pid {nginx.pid})", flush=True)
        server = psutil.Process(nginx.pid)
        mirror = f"{DEFAULT_BASE_URL}={base}"
        hc = [sys.executable, "-m", "hcgraph"]
        crawl = [*hc, "crawl", *seeds, "--mirror", mirror, "--concurrency", str(args.concurrency),
                 "--retries", "0"]  # fmt: skip
        urls = [base + urlsplit(u).path + "index.json" for u in seeds]
        steps: list[tuple[str, int, Callable[[], Run]]] = [
            ("hcgraph ingest (local files: processing floor)", n,
             lambda: run_measured([*hc, "ingest", str(work / "files"), "--store",
                                   str(work / "s-ingest")], env)),
            (f"bare asyncio+httpx GET, concurrency {args.concurrency} (network floor)", n,
             lambda: bare_fetch(urls, args.concurrency)),
            ("hcgraph crawl", n,
             lambda: run_measured([*crawl, "--store", str(work / "s-crawl")], env)),
            ("hcgraph crawl --max-stories 1000 (memory check)", 1000,
             lambda: run_measured([*crawl, "--max-stories", "1000", "--store",
                                   str(work / "s-crawl-1k")], env)),
        ]  # fmt: skip
        for label, count, step in steps:
            server_cpu = tree_cpu(server)
            run = step()
            run.server_cpu = tree_cpu(server) - server_cpu
            rows.append((label, count, run))
            print(label, f"{run.seconds:.1f} s, {run.cpu:.1f} CPU s", flush=True)
    finally:
        nginx.terminate()
        nginx.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)
    report(rows, n, args.concurrency)


def report(rows: list[tuple[str, int, Run]], n: int, concurrency: int) -> None:
    """Print the table, the CPU ceiling and the ratios against the targets."""
    cores = os.cpu_count() or 1
    print()
    print(f"{n} stories, {cores} cores, concurrency {concurrency}, "
          f"load average {os.getloadavg()[0]:.1f}\n")  # fmt: skip
    print("| step | stories | seconds | stories/s | CPU s | CPU ms/story | nginx CPU ms/story "
          "| peak RSS, all (MB) | peak RSS, top process (MB) |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, count, r in rows:
        rss = f"{r.rss:.0f}" if r.rss is not None else "-"
        top = f"{r.top:.0f}" if r.top is not None else "-"
        print(f"| {label} | {count} | {r.seconds:.1f} | {count / r.seconds:.0f} | {r.cpu:.1f} "
              f"| {1000 * r.cpu / count:.1f} | {1000 * r.server_cpu / count:.2f} | {rss} "
              f"| {top} |")  # fmt: skip
    ingest, bare, crawled = rows[0][2], rows[1][2], rows[2][2]
    ingest_rate, crawl_rate = n / ingest.seconds, n / crawled.seconds
    # The least CPU a crawl of one story can cost: ingest's work plus one HTTP exchange.
    floor_ms = 1000 * (ingest.cpu + bare.cpu + bare.server_cpu) / n
    ceiling = cores * 1000 / floor_ms
    print()
    print(f"ingest uses {ingest.cpu / ingest.seconds:.2f} of {cores} cores")
    print(f"least CPU a crawled story costs = ingest + client + server = {floor_ms:.1f} ms; "
          f"on {cores} cores at most {ceiling:.0f} stories/s = "
          f"{min(1.0, ceiling / ingest_rate):.0%} of ingest")  # fmt: skip
    print(f"crawl CPU per story = {1000 * crawled.cpu / n:.1f} ms "
          f"({crawled.cpu * 1000 / n / floor_ms:.2f}x that least cost)")  # fmt: skip
    print(f"crawl / ingest = {crawl_rate / ingest_rate:.0%} (target >= 90%)")
    print(f"crawl / bare fetch = {crawl_rate / (n / bare.seconds):.0%}")
    print(f"crawl = {crawl_rate:.0f} stories/s")
    print(f"peak RSS at 1000 vs {n} stories: {rows[3][2].rss:.0f} vs {crawled.rss:.0f} MB")


if __name__ == "__main__":
    main()
