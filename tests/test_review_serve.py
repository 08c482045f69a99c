"""Review of the serve quick paths (the query-string and guard caches of ``Routes``).

A refusal kept for a repeated query string must not carry every earlier request with it:
the same exception object raised again grows its traceback by the frames of each raise,
and those frames hold their requests (headers and all), so a client that repeats a refused
query would grow the server without bound.
"""

from __future__ import annotations

import gc
import json
import socket
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from hcgraph import Endpoint, Store, ingest_bytes
from hcgraph.serve.endpoint import Refusal, Request, Routes
from tests.conftest import SEED

SERVICE = "SELECT * { SERVICE <http://x.example/> { ?s ?p ?o } }"
PAD = 64 * 1024  # a header as big as a request head may be (MAX_HEAD)


def _routes() -> Routes:
    return Routes("127.0.0.1", 7878, allow_service=False, static={})


def _get(target: str) -> Request:
    headers = [("host", "127.0.0.1:7878"), ("x-pad", "x" * PAD)]
    return Request("GET", target, "HTTP/1.1", headers)


def _refused(routes: Routes, target: str) -> Refusal:
    try:
        routes.route(_get(target))
    except Refusal as refusal:
        return refusal
    raise AssertionError("not refused")


@pytest.mark.parametrize(
    "target",
    [
        f"/query?query={quote(SERVICE)}",  # the guard's refusal
        "/query?query=a&query=b",  # two queries
        f"/query?query={quote('ASK {}')}&default-graph-uri=urn:x",  # a dataset parameter
    ],
)
def test_a_repeated_refusal_keeps_no_earlier_request(target: str) -> None:
    routes = _routes()
    first = _refused(routes, target)
    depth = len(_frames(first))
    for _ in range(5):
        again = _refused(routes, target)
        assert again.status == first.status and again.message == first.message
        assert len(_frames(again)) == depth  # not the frames of every earlier raise


def test_repeated_refused_queries_do_not_grow_the_server() -> None:
    routes = _routes()
    target = f"/query?query={quote(SERVICE)}"
    _refused(routes, target)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(200):
            _refused(routes, target)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 20 * PAD, f"{grown} bytes kept after 200 refused requests"


def _frames(exc: BaseException) -> list[object]:
    frames, tb = [], exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return frames


# --- the quick paths over a real server: every repeat answered as the first --------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    directory = tmp_path_factory.mktemp("review-served") / "store"
    with Store(directory) as st:
        ingest_bytes(st, [(SEED.read_bytes(), str(SEED))])
    with Endpoint(directory, port=0) as ep:
        yield ep


