"""``hcgraph push`` against a real Oxigraph server (``oxigraph serve``, PyPI ``oxigraph``).

Every test pushes with the real CLI and then asks the server itself (SPARQL, Graph Store
Protocol GET) what it holds, comparing with the local store.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pyoxigraph as ox
import pytest

from hcgraph import Store, ingest_bytes
from hcgraph.push import STATE_FILE
from hcgraph.vocab import PREFIXES
from hcsample.corpus import generate_corpus
from tests.conftest import SEED, OxigraphServer, cli_env, free_port
from tests.support.forkserver import ForkServer
from tests.support.groundtruth import ground_truth

pytestmark = pytest.mark.slow  # a real Oxigraph server, proxies and subprocesses

SEED_URL = "https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/"
CORPUS_SEED = 6

# Manifests cited (from paragraphs or key facts) by at least two stories, over the union
# default graph (the server runs with --union-default-graph; the store queries its union).
SOURCE_REUSE = (
    "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in PREFIXES.items())
    + """
SELECT ?id (COUNT(DISTINCT ?story) AS ?stories) WHERE {
  ?story a hc:Story .
  ?part dcterms:isPartOf+ ?story .
  ?cite cito:hasCitingEntity ?part ; cito:hasCitedEntity ?manifest .
  ?manifest dcterms:identifier ?id .
} GROUP BY ?id HAVING (COUNT(DISTINCT ?story) >= 2) ORDER BY ?id
"""
)
LITERALS = "SELECT ?g ?o WHERE { GRAPH ?g { ?s ?p ?o FILTER(isLiteral(?o)) } }"


# --- corpus and store helpers --------------------------------------------------------------


def _corpus_docs() -> list[tuple[bytes, str]]:
    seed = json.loads(SEED.read_text(encoding="utf-8"))
    corpus = generate_corpus(200, seed=CORPUS_SEED, include_seed=seed)
    return [(json.dumps(d, ensure_ascii=False).encode(), str(d["url"])) for d in corpus.stories]


@pytest.fixture(scope="module")
def corpus_docs() -> list[tuple[bytes, str]]:
    return _corpus_docs()


@pytest.fixture(scope="module")
def corpus_store_template(
    tmp_path_factory: pytest.TempPathFactory, corpus_docs: list[tuple[bytes, str]]
) -> Path:
    """The seed story plus 200 generated (hostile, odd) stories, ingested once."""
    directory = tmp_path_factory.mktemp("corpus") / "store"
    with Store(directory) as store:
        report = ingest_bytes(store, corpus_docs)
    assert not report.failures
    return directory


@pytest.fixture
def corpus_store(tmp_path: Path, corpus_store_template: Path) -> Path:
    """A private copy of the corpus store (each test keeps its own push state)."""
    target = tmp_path / "store"
    shutil.copytree(corpus_store_template, target)
    return target


def local_counts(store_dir: Path) -> dict[str, int]:
    with Store(store_dir, read_only=True) as store:
        rows = store.query(
            "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g", union=False
        )
        return {row["g"].value: int(row["n"].value) for row in rows}


def local_graph(store_dir: Path, iri: str) -> set[ox.Triple]:
    with Store(store_dir, read_only=True) as store:
        return {q.triple for q in store.quads(graph=ox.NamedNode(iri))}


def local_dataset(store_dir: Path) -> dict[str, set[ox.Triple]]:
    """Every named graph of the store, IRI → its triples, in one read (``local_graph`` of
    each graph opens the store once per graph)."""
    graphs: dict[str, set[ox.Triple]] = {}
    with Store(store_dir, read_only=True) as store:
        for quad in store.ox:
            if isinstance(quad.graph_name, ox.NamedNode):
                graphs.setdefault(quad.graph_name.value, set()).add(quad.triple)
    return graphs


def remote_dataset(server: OxigraphServer) -> dict[str, set[ox.Triple]]:
    """Every named graph the server holds, IRI → its triples, as its Graph Store Protocol
    returns the whole dataset (one request, not one per graph)."""
    response = httpx.get(
        f"{server.url}/store", headers={"Accept": "application/n-quads"}, timeout=60
    )
    response.raise_for_status()
    graphs: dict[str, set[ox.Triple]] = {}
    for quad in ox.parse(response.content, format=ox.RdfFormat.N_QUADS):
        if isinstance(quad.graph_name, ox.NamedNode):
            graphs.setdefault(quad.graph_name.value, set()).add(quad.triple)
    return graphs


def remote_graph(server: OxigraphServer, iri: str) -> set[ox.Triple]:
    """The graph as the server's Graph Store Protocol returns it."""
    response = httpx.get(
        f"{server.url}/store", params={"graph": iri}, headers={"Accept": "application/n-triples"}
    )
    response.raise_for_status()
    return {q.triple for q in ox.parse(response.content, format=ox.RdfFormat.N_TRIPLES)}


