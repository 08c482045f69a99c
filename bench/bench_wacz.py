"""Benchmark ``hcgraph archive export --wacz``: export time per 1,000 stories against a plain
copy of the archive's pack files (the floor: the least any export must do, read and write
every byte once), measured in the same run.

Builds a raw archive like a crawl and one re-crawl leave it (``hcsample.corpus`` corpus,
seed 5): each story fetched once (200, its body) and again (304, the same body confirmed),
with the headers the crawler keeps. Then, alternately, ``--runs`` times each:

* ``copy packs``: ``shutil.copy`` of every pack file into an empty directory (the floor);
* ``gzip packs``: the packs through gzip (level 9, as ``gzip.open``) into one file: what
  compressing the bytes alone costs, which a ``.warc.gz`` pays per record;
* ``WARC only``: :func:`hcgraph.webarchive.write_warc` to a file (the records, gzipped);
* ``WACZ export``: :func:`hcgraph.webarchive.export_wacz` (the WARC, the page list, then
  py-wacz's CDXJ index, ZIP and datapackage digests).

Wall and CPU seconds (``time.process_time``), medians, per 1,000 stories; output sizes.

Usage::

    python bench/bench_wacz.py [--stories 1000 5000] [--runs 3] [--write-results]
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import publish  # noqa: E402

from hcgraph.archive import Archive, FetchRecord  # noqa: E402
from hcgraph.webarchive import export_wacz, write_warc  # noqa: E402
from hcsample.corpus import generate_corpus  # noqa: E402

SECTION = "## WACZ export of the raw archive (issue 39 item 1)"


def build_archive(directory: Path, stories: int) -> int:
    """A raw archive of ``stories`` fetched twice (200, then 304); returns its bytes."""
    corpus = generate_corpus(stories, seed=5)
    start = dt.datetime(2026, 12, 6, 10, 0, tzinfo=dt.UTC)
    with Archive(directory) as archive:
        for crawl in (0, 1):
            for n, (path, body) in enumerate(sorted(corpus.site_files().items())):
                url = "https://news.example.org" + path
                sha = archive.put_body(body)
                when = start + dt.timedelta(hours=crawl, milliseconds=n)
                headers = {
                    "content-type": "application/json",
                    "etag": f'"{sha[:20]}"',
                    "date": "Sun, 06 Dec 2026 10:00:00 GMT",
                    "server": "nginx",
                }
                archive.add_record(
                    FetchRecord(
                        url=url, final_url=url, fetch_url=url, status=304 if crawl else 200,
                        fetched_at=when.isoformat(), sha256=sha, size=len(body),
                        headers=headers, etag=headers["etag"],
                    )
                )  # fmt: skip
    return sum(p.stat().st_size for p in (directory / "packs").glob("*.pack"))


def _timed(work: Callable[[], Path]) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = work()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    size = sum(p.stat().st_size for p in out.rglob("*")) if out.is_dir() else out.stat().st_size
    return wall, cpu, size


def measure(stories: int, runs: int) -> list[tuple[str, float, float, int]]:
    with tempfile.TemporaryDirectory(prefix="bench-wacz-") as tmp:
        base = Path(tmp)
        store = base / "store"
        build_archive(store / "archive", stories)
        archive = Archive(store / "archive")

        def copy() -> Path:
            out = base / "copy"
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            for pack in sorted((store / "archive" / "packs").glob("*.pack")):
                shutil.copy(pack, out / pack.name)
            return out

        def squeeze() -> Path:
            out = base / "packs.gz"
            with gzip.open(out, "wb") as sink:
                for pack in sorted((store / "archive" / "packs").glob("*.pack")):
                    with pack.open("rb") as source:
                        shutil.copyfileobj(source, sink, 1 << 20)
            return out

        def warc() -> Path:
            out = base / "data.warc.gz"
            with out.open("wb") as handle:
                write_warc(archive, handle)
            return out

        def wacz() -> Path:
            return export_wacz(base / "crawl.wacz", store).path

        jobs = {
            "copy packs (the floor)": copy,
            "gzip packs (compression alone)": squeeze,
            "WARC only": warc,
            "WACZ export": wacz,
        }
        samples: dict[str, list[tuple[float, float, int]]] = {name: [] for name in jobs}
        for _ in range(runs):
            for name, job in jobs.items():
                samples[name].append(_timed(job))
        rows = []
        for name, got in samples.items():
            wall = statistics.median(s[0] for s in got)
            cpu = statistics.median(s[1] for s in got)
            rows.append((name, wall, cpu, got[-1][2]))
        return rows


def render(results: dict[int, list[tuple[str, float, float, int]]], runs: int) -> str:
    lines = [
        SECTION,
        "",
        f"Date 2026-12-06. `python bench/bench_wacz.py --stories {' '.join(map(str, results))}"
        f" --runs {runs}`: a raw archive of N stories fetched twice (200, then 304); medians"
        f" of {runs} runs, alternating.",
        "",
        "| stories | job | wall s | CPU s | wall s / 1k stories | CPU s / 1k stories "
        "| x floor (wall) | x floor (CPU) | output MB |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for stories, rows in results.items():
        floor, floor_cpu = rows[0][1], rows[0][2]
        for name, wall, cpu, size in rows:
            per = 1000 / stories
            lines.append(
                f"| {stories:,} | {name} | {wall:.3f} | {cpu:.3f} | {wall * per:.3f} "
                f"| {cpu * per:.3f} | {wall / floor:.0f}x | {cpu / floor_cpu:.0f}x "
                f"| {size / 1e6:.1f} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stories", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    results = {n: measure(n, args.runs) for n in args.stories}
    publish(SECTION, render(results, args.runs), args.write_results)


if __name__ == "__main__":
    main()
