"""The same rows on every engine: each saved query, in each parameter form, on five engines.

One generated corpus (150 stories by default, ``HCGRAPH_ENGINE_STORIES``; Comunica gets 60,
``HCGRAPH_COMUNICA_STORIES``) is ingested by hcgraph on disk, and each case of
:func:`tests.support.engines.cases` (every saved query with its defaults, and again with its
optional parameters given; every parameter bound by a leading ``VALUES`` block, so the text
is plain SPARQL 1.1) is answered by:

- hcgraph itself (``run_query`` on the embedded Oxigraph store): the reference;
- ``oxigraph serve-read-only`` on the same database (the Oxigraph server, over HTTP);
- OpenLink Virtuoso 7.2 (Debian), loaded with the bulk-load recipe of ``docs/pushing.md``;
- Apache Jena 4.5 TDB2 (Debian), loaded with ``tdb2.tdbloader``;
- Comunica 5 (npm), over the exported N-Quads (Comunica 4.5 answered `uncited-paragraphs`
  wrongly: a MINUS inside a sub-query joined with the outer patterns subtracted nothing).

Rows are compared as sets of lexical texts, with list cells' items sorted (GROUP_CONCAT's order
is undefined). Each engine that is not installed is skipped on a developer machine only:
``scripts/install-test-deps`` installs all of them, and CI runs this module.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest

from hcgraph.ingest import ingest_bytes
from hcgraph.queries import run_query, saved_queries
from hcgraph.store import Store
from hcsample.corpus import iter_stories
from tests import virtuoso
from tests.conftest import SEED, SEED_URL, free_port
from tests.support import engines

# a 150-story store, five engines: the same 14 of the 20 cases answer with rows (5 to 619
# each; the same 6 are empty) as at 300 and 1,000, for 0.64x the CPU of 300 (Jena's load
# and queries 21 CPU s against 35); bench/bench_engines.py measures the engines at scale
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]
STORIES = int(os.environ.get("HCGRAPH_ENGINE_STORIES", "150"))
COMUNICA_STORIES = int(os.environ.get("HCGRAPH_COMUNICA_STORIES", "60"))


@dataclass
class Corpus:
    """The store, its N-Quads dump, the cases and hcgraph's own answers."""

    store_dir: Path
    nquads: Path
    cases: list[engines.Case]
    local: dict[str, engines.Rows]
    work: Path


def _build(n: int, work: Path) -> Corpus:
    store_dir = work / "store"
    stories = iter_stories(n - 1, seed=26, include_seed=json.loads(SEED.read_text()))
    with Store(store_dir) as st:
        report = ingest_bytes(st, ((json.dumps(s).encode(), str(s["url"])) for s in stories))
        assert report.ok
    with Store(store_dir, read_only=True) as st:
        nquads = work / "graph.nq"
        nquads.write_bytes(st.ox.dump(format=ox.RdfFormat.N_QUADS))
        top_source = run_query(st, "source-reuse", limit=1).records()[0]["manifest_id"]
        top_claim = run_query(st, "claim-reuse", limit=1).records()[0]["claim_id"]
        examples = {"story": SEED_URL, "manifest_id": top_source, "claim_id": top_claim, "k": "3"}
        library = saved_queries()
        cases = engines.cases(library, examples)
        local = {
            case.key: engines.normalise(
                tuple(engines.term_text(t) for t in row)
                for row in run_query(st, library[case.name], case.params).terms
            )
            for case in cases
        }
    # the reference must not be trivially empty: most cases answer with rows
    assert sum(bool(rows) for rows in local.values()) >= len(cases) * 2 // 3
    return Corpus(store_dir, nquads, cases, local, work)


