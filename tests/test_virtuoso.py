"""A second real triple store: a throw-away OpenLink Virtuoso on loopback (``tests/virtuoso.py``).

Skipped only where the Debian package ``virtuoso-opensource`` is absent (``.ci/run`` installs
it). Push with ``--preset virtuoso`` over the Graph Store Protocol and SPARQL Update,
``--verify``, incremental re-push and the bulk-load recipe; the saved queries giving the same
rows there as on four other engines is ``tests/test_engines.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hcgraph.ingest import ingest_bytes
from hcgraph.queries import run_query, saved_queries
from hcgraph.store import Store
from hcsample.corpus import generate_corpus
from tests import virtuoso
from tests.conftest import SEED, free_port
from tests.support import engines

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not virtuoso.available(), reason="virtuoso-opensource is not installed"),
]


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("virt-store") / "store"
    corpus = generate_corpus(12, seed=21, include_seed=json.loads(SEED.read_text()))
    with Store(directory) as st:
        assert ingest_bytes(st, [(json.dumps(s).encode(), f"{i}.json")
                                 for i, s in enumerate(corpus.stories)]).ok  # fmt: skip
    return directory


#: Per server URL, the graphs Virtuoso holds of its own right after the start.
_SYSTEM_GRAPHS: dict[str, set[str]] = {}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[virtuoso.VirtuosoServer]:
    """One Virtuoso for the module (a start costs ~2.4 CPU s); tests that need it empty take
    :func:`empty_server`."""
    srv = virtuoso.VirtuosoServer(tmp_path_factory.mktemp("virtuoso"), free_port(), free_port())
    srv.start()
    try:
        _SYSTEM_GRAPHS[srv.url] = _graphs(srv)
        yield srv
    finally:
        srv.stop()


def _graphs(server: virtuoso.VirtuosoServer) -> set[str]:
    rows = server.select("SELECT DISTINCT ?g { GRAPH ?g { ?s ?p ?o } }")
    return {row["g"]["value"] for row in rows}


def _reset(server: virtuoso.VirtuosoServer, store_dir: Path) -> None:
    """Back to the module's first state: no graph but Virtuoso's own, and ``store_dir``
    remembering no push (so the next push without ``--all`` sends every graph again)."""
    ours = sorted(_graphs(server) - _SYSTEM_GRAPHS[server.url])
    if ours:  # one isql run for them all
        server.sql(" ".join(f"SPARQL CLEAR GRAPH <{graph}>;" for graph in ours))
    assert _graphs(server) == _SYSTEM_GRAPHS[server.url]
    for name in ("push-state.json", "push-state.journal"):
        (store_dir / name).unlink(missing_ok=True)


@pytest.fixture
def empty_server(
    server: virtuoso.VirtuosoServer, store_dir: Path
) -> Iterator[virtuoso.VirtuosoServer]:
    """The module's server holding none of our graphs, before and after the test."""
    _reset(server, store_dir)
    try:
        yield server
    finally:
        _reset(server, store_dir)


def _graph_counts(server: virtuoso.VirtuosoServer, store: Store) -> dict[str, int]:
    counts = {}
    for graph in store.graph_names():
        rows = server.select(f"SELECT (COUNT(*) AS ?n) {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}")
        counts[graph] = int(rows[0]["n"]["value"])
    return counts


def test_push_gsp_verify_and_incremental(
    server: virtuoso.VirtuosoServer, store_dir: Path, invoke: Any
) -> None:
    args = ["push", "--endpoint", server.url, "--preset", "virtuoso", "--store", store_dir]
    first = invoke(*args, "--verify")
    assert first.exit_code == 0, first.output
    assert "0 failed" in first.output and "all match" in first.output
    with Store(store_dir, read_only=True) as st:
        assert _graph_counts(server, st) == {g: st.graph_size(g) for g in st.graph_names()}
    again = invoke(*args)
    assert again.exit_code == 0 and "pushed 0 graphs" in again.output, again.output


def test_push_sparql_update(server: virtuoso.VirtuosoServer, store_dir: Path, invoke: Any) -> None:
    server.sql("SPARQL CLEAR GRAPH <https://w3id.org/hcgraph/graph/links>;")
    # --batch 1: Virtuoso compiles each INSERT DATA into one code vector (max 32 KB of code);
    # fifty story graphs in one request exceed it (SQ199), one graph does not.
    args = ["push", "--endpoint", server.url, "--preset", "virtuoso", "--protocol", "update",
            "--all", "--verify", "--batch", "1", "--retries", "0",
            "--store", store_dir]  # fmt: skip
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert "all match" in result.output


def test_bulk_load_recipe(empty_server: virtuoso.VirtuosoServer, store_dir: Path) -> None:
    """The Virtuoso recipe of docs/pushing.md, as written: ld_dir + rdf_loader_run on the gzipped
    N-Quads shards of ``hcgraph export --format nquads --gzip --split N``."""
    from hcgraph.dump import write_shards

    srv = empty_server
    dump = srv.directory / "dump"
    with Store(store_dir, read_only=True) as st:
        shards = write_shards(st, dump, 2000)
        expected = {g: st.graph_size(g) for g in st.graph_names()}
        assert len(shards) > 1
        srv.sql(f"ld_dir('{dump}', 'graph-*.nq.gz', 'https://example.org/unused-default-graph');")
        srv.sql("rdf_loader_run();")
        srv.sql("checkpoint;")
        errors = srv.sql(
            "SELECT ll_file, ll_error FROM DB.DBA.load_list WHERE ll_error IS NOT NULL;"
        )
        assert "0 Rows" in errors, errors
        assert _graph_counts(srv, st) == expected