def _literal_key(term: dict[str, str]) -> tuple[str, str, str]:
    lang = term.get("xml:lang", "")
    datatype = term.get("datatype") or (
        "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
        if lang
        else "http://www.w3.org/2001/XMLSchema#string"
    )
    return term["value"], datatype, lang


def remote_literals(server: OxigraphServer) -> dict[str, set[tuple[str, str, str]]]:
    out: dict[str, set[tuple[str, str, str]]] = {}
    for row in server.select(LITERALS):
        out.setdefault(row["g"]["value"], set()).add(_literal_key(row["o"]))
    return out


def local_literals(store_dir: Path) -> dict[str, set[tuple[str, str, str]]]:
    out: dict[str, set[tuple[str, str, str]]] = {}
    with Store(store_dir, read_only=True) as store:
        for q in store.ox:
            if isinstance(q.object, ox.Literal) and isinstance(q.graph_name, ox.NamedNode):
                lit = q.object
                key = (lit.value, lit.datatype.value, lit.language or "")
                out.setdefault(q.graph_name.value, set()).add(key)
    return out


def push(invoke: Any, store_dir: Path, endpoint: str, *extra: object) -> Any:
    return invoke("push", "--endpoint", endpoint, "--store", store_dir, *extra)


@pytest.fixture
def run_push_subprocess(cli_forkserver: Any) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``run(store_dir, endpoint, *extra, env=None)``: ``python -m hcgraph push`` in a child
    process (forked from the session's ``cli_forkserver``), with ``env`` added to its
    environment."""

    def run(
        store_dir: Path, endpoint: str, *extra: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        args = ["push", "--endpoint", endpoint, "--store", str(store_dir), *extra]
        full_env = {**cli_env(), **(env or {})}
        if isinstance(cli_forkserver, ForkServer):
            return cli_forkserver.run(args, env=full_env, cwd=None, timeout=240)
        return subprocess.run(
            [sys.executable, "-m", "hcgraph", *args],
            capture_output=True, text=True, env=full_env, timeout=240,
        )  # fmt: skip

    return run


# --- a small reverse proxy: a header check, or a server that dies mid-push ---------------


class Proxy:
    """A threaded HTTP proxy on 127.0.0.1 in front of an upstream server.

    ``authorization``: answer 401 unless the request's Authorization header equals it.
    ``die_after``: forward that many requests, then call ``on_die`` (which stops the
    upstream), stop listening and drop every connection without an answer — a server that
    went away in the middle of a push.
    ``hold_after``: forward that many requests, then hold the next one unanswered (``held``
    is set) until the proxy closes: the client is stuck mid-push, to be killed.
    ``methods`` counts the forwarded requests by HTTP method.
    """

    def __init__(
        self,
        upstream: str,
        *,
        port: int | None = None,
        authorization: str | None = None,
        die_after: int | None = None,
        on_die: Callable[[], None] | None = None,
        hold_after: int | None = None,
    ) -> None:
        self.upstream = urlsplit(upstream)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.authorization = authorization
        self.die_after = die_after
        self.on_die = on_die
        self.hold_after = hold_after
        self.held = threading.Event()
        self.release = threading.Event()
        self.methods: dict[str, int] = {}
        self.forwarded = 0
        self.refused = 0
        self.dead = False
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Proxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.release.set()
        if self.thread.is_alive():
            self.httpd.shutdown()
        self.httpd.server_close()

    def _die(self) -> None:
        self.dead = True
        if self.on_die is not None:
            self.on_die()
        threading.Thread(target=self.close, daemon=True).start()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                auth = self.headers.get("Authorization")
                if proxy.authorization is not None and auth != proxy.authorization:
                    with proxy.lock:
                        proxy.refused += 1
                    self._answer(401, b"unauthorized\n", {"WWW-Authenticate": 'Basic realm="x"'})
                    return
                with proxy.lock:
                    if proxy.die_after is not None and proxy.forwarded >= proxy.die_after:
                        if not proxy.dead:
                            proxy._die()
                        self.close_connection = True
                        return  # no answer at all: the server is gone
                    hold = proxy.hold_after is not None and proxy.forwarded >= proxy.hold_after
                    if not hold:
                        proxy.forwarded += 1
                        proxy.methods[self.command] = proxy.methods.get(self.command, 0) + 1
                if hold:
                    proxy.held.set()
                    proxy.release.wait()
                    self.close_connection = True
                    return
                try:
                    up = http.client.HTTPConnection(
                        proxy.upstream.hostname, proxy.upstream.port, timeout=60
                    )
                    keep = ("Content-Type", "Accept")
                    headers = {k: v for k, v in self.headers.items() if k in keep}
                    up.request(self.command, self.path, body=body, headers=headers)
                    reply = up.getresponse()
                    data = reply.read()
                    up.close()
                except OSError:
                    self.close_connection = True
                    return
                content_type = reply.getheader("Content-Type") or "text/plain"
                self._answer(reply.status, data, {"Content-Type": content_type})

            def _answer(self, status: int, data: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _forward

        return Handler


# --- tests -------------------------------------------------------------------------------


def test_push_seed_story(oxigraph: OxigraphServer, store: Store, seed_bytes: bytes, invoke: Any):
    ingest_bytes(store, [(seed_bytes, "seed.json")])
    store.close()
    result = push(invoke, store.directory, oxigraph.url, "--verify")
    assert result.exit_code == 0, result.output
    # the story graph and the four shared graphs: 692 triples in all
    assert "pushed 5 graphs (692 triples)" in result.output
    assert "verified 5 graphs on the server: all match" in result.output
    assert oxigraph.graph_counts() == local_counts(store.directory)
    assert sum(local_counts(store.directory).values()) == 692
    assert remote_graph(oxigraph, SEED_URL) == local_graph(store.directory, SEED_URL)


def test_push_corpus_counts_and_source_reuse(
    oxigraph: OxigraphServer, corpus_store: Path, corpus_docs: list[tuple[bytes, str]], invoke: Any
):
    result = push(invoke, corpus_store, oxigraph.url, "--verify")
    assert result.exit_code == 0, result.output
    local = local_counts(corpus_store)
    assert len(local) == 201 + 4  # story graphs and the shared graphs
    assert f"pushed 205 graphs ({sum(local.values()):,} triples)" in result.output
    assert oxigraph.graph_counts() == local

    remote_rows = oxigraph.select(SOURCE_REUSE)
    remote = {(r["id"]["value"], int(r["stories"]["value"])) for r in remote_rows}
    with Store(corpus_store, read_only=True) as st:
        mine = {(r["id"].value, int(r["stories"].value)) for r in st.query(SOURCE_REUSE)}
    assert remote == mine
    # ... and both agree with the corpus's independent ground truth.
    truth = ground_truth(json.loads(raw) for raw, _ in corpus_docs)
    assert {m for m, _ in remote} == set(truth.source_reuse(2))
    assert len(remote) > 10


def test_push_twice_is_idempotent_and_incremental(
    oxigraph: OxigraphServer, corpus_store: Path, invoke: Any
):
    first = push(invoke, corpus_store, oxigraph.url)
    assert first.exit_code == 0, first.output
    counts = oxigraph.graph_counts()
    sample = sorted(counts)[::40]
    before = {g: remote_graph(oxigraph, g) for g in sample}

    again = push(invoke, corpus_store, oxigraph.url)
    assert again.exit_code == 0, again.output
    assert "pushed 0 graphs (0 triples)" in again.output
    assert "205 unchanged" in again.output
    assert oxigraph.graph_counts() == counts

    forced = push(invoke, corpus_store, oxigraph.url, "--all", "--verify")
    assert forced.exit_code == 0, forced.output
    assert "pushed 205 graphs" in forced.output
    assert "all match" in forced.output
    assert oxigraph.graph_counts() == counts
    assert {g: remote_graph(oxigraph, g) for g in sample} == before

    # The update protocol leaves exactly the same remote triples too.
    upd = push(invoke, corpus_store, oxigraph.url, "--all", "--protocol", "update")
    assert upd.exit_code == 0, upd.output
    assert oxigraph.graph_counts() == counts
    assert {g: remote_graph(oxigraph, g) for g in sample} == before


def test_changed_story_replaces_remote_graph(
    oxigraph: OxigraphServer, store: Store, seed_bytes: bytes, invoke: Any
):
    ingest_bytes(store, [(seed_bytes, "seed.json")])
    store.close()
    assert push(invoke, store.directory, oxigraph.url).exit_code == 0
    old_remote = remote_graph(oxigraph, SEED_URL)
    before = {g: local_graph(store.directory, g) for g in local_counts(store.directory)}

    story = json.loads(seed_bytes)
    old_headline = story["headline"]
    story["headline"] = "A changed headline"
    dropped = story["sections"].pop()  # a whole section (and its citations) goes away
    with Store(store.directory) as st:
        report = ingest_bytes(st, [(json.dumps(story).encode(), "seed-v2.json")])
    assert report.results[0].status == "replaced"

    result = push(invoke, store.directory, oxigraph.url, "--verify")
    assert result.exit_code == 0, result.output
    after = {g: local_graph(store.directory, g) for g in local_counts(store.directory)}
    changed = {g for g in after if after[g] != before.get(g)}
    assert SEED_URL in changed and len(changed) < len(after)  # the story and what it changed
    assert f"pushed {len(changed)} graphs" in result.output
    assert all(remote_graph(oxigraph, g) == after[g] for g in after)
    new_remote = remote_graph(oxigraph, SEED_URL)
    assert new_remote == local_graph(store.directory, SEED_URL)
    assert new_remote != old_remote
    literals = {t.object.value for t in new_remote if isinstance(t.object, ox.Literal)}
    assert old_headline not in literals  # nothing stale
    assert "A changed headline" in literals
    assert dropped["paragraphs"][0]["markdown"] not in literals
    assert set(oxigraph.graph_counts()) == set(after)


def test_merge_mode_adds_to_the_remote_graph(
    oxigraph: OxigraphServer, store: Store, seed_bytes: bytes, invoke: Any
):
    ingest_bytes(store, [(seed_bytes, "seed.json")])
    store.close()
    assert push(invoke, store.directory, oxigraph.url).exit_code == 0
    old_remote = remote_graph(oxigraph, SEED_URL)
    story = json.loads(seed_bytes)
    story["headline"] = "Merged headline"
    with Store(store.directory) as st:
        ingest_bytes(st, [(json.dumps(story).encode(), "seed-v2.json")])
    result = push(invoke, store.directory, oxigraph.url, "--mode", "merge", "--verify")
    # Merge keeps the old triples beside the new ones, so the counts differ on purpose.
    assert result.exit_code == 3, result.output
    merged = remote_graph(oxigraph, SEED_URL)
    assert merged == old_remote | local_graph(store.directory, SEED_URL)


def _hostile_extra(seed_bytes: bytes) -> tuple[bytes, str]:
    """A story whose text holds what breaks naive escaping in SPARQL and N-Triples."""
    story = json.loads(seed_bytes)
    story["url"] = "https://hangingcontext.com/stories/2026-10-21/hostile-text/"
    story["slug"] = "hostile-text"
    story["headline"] = (
        'nul\x00 ctl\x01\x1f\x7f esc \\u0022 \\U0001F600 \\" quote " \'\'\' """ '
        "} } ; DROP ALL ; INSERT DATA { <urn:x> <urn:y> <urn:z> } ; { <urn:x> \ud7ff \uffff"
    )
    story["dek"] = "line\nbreak\r\n tab\t back\\slash end\\"
    return json.dumps(story, ensure_ascii=False).encode(), "hostile.json"


