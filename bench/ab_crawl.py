"""A/B crawl benchmark: two hcgraph trees (or settings) crawling one nginx site, alternating.

    python bench/ab_crawl.py --stories 3000 --pairs 4 --baseline-tree /path/to/old/checkout
    python bench/ab_crawl.py --variant thread='{"store_worker": "thread"}'

Why: a single ``bench_crawl.py`` run on a shared 2-core machine moves by ±15% from one run to
the next, more than most changes are worth. Here one nginx (started as in
``bench_crawl.py``) serves one generated site; each *pair* runs ``hcgraph ingest`` of the same
files (the same-run floor), then every variant's ``hcgraph crawl`` once, in the same order,
and the table gives each variant's median stories/s, CPU ms a story (its whole process tree:
a store worker process included) and peak RSS over the pairs, with crawl / ingest per pair.

Variants: ``current`` (this tree) always; ``baseline`` with ``--baseline-tree DIR`` (another
checkout, e.g. ``git worktree add /tmp/old <commit>``); and any ``--variant NAME=JSON`` (this
tree with those :class:`~hcgraph.crawling.CrawlOptions` fields set).

``--floor`` adds the crawl's floor on this machine: ``hcgraph ingest`` of the files and, at
the same time in a second process, a bare httpx client fetching every story URL with the same
concurrency and keeping each body (SHA-256, appended to one file). Any crawl must do at least
that work (fetch, keep, parse, map, write), so its wall time bounds what a crawl can reach,
and ingest / floor is the best crawl / ingest ratio this machine allows with this client.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_crawl import Run, run_measured, serve_site  # noqa: E402

from hcsample.corpus import DEFAULT_BASE_URL  # noqa: E402

# Runs `hcgraph crawl` from one tree, with CrawlOptions fields overridden (argv[1:4]).
_CRAWL = """
import json, sys
sys.path.insert(0, sys.argv[1])
import hcgraph
assert hcgraph.__file__.startswith(sys.argv[1]), hcgraph.__file__
overrides = json.loads(sys.argv[2])
if overrides:
    import hcgraph.cli.crawl as cli_crawl
    real = cli_crawl.CrawlOptions
    cli_crawl.CrawlOptions = lambda *a, **k: real(*a, **{**k, **overrides})
from hcgraph.cli import main
main(open(sys.argv[3]).read().split("\\n"))
"""

# The floor: `hcgraph ingest` (argv[3:]) in a child process while this one fetches every URL
# in the file argv[1] with httpx (argv[2] at a time) and appends each body to one file.
_FLOOR = """
import asyncio, hashlib, os, subprocess, sys
import httpx
urls = open(sys.argv[1]).read().split()
ingest = subprocess.Popen(sys.argv[3:], stdout=subprocess.DEVNULL)
fd = os.open(sys.argv[1] + ".bodies", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND)
async def fetch_all(n):
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(limits=limits, trust_env=False) as client:
        async def worker(todo):
            while todo:
                response = await client.get(todo.pop())
                body = response.content
                assert response.status_code == 200, response.status_code
                header = b"%s %d\\n" % (hashlib.sha256(body).hexdigest().encode(), len(body))
                os.writev(fd, [header, body, b"\\n"])
        todo = list(reversed(urls))
        await asyncio.gather(*(worker(todo) for _ in range(n)))
