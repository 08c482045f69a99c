"""Review of the serve quick paths (the query-string and guard caches of ``Routes``).

A refusal kept for a repeated query string must not carry every earlier request with it:
the same exception object raised again grows its traceback by the frames of each raise,
and those frames hold their requests (headers and all), so a client that repeats a refused
query would grow the server without bound.
"""

from __future__ import annotations

import gc
import tracemalloc
from urllib.parse import quote

import pytest

from hcgraph.serve.endpoint import Refusal, Request, Routes

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