def test_update_mode_hostile_literals_round_trip(
    oxigraph: OxigraphServer, corpus_store: Path, seed_bytes: bytes, invoke: Any
):
    with Store(corpus_store) as st:
        report = ingest_bytes(st, [_hostile_extra(seed_bytes)])
    assert not report.failures
    result = push(invoke, corpus_store, oxigraph.url, "--protocol", "update", "--batch", "7")
    assert result.exit_code == 0, result.output
    assert "pushed 206 graphs" in result.output
    local = local_literals(corpus_store)
    remote = remote_literals(oxigraph)
    assert remote.keys() == local.keys()
    for graph in local:
        assert remote[graph] == local[graph], graph
    hostile = "https://hangingcontext.com/stories/2026-10-21/hostile-text/"
    values = {v for v, _, _ in remote[hostile]}
    assert any(v.startswith("nul\x00 ctl\x01\x1f\x7f esc \\u0022 \\U0001F600") for v in values)
    assert oxigraph.graph_counts() == local_counts(corpus_store)


def test_server_stopped_mid_push_then_rerun_completes(
    tmp_path: Path, corpus_store: Path, invoke: Any, run_push_subprocess: Any
):
    upstream = OxigraphServer(tmp_path / "server").start()
    port = free_port()
    try:
        with Proxy(upstream.url, port=port, die_after=60, on_die=upstream.stop) as proxy:
            failed = run_push_subprocess(corpus_store, proxy.url, "--retries", "2")
        assert proxy.dead
        assert failed.returncode == 1, failed.stderr
        lines = failed.stderr.strip().splitlines()
        assert len(lines) == 1, failed.stderr
        assert lines[0].startswith("error: cannot reach http://127.0.0.1:")
        assert "rerun to push the rest" in lines[0]
        assert "Traceback" not in failed.stderr + failed.stdout
        assert "not sent" in failed.stdout
        state = json.loads((corpus_store / STATE_FILE).read_text())
        recorded = state["endpoints"][proxy.url]["graphs"]
        assert 0 < len(recorded) <= 60

        upstream.start()  # same location, same port
        with Proxy(upstream.url, port=port) as proxy2:
            rerun = run_push_subprocess(corpus_store, proxy2.url, "--verify")
        assert rerun.returncode == 0, rerun.stderr
        assert f"pushed {205 - len(recorded)} graphs" in rerun.stdout
        assert f"{len(recorded)} unchanged" in rerun.stdout
        assert "all match" in rerun.stdout
        assert upstream.graph_counts() == local_counts(corpus_store)
    finally:
        upstream.stop()


