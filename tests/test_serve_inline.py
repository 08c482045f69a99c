"""Queries the HTTP front answers itself (:mod:`hcgraph.serve.inline`), against the real
server: an inline answer is the worker's byte for byte (every format, HEAD, errors); a new
text goes to the workers; a query known quick that the store's growth makes slow goes to
the workers again (its timeout holds, the new data is seen); the time limit holds for a
slow query among quick ones; the connection cap holds with several fronts; how the CLI
shares ``--workers`` between fronts."""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path
from urllib.parse import quote

import pyoxigraph as ox
import pytest

from hcgraph import Endpoint
from hcgraph.serve import inline, server
from hcgraph.serve.endpoint import GRAPH_TYPES, SOLUTION_TYPES, Query

pytestmark = pytest.mark.slow

EX = "http://example.org/"
ASK = "ASK { ?s ?p ?o }"
SELECT = "SELECT ?s ?o WHERE { ?s ?p ?o } ORDER BY ?s ?o"
CONSTRUCT = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"
CUBE = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"


def _add(store_dir: Path, first: int, count: int) -> None:
    """Add ``count`` triples (numbered from ``first``) to the store's database."""
    db = ox.Store(str(store_dir / "oxigraph"))
    graph = ox.NamedNode(EX + "g")
    db.extend(
        ox.Quad(ox.NamedNode(f"{EX}s{i}"), ox.NamedNode(EX + "p"), ox.Literal(f"é {i}"), graph)
        for i in range(first, first + count)
    )
    db.flush()
    del db


@pytest.fixture()
def store_dir(tmp_path: Path) -> Path:
    from hcgraph.store import Store

    directory = tmp_path / "store"
    Store(directory).close()
    _add(directory, 0, 2)
    return directory


@pytest.fixture()
def trusting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any answer counts as quick: the machine's load cannot decide what a test sees."""
    monkeypatch.setattr(inline, "QUICK_S", 60.0)
    monkeypatch.setattr(inline, "WAITED_S", 60.0)


