"""A/B saved-query texts on one store: an older revision's text against the tree's, alternately.

For rewrites of ``queries/*.rq`` that must keep the answer: each named query is run from the
text at ``--base`` (a git revision, read with ``git show REV:queries/NAME.rq``) and from the
working tree's file, alternately in one process (old, new, old, new, …), ``--runs`` times
each, through :func:`hcgraph.queries.run_query` on the store opened read-only as the CLI
does. Printed per query: the rows of the two texts compared term by term, in order (the
answer must be the same list of rows: every cell, the order of ``GROUP_CONCAT`` items too),
and the median CPU seconds (``time.process_time``; range in brackets) of each, with the
load average when the query's runs started. With ``--floors``, ``source-lag``'s answer is
also taken apart: evaluated but only counted in the engine, its solutions iterated without
reading a term, materialised, and the five stored columns read the cheapest way.

Usage::

    python bench/ab_queries.py --store STORE --base main --runs 5 \\
        declared-vs-derived claim-reuse dangling-citations source-lag --floors
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hcgraph.queries import SavedQuery, _split_order, parse_query_text, run_query  # noqa: E402
from hcgraph.store import Store  # noqa: E402

_PREFIXES = """PREFIX hc: <https://w3id.org/hcgraph/ns#>
PREFIX dcterms: <http://purl.org/dc/terms/>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX schema: <https://schema.org/>
"""
# source-lag's five stored columns, the publisher the manifest's own (the cheapest form:
# the same rows when no two stories give one manifest different publishers)
_STORED_COLUMNS = (
    _PREFIXES
    + """SELECT ?story ?published ?manifest_id ?publisher ?issued WHERE {
  ?story hc:listsManifest ?manifest .
  { SELECT ?story ?published WHERE { ?story schema:datePublished ?published } }
  { SELECT ?manifest ?manifest_id ?issued ?publisher
    WHERE { ?manifest prov:hadPrimarySource ?source ; dcterms:identifier ?manifest_id ;
                      dcterms:publisher ?pub . ?pub schema:name ?publisher .
            ?source dcterms:issued ?issued } } }
ORDER BY ?story ?manifest_id ?publisher
"""
)


def old_text(base: str, name: str) -> SavedQuery:
    """The saved query ``name`` as it reads at git revision ``base``."""
    text = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{base}:queries/{name}.rq"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return parse_query_text(text, f"{name}@{base}")


def rows(store: Store, query: SavedQuery) -> list[tuple[str | None, ...]]:
    """The answer as lexical N-Triples texts, in the order ``run_query`` gives."""
    return [
        tuple(None if t is None else str(t) for t in row) for row in run_query(store, query).terms
    ]


def cpu(call: Callable[[], Any]) -> float:
    """CPU seconds of one call."""
    start = time.process_time()
    call()
    return time.process_time() - start


def summary(samples: list[float]) -> str:
    """Median and range of CPU samples."""
    return f"{statistics.median(samples):.3f} ({min(samples):.3f}-{max(samples):.3f})"


def ab(store: Store, base: str, name: str, runs: int) -> None:
    """Rows compared, then the two texts timed alternately."""
    old = old_text(base, name)
    new = parse_query_text((ROOT / "queries" / f"{name}.rq").read_text(), name)
    before, after = rows(store, old), rows(store, new)  # also the warm-up
    same = "the same rows, in order" if before == after else "DIFFERENT ROWS"
    load = os.getloadavg()[0]
    times: dict[str, list[float]] = {"old": [], "new": []}
    for _ in range(runs):
        times["old"].append(cpu(lambda: run_query(store, old)))
        times["new"].append(cpu(lambda: run_query(store, new)))
    ratio = statistics.median(times["new"]) / statistics.median(times["old"])
    print(
        f"| `{name}` | {len(before):,} | {same} | {summary(times['old'])} |"
        f" {summary(times['new'])} | {ratio:.2f}x | {load:.1f} |",
        flush=True,
    )


def floors(store: Store, runs: int) -> None:
    """source-lag taken apart, each step timed alternately with the others."""
    query = parse_query_text((ROOT / "queries" / "source-lag.rq").read_text(), "source-lag")
    text, _order = _split_order(query.text)
    body = text[text.index("SELECT ?story ?published") :]
    prefixes = text[: text.index("SELECT ?story ?published")]
    counted = f"{prefixes}SELECT (COUNT(*) AS ?n) WHERE {{\n{body}\n}}\n"
    stored = parse_query_text(_STORED_COLUMNS, "source-lag stored columns")

    def iterate() -> None:
        for _solution in store.query(text):
            pass

    def materialise() -> None:
        answer = store.query(text)
        width = len(answer.variables)
        _ = [tuple(solution[i] for i in range(width)) for solution in answer]

    steps: dict[str, Callable[[], Any]] = {
        "evaluated, only counted in the engine": lambda: list(store.query(counted)),
        "its solutions iterated, no term read": iterate,
        "… and materialised (the terms of every row)": materialise,
        "the whole query (`run_query`: also sorted)": lambda: run_query(store, query),
        "floor: the five stored columns, cheapest joins, sorted": lambda: run_query(store, stored),
    }
    for call in steps.values():
        call()  # warm-up
    load = os.getloadavg()[0]
    samples: dict[str, list[float]] = {step: [] for step in steps}
    for _ in range(runs):
        for step, call in steps.items():
            samples[step].append(cpu(call))
    print(f"\n`source-lag` taken apart (load {load:.1f} at the start):\n")
    print("| step | CPU s, median (range) |\n| --- | ---: |")
    for step in steps:
        print(f"| {step} | {summary(samples[step])} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+", help="saved queries to compare")
    parser.add_argument("--store", required=True, type=Path, help="a store (opened read-only)")
    parser.add_argument("--base", default="main", help="git revision of the old texts")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--floors", action="store_true", help="take source-lag apart too")
    args = parser.parse_args()
    print(f"store {args.store}, old texts at {args.base}, {args.runs} runs each, alternating")
    print(f"load average {os.getloadavg()[0]:.1f} at the start\n")
    print("| query | rows | old vs new | old: CPU s | new: CPU s | new/old | load |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: |")
    with Store(args.store, read_only=True) as store:
        for name in args.names:
            ab(store, args.base, name, args.runs)
        if args.floors:
            floors(store, args.runs)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
