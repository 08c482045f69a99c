"""Unit tests of the push library: endpoints, credentials, update text, state, retries.

The HTTP behaviour (retries, refusals, aborts, batch splitting) runs against
``httpx.MockTransport`` servers here; tests/test_push.py does the same against a real
Oxigraph server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest

from hcgraph import PushError, Store, ingest_bytes
from hcgraph.push import (
    PRESETS,
    PushOptions,
    PushState,
    credentials_from_env,
    local_graphs,
    push_graphs,
    resolve_endpoint,
)
from hcgraph.push.protocols import update_body

ENDPOINT = resolve_endpoint("http://127.0.0.1:9")  # never dialled: the transport is mocked


#: Graphs in ``mem_store``: five story graphs and the four shared graphs.
ALL = 5 + 4


def _variant(seed_bytes: bytes, n: int, headline: str | None = None) -> tuple[bytes, str]:
    story = json.loads(seed_bytes)
    story["url"] = f"https://hangingcontext.com/stories/2026-10-2{n}/variant-{n}/"
    story["slug"] = f"variant-{n}"
    if headline is not None:
        story["headline"] = headline
    return json.dumps(story, ensure_ascii=False).encode(), f"variant-{n}.json"


@pytest.fixture
def mem_store(seed_bytes: bytes) -> Iterator[Store]:
    """An in-memory store of five small story graphs."""
    with Store(None) as store:
        report = ingest_bytes(store, [_variant(seed_bytes, n) for n in range(5)])
        assert not report.failures
        yield store


def run(
    store: Store,
    handler: Callable[[httpx.Request], httpx.Response],
    *,
    credentials: object = None,
    **options: object,
) -> object:
    opts = PushOptions(backoff=0.0, **options)  # type: ignore[arg-type]
    return push_graphs(
        store,
        ENDPOINT,
        opts,
        credentials=credentials,  # type: ignore[arg-type]
        state=PushState(None),
        transport=httpx.MockTransport(handler),
    )


# --- endpoints -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("preset", "url", "gsp", "query", "update"),
    [
        ("oxigraph", "http://h:7878/", "http://h:7878/store", "http://h:7878/query",
         "http://h:7878/update"),
        ("fuseki", "http://h:3030/ds", "http://h:3030/ds/data", "http://h:3030/ds/sparql",
         "http://h:3030/ds/update"),
        ("graphdb", "http://h:7200/repositories/hc", "http://h:7200/repositories/hc/rdf-graphs/service",
         "http://h:7200/repositories/hc", "http://h:7200/repositories/hc/statements"),
        ("virtuoso", "http://h:8890", "http://h:8890/sparql-graph-crud", "http://h:8890/sparql",
         "http://h:8890/sparql"),
        ("neptune", "https://db:8182", "https://db:8182/sparql/gsp/", "https://db:8182/sparql",
         "https://db:8182/sparql"),
    ],
)  # fmt: skip
def test_presets(preset: str, url: str, gsp: str, query: str, update: str) -> None:
    ep = resolve_endpoint(url, preset)
    assert (ep.gsp_url, ep.query_url, ep.update_url) == (gsp, query, update)
    assert preset in PRESETS


def test_virtuoso_with_credentials_uses_its_authenticated_services() -> None:
    """Virtuoso's anonymous services answer credentials with 403; its *-auth ones take them."""
    ep = resolve_endpoint("http://v:8890", "virtuoso", authenticated=True)
    assert (ep.gsp_url, ep.query_url, ep.update_url) == (
        "http://v:8890/sparql-graph-crud-auth", "http://v:8890/sparql-auth",
        "http://v:8890/sparql-auth",
    )  # fmt: skip
    anonymous = resolve_endpoint("http://v:8890", "virtuoso")
    assert anonymous.gsp_url == "http://v:8890/sparql-graph-crud"
    chosen = resolve_endpoint("http://v:8890", "virtuoso", authenticated=True, gsp_path="x")
    assert chosen.gsp_url == "http://v:8890/x"  # an explicit path wins
    same = resolve_endpoint("http://o:7878", "oxigraph", authenticated=True)
    assert same == resolve_endpoint("http://o:7878", "oxigraph")