def _raw(port: int, head: str) -> tuple[int, dict[str, str], bytes]:
    """Send one request as written (``Connection: close``) and read the whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        sock.sendall(head.encode("latin-1"))
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    top, _, body = data.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


def _ask(port: int, query: str, *, accept: str = "", method: str = "GET", target: str = "",
         host: str = "") -> tuple[int, dict[str, str], bytes]:  # fmt: skip
    path = target or f"/query?query={quote(query)}"
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}"]
    lines += [f"Accept: {accept}"] if accept else []
    return _raw(port, "\r\n".join([*lines, "Connection: close", "", ""]))


@pytest.mark.slow
def test_repeated_gets_meet_every_rule_as_the_first(served: Endpoint) -> None:
    port = served.port
    ask = "ASK { ?s ?p ?o }"
    one = 'SELECT ?x WHERE { BIND ("a" AS ?x) }'
    other = 'SELECT ?x WHERE { BIND ("A" AS ?x) }'  # one letter's case apart
    for _ in range(3):  # the second and third readings come from what was kept
        status, headers, body = _ask(port, ask, accept="application/sparql-results+json")
        assert status == 200 and json.loads(body)["boolean"] is True
        assert headers["content-type"] == "application/sparql-results+json"
        status, headers, body = _ask(port, ask, accept="text/csv")
        assert status == 200 and headers["content-type"].startswith("text/csv")
        assert _ask(port, ask, accept="image/png")[0] == 406
        assert _ask(port, one, accept="text/csv")[2].split() == [b"x", b"a"]
        assert _ask(port, other, accept="text/csv")[2].split() == [b"x", b"A"]
        dataset = f"/query?query={quote(ask)}&default-graph-uri=urn%3Ax"
        assert _ask(port, ask, target=dataset)[0] == 400
        named = f"/query?query={quote(ask)}&named-graph-uri=urn%3Ax"
        assert _ask(port, ask, target=named)[0] == 400
        service = "SELECT * { SERVICE <http://x.example/> { ?s ?p ?o } }"
        assert _ask(port, service)[0] == 400
        assert _ask(port, ask, host="evil.example")[0] == 403
        evil = f"http://evil.example/query?query={quote(ask)}"
        assert _ask(port, ask, target=evil)[0] == 403
        good = f"http://127.0.0.1:{port}/query?query={quote(ask)}"
        assert _ask(port, ask, target=good)[0] == 200
        status, headers, _ = _ask(port, ask, method="DELETE")
        assert status == 405 and "GET" in headers["allow"]
        status, headers, body = _ask(port, ask, method="HEAD", accept="text/csv")
        assert status == 200 and body == b"" and headers["content-type"].startswith("text/csv")


def _cross(m: int) -> str:
    """A query whose work is ``m`` x the square of the store's size (a store of 3 quads: a
    few microseconds; the seed story's ~700: seconds)."""
    values = " ".join(str(i) for i in range(m))
    return (
        f"ASK {{ VALUES ?k {{ {values} }} ?s ?p ?o . ?a ?b ?c "
        "FILTER (STRLEN(CONCAT(STR(?o), STR(?c), STR(?k))) < 0) }"
    )


@pytest.mark.slow
def test_an_answer_is_not_held_behind_a_known_quick_query_that_now_runs_long(
    tmp_path: Path,
) -> None:
    """A worker holds a batch's answers behind a query it ran quickly before; once the store
    grew (a new ingest, reopened by the worker), that query runs long, and an answer held
    behind it must not wait for it (docs/queries.md: "never holds one behind a query it does
    not know as quick, nor for more than 2 ms")."""
    directory = tmp_path / "store"
    tiny = "".join(f'<urn:x:s{i}> <urn:x:p> "{i}" .\n' for i in range(3))
    with Store(directory) as st:
        st.replace_graph("urn:x:g", tiny)
    slow_b, slow_s = _cross(3), _cross(2)  # B: seconds on the grown store
    with Store(None) as local:  # how long B will take on the grown store
        ingest_bytes(local, [(SEED.read_bytes(), str(SEED))])
        started = time.perf_counter()
        local.ox.query(slow_b, use_default_graph_as_union=True)
        b_seconds = time.perf_counter() - started
    assert b_seconds > 0.5  # long enough to tell apart from a quick answer
    with Endpoint(directory, port=0, workers=1, timeout_s=None) as ep:
        port = ep.port
        for _ in range(3):  # B runs in microseconds on 3 quads: known quick to the worker
            assert _ask(port, slow_b)[0] == 200
        with Store(directory) as st:
            ingest_bytes(st, [(SEED.read_bytes(), str(SEED))])
        count = "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }"
        for _ in range(100):  # until the worker has reopened the grown store
            if int(_ask(port, count, accept="text/csv")[2].split()[1]) > 3:
                break
            time.sleep(0.1)
        done: dict[str, float] = {}

        def run(name: str, query: str) -> None:
            assert _ask(port, query)[0] == 200
            done[name] = time.perf_counter()

        threads = [threading.Thread(target=run, args=("S", slow_s))]
        threads[0].start()
        time.sleep(0.3)  # S occupies the one worker; A then B wait, to go out in one batch
        for name, query in (("A", "ASK { ?s ?p ?o }"), ("B", slow_b)):
            threads.append(threading.Thread(target=run, args=(name, query)))
            threads[-1].start()
            time.sleep(0.05)
        for thread in threads:
            thread.join(120)
    assert set(done) == {"S", "A", "B"}
    waited = done["A"] - done["S"]
    assert waited < b_seconds / 2, f"A answered {waited:.2f} s after S, B runs {b_seconds:.2f} s"