def test_kill_9_mid_push_keeps_the_acknowledged_graphs(
    tmp_path: Path,
    corpus_store: Path,
    oxigraph: OxigraphServer,
    run_push_subprocess: Any,
    cli_forkserver: Any,
):
    """SIGKILL a real push after 70 acknowledged graphs: the rerun sends only the other 135
    (the acknowledgements were journalled as they came), and the server ends up holding
    exactly what a clean push gives."""
    acked = 70
    cmd = [sys.executable, "-m", "hcgraph", "push", "--store", str(corpus_store),
           "--concurrency", "1", "--retries", "0"]  # fmt: skip
    with Proxy(oxigraph.url, hold_after=acked) as proxy, open(os.devnull, "r+b") as null:
        proc: Any
        if isinstance(cli_forkserver, ForkServer):  # a real process, forked, not exec'd
            fds = (null.fileno(),) * 3
            proc = cli_forkserver.spawn([*cmd[3:], "--endpoint", proxy.url], env=cli_env(),
                                        cwd=None, fds=fds)  # fmt: skip
        else:
            proc = subprocess.Popen([*cmd, "--endpoint", proxy.url], env=cli_env(),
                                    stdout=null, stderr=null)  # fmt: skip
        try:
            assert proxy.held.wait(timeout=180), "the push never reached the held request"
            proc.send_signal(signal.SIGKILL)  # SIGKILL: no finally, no atexit
            assert proc.wait(timeout=60) == -9
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=60)
        endpoint = proxy.url
    assert proxy.methods == {"PUT": acked}
    assert not (corpus_store / STATE_FILE).exists()  # the kill came before the end
    with Proxy(oxigraph.url, port=urlsplit(endpoint).port) as again:
        rerun = run_push_subprocess(corpus_store, again.url, "--concurrency", "1")
    assert rerun.returncode == 0, rerun.stderr
    total = len(local_counts(corpus_store))
    assert again.methods == {"PUT": total - acked}, again.methods
    assert f"pushed {total - acked} graphs" in rerun.stdout and f"{acked} unchanged" in rerun.stdout
    assert not (corpus_store / "push-state.journal").exists()  # folded into push-state.json
    state = json.loads((corpus_store / STATE_FILE).read_text())
    assert len(state["endpoints"][endpoint]["graphs"]) == total
    assert oxigraph.graph_counts() == local_counts(corpus_store)
    remote, local = remote_dataset(oxigraph), local_dataset(corpus_store)
    assert remote.keys() == local.keys()
    for iri in local:  # every graph, triple for triple
        assert remote[iri] == local[iri], iri