def test_path_overrides() -> None:
    ep = resolve_endpoint(
        "http://H:1/base", gsp_path="/gsp", query_path="https://q.example/sparql", update_path=""
    )
    assert ep.url == "http://h:1/base"
    assert ep.gsp_url == "http://h:1/base/gsp"
    assert ep.query_url == "https://q.example/sparql"
    assert ep.update_url == "http://h:1/base"
    assert resolve_endpoint("http://h:1", "virtuoso").content_type == "text/turtle"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://h/x", "must be an http:// or https:// URL"),
        ("http:///x", "must be an http:// or https:// URL"),
        ("http://h/x?y=1", "must not have a query string"),
    ],
)
def test_bad_endpoints(url: str, message: str) -> None:
    with pytest.raises(PushError, match=message):
        resolve_endpoint(url)


def test_credentials_in_url_refused_without_echo() -> None:
    with pytest.raises(PushError) as err:
        resolve_endpoint("https://bob:hunter22@db.example/sparql")
    assert "--auth-env" in str(err.value)
    assert "hunter22" not in str(err.value) and "bob" not in str(err.value)


def test_unknown_preset() -> None:
    with pytest.raises(PushError, match="unknown endpoint preset 'stardog'; choose one of"):
        resolve_endpoint("http://h", "stardog")


# --- credentials ---------------------------------------------------------------------------


def _auth_header(creds: object) -> str:
    request = httpx.Request("GET", "http://h/")
    flow = creds.auth.sync_auth_flow(request)  # type: ignore[attr-defined]
    return str(next(flow).headers["Authorization"])


def _challenger(scheme: str, seen: list[str]) -> Callable[[httpx.Request], httpx.Response]:
    """A server that takes only ``scheme`` (``Basic`` or ``Digest``) for alice:pa:ss."""
    challenge = {"Basic": 'Basic realm="r"', "Digest": 'Digest realm="r", nonce="n", qop="auth"'}

    def handler(request: httpx.Request) -> httpx.Response:
        header = request.headers.get("Authorization", "")
        seen.append(header.split(" ")[0])
        ok = header == "Basic YWxpY2U6cGE6c3M=" if scheme == "Basic" else (
            header.startswith("Digest ") and 'username="alice"' in header)  # fmt: skip
        if ok:
            return httpx.Response(201)
        return httpx.Response(401, headers={"WWW-Authenticate": challenge[scheme]})

    return handler


@pytest.mark.parametrize("scheme", ["Basic", "Digest"])
def test_user_password_answers_the_challenge_the_server_sends(scheme: str) -> None:
    """``user:password`` is curl's ``--anyauth``: no credentials until the server's 401 says
    which scheme it takes; then that one, at once, on every later request."""
    creds = credentials_from_env("V", {"V": "alice:pa:ss"})
    assert creds.scheme == "password"
    seen: list[str] = []
    with httpx.Client(transport=httpx.MockTransport(_challenger(scheme, seen)),
                      auth=creds.auth) as client:  # fmt: skip
        for _ in range(3):
            assert client.put("http://127.0.0.1:1/g", content=b"x").status_code == 201
    assert seen == ["", scheme, scheme, scheme]


def test_user_password_prefers_digest_and_wrong_ones_are_refused() -> None:
    seen: list[str] = []

    def both(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("Authorization", "").split(" ")[0])
        offers = [("WWW-Authenticate", 'Basic realm="r"'),
                  ("WWW-Authenticate", 'Digest realm="r", nonce="n"')]  # fmt: skip
        return httpx.Response(401, headers=offers)

    creds = credentials_from_env("V", {"V": "alice:wrong"})
    with httpx.Client(transport=httpx.MockTransport(both), auth=creds.auth) as client:
        assert client.put("http://127.0.0.1:1/g", content=b"x").status_code == 401
    assert seen == ["", "Digest"]  # asked once, then the 401 is the answer


def test_password_credentials() -> None:
    creds = credentials_from_env("V", {"V": "alice:pa:ss"})
    assert "pa:ss" not in repr(creds) and "pa:ss" not in str(creds)
    assert "pa:ss" not in repr(creds.auth)
    assert creds.scheme == "password" and creds.user == "alice" and creds.variable == "V"
    assert creds.redact("x pa:ss YWxpY2U6cGE6c3M= y") == "x *** *** y"