asyncio.run(fetch_all(int(sys.argv[2])))
sys.exit(ingest.wait())
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=3000)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--baseline-tree", type=Path, help="another hcgraph checkout")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=JSON")
    parser.add_argument("--floor", action="store_true", help="add the ingest ‖ fetch floor")
    args = parser.parse_args()
    variants: dict[str, tuple[Path, dict[str, object]]] = {"current": (ROOT, {})}
    if args.baseline_tree:
        variants = {"baseline": (args.baseline_tree.resolve(), {}), **variants}
    for spec in args.variant:
        name, _, options = spec.partition("=")
        variants[name] = (ROOT, json.loads(options))
    n = args.stories
    work, seeds, nginx, base = serve_site(n, args.seed, "ab-")
    env = dict(os.environ)
    env.pop("SOURCE_DATE_EPOCH", None)
    env.pop("PYTHONPATH", None)
    runs: dict[str, list[Run]] = {"ingest": []}
    try:
        argv = ["crawl", *seeds, "--mirror", f"{DEFAULT_BASE_URL}={base}",
                "--concurrency", str(args.concurrency), "--retries", "0"]  # fmt: skip
        # what the crawl fetches for each story: its JSON, under the mirror's base URL
        urls = [u.replace(DEFAULT_BASE_URL, base) + "index.json" for u in seeds]
        (work / "urls").write_text("\n".join(urls))
        for pair in range(args.pairs):
            store = work / f"ingest-{pair}"
            ingest = [sys.executable, "-m", "hcgraph", "ingest", str(work / "files"),
                      "--store", str(store)]  # fmt: skip
            ingest_env = {**env, "PYTHONPATH": str(ROOT)}
            _step(runs, "ingest", pair, n, ingest, ingest_env)
            if args.floor:
                shutil.rmtree(store)
                floor = [sys.executable, "-c", _FLOOR, str(work / "urls"), str(args.concurrency),
                         *ingest]  # fmt: skip
                _step(runs, "floor", pair, n, floor, ingest_env)
            for name, (tree, overrides) in variants.items():
                store = work / f"{name}-{pair}"
                (work / "argv").write_text("\n".join([*argv, "--store", str(store)]))
                cmd = [sys.executable, "-c", _CRAWL, str(tree), json.dumps(overrides),
                       str(work / "argv")]  # fmt: skip
                _step(runs, name, pair, n, cmd, env)
                shutil.rmtree(store, ignore_errors=True)
    finally:
        nginx.terminate()
        nginx.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)
    report(runs, n, args)


def _step(
    runs: dict[str, list[Run]], name: str, pair: int, n: int, cmd: list[str], env: dict[str, str]
) -> None:
    load = os.getloadavg()[0]
    run = run_measured(cmd, env)
    runs.setdefault(name, []).append(run)
    print(f"pair {pair} {name:12s} {run.seconds:6.1f} s {n / run.seconds:6.0f}/s "
          f"{1000 * run.cpu / n:5.1f} CPU ms/story {run.rss or 0:5.0f} MB  load {load:.1f}",
          flush=True)  # fmt: skip


def report(runs: dict[str, list[Run]], n: int, args: argparse.Namespace) -> None:
    """The medians over the pairs, and each pair's crawl / ingest (wall time); with the
    floor, each pair's CPU / the floor's CPU too, and its median."""
    ingest = runs["ingest"]
    floor = runs.get("floor")
    print(f"\n{n} stories, {args.pairs} pairs, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}\n")  # fmt: skip
    extra = " CPU / floor, per pair (median) |" if floor else ""
    head = "| run | median stories/s | median CPU ms/story | peak RSS (MB) | / ingest, per pair |"
    print(head + extra)
    print("| --- | ---: | ---: | ---: | --- |" + (" --- |" if floor else ""))
    for name, rs in runs.items():
        rate = statistics.median(n / r.seconds for r in rs)
        cpu = statistics.median(1000 * r.cpu / n for r in rs)
        rss = max(r.rss or 0 for r in rs)
        ratios = ", ".join(f"{i.seconds / r.seconds:.0%}" for i, r in zip(ingest, rs, strict=True))
        cells = ""
        if floor:
            per = [r.cpu / f.cpu for f, r in zip(floor, rs, strict=True)]
            cells = f" {', '.join(f'{x:.2f}' for x in per)} ({statistics.median(per):.2f}) |"
        print(f"| {name} | {rate:.0f} | {cpu:.1f} | {rss:.0f} | {ratios} |{cells}")


if __name__ == "__main__":
    main()
