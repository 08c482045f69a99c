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
        "PREFIX : <http://x/> SELECT * { SERVICE:x { ?a ?b ?c } }",
        "SELECT * { ?s <urn:x:p>? 1SERVICE <http://x/> { ?a ?b ?c } }",
        "SELECT * { ?s <urn:x:p> trueSERVICE <http://x/> { ?a ?b ?c } }",
        # ambiguous: with the empty prefix declared, ``service:x {…}`` is ``SERVICE :x {…}``
        "PREFIX : <http://x/> PREFIX service: <http://s/> SELECT * { ?s service:p ?o }",
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
        "PREFIX service: <http://x/> SELECT ?service { ?service service:SERVICE ?o }",
        "PREFIX sd: <http://www.w3.org/ns/sparql-service-description#> "
        "SELECT * { ?s sd:endpoint ?o FILTER(?o != <http://x/service#a>) }",
        "PREFIX ex: <http://e/> SELECT * { ?s ex:a.service ?o ; ?p _:service }",
        'SELECT * { ?s ?p "x"@service FILTER(?o < 2 && ?o > 1) }',
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


# Oxigraph fetches the probe for each of these, and all but ``ex:a.b.service`` walked past
# the old guard (a regex): no space is needed around the keyword, a \u0022 inside a string is
# a quote character, not the string's end, ``<`` after an operand is the less-than operator,
# and a local name that makes an invalid IRI leaves ``ex:`` alone and the rest as code.
# ``ex:a.b.service`` is what a lexer true to the standard would miss: Oxigraph's local names
# hold one run of dots, so it reads ``ex:a.b`` ``.`` ``service``.
BYPASSES = [
    "PREFIX : <{base}> SELECT * {{ SERVICE:x {{ ?a ?b ?c }} }}",
    "SELECT * {{ ?s <urn:x:p>? 1SERVICE <{url}> {{ ?a ?b ?c }} }}",
    "SELECT * {{ ?s <urn:x:p> trueSERVICE <{url}> {{ ?a ?b ?c }} }}",
    "SELECT * {{ ?s <urn:x:p> 1e5SERVICE <{url}> {{ }} }}",
    "PREFIX: <{base}> SELECT * {{ {{}}SERVICE:x{{}} }}",
    "PREFIX X: <{base}> SELECT * {{ serviceX:y {{}} }}",
    "PREFIX : <{base}> PREFIX service: <urn:s:> SELECT * {{ service:x {{}} }}",
    'SELECT * {{ BIND("a\\u0022" AS ?x) SERVICE <{url}> {{}} }} #"',
    "SELECT * {{ ?s ?p ?o FILTER(?o<?b)SERVICE#>\n<{url}>{{}} }}",
    "PREFIX ex: <urn:x:> SELECT * {{ ?s ?p ex:a.b.service <{url}> {{}} }}",
    "PREFIX ex: <http://e:> SELECT * {{ ?s ?p ex:service<{url}>{{}} }}",
    "PREFIX ex: <http://e:> SELECT * {{ ex:atrueservice<{url}>{{}} }}",
]


@pytest.fixture
def data_store() -> Iterator[Store]:
    with Store(None) as store:
        store.ox.update("INSERT DATA { <urn:x:s> <urn:x:p> 1, true, 1e5 }")
        yield store


@pytest.mark.parametrize("template", BYPASSES)
def test_bypasses_are_refused(
    data_store: Store,
    probe: Probe,
    template: str,
    invoke: object,
    tmp_path: Path,
    store_dir: Path,
) -> None:
    query = template.format(url=probe.url, base=probe.base)
    assert uses_service(query)
    with pytest.raises(QueryError, match="SERVICE"):
        data_store.query(query)
    with pytest.raises(QueryError, match="SERVICE"):
        run_query(data_store, parse_query_text(query, "bypass"))
    path = tmp_path / "bypass.rq"
    path.write_text(query)
    result = invoke("query", path, "--store", store_dir)  # type: ignore[operator]
    assert result.exit_code == 1 and "SERVICE" in result.output
    assert probe.hits == 0
    # Oxigraph parses each one as SERVICE and really fetches: the opt-in still federates.
    list(data_store.query(query, allow_service=True))
    assert probe.hits > 0


def test_saved_queries_pass_the_guard() -> None:
    root = Path(__file__).resolve().parent.parent
    paths = sorted((root / "queries").glob("*.rq")) + sorted(
        (root / "hcgraph" / "data" / "queries").glob("*.rq")
    )
    assert len(paths) >= 2
    assert [p.name for p in paths if uses_service(p.read_text(encoding="utf-8"))] == []


def test_a_parameterised_query_with_service_is_refused(
    tmp_path: Path, probe: Probe, invoke: object, store_dir: Path
) -> None:
    path = tmp_path / "param.rq"
    path.write_text(
        "# title: federated\n# param: ep iri -- the endpoint\n"
        "SELECT ?ep ?x WHERE { SERVICE ?ep { ?s ?p ?x } }\n"
    )
    result = invoke("query", path, "--store", store_dir, "--param", f"ep={probe.url}")  # type: ignore[operator]
    assert result.exit_code == 1 and "SERVICE" in result.output
    assert probe.hits == 0
    result = invoke(  # type: ignore[operator]
        "query", path, "--store", store_dir, "--param", f"ep={probe.url}", "--allow-service"
    )
    assert result.exit_code == 0 and probe.hits > 0, result.output