@pytest.mark.parametrize("value", ["Bearer tok:en-123", "bearer tok:en-123"])
def test_bearer_credentials(value: str) -> None:
    creds = credentials_from_env("T", {"T": value})
    assert creds.scheme == "bearer"
    assert _auth_header(creds) == "Bearer tok:en-123"
    assert creds.redact("got tok:en-123") == "got ***"


def test_bare_token_is_bearer() -> None:
    creds = credentials_from_env("T", {"T": "abcdef"})
    assert (creds.scheme, _auth_header(creds)) == ("bearer", "Bearer abcdef")


@pytest.mark.parametrize("env", [{}, {"V": ""}, {"V": "  "}, {"V": "Bearer "}])
def test_missing_credentials(env: dict[str, str]) -> None:
    with pytest.raises(PushError, match="--auth-env V"):
        credentials_from_env("V", env)


# --- SPARQL Update text ----------------------------------------------------------------------

HOSTILE = (
    'q " \\" \\\\" \'\'\' """ \\u0022 \\U0001F600 nul\x00 ctl\x01\x7f \n\r\t '
    "} } ; DROP ALL ; INSERT DATA { <urn:a> <urn:b> <urn:c> } ; { \ud7ff \uffff end\\"
)


def test_update_body_round_trips_hostile_text(seed_bytes: bytes) -> None:
    with Store(None) as store:
        ingest_bytes(store, [_variant(seed_bytes, 1, HOSTILE), _variant(seed_bytes, 2)])
        graphs = list(local_graphs(store))
        expected = set(store.ox)
    target = ox.Store()
    target.add(ox.Quad(ox.NamedNode("urn:stale"), ox.NamedNode("urn:p"), ox.Literal("old"),
                       ox.NamedNode(graphs[0].iri)))  # fmt: skip
    target.update(update_body(graphs, "replace").decode())
    assert set(target) == expected  # the stale triple went with DROP, the rest is exact
    assert ox.Literal(HOSTILE) in {q.object for q in target}


def test_update_body_merge_has_no_drop(seed_bytes: bytes) -> None:
    with Store(None) as store:
        ingest_bytes(store, [_variant(seed_bytes, 1)])
        graphs = list(local_graphs(store))
    body = update_body(graphs, "merge")
    assert b"DROP" not in body.split(b"{", 1)[0]
    assert body.startswith(b"INSERT DATA { GRAPH <https://hangingcontext.com/")


def test_graph_bodies_are_sorted_and_hashed(mem_store: Store) -> None:
    graphs = list(local_graphs(mem_store))
    assert [g.iri for g in graphs] == sorted(g.iri for g in graphs)
    for g in graphs:
        lines = g.body.splitlines(keepends=True)
        assert lines == sorted(lines) and len(lines) == g.triples
    # Five story graphs (same triples but for the story IRI) and four shared graphs: all differ.
    assert len({g.sha256 for g in graphs}) == len(mem_store.graph_names()) == 5 + 4
    assert [g.sha256 for g in local_graphs(mem_store)] == [g.sha256 for g in graphs]


# --- state -----------------------------------------------------------------------------------


def test_state_round_trip(tmp_path: Path) -> None:
    state = PushState.for_store(tmp_path)
    state.record("http://h", "urn:g", "ab" * 32)
    state.save("http://h")
    again = PushState.for_store(tmp_path)
    assert again.is_current("http://h", "urn:g", "ab" * 32)
    assert not again.is_current("http://h", "urn:g", "cd" * 32)
    assert not again.is_current("http://other", "urn:g", "ab" * 32)