@pytest.fixture(scope="module", autouse=True)
def _lean_jvm() -> Iterator[None]:
    """Jena's JVMs (javac, the loader, the query runner) without C2 and with one GC thread:
    their runs here are short, and the C2 compiler and G1's threads cost ~10% more CPU for the
    same answers (2.5-2.9 of ~29 CPU s, bench/RESULTS.md). Only here: the bench keeps the
    JVM's defaults, since it times Jena's queries."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JAVA_TOOL_OPTIONS", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
        yield


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return _build(STORIES, tmp_path_factory.mktemp("engines"))


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    """For Comunica, an in-memory engine that answers the saved queries in seconds each at
    100 stories (co-citation 15-20 s) and scales with the data: it gets a smaller corpus."""
    return _build(COMUNICA_STORIES, tmp_path_factory.mktemp("engines-small"))


def _compare(corpus: Corpus, answers: dict[str, engines.Answer]) -> dict[str, str]:
    problems: dict[str, str] = {}
    for case in corpus.cases:
        answer = answers.get(case.key)
        if answer is None:
            problems[case.key] = "no answer"
        elif answer.rows != corpus.local[case.key]:
            local = corpus.local[case.key]
            diff = sorted(local ^ answer.rows)[:2]
            problems[case.key] = f"{len(local)} local rows, {len(answer.rows)} there; e.g. {diff}"
    return problems


def _over_http(url: str, corpus: Corpus) -> dict[str, engines.Answer]:
    answers = {}
    with httpx.Client(timeout=600, trust_env=False) as client:
        for case in corpus.cases:
            started = time.perf_counter()
            reply = client.post(
                url,
                data={"query": case.text},
                headers={"Accept": "application/sparql-results+json"},
            )
            assert reply.status_code == 200, (case.key, reply.text[:300])
            answers[case.key] = engines.Answer(
                engines.json_rows(reply.json()), time.perf_counter() - started
            )
    return answers


def test_oxigraph_server(corpus: Corpus) -> None:
    binary = shutil.which("oxigraph")
    if binary is None:
        pytest.skip("the oxigraph server (PyPI 'oxigraph', a test extra) is not installed")
    port = free_port()
    # the store's RocksDB directory (Store.db_path), read by the server alongside
    with Store(corpus.store_dir, read_only=True) as st:
        location = st.db_path
    server = subprocess.Popen(
        [binary, "serve-read-only", "--location", str(location), "--bind", f"127.0.0.1:{port}",
         "--union-default-graph"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        engines.wait_for(f"http://127.0.0.1:{port}/query?query=ASK%7B%7D", 60.0)
        problems = _compare(corpus, _over_http(f"http://127.0.0.1:{port}/query", corpus))
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert problems == {}, json.dumps(problems, indent=1)


@pytest.fixture(scope="module")
def loaded_virtuoso(corpus: Corpus) -> Iterator[virtuoso.VirtuosoServer]:
    if not virtuoso.available():
        pytest.skip("virtuoso-opensource is not installed")
    from hcgraph.dump import write_shards

    srv = virtuoso.VirtuosoServer(corpus.work / "virtuoso", free_port(), free_port())
    srv.start()
    try:
        dump = srv.directory / "dump"
        with Store(corpus.store_dir, read_only=True) as st:
            write_shards(st, dump, 200_000)
        srv.sql(f"ld_dir('{dump}', 'graph-*.nq.gz', 'https://example.org/unused-default-graph');")
        srv.sql("rdf_loader_run();")
        srv.sql("checkpoint;")
        yield srv
    finally:
        srv.stop()


def test_virtuoso(corpus: Corpus, loaded_virtuoso: virtuoso.VirtuosoServer) -> None:
    problems = _compare(corpus, _over_http(f"{loaded_virtuoso.url}/sparql", corpus))
    assert problems == {}, json.dumps(problems, indent=1)


@pytest.fixture(scope="module")
def classpath(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Jena's class path, with ``JenaQueries`` compiled once for the module's Jena tests."""
    found = engines.jena_classpath(tmp_path_factory.mktemp("jena"))
    if found is None:
        pytest.skip("Apache Jena (Debian libapache-jena-java) or javac is not installed")
    return found


def test_jena_tdb2(corpus: Corpus, classpath: str) -> None:
    location = corpus.work / "tdb2"
    engines.jena_load(classpath, corpus.nquads, location)
    answers = engines.run_jena(
        classpath, location, {c.key: c.text for c in corpus.cases}, corpus.work
    )
    problems = _compare(corpus, answers)
    assert problems == {}, json.dumps(problems, indent=1)


