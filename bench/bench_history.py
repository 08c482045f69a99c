"""A story with many versions, for timing ``hcgraph history`` on it (issue: run matching).

``build DIR`` writes a raw archive of ``--versions`` fetches of one story URL, an hour apart,
each a new version of a small story (its headline and paragraph numbered), or with
``--reverts`` going back and forth between two versions (A, B, A, B, ...), and rebuilds the
store's graph from it: every version is in the archive and in the graph's revision chain.
It prints the story's URL. Time the command itself with public tools, e.g.::

    python bench/bench_history.py build /tmp/h1000 --versions 1000
    /usr/bin/time -v python -m hcgraph history URL --store /tmp/h1000 --format json >/dev/null

``ingest`` times ingesting one story in N versions, one ingest per version (a real-sized story,
the test fixture, its headline changed each time), in a child process per tree and N; with
``--baseline-tree DIR`` (e.g. ``git archive <commit> | tar -x -C DIR``) the same in that tree,
and a table of both. The sorted N-Quads of both stores must be the same bytes::

    python bench/bench_history.py ingest --versions 100 300 --baseline-tree /tmp/base
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hcgraph.archive import Archive, FetchRecord  # noqa: E402
from hcgraph.rebuilding import rebuild  # noqa: E402

URL = "https://hangingcontext.com/stories/2026-01-01/many-versions/"
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def version(n: int) -> bytes:
    """A small story as version ``n``: its headline and paragraph numbered. (Small: each
    version's graph keeps the text of every earlier one.)"""
    cite = {"manifest_id": "1811111111111111111", "claim_ids": ["1822222222222222222"]}
    doc = {
        "schema": "hangingcontext.desk/1", "type": "story", "id": "1900000000000000001",
        "url": URL, "headline": f"Many versions (version {n})", "slug": "many-versions",
        "manifests": [{"manifest_id": "1811111111111111111", "source_name": "arxiv"}],
        "sections": [{"heading": "h", "paragraphs": [
            {"markdown": f"Revision {n} of the text.", "cites": [cite]}]}],
    }  # fmt: skip
    return json.dumps(doc).encode()


def build(directory: Path, versions: int, reverts: bool) -> str:
    archive = Archive(directory / "archive")
    fetched = URL + "index.json"
    for n in range(versions):
        body = version(n % 2 if reverts else n)
        when = (T0 + dt.timedelta(hours=n)).isoformat()
        sha = archive.put_body(body)
        archive.add_record(FetchRecord(fetched, fetched, fetched, 200, when, sha, len(body)))
    archive.close()
    report = rebuild(directory)
    assert report.exit_code == 0 and report.bodies == versions, report
    return URL


# Run in a child with the tree under test first on sys.path: argv = store dir, N, story file.
_CHILD = """
import datetime as dt, hashlib, io, json, resource, sys, time
from pathlib import Path
import pyoxigraph as ox
from hcgraph.pipeline import Document, Pipeline
from hcgraph.store import Store
directory, n, doc = Path(sys.argv[1]), int(sys.argv[2]), json.loads(Path(sys.argv[3]).read_text())
t0, headline, took = dt.datetime(2026, 1, 1, tzinfo=dt.UTC), doc["headline"], []
start = time.perf_counter()
with Store(directory) as store:
    for i in range(n):
        doc["headline"] = f"{headline} (version {i})"
        body, when = json.dumps(doc).encode(), t0 + dt.timedelta(hours=i)
        t = time.perf_counter()
        with Pipeline(store) as pipeline:
            assert pipeline.process([Document(body, "story.json", when)])[0].ok
        took.append(time.perf_counter() - t)
    wall = time.perf_counter() - start
    dump = io.BytesIO()
    store.ox.dump(dump, format=ox.RdfFormat.N_QUADS)
    lines = sorted(dump.getvalue().splitlines(keepends=True))
use = resource.getrusage(resource.RUSAGE_SELF)
disk = sum(f.stat().st_size for f in directory.rglob("*") if f.is_file())
print(json.dumps({
    "wall": wall, "cpu": use.ru_utime + use.ru_stime, "rss_mb": use.ru_maxrss / 1024,
    "first_ms": 1000 * sum(took[:10]) / 10, "last_ms": 1000 * sum(took[-10:]) / 10,
    "disk_mb": disk / 2**20, "quads": len(lines),
    "nquads_sha": hashlib.sha256(b"".join(lines)).hexdigest()[:12],
}))
"""


def ingest_versions(tree: Path, versions: int) -> dict[str, float | str]:
    """One child process: the story ingested in ``versions`` versions with ``tree``'s code."""
    story = ROOT / "tests" / "fixtures" / "agentic-rl-production.json"
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("SOURCE_DATE_EPOCH", None)
    with tempfile.TemporaryDirectory(prefix="hcgraph-versions-") as work:
        argv = [sys.executable, "-c", _CHILD, str(Path(work) / "store"), str(versions), str(story)]
        done = subprocess.run(argv, env=env, cwd=work, capture_output=True, text=True, check=True)
    result: dict[str, float | str] = json.loads(done.stdout.splitlines()[-1])
    return result


def ingest_table(versions: list[int], trees: dict[str, Path]) -> str:
    """Time each tree at each N; a Markdown table (ratios against the first tree)."""
    rows = [
        "| versions | code | wall s | CPU s | ms an ingest, first 10 | last 10 | peak RSS MB "
        "| store on disk MB | quads | sorted N-Quads sha256 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n in versions:
        runs = {name: ingest_versions(tree, n) for name, tree in trees.items()}
        for name, r in runs.items():
            rows.append(
                f"| {n} | {name} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['first_ms']:.1f} "
                f"| {r['last_ms']:.1f} | {r['rss_mb']:.0f} | {r['disk_mb']:.1f} | {r['quads']} "
                f"| {r['nquads_sha']} |"
            )
        if len(runs) == 2:
            a, b = runs.values()
            same = "same" if a["nquads_sha"] == b["nquads_sha"] else "DIFFERENT"
            ratio = {k: float(b[k]) / float(a[k]) for k in ("wall", "cpu", "last_ms", "disk_mb")}
            rows.append(
                f"| {n} | ratio | {ratio['wall']:.2f}x | {ratio['cpu']:.2f}x | | "
                f"{ratio['last_ms']:.2f}x | | {ratio['disk_mb']:.2f}x | | {same} |"
            )
        print(rows[-1], flush=True)
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("build", help="write the archive and the store")
    make.add_argument("directory", type=Path)
    make.add_argument("--versions", type=int, default=1000)
    make.add_argument("--reverts", action="store_true", help="A, B, A, B, ... (two SHAs)")
    timed = sub.add_parser("ingest", help="time ingesting one story in N versions")
    timed.add_argument("--versions", type=int, nargs="+", default=[100, 300])
    timed.add_argument("--baseline-tree", type=Path, help="another hcgraph checkout")
    args = parser.parse_args()
    if args.command == "ingest":
        trees = {"baseline": args.baseline_tree} if args.baseline_tree else {}
        print(ingest_table(args.versions, {**trees, "this tree": ROOT}))
        return
    print(build(args.directory, args.versions, args.reverts))


if __name__ == "__main__":
    main()