@pytest.mark.parametrize("protocol", ["gsp", "update"])
def test_push_with_user_password_as_a_virtuoso_user_types_it(
    server: virtuoso.VirtuosoServer,
    store_dir: Path,
    invoke: Any,
    monkeypatch: pytest.MonkeyPatch,
    protocol: str,
) -> None:
    """``--preset virtuoso --auth-env VAR`` with ``VAR=user:password`` and nothing else: the
    preset picks Virtuoso's authenticated services and the client answers their challenge
    (Digest). Before, the credentials went to the anonymous services: HTTP 403 where, as in a
    default install, anonymous SPARQL may not write (the grant the other tests use is lifted
    here)."""
    server.sql("SPARQL CLEAR GRAPH <https://w3id.org/hcgraph/graph/publishers>;")
    monkeypatch.setenv("HC_VIRTUOSO_USER", "dba:dba")
    server.sql('REVOKE SPARQL_UPDATE FROM "SPARQL";')
    try:
        result = invoke(
            "push", "--endpoint", server.url, "--preset", "virtuoso", "--protocol", protocol,
            "--auth-env", "HC_VIRTUOSO_USER", "--all", "--batch", "1", "--retries", "0",
            "--concurrency", "1", "--verify", "--store", store_dir,
        )  # fmt: skip
    finally:
        server.sql('GRANT SPARQL_UPDATE TO "SPARQL";')
    assert result.exit_code == 0, result.output
    assert "all match" in result.output and "dba:dba" not in result.output
    with Store(store_dir, read_only=True) as st:
        assert _graph_counts(server, st) == {g: st.graph_size(g) for g in st.graph_names()}
    monkeypatch.setenv("HC_VIRTUOSO_USER", "dba:wrong")
    refused = invoke(
        "push", "--endpoint", server.url, "--preset", "virtuoso", "--protocol", protocol,
        "--auth-env", "HC_VIRTUOSO_USER", "--all", "--retries", "0", "--store", store_dir,
    )  # fmt: skip
    assert refused.exit_code == 1
    assert "HTTP 401: the credentials were refused" in refused.output, refused.output


def test_declared_vs_derived_gives_the_same_lists_on_virtuoso(
    tmp_path_factory: pytest.TempPathFactory, empty_server: virtuoso.VirtuosoServer
) -> None:
    """The stories of a 300-story corpus whose declared lists disagree with their content:
    ``declared-vs-derived`` gives the same rows on Virtuoso and locally, and both give the
    lists of the ground truth."""
    from tests.support.groundtruth import ground_truth

    corpus = generate_corpus(300, seed=41, include_seed=json.loads(SEED.read_text()))
    sides = ground_truth(corpus.stories).declared_sides
    stories = [s for s in corpus.stories if any(url == s["url"] for url, _ in sides)]
    truth = ground_truth(stories)
    assert len(truth.declared_sides) >= 10
    srv = empty_server
    with Store(tmp_path_factory.mktemp("dvd") / "store") as st:
        assert ingest_bytes(st, [(json.dumps(s).encode(), f"{i}.json")
                                 for i, s in enumerate(stories)]).ok  # fmt: skip
        from hcgraph.push import PushOptions, push_graphs, resolve_endpoint

        pushed = push_graphs(st, resolve_endpoint(srv.url, "virtuoso"),
                             PushOptions(concurrency=1, retries=0))  # fmt: skip
        assert pushed.ok and pushed.pushed == len(st.graph_names())
        query = saved_queries()["declared-vs-derived"]
        rows = [tuple(engines.term_text(t) for t in row) for row in run_query(st, query).terms]
    answer = httpx.post(f"{srv.url}/sparql", data={"query": query.text},
                        headers={"Accept": "application/sparql-results+json"},
                        timeout=120, trust_env=False)  # fmt: skip
    assert answer.status_code == 200, answer.text[:300]
    assert engines.json_rows(answer.json()) == engines.normalise(rows)
    local = set(rows)
    lists = {(story, field): (frozenset(declared.split()), frozenset(derived.split()))
             for story, field, declared, derived in local if field != "source_count"}  # fmt: skip
    assert lists == truth.declared_sides


def test_push_with_digest_credentials(
    server: virtuoso.VirtuosoServer, store_dir: Path, invoke: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Virtuoso's authenticated services take HTTP Digest: ``--auth-env`` with
    ``Digest user:password``, against ``/sparql-graph-crud-auth`` and ``/sparql-auth``."""
    monkeypatch.setenv("HC_VIRTUOSO_AUTH", "Digest dba:dba")
    server.sql("SPARQL CLEAR GRAPH <https://w3id.org/hcgraph/graph/publishers>;")
    for protocol in ("gsp", "update"):
        result = invoke(
            "push", "--endpoint", server.url, "--preset", "virtuoso", "--protocol", protocol,
            "--gsp-path", "sparql-graph-crud-auth", "--update-path", "sparql-auth",
            "--auth-env", "HC_VIRTUOSO_AUTH", "--all", "--batch", "1", "--retries", "0",
            # one writer: with --retries 0, Virtuoso's occasional deadlock answer (HTTP 500)
            # to concurrent writes would fail the run
            "--concurrency", "1", "--verify", "--store", store_dir,
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert "all match" in result.output and "dba:dba" not in result.output
    monkeypatch.setenv("HC_VIRTUOSO_AUTH", "Digest dba:wrong")
    refused = invoke(
        "push", "--endpoint", server.url, "--preset", "virtuoso", "--gsp-path",
        "sparql-graph-crud-auth", "--auth-env", "HC_VIRTUOSO_AUTH", "--all", "--retries", "0",
        "--store", store_dir,
    )  # fmt: skip
    assert refused.exit_code != 0
