"""Benchmark ``hcgraph trace --format svg`` of a manifest cited by many stories.

Corpus: the real seed story plus ``--stories`` generated stories (seed ``--seed``), ingested
on disk; target: the most-cited manifest. Timed, each as a fresh ``python -m hcgraph trace``
process (what a user runs): the picture (``--format svg``, default limit and ``--all``),
its width, and, as the baseline in the same run, the drawing the first version made (the
``prov`` package's ``prov.dot`` export of the PROV document, rendered by Graphviz) for the
same trace, stopped after ``--cap`` seconds.

Usage::

    python bench/bench_trace_picture.py [--stories 400] [--seed 7] [--cap 180] [--write-results]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import publish  # noqa: E402

SECTION = "## Trace pictures (issue 27)"

_OLD = """
import re, sys, time
from hcgraph import Store
from hcgraph.provenance.prov_export import to_prov_document
from hcgraph.provenance.tracing import trace
from prov.dot import prov_to_dot
store, target, limit = sys.argv[1], sys.argv[2], sys.argv[3]
with Store(store, read_only=True) as st:
    tr = trace(st, target, limit=None if limit == "all" else int(limit))
svg = prov_to_dot(to_prov_document(tr)).create(format="svg").decode()
print(re.search(r'<svg width="([0-9.]+)pt"', svg).group(1))
"""


def _run(args: list[str], cap: float, env: dict[str, str]) -> tuple[float | None, str]:
    """Wall time and stdout of ``args``, or ``None`` after ``cap`` seconds (then the whole
    process group is stopped: pydot's Graphviz child too)."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=env, start_new_session=True)  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=cap)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, ""
    if proc.returncode != 0:
        raise SystemExit(f"{args[:4]} failed with exit code {proc.returncode}")
    return time.perf_counter() - start, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--stories", type=int, default=400)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cap", type=float, default=180.0)
    ap.add_argument("--write-results", action="store_true")
    args = ap.parse_args()

    from hcgraph import Store, ingest_bytes
    from hcsample.corpus import generate_corpus

    seed = json.loads((ROOT / "tests" / "fixtures" / "agentic-rl-production.json").read_text())
    stories = generate_corpus(args.stories, seed=args.seed, include_seed=seed).stories
    citing: Counter[str] = Counter()
    for s in stories:
        cited = {str(c["manifest_id"]) for sec in s.get("sections") or []
                 for p in sec.get("paragraphs") or [] for c in p.get("cites") or []}  # fmt: skip
        citing.update(cited)
    target, n = citing.most_common(1)[0]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        with Store(store) as st:
            ingest_bytes(st, [(json.dumps(s).encode(), f"s{i}") for i, s in enumerate(stories)])
        from hcgraph.provenance.trace_picture import MAX_STORIES, to_svg
        from hcgraph.provenance.tracing import trace

        load = os.getloadavg()[0]
        start = time.perf_counter()
        with Store(store, read_only=True) as st:
            to_svg(trace(st, target, limit=MAX_STORIES))
        in_process = time.perf_counter() - start
        rows = []
        for label, extra in (("default (20 detailed)", []), ("--all", ["--all"])):
            out = Path(tmp) / "t.svg"
            cli = [sys.executable, "-m", "hcgraph", "trace", target, "--format", "svg",
                   "-o", str(out), "--store", str(store), *extra]  # fmt: skip
            new, _ = _run(cli, args.cap, env)
            match = re.search(r'<svg width="([0-9.]+)pt"', out.read_text()) if new else None
            limit = "all" if extra else "20"
            old, width = _run([sys.executable, "-c", _OLD, str(store), target, limit], args.cap,
                              env)  # fmt: skip
            rows.append((label, old, width.strip(), new, match.group(1) if match else "-"))
        load_after = os.getloadavg()[0]

    def secs(v: float | None) -> str:
        return f"> {args.cap:.0f} s (stopped)" if v is None else f"{v:.1f} s"

    lines = [
        SECTION,
        "",
        f"`python bench/bench_trace_picture.py --stories {args.stories} --seed {args.seed}`: "
        f"`hcgraph trace {target} --format svg` of the most-cited manifest (cited by {n} "
        f"stories), each a fresh process, on disk. Load {load:.1f} before, {load_after:.1f} "
        "after (2 cores, shared).",
        "",
        "| trace | before: prov.dot | width before | after: hcgraph's picture | width after |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for label, old, w_old, new, w_new in rows:
        lines.append(f"| {label} | {secs(old)} | {w_old or '-'} pt | {secs(new)} | {w_new} pt |")
    lines += [
        "",
        f"In process (store open, `trace(limit={MAX_STORIES})`, `to_svg`): "
        f"{in_process:.2f} s. The old drawing's time and width grow with the stories "
        "detailed (the CLI default details 20).",
        "",
    ]
    publish(SECTION, "\n".join(lines), args.write_results)


if __name__ == "__main__":
    main()
