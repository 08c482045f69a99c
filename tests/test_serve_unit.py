"""The endpoint's HTTP pieces without a server: content negotiation, request heads."""

from __future__ import annotations

import pytest

from hcgraph.serve import _GRAPH_TYPES, _SOLUTION_TYPES, _parse_head, _Refusal, negotiate


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
    assert request.get("accept") == "text/csv" and request.get_all("host") == ["a:1"]


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
