"""The library renders its reports for people, the CLI only prints them: ingest, push and
history give their lines (each with the stream it belongs on) as trace and audit do."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console

from hcgraph import PushReport, Store, history, ingest_bytes
from hcgraph.provenance.versions import render_markdown, render_table
from hcgraph.push.pusher import GraphFailure
from hcgraph.push.verify import Mismatch, VerifyReport
from tests.conftest import SEED_URL

EVIL = "\x1b[31m[bold]x\u202e"  # an SGR colour, rich markup and an RTL override
SHOWN = "\\x1b[31m[bold]x\\u202e"


def _plain(lines: list[tuple[str, Any]]) -> list[tuple[str, str]]:
    console = Console(width=200, color_system=None, highlight=False, soft_wrap=True)
    out = []
    for stream, line in lines:
        with console.capture() as captured:
            console.print(line)
        out.append((stream, captured.get()))
    return out


def test_ingest_report_renders_warnings_failures_and_summary(seed_bytes: bytes) -> None:
    seed = json.loads(seed_bytes)
    clash = {**seed, "url": "https://hangingcontext.com/stories/other/"}
    docs = [(seed_bytes, "a.json"), (seed_bytes, "b.json"),
            (json.dumps(clash).encode(), "c.json"), (b"{", f"{EVIL}.json")]  # fmt: skip
    report = ingest_bytes(Store(None), docs)
    (failure,) = report.failures
    assert _plain(failure.render()) == [("err", f"failed: {SHOWN}.json: {failure.reason}\n")]
    assert _plain(report.render(f"{EVIL}/store")) == [
        ("err", f"warning: b.json: same url {SEED_URL} as a.json earlier in this run; the "
                "later file replaced it\n"),
        ("err", f"warning: c.json: id {seed['id']} of https://hangingcontext.com/stories/other/"
                f" is also the id of {SEED_URL}; both are stored (hcgraph check flags them)\n"),
        ("out", f"ingested 3 stories (2 added, 0 replaced, 1 unchanged, 1 repeated url, 1 "
                f"duplicate id), 1 failed -> {SHOWN}/store\n"),
    ]  # fmt: skip


def test_push_report_renders_on_the_right_streams() -> None:
    report = PushReport(endpoint=f"http://127.0.0.1:1/{EVIL}", protocol="gsp", graphs=4,
                        pushed=2, triples=1234, unchanged=1, seconds=2.0,
                        failures=[GraphFailure(f"urn:g:{EVIL}", "HTTP 400")],
                        verify=VerifyReport(checked=2, mismatches=[Mismatch("urn:g:2", 5, 0)]),
                        aborted="server gone", pending=["urn:g:1"])  # fmt: skip
    where = f"http://127.0.0.1:1/{SHOWN}"
    assert _plain(report.render()) == [
        ("err", f"failed: urn:g:{SHOWN}: HTTP 400\n"),
        ("out", f"pushed 2 graphs (1,234 triples) to {where} via gsp in 2.0 s (1 graphs/s, "
                "617 triples/s); 1 unchanged, 1 failed\n"),
        ("err", "verify: urn:g:2: local 5 triples, remote missing\n"),
        ("out", "verified 2 graphs on the server: 1 differ\n"),
        ("err", "error: server gone; rerun to push the rest\n"),
    ]  # fmt: skip
    assert _plain(report.render(dry_run=True)) == [
        ("out", "urn:g:1\n"), ("out", f"would push 1 of 4 graphs to {where} (1 unchanged)\n")
    ]  # fmt: skip


def test_history_renders_a_table_and_markdown(seed_bytes: bytes) -> None:
    store = Store(None)
    ingest_bytes(store, [(seed_bytes, "seed.json")])
    h = history(store, SEED_URL)
    text = "".join(line for _stream, line in _plain([("out", r) for r in render_table(h)]))
    assert f"history of {SEED_URL}" in text and "archive only" not in text
    markdown = render_markdown(h)
    assert markdown.startswith("# History of ") and markdown.endswith("|\n")
    assert "| 1 |" in markdown