def _exchange(ep: Endpoint, query: str, accept: str = "", method: str = "GET") -> bytes:
    """One request on a fresh connection; the answer with its Date header blanked."""
    head = f"{method} /query?query={quote(query)} HTTP/1.1\r\nHost: 127.0.0.1:{ep.port}\r\n"
    head += (f"Accept: {accept}\r\n" if accept else "") + "Connection: close\r\n\r\n"
    with socket.create_connection((ep.host, ep.port), timeout=60) as sock:
        sock.sendall(head.encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return re.sub(rb"\r\nDate: [^\r]*", b"\r\nDate: -", answer)


def _inline(ep: Endpoint) -> inline.Inline:
    front = ep._front
    assert front is not None
    return front.inline


CASES = [
    *[(q, media) for q in (ASK, SELECT) for media, _ in SOLUTION_TYPES],
    *[(CONSTRUCT, media) for media, _ in GRAPH_TYPES],
    (ASK, ""), (CONSTRUCT, ""), (ASK, "image/png"), (CONSTRUCT, "text/csv"),
    ("SELECT nonsense", ""), (SELECT, "text/csv;q=0.5, application/sparql-results+xml"),
]  # fmt: skip


@pytest.mark.usefixtures("trusting")
def test_an_inline_answer_is_the_workers_byte_for_byte(store_dir: Path) -> None:
    with Endpoint(store_dir, port=0, workers=1) as ep:
        done = _inline(ep)
        for query, accept in CASES:
            for method in ("GET", "HEAD"):
                before = done.answered
                by_worker = _exchange(ep, query, accept, method)
                assert done.answered == before, (query, accept)  # new: the worker's answer
                assert Query(query, accept) in done.known
                by_front = _exchange(ep, query, accept, method)
                assert done.answered == before + 1, (query, accept)  # known quick: inline
                assert by_front == by_worker, (query, accept, method)
                done.known.clear()
        assert b"406 Not Acceptable" in _exchange(ep, ASK, "image/png")
        assert b"400 Bad Request" in _exchange(ep, "SELECT nonsense")


@pytest.mark.usefixtures("trusting")
def test_new_texts_go_to_the_workers(store_dir: Path) -> None:
    with Endpoint(store_dir, port=0, workers=1) as ep:
        for n in range(5):
            assert b"200 OK" in _exchange(ep, f"{ASK} # {n}")
        assert _inline(ep).answered == 0


def _count(ep: Endpoint) -> bytes:
    return _exchange(ep, CUBE, "text/csv").rpartition(b"\r\n\r\n")[2]


@pytest.mark.usefixtures("trusting")
def test_a_quick_query_made_slow_by_a_write_goes_to_the_workers(store_dir: Path) -> None:
    with Endpoint(store_dir, port=0, workers=1, timeout_s=1) as ep:
        done = _inline(ep)
        assert _count(ep) == b"n\r\n8\r\n"  # 2 triples, cubed: by a worker
        assert _count(ep) == b"n\r\n8\r\n" and done.answered == 1  # inline
        _add(store_dir, 2, 1)
        assert _count(ep) == b"n\r\n27\r\n"  # the store changed: a worker, on the new data
        assert done.answered == 1
        assert _count(ep) == b"n\r\n27\r\n" and done.answered == 2
        _add(store_dir, 3, 2000)  # now 8e9 rows: far past the time limit
        started = time.monotonic()
        answer = _exchange(ep, CUBE, "text/csv")
        assert answer.startswith(b"HTTP/1.1 503") and b"--timeout-s" in answer
        assert time.monotonic() - started < 30
        assert done.answered == 2 and Query(CUBE, "text/csv") not in done.known


@pytest.mark.usefixtures("trusting")
def test_a_slow_query_among_quick_ones_still_times_out(store_dir: Path) -> None:
    _add(store_dir, 2, 2000)
    with Endpoint(store_dir, port=0, workers=1, timeout_s=1) as ep:
        done = _inline(ep)
        for _ in range(20):
            assert b"true" in _exchange(ep, ASK)
        assert done.answered == 19
        for _ in range(2):  # never known quick: the workers, every time
            answer = _exchange(ep, CUBE)
            assert answer.startswith(b"HTTP/1.1 503") and b"--timeout-s" in answer
        assert b"true" in _exchange(ep, ASK)


@pytest.mark.usefixtures("trusting")
def test_the_connection_cap_holds_with_fronts_answering_inline(store_dir: Path) -> None:
    """Three fronts, a cap of 3: keep-alive clients repeating a query (answered inline after
    the first) hold every place; a fourth is refused; a place given back is taken again."""
    with Endpoint(store_dir, port=0, workers=1, fronts=3, max_connections=3) as ep:
        request = f"GET /query?query={quote(ASK)} HTTP/1.1\r\nHost: 127.0.0.1:{ep.port}\r\n\r\n"
        socks = [socket.create_connection((ep.host, ep.port), timeout=30) for _ in range(3)]
        try:
            for _ in range(5):
                for sock in socks:
                    sock.sendall(request.encode())
                    assert sock.recv(65536).startswith(b"HTTP/1.1 200")
            with socket.create_connection((ep.host, ep.port), timeout=30) as extra:
                refused = extra.recv(65536)  # answered at once, before any request
            assert refused.startswith(b"HTTP/1.1 503") and b"too many connections" in refused
            socks.pop().close()
            for _ in range(100):
                try:
                    if _exchange(ep, ASK).startswith(b"HTTP/1.1 200"):
                        break
                except OSError:  # refused (not given back yet): reset after its 503
                    pass
                time.sleep(0.1)
            else:
                raise AssertionError("no place given back")
        finally:
            for sock in socks:
                sock.close()


@pytest.mark.parametrize(
    ("workers", "cpus", "split"),
    [(2, 2, (2, 1)), (4, 2, (2, 2)), (3, 2, (1, 3)), (1, 8, (1, 1)), (6, 4, (3, 2)),
     (None, 2, (2, 1)), (None, 8, (4, 1))],
)  # fmt: skip
def test_the_cli_shares_its_workers_between_fronts(
    monkeypatch: pytest.MonkeyPatch, workers: int | None, cpus: int, split: tuple[int, int]
) -> None:
    monkeypatch.setattr(server.os, "cpu_count", lambda: cpus)
    assert server.split_workers(workers) == split
