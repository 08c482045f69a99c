"""How fast ``hcgraph`` starts: ``hcgraph --help`` against the interpreter's own floor.

    python bench/bench_startup.py [--runs 20] [--write-results]

Each command runs ``--runs`` times as its own process; the table shows the median wall time,
the median CPU time (user + system, from ``getrusage`` of the waited child) and how many
modules the process had imported (``sys.modules`` at exit, counted by a ``-c`` wrapper
where the command is Python code). Baselines in the same run: ``python -c pass`` (the
interpreter alone) and ``import click`` (the CLI library hcgraph's commands are built on).
The target (issue 10): ``hcgraph --help`` under 0.3 s CPU.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from _results import publish  # noqa: E402

SECTION = "## Start-up (issue 10)"
COUNT = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write(f'MODULES {len(sys.modules)}\\n'))"
)
STEPS = [
    ("`python -c pass` (the interpreter's floor)", "pass"),
    ("`import click`", "import click"),
    ("`import hcgraph`", "import hcgraph"),
    (
        "`hcgraph --help`",
        "import sys; sys.argv = ['hcgraph', '--help']\n"
        "from hcgraph.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass",
    ),
    (
        "`hcgraph query --help`",
        "import sys; sys.argv = ['hcgraph', 'query', '--help']\n"
        "from hcgraph.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass",
    ),
]


def run_once(code: str) -> tuple[float, float, int]:
    """One process: wall seconds, CPU seconds, modules imported."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", COUNT + "\n" + code],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    modules = int(done.stderr.rsplit("MODULES ", 1)[1].split()[0])
    return wall, cpu, modules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = []
    for label, code in STEPS:
        runs = [run_once(code) for _ in range(args.runs)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        rows.append((label, wall, cpu, runs[-1][2]))
    floor_cpu = rows[0][2]
    lines = [
        SECTION,
        "",
        f"`python bench/bench_startup.py --runs {args.runs}` on {os.cpu_count()} cores, "
        f"{time.strftime('%Y-%m-%d')}, load average {load:.1f} before and "
        f"{os.getloadavg()[0]:.1f} after; medians of {args.runs} processes each. Target "
        "(issue 10): `hcgraph --help` under 0.3 s CPU.",
        "",
        "| command | wall s | CPU s | CPU over the interpreter's floor | modules imported |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for label, wall, cpu, modules in rows:
        lines.append(f"| {label} | {wall:.3f} | {cpu:.3f} | {cpu - floor_cpu:+.3f} | {modules} |")
    help_cpu = rows[3][2]
    lines += ["", f"`hcgraph --help`: {help_cpu:.3f} s CPU (target < 0.3 s: "
              f"{'met' if help_cpu < 0.3 else 'not met'}).", ""]  # fmt: skip
    publish(SECTION, "\n".join(lines), args.write_results)


if __name__ == "__main__":
    main()
