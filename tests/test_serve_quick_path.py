"""The quick paths of ``hcgraph serve``, each against the slow path it stands in for: the
answer heads made once per kind of answer, the query strings and guard verdicts kept for
repeated queries (Host rules and the guard still hold on every request), an ASK's JSON
written without the engine's writer, a batch's answers written together but never held
behind a query not known quick."""

from __future__ import annotations

import io
import os
from urllib.parse import quote

import pyoxigraph as ox
import pytest

from hcgraph.serve.endpoint import Refusal, Request, Routes
from hcgraph.serve.http import answer_head
from hcgraph.serve.worker import WHOLE, Answers, Database, evaluate, frame

ASK = "ASK { ?s ?p ?o }"


def _routes(allow_service: bool = False) -> Routes:
    return Routes("127.0.0.1", 7878, allow_service=allow_service, static={})


def _get(query: str, host: str = "127.0.0.1:7878", accept: str = "") -> Request:
    headers = [("host", host)] + ([("accept", accept)] if accept else [])
    return Request("GET", f"/query?query={quote(query)}", "HTTP/1.1", headers)


@pytest.mark.parametrize("close", [False, True])
@pytest.mark.parametrize(
    ("status", "media", "extra"),
    [
        (200, "application/sparql-results+json", (("Vary", "Accept"),)),
        (400, "text/plain; charset=utf-8", ()),
        (405, "text/plain; charset=utf-8", (("Allow", "GET, HEAD, POST"),)),
    ],
)
def test_whole_head_is_the_head_made_in_full(
    status: int, media: str, extra: tuple[tuple[str, str], ...], close: bool
) -> None:
    routes = _routes()
    for length in (0, 7, 123456):
        quick = routes.whole_head(status, media, length, extra, close)
        full = routes.head(
            status, [("Content-Type", media), ("Content-Length", str(length)), *extra], close
        )
        assert quick == full


def test_repeated_queries_still_meet_the_host_rules_and_the_guard() -> None:
    routes = _routes()
    for _ in range(3):  # the second and third readings come from what was kept
        assert routes.route(_get(ASK, accept="text/csv")) == (ASK, "text/csv")
        with pytest.raises(Refusal) as wrong_host:
            routes.route(_get(ASK, host="evil.example:7878"))
        assert wrong_host.value.status == 403
        absolute = _get(ASK)
        absolute.target = "http://evil.example" + absolute.target
        with pytest.raises(Refusal) as wrong_authority:
            routes.route(absolute)
        assert wrong_authority.value.status == 403
        with pytest.raises(Refusal) as service:
            routes.route(_get("SELECT * { SERVICE <http://x.example/> { ?s ?p ?o } }"))
        assert service.value.status == 400 and "SERVICE" in service.value.message
        with pytest.raises(Refusal) as two:
            routes.route(
                Request("GET", "/query?query=a&query=b", "HTTP/1.1", [("host", "localhost:7878")])
            )
        assert two.value.status == 400
    service_ok = _routes(allow_service=True)
    text = "SELECT * { SERVICE <http://x.example/> { ?s ?p ?o } }"
    assert service_ok.route(_get(text)) == (text, "")


def test_a_long_query_string_is_read_in_full() -> None:
    long = "ASK { ?s ?p ?o } " + "# " + "x" * 5000
    assert _routes().route(_get(long))[0] == long
    with pytest.raises(Refusal):
        _routes().route(_get("SELECT * { SERVICE <http://x.example/> {} } #" + "x" * 5000))


def test_answer_head() -> None:
    assert answer_head(b"200 text/csv; charset=utf-8") == (200, "text/csv; charset=utf-8")
    with pytest.raises(ValueError):
        answer_head(b"nonsense")


@pytest.mark.parametrize("filled", [False, True])
def test_an_ask_answer_is_the_engines_json(tmp_path: os.PathLike[str], filled: bool) -> None:
    path = os.path.join(tmp_path, "db")
    store = ox.Store(path)
    if filled:
        store.add(ox.Quad(ox.NamedNode("http://a/s"), ox.NamedNode("http://a/p"), ox.Literal("o")))
    store.flush()
    del store
    db = Database(path)
    out = io.BytesIO()
    evaluate(db, ASK, "", out)
    engine = db.store.query(ASK, use_default_graph_as_union=True)
    expected = io.BytesIO()
    frame(expected, WHOLE, b"200 application/sparql-results+json\n" + engine.serialize(
        format=ox.QueryResultsFormat.JSON
    ))  # fmt: skip
    assert out.getvalue() == expected.getvalue()


def _readable(fd: int) -> bytes:
    os.set_blocking(fd, False)
    try:
        return os.read(fd, 1 << 16)
    except BlockingIOError:
        return b""


def test_answers_wait_behind_quick_queries_only() -> None:
    read, write = os.pipe()
    try:
        answers = Answers(write)
        answers.QUICK_S = answers.HOLD_S = 60.0  # no clock in the way
        answers.before(b"new")
        answers.write(b"first")
        answers.after(b"new")  # ran quickly: known quick from now on
        answers.before(b"new")
        assert _readable(read) == b""  # held: the next query is known quick
        answers.write(b"second")
        answers.after(b"new")
        answers.before(b"never seen")  # may run long: what is held goes out first
        assert _readable(read) == b"firstsecond"
        answers.write(b"third")
        answers.flush()  # the end of a batch
        assert _readable(read) == b"third"
        answers.QUICK_S = 0.0  # nothing counts as quick: "new" is forgotten
        answers.before(b"new")
        answers.after(b"new")
        answers.write(b"fourth")
        answers.before(b"new")
        assert _readable(read) == b"fourth"
    finally:
        os.close(read)
        os.close(write)


def test_answers_held_too_long_go_out() -> None:
    read, write = os.pipe()
    try:
        answers = Answers(write)
        answers.quick.add(b"q")
        answers.HOLD_S = 0.0
        answers.write(b"held")
        answers.before(b"q")
        assert _readable(read) == b"held"
    finally:
        os.close(read)
        os.close(write)
