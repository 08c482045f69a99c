"""The endpoint's HTTP pieces without a server: content negotiation, request heads."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from hcgraph import Store, ingest_bytes
from hcgraph.serve import negotiate, worker
from hcgraph.serve.endpoint import GRAPH_TYPES as _GRAPH_TYPES
from hcgraph.serve.endpoint import SOLUTION_TYPES as _SOLUTION_TYPES
from hcgraph.serve.endpoint import Refusal as _Refusal
from hcsample.corpus import iter_stories
from tests.support.serving import parse_head as _parse_head


@pytest.mark.parametrize(
    ("accept", "solutions", "graph"),
    [
        ("", "application/sparql-results+json", "application/n-triples"),
        ("*/*", "application/sparql-results+json", "application/n-triples"),
        ("text/csv", "text/csv", None),
        ("text/turtle", None, "text/turtle"),
        (
            "text/*;q=0.5, application/sparql-results+xml",
            "application/sparql-results+xml",
            "text/turtle",
        ),
        (
            "application/sparql-results+json;q=0.1, text/tab-separated-values",
            "text/tab-separated-values",
            None,
        ),
        ("text/csv;q=0, */*;q=0.1", "application/sparql-results+json", "application/n-triples"),
        ("foo/bar", None, None),
    ],
)
def test_negotiate(accept: str, solutions: str | None, graph: str | None) -> None:
    got = negotiate(accept, _SOLUTION_TYPES)
    assert (got[0] if got else None) == solutions
    got = negotiate(accept, _GRAPH_TYPES)
    assert (got[0] if got else None) == graph


def test_parse_head() -> None:
    request = _parse_head(b"GET /query?x HTTP/1.1\r\nHost: a:1\r\nAccept:  text/csv \r\n\r\n")
    assert (request.method, request.target, request.version) == ("GET", "/query?x", "HTTP/1.1")
    assert request.get("accept") == "text/csv"
    assert request.headers == [("host", "a:1"), ("accept", "text/csv")]


@pytest.mark.parametrize(
    ("head", "status"),
    [
        (b"GET /query\r\n\r\n", 400),
        (b"GET /query HTTP/2.0\r\n\r\n", 505),
        (b"GET /query HTTP/1.1\r\nHost : a\r\n\r\n", 400),  # space before the colon
        (b"GET /query HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400),  # obs-fold
        (b"GET /query HTTP/1.1\r\nno colon\r\n\r\n", 400),
    ],
)
def test_malformed_heads_are_refused(head: bytes, status: int) -> None:
    with pytest.raises(_Refusal) as refusal:
        _parse_head(head)
    assert refusal.value.status == status and refusal.value.close


def test_worker_store_check_skips_the_full_scan_when_nothing_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker looks for a finished write before each query; when nothing changed it must
    not list and stat every database file (~50 µs, a third of a cheap query's cost), and a
    write must still be seen (the quick check sees the directory and the appended files)."""

    def ingest(n: int) -> None:
        with Store(tmp_path) as st:
            ingest_bytes(st, ((json.dumps(s).encode(), str(s["url"])) for s in iter_stories(n)))

    ingest(1)
    db = worker.Database(str(tmp_path / "oxigraph"))
    before = len(db.fresh())
    scans = []
    real = os.scandir
    monkeypatch.setattr(worker.os, "scandir", lambda p: scans.append(p) or real(p))
    for _ in range(5):
        db.fresh()
    assert scans == []
    monkeypatch.setattr(worker.os, "scandir", real)
    ingest(3)
    assert len(db.fresh()) > before


class _StoppedBySigterm:
    """An endpoint whose wait gets SIGTERM, as a service manager sends it."""

    stops = 0

    def __init__(self, *_args: object, **_options: object) -> None:
        self.url = self.query_url = "http://127.0.0.1:1"

    def start(self) -> None:
        pass

    def wait(self) -> None:
        signal.raise_signal(signal.SIGTERM)  # the handler runs before the next line
        raise AssertionError("SIGTERM did not stop the server")

    def stop(self) -> None:
        type(self).stops += 1


def test_a_sigterm_after_the_stop_cannot_end_the_process(
    invoke: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SIGTERM stops `serve` (exit 0, "stopped"), and SIGTERMs are ignored from then on,
    not only during the stop: the command's return is the process's end, and a repeat
    landing between "stopped" and that end (`timeout` signals the command, then its group)
    would kill it (143) if the handler from before were back."""
    import hcgraph.cli.serve as command

    monkeypatch.setattr(command, "Endpoint", _StoppedBySigterm)
    late: list[int] = []
    before = signal.signal(signal.SIGTERM, lambda signum, _frame: late.append(signum))
    try:
        result = invoke("serve", "--store", tmp_path)
        after = signal.getsignal(signal.SIGTERM)
        signal.raise_signal(signal.SIGTERM)  # a repeat, after the stop
    finally:
        signal.signal(signal.SIGTERM, before)
    assert result.exit_code == 0 and result.output.splitlines()[-1] == "stopped"
    assert _StoppedBySigterm.stops >= 1
    assert after == signal.SIG_IGN and late == []