def test_state_journals_each_acknowledgement_before_any_save(tmp_path: Path) -> None:
    """A push killed before it saves keeps its acknowledgements: each one is on disk in the
    journal as soon as it is recorded; a torn last line is ignored; a save folds them in."""
    state = PushState.for_store(tmp_path)
    for i in range(3):
        state.record("http://h", f"urn:g{i}", f"{i:02d}" * 32)
    journal = tmp_path / "push-state.journal"
    assert len(journal.read_bytes().splitlines()) == 3  # no save, no close: already written
    with journal.open("ab") as handle:
        handle.write(b'{"endpoint": "http://h", "graph": "urn:torn", "sha')  # the kill
    killed = PushState.for_store(tmp_path)  # the next run, the first never saved
    assert all(killed.is_current("http://h", f"urn:g{i}", f"{i:02d}" * 32) for i in range(3))
    assert not killed.is_current("http://h", "urn:torn", "")
    assert not (tmp_path / "push-state.json").exists()
    killed.record("http://h", "urn:g3", "33" * 32)
    killed.save("http://h")
    assert not journal.exists()
    data = json.loads((tmp_path / "push-state.json").read_text())
    assert sorted(data["endpoints"]["http://h"]["graphs"]) == [f"urn:g{i}" for i in range(4)]
    assert PushState.for_store(tmp_path).graphs("http://h") == killed.graphs("http://h")


def test_state_in_memory_writes_no_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    state = PushState.for_store(None)
    state.record("http://h", "urn:g", "ab" * 32)
    state.save("http://h")
    assert list(tmp_path.iterdir()) == []


def test_state_corrupt(tmp_path: Path) -> None:
    (tmp_path / "push-state.json").write_text("{not json")
    with pytest.raises(PushError, match="unreadable push state"):
        PushState.for_store(tmp_path)
    (tmp_path / "push-state.json").write_text('{"format": "other"}')
    with pytest.raises(PushError, match="not an hcgraph push state file"):
        PushState.for_store(tmp_path)


# --- HTTP behaviour (mock transport) ---------------------------------------------------------


def test_retries_5xx_then_succeeds(mem_store: Store) -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.params["graph"])
        return httpx.Response(503 if len(calls) <= 2 else 201)

    report = run(mem_store, handler, concurrency=1)
    assert report.ok and report.pushed == ALL  # type: ignore[attr-defined]
    assert len(calls) == ALL + 2 and calls[0] == calls[1] == calls[2]


def test_gsp_request_shape(mem_store: Store) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(204)

    run(mem_store, handler, mode="merge", concurrency=1)
    first = seen[0]
    assert first.method == "POST"
    assert str(first.url).startswith("http://127.0.0.1:9/store?graph=https%3A%2F%2Fhangingcontext")
    assert first.headers["Content-Type"] == "application/n-triples"
    assert first.read().endswith(b" .\n")


def test_one_refused_graph_is_reported_the_rest_continue(mem_store: Store) -> None:
    bad = mem_store.story_graphs()[2]

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.params["graph"] == bad:
            return httpx.Response(400, text="Parse error at line 7\nmore detail")
        return httpx.Response(201)

    report = run(mem_store, handler)
    assert report.pushed == ALL - 1 and not report.ok  # type: ignore[attr-defined]
    [failure] = report.failures  # type: ignore[attr-defined]
    assert failure.graph == bad
    assert failure.reason == "HTTP 400 from http://127.0.0.1:9/store: Parse error at line 7"


def test_refused_update_batch_is_split_to_find_the_bad_graph(mem_store: Store) -> None:
    bad = mem_store.story_graphs()[3]
    bodies: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = request.read()
        bodies.append(body)
        assert request.headers["Content-Type"].startswith("application/sparql-update")
        return httpx.Response(400 if f"<{bad}>".encode() in body else 204)

    report = run(mem_store, handler, protocol="update", batch=ALL)
    assert report.pushed == ALL - 1  # type: ignore[attr-defined]
    assert [f.graph for f in report.failures] == [bad]  # type: ignore[attr-defined]
    assert len(bodies) == 1 + ALL  # the batch, then each graph alone


def test_refused_credentials_stop_the_push(mem_store: Store) -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(401)

    creds = credentials_from_env("V", {"V": "u:secret-pw"})
    report = run(mem_store, handler, credentials=creds, concurrency=1)
    refused = "http://127.0.0.1:9/store: HTTP 401: the credentials were refused (user u from $V)"
    assert report.aborted == refused  # type: ignore[attr-defined]
    assert report.pushed == 0 and report.not_sent == ALL and calls == 1  # type: ignore[attr-defined]


