"""What ``hcgraph push`` prints when a server misbehaves: the report survives a failed
``--verify`` query, and nothing the server writes reaches the terminal as a control code.

Run with the real CLI (a subprocess, real exit codes) against a real Oxigraph server or a
tiny loopback server answering the hostile responses.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hcgraph import Store, ingest_bytes
from hcgraph.push import STATE_FILE
from tests.conftest import OxigraphServer
from tests.support.refuser import refusing_server

#: A 400 body with an SGR colour, an OSC title change (BEL-terminated), a C1 CSI and an
#: RTL override: each must be shown escaped, never obeyed.
HOSTILE_BODY = "\x1b[31mbad\x1b]0;pwned\x07 graph \x9b2J \u202eevil\n".encode()


@pytest.fixture
def seed_store(store: Store, seed_bytes: bytes) -> Path:
    """An on-disk store holding the seed story (5 graphs), closed for the CLI."""
    ingest_bytes(store, [(seed_bytes, "seed.json")])
    store.close()
    return store.directory


@pytest.fixture
def refuses_400() -> Iterator[str]:
    with refusing_server(400, b"no thanks\n") as url:
        yield url


@pytest.fixture
def hostile_400() -> Iterator[str]:
    with refusing_server(400, HOSTILE_BODY) as url:
        yield url


def test_verify_query_failing_keeps_the_push_report(
    oxigraph: OxigraphServer, seed_store: Path, run_cli: Any
) -> None:
    """Graphs pushed, then the count query 404s: summary first, then one error (exit 1)."""
    result = run_cli(
        "push", "--store", seed_store, "--endpoint", oxigraph.url,
        "--query-path", "/nope", "--verify", "--all",
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "pushed 5 graphs (692 triples)" in result.stdout
    assert f"error: verify: HTTP 404 from {oxigraph.url}/nope" in result.stderr
    assert "Traceback" not in result.stderr
    state = json.loads((seed_store / STATE_FILE).read_text())
    assert [len(e["graphs"]) for e in state["endpoints"].values()] == [5]
    assert len(oxigraph.graph_counts()) == 5


def test_verify_query_failing_after_refused_graphs_exits_3(
    refuses_400: str, seed_store: Path, run_cli: Any
) -> None:
    """Every graph refused and the count query too: the failures, the summary, then the
    verify error on its own line; exit 3, as without --verify."""
    args = ("push", "--store", seed_store, "--endpoint", refuses_400, "--all")
    plain = run_cli(*args)
    verified = run_cli(*args, "--verify")
    assert plain.returncode == verified.returncode == 3, verified.stderr
    assert verified.stderr.count("failed: ") == plain.stderr.count("failed: ") == 5
    assert "HTTP 400 from" in verified.stderr and "no thanks" in verified.stderr
    assert "pushed 0 graphs" in verified.stdout and "5 failed" in verified.stdout
    last = verified.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: verify: HTTP 400 from {refuses_400}/query")


def test_push_error_body_control_characters_are_escaped(
    hostile_400: str, seed_store: Path, run_cli: Any
) -> None:
    """The server's error body is shown, its escape sequences as text, not obeyed."""
    result = run_cli("push", "--store", seed_store, "--endpoint", hostile_400, "--all")
    assert result.returncode == 3, result.stderr
    out = result.stdout + result.stderr
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in out
    assert "failed: " in result.stderr
    assert "\\x1b[31mbad\\x1b]0;pwned\\x07 graph \\x9b2J \\u202eevil" in result.stderr