SECRET_USER, SECRET_PASS = "alice", "pa55-Wörd:with-colon"


@pytest.fixture
def auth_proxy(oxigraph: OxigraphServer) -> Iterator[Proxy]:
    token = base64.b64encode(f"{SECRET_USER}:{SECRET_PASS}".encode()).decode()
    with Proxy(oxigraph.url, authorization=f"Basic {token}") as proxy:
        yield proxy


def _assert_secret_absent(secret: str, *texts: str, directory: Path) -> None:
    token = base64.b64encode(f"{SECRET_USER}:{secret}".encode()).decode()
    for text in texts:
        assert secret not in text
        assert token not in text
    for path in directory.rglob("*"):
        if path.is_file() and path.stat().st_size < 5_000_000:
            data = path.read_bytes()
            assert secret.encode() not in data, path
            assert token.encode() not in data, path


def test_auth_accepted_and_secret_never_shown(
    auth_proxy: Proxy, oxigraph: OxigraphServer, corpus_store: Path, run_push_subprocess: Any
):
    env = {"HC_PUSH_AUTH": f"{SECRET_USER}:{SECRET_PASS}"}
    done = run_push_subprocess(corpus_store, auth_proxy.url, "--auth-env", "HC_PUSH_AUTH",
                               "--verify", env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "pushed 205 graphs" in done.stdout and "all match" in done.stdout
    # user:password answers the server's challenge (curl's --anyauth): the first requests
    # (one per concurrent worker at most) are challenged, every later one carries Basic.
    assert auth_proxy.forwarded >= 206 and 1 <= auth_proxy.refused <= 4
    assert oxigraph.graph_counts() == local_counts(corpus_store)
    _assert_secret_absent(SECRET_PASS, done.stdout, done.stderr, directory=corpus_store)


def test_auth_wrong_or_missing_credentials_fail_clearly(
    auth_proxy: Proxy, oxigraph: OxigraphServer, corpus_store: Path, run_push_subprocess: Any
):
    wrong = "not-the-pa55word"
    env = {"HC_PUSH_AUTH": f"{SECRET_USER}:{wrong}"}
    bad = run_push_subprocess(corpus_store, auth_proxy.url, "--auth-env", "HC_PUSH_AUTH", env=env)
    assert bad.returncode == 1
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and "HTTP 401: the credentials were refused" in lines[0]
    _assert_secret_absent(wrong, bad.stdout, bad.stderr, directory=corpus_store)

    missing = run_push_subprocess(corpus_store, auth_proxy.url)
    assert missing.returncode == 1
    assert "the server wants credentials (use --auth-env VAR)" in missing.stderr

    unset = run_push_subprocess(corpus_store, auth_proxy.url, "--auth-env", "HC_NOT_SET_6")
    assert unset.returncode == 1
    assert "error: --auth-env HC_NOT_SET_6: the environment variable is not set" in unset.stderr
    assert oxigraph.graph_counts() == {}


def test_bearer_token(
    oxigraph: OxigraphServer, store: Store, seed_bytes: bytes, run_push_subprocess: Any
):
    ingest_bytes(store, [(seed_bytes, "seed.json")])
    store.close()
    token = "tok-" + "x" * 40
    with Proxy(oxigraph.url, authorization=f"Bearer {token}") as proxy:
        done = run_push_subprocess(
            store.directory, proxy.url, "--auth-env", "HC_TOKEN", env={"HC_TOKEN": token}
        )
    assert done.returncode == 0, done.stderr
    assert token not in done.stdout + done.stderr
    assert oxigraph.graph_counts() == local_counts(store.directory)


def test_dry_run_sends_nothing(oxigraph: OxigraphServer, corpus_store: Path, invoke: Any):
    result = push(invoke, corpus_store, oxigraph.url, "--dry-run")
    assert result.exit_code == 0, result.output
    assert "would push 205 of 205 graphs" in result.output
    assert SEED_URL in result.output
    assert oxigraph.graph_counts() == {}
    assert not (corpus_store / STATE_FILE).exists()


def test_unreachable_endpoint_is_one_line(
    tmp_path: Path, store: Store, seed_bytes: bytes, run_push_subprocess: Any
):
    ingest_bytes(store, [(seed_bytes, "seed.json")])
    store.close()
    url = f"http://127.0.0.1:{free_port()}"
    done = run_push_subprocess(store.directory, url, "--retries", "1")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"error: cannot reach {url}/store: All connection attempts failed (after 2 attempts); "
        "rerun to push the rest"
    ]
    assert "5 not sent" in done.stdout
    assert os.environ.get("HC_PUSH_AUTH") is None
