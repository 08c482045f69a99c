"""CPU seconds of a test run, by test file: ``python -m pytest -p tests.support.cputime``.

The figure that counts on a shared machine is CPU, not wall: this plugin reads
``getrusage`` (this process and every child it has reaped: subprocess CLIs, servers,
Chromium) around each test's setup, call and teardown and prints, at the end, the CPU
seconds spent in each test file with the wall time and the load average. A child is
counted when it is reaped, so a session-wide server's CPU lands on the test that stops it
(the last one); the total is exact for every process reaped by its parent. (A process
orphaned before it ends is reaped by init and never counted: Chromium's zygote does that to
its renderers, so the tests start Chromium with ``--no-zygote``, tests/support/chromium.py.)
``HCGRAPH_CPUTIME_OUT=FILE`` also writes the table as JSON; ``HCGRAPH_CPUTIME_TESTS=N``
also lists the N dearest tests.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections import defaultdict
from collections.abc import Generator
from typing import Any

import pytest

_by_file: dict[str, float] = defaultdict(float)
_tests_by_file: dict[str, int] = defaultdict(int)
_by_test: dict[str, float] = {}
_start: dict[str, float] = {}


def _cpu() -> float:
    """User + system CPU seconds of this process and its reaped children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def pytest_sessionstart(session: pytest.Session) -> None:
    _start["cpu"] = _cpu()
    _start["wall"] = time.monotonic()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: object) -> Generator[None, Any, None]:
    before = _cpu()
    yield
    spent = _cpu() - before
    name = item.nodeid.split("::", 1)[0]
    _by_file[name] += spent
    _by_test[item.nodeid] = spent
    _tests_by_file[name] += 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    total = _cpu() - _start["cpu"]
    wall = time.monotonic() - _start["wall"]
    tested = sum(_by_file.values())
    rows = sorted(_by_file.items(), key=lambda kv: -kv[1])
    write = terminalreporter.write_line
    terminalreporter.section("CPU seconds by test file (tests.support.cputime)")
    for name, cpu in rows[:40]:
        write(f"{cpu:8.1f}  {_tests_by_file[name]:4d} tests  {name}")
    top = int(os.environ.get("HCGRAPH_CPUTIME_TESTS", "0"))
    if top:
        write(f"-- the {top} dearest tests (setup + call + teardown) --")
        for nodeid, cpu in sorted(_by_test.items(), key=lambda kv: -kv[1])[:top]:
            write(f"{cpu:8.2f}  {nodeid}")
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    write(
        f"total {total:.1f} CPU s (tests {tested:.1f}, collection and the rest "
        f"{total - tested:.1f}); wall {wall:.1f} s; load average now {load}"
    )
    out = os.environ.get("HCGRAPH_CPUTIME_OUT")
    if out:
        table = {"total_cpu": total, "wall": wall, "files": dict(rows), "tests": _by_test}
        with open(out, "w", encoding="utf-8") as fh:
            json.dump(table, fh, indent=1)
