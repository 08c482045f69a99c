"""A story with many versions, for timing ``hcgraph history`` on it (issue: run matching).

``build DIR`` writes a raw archive of ``--versions`` fetches of one story URL, an hour apart,
each a new version of a small story (its headline and paragraph numbered), or with
``--reverts`` going back and forth between two versions (A, B, A, B, ...), and rebuilds the
store's graph from it: every version is in the archive and in the graph's revision chain.
It prints the story's URL. Time the command itself with public tools, e.g.::

    python bench/bench_history.py build /tmp/h1000 --versions 1000
    /usr/bin/time -v python -m hcgraph history URL --store /tmp/h1000 --format json >/dev/null
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("build", help="write the archive and the store")
    make.add_argument("directory", type=Path)
    make.add_argument("--versions", type=int, default=1000)
    make.add_argument("--reverts", action="store_true", help="A, B, A, B, ... (two SHAs)")
    args = parser.parse_args()
    print(build(args.directory, args.versions, args.reverts))


if __name__ == "__main__":
    main()