@pytest.fixture(scope="module")
def small_tdb2(classpath: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TDB2 database of 1,000 ``<urn:x:q>`` triples and one ``<urn:x:s> <urn:x:p> "o"``,
    loaded once for the two tests below (each only reads it)."""
    work = tmp_path_factory.mktemp("jena-small")
    nquads = work / "small.nq"
    lines = [f'<urn:x:s{i}> <urn:x:q> "{i}" <urn:x:g> .' for i in range(1000)]
    nquads.write_text("\n".join([*lines, '<urn:x:s> <urn:x:p> "o" <urn:x:g> .', ""]), "utf-8")
    engines.jena_load(classpath, nquads, work / "tdb2")
    return work / "tdb2"


def test_jena_one_failing_query_loses_only_its_answer(
    classpath: str, small_tdb2: Path, tmp_path: Path
) -> None:
    """A query Jena fails on is reported by key; the queries after it are still answered."""
    items = {
        "broken": "SELECT ?s WHERE { ?s <urn:x:p> ",  # a syntax error: Jena refuses it
        "after": "SELECT ?o WHERE { ?s <urn:x:p> ?o }",
    }
    errors: dict[str, str] = {}
    answers = engines.run_jena(classpath, small_tdb2, items, tmp_path, "256m", errors)
    assert set(errors) == {"broken"} and "Parse" in errors["broken"]
    assert set(answers) == {"after"}
    assert answers["after"].rows == {("o",)}


def test_jena_query_timeout_cancels_only_that_query(
    classpath: str, small_tdb2: Path, tmp_path: Path
) -> None:
    """With a timeout, a query still running after it is cancelled and reported by key;
    the next one is answered."""
    items = {  # a streamed three-way cross product: 10^9 rows to count
        "endless": "SELECT (COUNT(*) AS ?n) WHERE "
        "{ ?a <urn:x:q> ?b . ?c <urn:x:q> ?d . ?e <urn:x:q> ?f }",
        "after": "SELECT ?o WHERE { ?s <urn:x:p> ?o }",
    }
    errors: dict[str, str] = {}
    answers = engines.run_jena(classpath, small_tdb2, items, tmp_path, "256m", errors, 1)
    assert set(errors) == {"endless"} and "Cancel" in errors["endless"], errors
    assert set(answers) == {"after"} and answers["after"].rows == {("o",)}


def test_comunica_timeout_and_error_lose_only_their_answers(tmp_path: Path) -> None:
    """A query Comunica refuses and one still running at the timeout are reported by key;
    the query after them is answered (by a fresh worker, the data loaded again)."""
    if not engines.comunica_available():
        pytest.skip("Comunica is not installed (scripts/install-test-deps installs it)")
    nquads = tmp_path / "small.nq"
    lines = [f'<urn:x:s{i}> <urn:x:q> "{i}" <urn:x:g> .' for i in range(1000)]
    nquads.write_text("\n".join([*lines, '<urn:x:s> <urn:x:p> "o" <urn:x:g> .', ""]), "utf-8")
    items = {
        "broken": "SELECT ?s WHERE { ?s <urn:x:p> ",
        "endless": "SELECT (COUNT(*) AS ?n) WHERE "
        "{ ?a <urn:x:q> ?b . ?c <urn:x:q> ?d . ?e <urn:x:q> ?f }",
        "after": "SELECT ?o WHERE { ?s <urn:x:p> ?o }",
    }
    errors: dict[str, str] = {}
    answers = engines.run_comunica(nquads, items, tmp_path, errors, timeout=2)
    assert set(errors) == {"broken", "endless"}, errors
    assert errors["endless"].startswith("timeout:")
    assert set(answers) == {"after"} and answers["after"].rows == {("o",)}


def test_comunica(small_corpus: Corpus) -> None:
    if not engines.comunica_available():
        pytest.skip("Comunica is not installed (scripts/install-test-deps installs it)")
    items = {c.key: c.text for c in small_corpus.cases}
    answers = engines.run_comunica(small_corpus.nquads, items, small_corpus.work)
    problems = _compare(small_corpus, answers)
    assert problems == {}, json.dumps(problems, indent=1)


def test_the_cases_bind_every_parameter() -> None:
    """Each case's text binds its parameters itself (VALUES), so other engines need nothing."""
    library = saved_queries()
    examples = {"story": SEED_URL, "manifest_id": "1", "claim_id": "2", "k": "3"}
    cases = engines.cases(library, examples)
    assert {c.name for c in cases} == set(library)
    for case in cases:
        for name, value in case.params.items():
            assert f"VALUES ?{name} {{" in case.text and value in case.text, case.key
    assert any(c.name == "co-citation" and "k" in c.params for c in cases)
