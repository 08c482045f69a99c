"""A/B of the map pages' build CPU: this tree against a baseline tree, on one generated store.

Builds (once) an on-disk store of ``--stories`` generated stories plus the real seed story,
then alternates processes building the maps from the baseline tree and from this one
(``PYTHONPATH`` set to each tree), ``--pairs`` times: each process times, with
``resource.getrusage``, ``citation_graph`` + ``render_map`` of the reuse (auto and canvas),
story, publisher, sources and time views and the dynamic GEXF export, after one warm-up page,
and prints a digest of every output, which must be equal on both sides.

Usage::

    git archive <commit> hcgraph | tar -x -C /tmp/base   # the baseline tree
    python bench/ab_viz_build.py --baseline-tree /tmp/base [--stories 700] [--pairs 4]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "tests" / "fixtures" / "agentic-rl-production.json"

_WORKER = """
import hashlib, io, json, resource, sys
from hcgraph import Store, mapexport
from hcgraph.viz import citation_graph, render_map
store, seed = sys.argv[1], json.load(open(sys.argv[2]))["url"]
with Store(store) as st:
    q = "SELECT ?p WHERE { ?p a hc:Publisher } ORDER BY ?p LIMIT 1"
    pub = next(iter(st.query(q)))["p"].value
    render_map(citation_graph(st, "story", seed))  # imports and caches warm
    digest = hashlib.sha256()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    for view, focus, renderer in (("reuse", None, "auto"), ("reuse", None, "canvas"),
                                  ("story", seed, "auto"), ("publisher", pub, "auto"),
                                  ("sources", None, "auto"), ("time", None, "auto")):
        digest.update(render_map(citation_graph(st, view, focus), renderer=renderer).encode())
    out = io.BytesIO()
    mapexport.write_dynamic_gexf(st, out)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    digest.update(out.getvalue())
cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
print(json.dumps({"cpu": cpu, "digest": digest.hexdigest()}))
"""


def build_store(path: Path, stories: int) -> None:
    """The generated stories plus the seed story, ingested once into ``path``."""
    if (path / "DONE").exists():
        return
    sys.path.insert(0, str(ROOT))
    from hcgraph import Store, ingest_bytes
    from hcsample.corpus import generate_corpus

    corpus = generate_corpus(stories, seed=41, include_seed=json.loads(SEED.read_text()))
    with Store(path) as st:
        docs = ((json.dumps(s).encode(), str(s["url"])) for s in corpus.stories)
        report = ingest_bytes(st, docs)
        assert not report.failures, report.failures[:3]
    (path / "DONE").write_text("ok\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-tree", type=Path, required=True)
    parser.add_argument("--stories", type=int, default=700)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--store", type=Path, default=None)
    args = parser.parse_args()
    store = args.store or Path(tempfile.gettempdir()) / f"ab-viz-build-{args.stories}"
    build_store(store, args.stories)
    trees = {"baseline": args.baseline_tree.resolve(), "this tree": ROOT}
    cpu: dict[str, list[float]] = {name: [] for name in trees}
    digests: dict[str, set[str]] = {name: set() for name in trees}
    for k in range(args.pairs):
        for name in list(trees)[:: 1 if k % 2 == 0 else -1]:
            env = dict(os.environ, PYTHONPATH=str(trees[name]))
            command = [sys.executable, "-c", _WORKER, str(store), str(SEED)]
            run = subprocess.run(  # not from a checkout: the tree on PYTHONPATH is imported
                command, env=env, capture_output=True, text=True, check=True, cwd=store
            )
            row = json.loads(run.stdout)
            cpu[name].append(row["cpu"])
            digests[name].add(row["digest"])
    base = statistics.median(cpu["baseline"])
    print(f"{'tree':10} {'CPU s (median)':>15} {'ratio':>6}  runs")
    for name, runs in cpu.items():
        med = statistics.median(runs)
        print(f"{name:10} {med:15.2f} {med / base:6.2f}  {' '.join(f'{r:.2f}' for r in runs)}")
    same = len(digests["baseline"] | digests["this tree"]) == 1
    pairs = [a / b for a, b in zip(cpu["this tree"], cpu["baseline"], strict=True)]
    print(f"median per-pair ratio {statistics.median(pairs):.2f}")
    print(f"outputs identical: {same}; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