def test_unreachable_server_aborts_after_retries(mem_store: Store) -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    report = run(mem_store, handler, retries=2, concurrency=1)
    assert report.aborted == (  # type: ignore[attr-defined]
        "cannot reach http://127.0.0.1:9/store: [Errno 111] Connection refused (after 3 attempts)"
    )
    assert calls == 3 and report.not_sent == ALL  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("status", "headers", "message"),
    [
        (404, {}, "HTTP 404 from http://127.0.0.1:9/store (wrong path for this store?"),
        (301, {"Location": "https://elsewhere/store"}, "redirects (HTTP 301 to https://elsewhere"),
    ],
)
def test_systemic_answers_abort(
    mem_store: Store, status: int, headers: dict[str, str], message: str
) -> None:
    report = run(mem_store, lambda r: httpx.Response(status, headers=headers), concurrency=1)
    assert message in report.aborted  # type: ignore[attr-defined,operator]


def test_persistent_5xx_fails_graphs_not_the_run(seed_bytes: bytes) -> None:
    with Store(None) as store:  # one story and four shared graphs: under the abort threshold
        ingest_bytes(store, [_variant(seed_bytes, 0)])
        report = run(store, lambda r: httpx.Response(500, text="boom"), retries=1)
    assert report.aborted is None and report.pushed == 0  # type: ignore[attr-defined]
    assert len(report.failures) == 5  # type: ignore[attr-defined]
    assert report.failures[0].reason.endswith(": boom (after 2 attempts)")  # type: ignore[attr-defined]


def test_server_echoing_the_secret_is_redacted(mem_store: Store) -> None:
    creds = credentials_from_env("V", {"V": "u:echo-me-secret"})

    def handler(request: httpx.Request) -> httpx.Response:
        if "Authorization" not in request.headers:
            return httpx.Response(401, headers={"WWW-Authenticate": 'Basic realm="r"'})
        return httpx.Response(400, text=f"bad header {request.headers['Authorization']}")

    report = run(mem_store, handler, credentials=creds)
    for failure in report.failures:  # type: ignore[attr-defined]
        assert "echo-me-secret" not in failure.reason
        assert "dTplY2hvLW1lLXNlY3JldA==" not in failure.reason
        assert "Basic ***" in failure.reason


def test_incremental_state(mem_store: Store) -> None:
    state = PushState(None)
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.params["graph"])
        return httpx.Response(201)

    transport = httpx.MockTransport(handler)
    first = push_graphs(mem_store, ENDPOINT, state=state, transport=transport)
    second = push_graphs(mem_store, ENDPOINT, state=state, transport=transport)
    forced = push_graphs(
        mem_store, ENDPOINT, PushOptions(force=True), state=state, transport=transport
    )
    assert (first.pushed, second.pushed, second.unchanged, forced.pushed) == (ALL, 0, ALL, ALL)
    assert len(sent) == 2 * ALL
    dry = push_graphs(mem_store, ENDPOINT, PushOptions(dry_run=True, force=True), state=state)
    assert dry.pending == mem_store.graph_names()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"protocol": "ftp"}, "unknown protocol"),
        ({"mode": "upsert"}, "unknown mode"),
        ({"concurrency": 0}, "--concurrency"),
        ({"batch": 0}, "--batch"),
        ({"retries": 11}, "--retries"),
        ({"timeout": 0}, "--timeout"),
        ({"timeout": float("nan")}, "--timeout"),  # nan is not <= 0: it slipped through
        ({"timeout": float("inf")}, "--timeout"),
    ],
)
def test_bad_options(options: dict[str, object], message: str) -> None:
    with pytest.raises(PushError, match=message):
        PushOptions(**options).check()  # type: ignore[arg-type]


def test_server_failing_every_request_stops_the_push(seed_bytes: bytes) -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(502, text="bad gateway")

    with Store(None) as store:
        ingest_bytes(store, [_variant(seed_bytes, n) for n in range(8)])
        report = run(store, handler, retries=1, concurrency=1)
        graphs = len(store.graph_names())
    assert report.aborted == (  # type: ignore[attr-defined]
        "the server keeps failing: HTTP 502 from http://127.0.0.1:9/store: bad gateway "
        "(after 2 attempts)"
    )
    assert len(report.failures) == 5 and report.not_sent == graphs - 5  # type: ignore[attr-defined]
    assert calls == 10


