"""No outbound requests from queries: ``SERVICE`` is refused locally and by ``hcgraph serve``
unless opted in, and the endpoint checks the Host header (DNS rebinding)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from hcgraph.errors import QueryError
from hcgraph.ingest import ingest_bytes
from hcgraph.queries import parse_query_text, run_query
from hcgraph.serve import Endpoint
from hcgraph.sparqlguard import uses_service
from hcgraph.store import Store
from tests.conftest import SEED
from tests.support.probe import Probe


@pytest.mark.parametrize(
    "text",
    [
        "SELECT * { SERVICE <http://127.0.0.1:1/x> { ?s ?p ?o } }",
        "select * { service silent <http://x/> { ?s ?p ?o } }",
        "SELECT * { ?a ?b ?c .SERVICE<http://x/>{?s ?p ?o} }",
        "SELECT * { \\u0053ERVICE <http://x/> { ?s ?p ?o } }",
        "SELECT * { \\U00000073ervice <http://x/> { ?s ?p ?o } }",
        "SELECT * { SERVICE ?endpoint { ?s ?p ?o } }",
        'SELECT * { BIND("x" AS ?y) SERVICE <http://x/> { ?s ?p ?o } }',
        "PREFIX ex: <http://e/> SELECT * { ?s ex:a\\# ?o . SERVICE <http://x/> { ?s ?p ?o } }",
        "PREFIX ex: <http://e/> SELECT * { ?s ex:a\\' ?o SERVICE <http://x/> {} FILTER(?o != '') }",
    ],
)
def test_service_is_found(text: str) -> None:
    assert uses_service(text)


@pytest.mark.parametrize(
    "text",
    [
        "SELECT ?service { ?service a <http://x/Service> }",
        "PREFIX service: <http://x/> SELECT * { ?s service:p ?o }",
        "PREFIX ex: <http://x/> SELECT * { ?s ex:service ?o }",
        'SELECT * { ?s ?p "SERVICE <http://x/> {}" }',
        "SELECT * { ?s ?p '''\nSERVICE\n''' }",
        "SELECT * { ?s <http://x/SERVICE> ?o }  # SERVICE <http://x/>",
        "PREFIX ex: <http://e/> SELECT * { ?s ex:a\\#service ?o }",
        "SELECT * { ?s ?p 'it\\'s' }  # SERVICE <http://x/>",
    ],
)
def test_no_false_alarm(text: str) -> None:
    assert not uses_service(text)


_Probe = Probe


@pytest.fixture
def probe() -> Iterator[_Probe]:
    p = _Probe()
    yield p
    p.close()


def _query_file(tmp_path: Path, probe: _Probe) -> Path:
    path = tmp_path / "probe.rq"
    path.write_text(f"SELECT ?x WHERE {{ SERVICE <{probe.url}> {{ ?s ?p ?x }} }}\n")
    return path


def test_local_query_refuses_service(
    tmp_path: Path, probe: _Probe, invoke: object, store_dir: Path
) -> None:
    with Store(None) as store:
        with pytest.raises(QueryError, match="SERVICE"):
            run_query(store, _query_file(tmp_path, probe))
        with pytest.raises(QueryError, match="SERVICE"):
            store.query(f"ASK {{ SERVICE <{probe.url}> {{ ?s ?p ?o }} }}")
        assert probe.hits == 0
        rows = run_query(store, _query_file(tmp_path, probe), allow_service=True).records()
        assert probe.hits > 0 and rows == [{"x": "secret"}]  # the opt-in really federates
    hits = probe.hits
    result = invoke("query", _query_file(tmp_path, probe), "--store", store_dir)  # type: ignore[operator]
    assert result.exit_code != 0 and "SERVICE" in result.output
    assert probe.hits == hits


# A backslash-escaped character in a prefixed name (PN_LOCAL_ESC) read as a comment or a
# string start hid the SERVICE after it from the guard, while Oxigraph ran it.
ESCAPED_NAMES = ["ex:a\\#", "ex:a\\'"]


@pytest.mark.parametrize("name", ESCAPED_NAMES, ids=["hash", "quote"])
def test_an_escaped_name_does_not_hide_service(probe: _Probe, name: str) -> None:
    query = parse_query_text(
        f"PREFIX ex: <http://e/> SELECT ?x WHERE {{ OPTIONAL {{ ?s {name} ?o }} "
        f"SERVICE <{probe.url}> {{ ?s ?p ?x }} FILTER(?o != 'x') }}",
        "escaped",
    )
    with Store(None) as store:
        with pytest.raises(QueryError, match="SERVICE"):
            run_query(store, query)
        assert probe.hits == 0
        run_query(store, query, allow_service=True)  # Oxigraph parses it and does fetch
        assert probe.hits > 0


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("ssrf") / "store"
    with Store(directory) as st:
        ingest_bytes(st, [(SEED.read_bytes(), "seed.json")])
    return directory


@pytest.mark.slow
def test_endpoint_refuses_service_and_foreign_hosts(store_dir: Path, probe: _Probe) -> None:
    query = f"SELECT ?x WHERE {{ SERVICE <{probe.url}> {{ ?s ?p ?x }} }}"
    accept = {"Accept": "application/sparql-results+json"}
    with Endpoint(store_dir, port=0) as ep, httpx.Client(trust_env=False, timeout=30) as client:
        for answer in (
            client.get(ep.query_url, params={"query": query}, headers=accept),
            client.post(ep.query_url, data={"query": query}, headers=accept),
            client.post(ep.query_url, content=query,
                        headers={**accept, "Content-Type": "application/sparql-query"}),
        ):  # fmt: skip
            assert answer.status_code == 400 and "SERVICE" in answer.text
        assert probe.hits == 0
        ok = client.get(ep.query_url, params={"query": "ASK { ?s ?p ?o }"}, headers=accept)
        assert ok.status_code == 200 and ok.json()["boolean"] is True
        for host in (f"localhost:{ep.port}", f"127.0.0.1:{ep.port}"):
            same = client.get(ep.query_url, params={"query": "ASK {}"},
                              headers={**accept, "Host": host})  # fmt: skip
            assert same.status_code == 200, host
        for host in (f"attacker.example:{ep.port}", "127.0.0.1", f"127.0.0.1:{ep.port + 1}"):
            rebound = client.get(ep.query_url, params={"query": "ASK {}"},
                                 headers={**accept, "Host": host})  # fmt: skip
            assert rebound.status_code == 403, host
        assert client.post(f"{ep.url}/update", data={"update": "DROP ALL"}).status_code >= 400
    with (
        Endpoint(store_dir, port=0, allow_service=True) as ep,
        httpx.Client(trust_env=False, timeout=30) as client,
    ):
        answer = client.get(ep.query_url, params={"query": query}, headers=accept)
        assert answer.status_code == 200 and probe.hits > 0  # opted in: federation works
