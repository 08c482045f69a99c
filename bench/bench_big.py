"""The big row: one large seeded corpus through the CLI, then the same data in Virtuoso.

Steps (each in its own process, so each CPU time and peak RSS is its own):

* **corpus**: ``hcsample.corpus`` stories (seed 42, as ``bench_datapath.py``) written as files.
* **ingest**: ``hcgraph ingest`` of the files into a fresh store: wall and CPU seconds
  (the child's own ``rusage``), peak RSS, the store's size on disk and per story.
* **queries**: every saved query (``queries/*.rq``) with its default parameters through
  ``hcgraph query``, on the store ``hcgraph ingest`` left (not optimised by the bench);
  parameterised queries get a real id from that store.
* **export**: ``hcgraph export --format nquads --split N`` (shards of whole story graphs).
* **virtuoso**: a fresh Virtuoso 7.2 (``virtuoso-t``) bulk-loads the shards with the recipe
  in ``docs/pushing.md`` (``ld_dir`` + ``rdf_loader_run``), then answers the same saved
  queries over its SPARQL endpoint; rows are compared with hcgraph's answers.

Usage::

    python bench/bench_big.py --stories 100000 --work /work/big [--write-results]

``--work`` keeps every step's result in ``WORK/steps.json``; a re-run skips the steps
already done (so a long run that is interrupted resumes where it stopped), ``--redo STEP``
runs one again. The table is printed with the load average before and after each step (the
machine is shared: read the per-unit costs, not seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import write_section  # noqa: E402

SEED = 42


def _env() -> dict[str, str]:
    """The environment for children: this checkout's ``hcgraph`` first."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def run_measured(argv: list[str], **kwargs: Any) -> dict[str, Any]:
    """Run ``argv`` to the end: wall seconds, its own CPU seconds and peak RSS (``wait4``)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=_env(), **kwargs)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss": usage.ru_maxrss / 1024,
        "rc": proc.returncode,
    }


def disk_bytes(path: Path) -> int:
    """Bytes a directory takes on disk (allocated blocks, as ``du``)."""
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file())


def step_corpus(n: int, work: Path) -> dict[str, Any]:
    code = (
        "import sys; sys.path[:0] = [sys.argv[1]];"
        "import bench_datapath as b; b._write_corpus(int(sys.argv[2]), b.Path(sys.argv[3]))"
    )
    out = run_measured([sys.executable, "-c", code, str(ROOT / "bench"), str(n),
                        str(work / "stories")])  # fmt: skip
    if out["rc"] != 0:
        raise SystemExit("corpus failed")
    out["mb"] = disk_bytes(work / "stories") / 2**20
    return out


def step_ingest(n: int, work: Path) -> dict[str, Any]:
    store = work / "store"
    shutil.rmtree(store, ignore_errors=True)  # a fresh store, also on --redo ingest
    log = work / "ingest.log"
    with log.open("wb") as fh:
        out = run_measured(
            [sys.executable, "-m", "hcgraph", "ingest", str(work / "stories"),
             "--store", str(store)],
            stdout=fh, stderr=subprocess.STDOUT,
        )  # fmt: skip
    if out["rc"] != 0:
        raise SystemExit(f"ingest failed (exit {out['rc']}), see {log}")
    out["disk"] = disk_bytes(store)
    out["disk_per_story_kb"] = out["disk"] / n / 1024
    return out


# --- the saved queries on the store ingest left ------------------------------------------
def side_examples(store: Path) -> dict[str, str]:
    """A real value for each parameter, from the store: the most cited manifest and claim,
    and the first story citing that manifest (so ``co-citation`` and ``story-trail`` have
    something to find)."""
    from hcgraph.queries import run_query
    from hcgraph.store import Store

    with Store(store, read_only=True) as st:
        manifest = run_query(st, "source-reuse", limit=1).records()[0]["manifest_id"]
        claim = run_query(st, "claim-reuse", limit=1).records()[0]["claim_id"]
        story = run_query(st, "source-stories", {"manifest_id": manifest}, limit=1).records()
    return {"manifest_id": str(manifest), "claim_id": str(claim), "story": str(story[0]["story"])}


def _cases(examples: dict[str, str]) -> list[Any]:
    """One case per saved query: required parameters bound to ``examples``, optional ones to
    their declared defaults (``k=2``), which ``hcgraph query`` binds when they are not given;
    the text binds both too, so another engine answers the same question."""
    from hcgraph.queries import saved_queries
    from tests.support import engines

    seen: dict[str, Any] = {}
    for case in engines.cases(saved_queries(), {**examples, "k": "2"}):
        seen[case.name] = case  # the last form: every parameter bound
    return list(seen.values())


def side_queries(store: Path, work: Path) -> dict[str, Any]:
    """Every case once, in a fresh process on the store opened read-only (as ``hcgraph
    query`` opens it): wall and CPU seconds (the engine's threads included), rows; the rows
    themselves go to ``work/rows/NAME.json`` for the comparison with Virtuoso."""
    from hcgraph.queries import run_query, saved_queries
    from hcgraph.store import Store
    from tests.support import engines

    examples = json.loads((work / "examples.json").read_text())
    library = saved_queries()
    (work / "rows").mkdir(exist_ok=True)
    out: dict[str, Any] = {}
    with Store(store, read_only=True) as st:
        for case in _cases(examples):
            t0, c0 = time.perf_counter(), time.process_time()
            result = run_query(st, library[case.name], case.params)
            rows = engines.normalise(tuple(engines.term_text(t) for t in r) for r in result.terms)
            out[case.name] = {"wall": time.perf_counter() - t0,
                              "cpu": time.process_time() - c0, "rows": len(rows)}  # fmt: skip
            (work / "rows" / f"{case.name}.json").write_text(json.dumps(sorted(rows)))
    return out


def _child(func: str, *args: str) -> dict[str, Any]:
    """Run ``func(*args)`` of this module in a fresh interpreter; its result as JSON."""
    code = (
        f"import json, sys; sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / 'bench')!r}];"
        "import bench_big as b;"
        f"print(json.dumps(b.{func}(*map(b.Path, sys.argv[1:]))))"
    )
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=_env(), check=False)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{func} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def step_queries(n: int, work: Path) -> dict[str, Any]:
    examples = _child("side_examples", str(work / "store"))
    (work / "examples.json").write_text(json.dumps(examples))
    return {"examples": examples, "each": _child("side_queries", str(work / "store"), str(work))}


# --- sharded export ---------------------------------------------------------------------
SPLIT = 1_000_000


def step_export(n: int, work: Path) -> dict[str, Any]:
    dump = work / "virtuoso" / "dump"  # under the server's directory: in its DirsAllowed
    dump.parent.mkdir(exist_ok=True)
    out = run_measured([sys.executable, "-m", "hcgraph", "export", "--format", "nquads",
                        "--gzip", "--split", str(SPLIT), "--out", str(dump),
                        "--store", str(work / "store")])  # fmt: skip
    if out["rc"] != 0:
        raise SystemExit(f"export failed (exit {out['rc']})")
    out["shards"] = len(list(dump.glob("graph-*.nq.gz")))
    out["mb"] = disk_bytes(dump) / 2**20
    return out


# --- Virtuoso -------------------------------------------------------------------------------
# A bench database, not the tests' toy one: buffers for 4 GB of RAM (the packaged ini's own
# suggestion), no row cap on answers (the packaged 10,000 would cut the long ones short) and
# no time or cost limits on a query.
VIRTUOSO_SETTINGS = {
    ("parameters", "numberofbuffers"): "340000",
    ("parameters", "maxdirtybuffers"): "250000",
    ("parameters", "maxquerymem"): "2G",
    ("sparql", "resultsetmaxrows"): "100000000",
    ("sparql", "maxquerycostestimationtime"): "0",
    ("sparql", "maxqueryexecutiontime"): "0",
}


def _override(ini: str, settings: dict[tuple[str, str], str]) -> str:
    out, section = [], ""
    for line in ini.splitlines():
        head = re.match(r"\s*\[(\w+)\]", line)
        if head:
            section = head.group(1).lower()
        match = re.match(r"\s*(\w+)\s*=", line)
        if match and (section, match.group(1).lower()) in settings:
            line = f"{match.group(1)} = {settings[(section, match.group(1).lower())]}"
        out.append(line)
    return "\n".join(out) + "\n"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _proc_hwm(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _isql(server: Any, statement: str) -> subprocess.Popen[bytes]:
    from tests import virtuoso

    assert virtuoso.ISQL is not None
    return subprocess.Popen([virtuoso.ISQL, f"127.0.0.1:{server.sql_port}", "dba", "dba",
                             f"exec={statement}"], stdout=subprocess.DEVNULL)  # fmt: skip


def _triples(server: Any) -> int:
    return int(server.select("SELECT (COUNT(*) AS ?n) { GRAPH ?g { ?s ?p ?o } }")[0]["n"]["value"])


def step_virtuoso(n: int, work: Path) -> dict[str, Any]:
    """Bulk-load the shards with the recipe of docs/pushing.md (two loaders in parallel, one
    a core), then every case over HTTP, rows compared with hcgraph's."""
    import httpx

    from tests import virtuoso
    from tests.support import engines

    template = virtuoso._ini
    virtuoso._ini = lambda *a: _override(template(*a), VIRTUOSO_SETTINGS)
    home = work / "virtuoso"
    for stale in ("db", "virtuoso.ini", "stdout.log"):
        path = home / stale
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    server = virtuoso.VirtuosoServer(home, _free_port(), _free_port()).start(timeout=300)
    try:
        assert server.process is not None
        pid = server.process.pid
        before = _triples(server)
        dump = home / "dump"
        t0, c0 = time.perf_counter(), _proc_cpu(pid)
        server.sql(
            f"ld_dir('{dump}', 'graph-*.nq.gz', 'https://example.org/unused-default-graph');"
        )
        loaders = [_isql(server, "rdf_loader_run();") for _ in range(2)]
        for loader in loaders:
            loader.wait()
        _isql(server, "checkpoint;").wait()
        out: dict[str, Any] = {"bulk": time.perf_counter() - t0, "bulk_cpu": _proc_cpu(pid) - c0}
        out["errors"] = server.sql(
            "SELECT ll_file, ll_error FROM DB.DBA.load_list WHERE ll_error IS NOT NULL;"
        ).count(".nq.gz")
        out["triples"] = _triples(server) - before
        out["db_mb"] = disk_bytes(home / "db") / 2**20
        examples = json.loads((work / "examples.json").read_text())
        each: dict[str, Any] = {}
        with httpx.Client(timeout=3600, trust_env=False) as client:
            for case in _cases(examples):
                t0 = time.perf_counter()
                reply = client.post(
                    f"{server.url}/sparql",
                    data={"query": case.text},
                    headers={"Accept": "application/sparql-results+json"},
                )
                wall = time.perf_counter() - t0
                if reply.status_code != 200:
                    each[case.name] = {"wall": wall, "error": reply.text[:300]}
                    continue
                rows = engines.json_rows(reply.json())
                local = {tuple(r) for r in json.loads((work / "rows" / f"{case.name}.json")
                                                      .read_text())}  # fmt: skip
                each[case.name] = {"wall": wall, "rows": len(rows), "same": rows == local,
                                   "only_here": len(rows - local), "only_local": len(local - rows),
                                   "e.g.": sorted(rows ^ local)[:2]}  # fmt: skip
        out["each"] = each
        out["rss"] = _proc_hwm(pid)
        out["cpu_total"] = _proc_cpu(pid)
        return out
    finally:
        server.stop()


STEPS: dict[str, Any] = {"corpus": step_corpus, "ingest": step_ingest, "queries": step_queries,
                         "export": step_export, "virtuoso": step_virtuoso}  # fmt: skip


def _loadavg(step: dict[str, Any]) -> str:
    return "{:.1f}-{:.1f}".format(*step["load"])


def render(done: dict[str, Any]) -> str:
    """One table: the data path's steps, then every saved query on both engines."""
    n = done["stories"]
    lines = ["| step | hcgraph (embedded Oxigraph) | Virtuoso 7.2 | same rows | load avg |",
             "|---|---:|---:|---|---|"]  # fmt: skip
    if "corpus" in done:
        c = done["corpus"]
        lines.append(f"| corpus | {n:,} stories, {c['mb']:,.0f} MB of JSON files | | | "
                     f"{_loadavg(c)} |")  # fmt: skip
    if "ingest" in done:
        i = done["ingest"]
        v = done.get("virtuoso", {})
        bulk = (
            f"bulk load of the shards {v['bulk']:,.0f} s ({v['bulk_cpu']:,.0f} s CPU), "
            f"{v['triples']:,} quads, {v['errors']} files failed"
            if v
            else "-"
        )
        lines.append(
            f"| `hcgraph ingest` / Virtuoso bulk load | {i['wall']:,.0f} s ({i['cpu']:,.0f} s "
            f"CPU), {n / i['wall']:.0f} stories/s, {i['cpu'] / n * 1000:.1f} CPU ms a story | "
            f"{bulk} | | {_loadavg(i)}{' / ' + _loadavg(v) if v else ''} |"
        )
        lines.append(
            f"| peak RSS | {i['rss']:,.0f} MB | {v['rss']:,.0f} MB (buffers: 2.7 GB) | | |"
            if v
            else f"| peak RSS | {i['rss']:,.0f} MB | - | | |"
        )
        lines.append(
            f"| on disk | {i['disk'] / 2**30:.2f} GB, {i['disk_per_story_kb']:.0f} KB a story | "
            + (f"{v['db_mb'] / 1024:.2f} GB, {v['db_mb'] * 1024 / n:.0f} KB a story" if v
               else "-")
            + " | | |"
        )  # fmt: skip
    if "export" in done:
        e = done["export"]
        lines.append(
            f"| `hcgraph export --format nquads --gzip --split {SPLIT}` | {e['wall']:,.0f} s "
            f"({e['cpu']:,.0f} s CPU), {e['shards']} shards, {e['mb']:,.0f} MB, peak RSS "
            f"{e['rss']:,.0f} MB | | | {_loadavg(e)} |"
        )
    here = done.get("queries", {}).get("each", {})
    there = done.get("virtuoso", {}).get("each", {})
    for name, q in here.items():
        t = there.get(name)
        if t is None:
            remote, same = "-", "-"
        elif "error" in t:
            remote, same = f"error after {t['wall']:.1f} s: {t['error'][:80]}", "-"
        else:
            remote = f"{t['wall']:.2f} s, {t['rows']:,} rows"
            same = (
                "yes"
                if t["same"]
                else f"no: {t['only_local']:,} rows only here, {t['only_here']:,} only there"
            )
        lines.append(
            f"| query `{name}` | {q['wall']:.2f} s ({q['cpu']:.2f} s CPU), {q['rows']:,} rows "
            f"| {remote} | {same} | |"
        )
    if here:
        total = sum(q["wall"] for q in here.values())
        remote_total = sum(t["wall"] for t in there.values()) if there else 0.0
        lines.append(
            f"| all {len(here)} queries | {total:.1f} s | "
            + (f"{remote_total:.1f} s" if there else "-")
            + f" | | {_loadavg(done['queries'])}"
            + (f" / {_loadavg(done['virtuoso'])}" if there else "")
            + " |"
        )
    return "\n".join(lines)


def _load(work: Path) -> dict[str, Any]:
    path = work / "steps.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _save(work: Path, done: dict[str, Any]) -> None:
    (work / "steps.json").write_text(json.dumps(done, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stories", type=int, default=100_000)
    parser.add_argument("--work", type=Path, required=True, help="kept between runs")
    parser.add_argument("--only", nargs="*", choices=list(STEPS), help="these steps only")
    parser.add_argument("--redo", nargs="*", default=[], choices=list(STEPS))
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    done = _load(args.work)
    if done.get("stories", args.stories) != args.stories:
        raise SystemExit(f"{args.work} holds a {done['stories']}-story run")
    done["stories"] = args.stories
    for name, step in STEPS.items():
        if args.only and name not in args.only:
            continue
        if name in done and name not in args.redo:
            continue
        print(f"[{time.strftime('%H:%M:%S')}] {name} ...", flush=True)
        before = os.getloadavg()[0]
        result = step(args.stories, args.work)
        result["load"] = [before, os.getloadavg()[0]]
        result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        done[name] = result
        _save(args.work, done)
        print(f"[{time.strftime('%H:%M:%S')}] {name}: {json.dumps(result)[:300]}", flush=True)
    table = render(done)
    print(table)
    if args.write_results:
        heading = f"## The big row: {args.stories:,} stories through the CLI and Virtuoso"
        write_section(
            heading,
            f"{heading} (issue 26)\n\n`python bench/bench_big.py --stories {args.stories} "
            f"--work DIR` on the 2-core box, {done.get('ingest', {}).get('date', '?')}; "
            f"seeded stories (seed {SEED}) written as files, then `hcgraph ingest`, every saved "
            "query on the store it left, the sharded export, and the shards bulk-loaded into "
            "Virtuoso 7.2 with the saved queries again.\n\n" + table + "\n",
        )


if __name__ == "__main__":
    main()