def test_server_errors_fail_a_whole_update_batch_without_splitting(mem_store: Store) -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(500)

    report = run(mem_store, handler, protocol="update", batch=ALL, retries=1)
    assert calls == 2  # one batch, retried once, not split into one per graph
    assert len(report.failures) == ALL  # type: ignore[attr-defined]


def _verify_with(body: bytes) -> dict[str, int]:
    import asyncio

    from hcgraph.push.verify import remote_counts

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["accept"] == "application/sparql-results+json"
        return httpx.Response(200, content=body)

    async def run() -> dict[str, int]:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await remote_counts(client, ENDPOINT)

    return asyncio.run(run())


def test_verify_reads_per_graph_counts_from_sparql_json() -> None:
    xsd_integer = "http://www.w3.org/2001/XMLSchema#integer"
    body = json.dumps(
        {
            "head": {"vars": ["g", "n"]},
            "results": {
                "bindings": [
                    {
                        "g": {"type": "uri", "value": "https://example.org/g1"},
                        "n": {"type": "literal", "value": "12", "datatype": xsd_integer},
                    },
                    {"n": {"type": "literal", "value": "3", "datatype": xsd_integer}},
                ]
            },
        }
    ).encode()
    assert _verify_with(body) == {"https://example.org/g1": 12}  # no graph: not a named graph


@pytest.mark.parametrize(
    "body", [b"<html>busy</html>", b'{"head": {}, "boolean": true}', b'{"head": {"vars": ["x"]}}']
)
def test_verify_refuses_what_is_not_a_count_table(body: bytes) -> None:
    with pytest.raises(PushError, match="did not answer with SPARQL JSON results"):
        _verify_with(body)


# --- the bulk path (hcgraph.push.protocols) ------------------------------------------------------


def test_state_forget_is_journalled_and_survives_a_kill(tmp_path: Path) -> None:
    """A graph forgotten before a non-atomic bulk load is not current after a kill: the
    rerun sends it again."""
    state = PushState.for_store(tmp_path)
    state.record("http://h", "urn:a", "aa" * 32)
    state.record("http://h", "urn:b", "bb" * 32)
    state.save("http://h")
    again = PushState.for_store(tmp_path)
    again.forget("http://h", ["urn:a", "urn:never-pushed"])
    journal = tmp_path / "push-state.journal"
    assert len(journal.read_bytes().splitlines()) == 1  # only what was recorded
    killed = PushState.for_store(tmp_path)  # no save: the push was killed
    assert killed.graphs("http://h") == {"urn:b": "bb" * 32}
    killed.save("http://h")
    assert PushState.for_store(tmp_path).graphs("http://h") == {"urn:b": "bb" * 32}


def _bulk_body(store: Store) -> bytes:
    """The body of the bulk-load request of every graph of ``store``, as it is sent."""
    from hcgraph.push.protocols import request

    async def sent() -> bytes:
        async with httpx.AsyncClient() as client:
            graphs = list(local_graphs(store))
            built = request(
                client, resolve_endpoint("http://o:7878", "oxigraph"), "bulk", graphs, "replace"
            )
            return b"".join([part async for part in built.stream])

    return asyncio.run(sent())


def test_bulk_body_is_trig_of_exactly_the_graphs(mem_store: Store) -> None:
    body = _bulk_body(mem_store)
    sent = set(ox.parse(body, format=ox.RdfFormat.TRIG))
    assert sent == set(mem_store.ox)


def test_bulk_body_keeps_hostile_text_in_its_graph(seed_bytes: bytes) -> None:
    """A literal holding ``}``, `` .`` and newlines (escaped by the serializer) does not
    close its graph's block."""
    with Store(None) as store:
        ingest_bytes(
            store, [_variant(seed_bytes, 1, HOSTILE + " .\n . \n"), _variant(seed_bytes, 2)]
        )
        sent = list(ox.parse(_bulk_body(store), format=ox.RdfFormat.TRIG))
        assert len(sent) == len(store) and set(sent) == set(store.ox)


