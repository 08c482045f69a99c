"""What hcgraph's own CSV writer costs against pyoxigraph's (issue 41 item 9).

    python bench/bench_csv.py [--rows 200000] [--runs 5] [--write-results]

``query --format csv`` and ``serve``'s ``text/csv`` answers are written by
``hcgraph/results_csv.py`` (pyoxigraph 0.5's CSV writer drops the ``<<( )>>`` of RDF 1.2
triple terms and leaves an IRI holding a comma unquoted). One in-memory store of ``--rows``
triples (one literal in ten holds a comma and quotes); each writer serialises
``SELECT ?s ?p ?o`` ``--runs`` times and the table shows the median CPU seconds, the CPU
per row and the ratio to pyoxigraph's CSV writer (the baseline, same run). pyoxigraph's
JSON writer (serve's default format) is shown for scale. The outputs are checked equal
(no triple term in this data).
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from _results import publish  # noqa: E402

from hcgraph.results_csv import csv_lines  # noqa: E402

SECTION = "## CSV writer: hcgraph's against pyoxigraph's (issue 41 item 9)"
QUERY = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"


def _store(rows: int) -> ox.Store:
    store = ox.Store()
    p = ox.NamedNode("http://example.org/p")
    store.bulk_extend(
        ox.Quad(
            ox.NamedNode(f"http://example.org/s{i}"),
            p,
            ox.Literal(f'value, number {i} "q"' if i % 10 == 0 else f"value {i}"),
        )
        for i in range(rows)
    )
    return store


def _pyoxigraph(store: ox.Store, fmt: ox.QueryResultsFormat) -> Callable[[], bytes]:
    def run() -> bytes:
        out = io.BytesIO()
        store.query(QUERY).serialize(out, fmt)
        return out.getvalue()

    return run


def _hcgraph(store: ox.Store) -> Callable[[], bytes]:
    def run() -> bytes:
        out = io.BytesIO()
        result = store.query(QUERY)
        for line in csv_lines([v.value for v in result.variables], result):
            out.write(line.encode())
        return out.getvalue()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    store = _store(args.rows)
    writers = [
        ("pyoxigraph CSV (baseline)", _pyoxigraph(store, ox.QueryResultsFormat.CSV)),
        ("hcgraph CSV (`results_csv.csv_lines`)", _hcgraph(store)),
        ("pyoxigraph JSON (serve's default)", _pyoxigraph(store, ox.QueryResultsFormat.JSON)),
    ]
    times: dict[str, list[float]] = {name: [] for name, _ in writers}
    outputs: dict[str, bytes] = {}
    for _ in range(args.runs):  # interleaved, so load changes hit every writer alike
        for name, run in writers:
            start = time.process_time()
            outputs[name] = run()
            times[name].append(time.process_time() - start)
    assert outputs[writers[0][0]] == outputs[writers[1][0]], "the CSV outputs differ"
    base = statistics.median(times[writers[0][0]])
    lines = [
        SECTION,
        "",
        f"{dt.date.today().isoformat()}; `python bench/bench_csv.py --rows {args.rows} "
        f"--runs {args.runs}` (median of {args.runs} interleaved runs, CPU seconds):",
        "",
        "| writer | CPU s | µs per row | / pyoxigraph CSV |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, _ in writers:
        median = statistics.median(times[name])
        lines.append(
            f"| {name} | {median:.3f} | {median / args.rows * 1e6:.2f} | {median / base:.2f}x |"
        )
    publish(SECTION, "\n".join(lines) + "\n", args.write_results)


if __name__ == "__main__":
    main()
