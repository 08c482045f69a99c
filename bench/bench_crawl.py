"""Crawl benchmark: hcgraph crawl against nginx, with its two floors measured in the same run.

    python bench/bench_crawl.py [--stories 5000] [--concurrency 8]

Serves N generated stories as static files from nginx (Debian ``nginx-light``; started here
on a free loopback port with a temporary config, stopped afterwards), then measures:

* ``hcgraph ingest`` of the same N stories from local files — the processing floor;
* a bare asyncio + httpx loop fetching the same N URLs with the same concurrency — the
  network floor for a Python client;
* ``hcgraph crawl`` of the site (seeds: every story URL, so all N are crawled; the
  generator's related links are followed too and are all already known or 404);
* ``hcgraph crawl --max-stories 1000`` — peak memory at 1k vs N stories (flat = good).

Each hcgraph step runs as its own ``python -m hcgraph`` process; peak RSS is the highest sum
over that process tree, sampled every 20 ms, and separately that of the top process alone.
Prints a Markdown table and the ratios against the targets (crawl >= 90% of ingest, issue 9).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hcgraph.sample import DEFAULT_BASE_URL, generate_corpus  # noqa: E402

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


def run_measured(args: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """Run a command; return (seconds, peak RSS of its process tree in MB, peak RSS of the
    top process alone in MB, stdout). For a crawl the top process is the crawler itself
    (fetching, frontier, archive); its child is the store worker."""
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
    out = proc.stdout.read() if proc.stdout else ""
    if proc.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(args[:4])}… failed with exit code {proc.returncode}")
    return seconds, peak / 2**20, top / 2**20, out


async def bare_fetch(urls: list[str], concurrency: int) -> float:
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
    (ROOT / "bench" / "_work").mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="crawl-", dir=ROOT / "bench" / "_work"))
    work.chmod(0o755)  # nginx's worker runs as an unprivileged user and must read the site
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("SOURCE_DATE_EPOCH", None)
    print(f"generating {n} stories …", flush=True)
    corpus = generate_corpus(n, args.seed)
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
    rows: list[tuple[str, int, float, float | None, float | None]] = []
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):  # wait for nginx to listen
            try:
                httpx.get(base + "/", timeout=0.2)
                break
            except httpx.TransportError:
                time.sleep(0.05)
        print(f"nginx on {base} (pid {nginx.pid})", flush=True)
        mirror = f"{DEFAULT_BASE_URL}={base}"
        hc = [sys.executable, "-m", "hcgraph"]
        crawl = [*hc, "crawl", *seeds, "--mirror", mirror, "--concurrency", str(args.concurrency),
                 "--retries", "0"]  # fmt: skip

        seconds, rss, top, _ = run_measured([*hc, "ingest", str(work / "files"), "--store",
                                             str(work / "s-ingest")], env)  # fmt: skip
        rows.append(("hcgraph ingest (local files: processing floor)", n, seconds, rss, top))
        print(rows[-1], flush=True)

        urls = [base + urlsplit(u).path + "index.json" for u in seeds]
        seconds = asyncio.run(bare_fetch(urls, args.concurrency))
        rows.append((f"bare asyncio+httpx GET, concurrency {args.concurrency} (network floor)",
                     n, seconds, None, None))  # fmt: skip
        print(rows[-1], flush=True)

        for label, extra, count in [
            ("hcgraph crawl", [], n),
            ("hcgraph crawl --max-stories 1000 (memory check)", ["--max-stories", "1000"], 1000),
        ]:
            store = work / f"s-crawl-{len(rows)}"
            seconds, rss, top, _ = run_measured([*crawl, *extra, "--store", str(store)], env)
            rows.append((label, count, seconds, rss, top))
            print(rows[-1], flush=True)
    finally:
        nginx.terminate()
        nginx.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)

    print()
    print(f"{n} stories, {os.cpu_count()} cores, concurrency {args.concurrency}\n")
    print(
        "| step | stories | seconds | stories/s | peak RSS, all (MB) | peak RSS, top process (MB) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label, count, seconds, rss, top in rows:
        rss_text = f"{rss:.0f}" if rss is not None else "-"
        top_text = f"{top:.0f}" if top is not None else "-"
        rate = count / seconds
        print(f"| {label} | {count} | {seconds:.1f} | {rate:.0f} | {rss_text} | {top_text} |")
    ingest_rate = rows[0][1] / rows[0][2]
    bare_rate = rows[1][1] / rows[1][2]
    crawl_rate = rows[2][1] / rows[2][2]
    print()
    print(f"crawl / ingest = {crawl_rate / ingest_rate:.0%} (target >= 90%)")
    print(f"crawl / bare fetch = {crawl_rate / bare_rate:.0%}")
    print(f"crawl = {crawl_rate:.0f} stories/s")
    print(f"peak RSS at 1000 vs {n} stories: {rows[3][3]:.0f} vs {rows[2][3]:.0f} MB")


if __name__ == "__main__":
    main()