def _graph_list(iris: list[str]) -> httpx.Response:
    rows = [{"g": {"type": "uri", "value": iri}} for iri in iris]
    body = {"head": {"vars": ["g"]}, "results": {"bindings": rows}}
    return httpx.Response(200, json=body)


class BulkServer:
    """A mock Oxigraph: records requests; ``bulk``/``drop`` are the statuses it answers a
    bulk load and a SPARQL Update with; ``held`` the graphs it says it holds."""

    def __init__(self, bulk: int = 204, drop: int = 204, held: list[str] | None = None):
        self.bulk, self.drop, self.held = bulk, drop, held or []
        self.seen: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/query":
            self.seen.append("list")
            return _graph_list(self.held)
        if path == "/update":
            self.seen.append("drop")
            return httpx.Response(self.drop)
        if request.method == "POST" and "no_transaction" in request.url.query.decode():
            assert request.headers["content-type"] == "application/trig"
            self.seen.append("bulk")
            return httpx.Response(self.bulk, text="Unsupported Media Type" if self.bulk else "")
        self.seen.append(request.method)
        return httpx.Response(204)


def test_first_push_in_bulk_chunks(mem_store: Store) -> None:
    server = BulkServer()
    report = run(mem_store, server, bulk="always", bulk_bytes=1, concurrency=1)
    assert report.ok and report.pushed == report.bulk == ALL  # type: ignore[attr-defined]
    assert server.seen == ["list"] + ["bulk"] * ALL  # one graph per chunk at 1 byte


def test_bulk_drops_the_graphs_the_server_holds_first(mem_store: Store) -> None:
    held = mem_store.graph_names()[:3]
    server = BulkServer(held=[*held, "https://other.example/not-ours"])
    report = run(mem_store, server, bulk="always", concurrency=1)
    assert report.ok and report.bulk == ALL  # type: ignore[attr-defined]
    assert server.seen == ["list", "drop", "bulk"]
    merged = BulkServer(held=held)
    assert run(mem_store, merged, bulk="always", mode="merge").ok  # type: ignore[attr-defined]
    assert merged.seen == ["bulk"]  # merge only adds: nothing to list or drop


def test_bulk_refused_as_unsupported_goes_graph_by_graph(mem_store: Store) -> None:
    server = BulkServer(bulk=415)
    report = run(mem_store, server, bulk="always", bulk_bytes=1, concurrency=1)
    assert report.ok and report.pushed == ALL and report.bulk == 0  # type: ignore[attr-defined]
    assert server.seen.count("bulk") == 1  # then bulk is off for the rest of the push
    assert server.seen.count("PUT") == ALL


def test_a_refused_drop_sends_those_graphs_by_put(mem_store: Store) -> None:
    held = mem_store.graph_names()[:2]
    server = BulkServer(drop=400, held=held)
    report = run(mem_store, server, bulk="always", concurrency=1)
    assert report.ok and report.bulk == ALL - 2  # type: ignore[attr-defined]
    assert server.seen.count("PUT") == 2


def test_bulk_auto_needs_enough_graphs_and_the_gsp_protocol(mem_store: Store) -> None:
    from hcgraph.push import BULK_MIN_GRAPHS

    small = BulkServer()
    assert run(mem_store, small).ok  # type: ignore[attr-defined]
    assert small.seen == ["PUT"] * ALL
    with Store(None) as big:
        n = BULK_MIN_GRAPHS
        lines = "".join(f"<urn:s> <urn:p> <urn:o{i}> <urn:g{i}> .\n" for i in range(n))
        big.ox.load(lines.encode(), ox.RdfFormat.N_QUADS)
        auto = BulkServer()
        report = run(big, auto)
        assert report.ok and report.bulk == n  # type: ignore[attr-defined]
        assert "PUT" not in auto.seen
        for options in ({"protocol": "update"}, {"bulk": "never"}):
            other = BulkServer()
            assert run(big, other, **options).ok  # type: ignore[attr-defined]
            assert "bulk" not in other.seen
    fuseki = resolve_endpoint("http://h:3030/ds", "fuseki")
    assert fuseki.bulk_url is None and ENDPOINT.bulk_url == ENDPOINT.gsp_url
