"""`hcgraph serve`: the real Oxigraph server over the store, queried by real SPARQL clients."""

from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hcgraph import Endpoint, ServeError, StoreError, run_query, saved_queries
from hcgraph.ingest import ingest_bytes
from hcgraph.results import display
from hcgraph.store import Store
from hcsample.corpus import generate_corpus
from tests.conftest import SEED, cli_env

pytestmark = pytest.mark.slow  # the Oxigraph server in a subprocess


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("served") / "store"
    corpus = generate_corpus(40, seed=12, include_seed=json.loads(SEED.read_text()))
    with Store(directory) as st:
        ingest_bytes(st, ((json.dumps(s).encode(), str(s["url"])) for s in corpus.stories))
    return directory


@pytest.fixture(scope="module")
def endpoint(store_dir: Path) -> Iterator[Endpoint]:
    with Endpoint(store_dir, port=0) as ep:
        yield ep


def _remote(endpoint: Endpoint, sparql: str) -> set[tuple[str, ...]]:
    answer = httpx.post(
        endpoint.query_url, data={"query": sparql},
        headers={"Accept": "application/sparql-results+json"}, timeout=60, trust_env=False,
    )  # fmt: skip
    answer.raise_for_status()
    doc = answer.json()
    names = doc["head"]["vars"]
    return {tuple(b.get(v, {}).get("value", "") for v in names) for b in doc["results"]["bindings"]}


def test_saved_queries_give_the_same_rows_over_http(endpoint: Endpoint, store_dir: Path) -> None:
    """Same text, same union default graph: every parameter-free saved query matches."""
    with Store(store_dir, read_only=True) as st:
        for name, query in saved_queries().items():
            if query.params:
                continue
            local = {tuple(display(t) for t in row) for row in run_query(st, query).terms}
            assert _remote(endpoint, query.text) == local, name
            empty_ok = {
                "uncited-paragraphs",
                "unsupported-key-facts",
                "manifest-conflicts",
                "duplicate-ids",
                "reply-conflicts",  # this store holds no manifest replies:
                "unsupported-paragraphs",  # tests/test_claims.py has stores that do
            }
            assert local or name in empty_ok, name


def test_rdflib_sparqlstore_client(endpoint: Endpoint) -> None:
    """A second, independent client library speaking the SPARQL 1.1 Protocol."""
    import rdflib
    from rdflib.plugins.stores.sparqlstore import SPARQLStore

    graph = rdflib.Graph(store=SPARQLStore(endpoint.query_url, returnFormat="json"))
    rows = list(graph.query(
        "PREFIX hc: <https://w3id.org/hcgraph/ns#> SELECT (COUNT(DISTINCT ?s) AS ?n) "
        "WHERE { ?s a hc:Story }"
    ))  # fmt: skip
    assert int(rows[0][0]) == 41


def test_read_only_and_loopback(endpoint: Endpoint, store_dir: Path) -> None:
    answer = httpx.post(f"{endpoint.url}/update", data={"update": "DROP ALL"}, trust_env=False)
    assert answer.status_code >= 400
    (count,) = _remote(endpoint, "SELECT (COUNT(*) AS ?n) { GRAPH ?g { ?s ?p ?o } }")
    assert int(count[0]) > 0  # still all there
    assert endpoint.host == "127.0.0.1"
    for host in ("0.0.0.0", "192.168.1.2", "example.org", "::"):
        with pytest.raises(ServeError, match="loopback"):
            Endpoint(store_dir, host=host)
    with pytest.raises(ServeError, match="already in use") as taken:
        Endpoint(store_dir, port=endpoint.port).start()
    assert not isinstance(taken.value, StoreError)  # the server's trouble, not the store's
    with pytest.raises(StoreError, match="no store here"):
        Endpoint(store_dir.parent / "nothing", port=0).start()


def test_ipv6_loopback(store_dir: Path) -> None:
    try:
        ep = Endpoint(store_dir, host="::1", port=0).start()
    except (ServeError, OSError) as exc:  # a machine without IPv6 on loopback
        pytest.skip(f"no IPv6 loopback here: {exc}")
    try:
        assert ep.url.startswith("http://[::1]:")
        answer = httpx.get(ep.query_url, params={"query": "SELECT ?s ?p ?o { ?s ?p ?o } LIMIT 1"},
                           headers={"Accept": "text/csv"}, trust_env=False)  # fmt: skip
        assert answer.status_code == 200 and answer.text.startswith("s,p,o")
    finally:
        ep.stop()


def test_cli_serve_until_interrupted(store_dir: Path, tmp_path: Path) -> None:
    from tests.conftest import free_port

    port = free_port()
    # Ctrl-C reaches a foreground command with SIGINT at its default. When the suite itself
    # runs as a background job (`pytest &`, some CI runners) the shell starts it with SIGINT
    # ignored, Python keeps an ignored SIGINT ignored, and the server would never see it.
    proc = subprocess.Popen(
        [sys.executable, "-m", "hcgraph", "serve", "--port", str(port), "--store", str(store_dir)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(), text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        banner = proc.stderr.readline() if proc.stderr else ""
        assert f"http://127.0.0.1:{port}/query" in banner
        answer = httpx.get(
            f"http://127.0.0.1:{port}/query", trust_env=False,
            params={"query": "PREFIX hc: <https://w3id.org/hcgraph/ns#> "
                             "SELECT (COUNT(DISTINCT ?s) AS ?n) { ?s a hc:Story }"},
            headers={"Accept": "text/csv"},
        )  # fmt: skip
        assert answer.text.split() == ["n", "41"]
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0 and "stopped" in err
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    time.sleep(0.2)
    with pytest.raises(httpx.TransportError):  # the server went with it
        httpx.get(f"http://127.0.0.1:{port}/query", params={"query": "ASK {}"}, trust_env=False)


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (Linux's /proc children lists)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in map(int, (task / "children").read_text().split()):
            found |= {child, *_descendants(child)}
    return found


def _gone(pid: int) -> bool:
    """No process ``pid``, or only a reaped-by-nobody zombie of an exited parent."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def test_cli_serve_stops_cleanly_on_sigterm_however_often_it_comes(store_dir: Path) -> None:
    """SIGTERM, as service managers and `timeout` send it (`timeout` signals the command and
    then its whole process group, so the server can get it twice): the server stops as on
    Ctrl-C, exits 0, its processes are gone and the port is free, whichever moment of the
    stop (or after it) a repeated SIGTERM lands in."""
    from tests.support.serving import start_cli_serve

    proc, port, banner = start_cli_serve(store_dir, stdout=subprocess.PIPE)
    try:
        assert f"http://127.0.0.1:{port}/query" in banner
        children = _descendants(proc.pid)
        assert children  # the query workers
        said = ""
        while "stopped" not in said and proc.poll() is None:  # repeated through the stop
            proc.send_signal(signal.SIGTERM)
            if select.select([proc.stderr], [], [], 0.002)[0]:
                said += proc.stderr.readline()
        proc.send_signal(signal.SIGTERM)  # and one after "stopped", before the process ends
        _out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, said + err
        assert (said + err).splitlines()[-1] == "stopped" and "Traceback" not in said + err
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert all(_gone(pid) for pid in children)
    with socket.socket() as again:  # the port is free for the next server
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))


def test_wait_returns_at_once_when_nothing_serves(store_dir: Path, endpoint: Endpoint) -> None:
    """Never started, or its start failed (the port taken): nothing to wait for."""
    import threading

    taken = Endpoint(store_dir, port=endpoint.port)
    with pytest.raises(ServeError, match="already in use"):
        taken.start()
    for ep in (Endpoint(store_dir, port=0), taken):
        waiting = threading.Thread(target=ep.wait, daemon=True)
        waiting.start()
        waiting.join(5)
        assert not waiting.is_alive()


def test_a_ctrl_c_in_wait_leaves_stop_to_end_the_front(store_dir: Path) -> None:
    """Ctrl-C (or `serve`'s SIGTERM) raises KeyboardInterrupt in the main thread while it is
    in :meth:`Endpoint.wait`; :meth:`Endpoint.stop` must then still wait for the front's
    thread to close the connections and end the workers. (Interrupted inside
    ``Thread.join``, Python 3.11's join marks the still-running thread stopped, and a stop
    joining it returned at once: "stopped" was printed with the front still serving.)"""
    import os
    import threading

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGUSR1, interrupt)
    others = _descendants(os.getpid())  # other tests' servers
    ep = Endpoint(store_dir, port=0, workers=1).start()
    try:
        front = ep._thread
        assert front is not None
        workers = _descendants(os.getpid()) - others
        assert workers  # the query worker
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGUSR1)).start()
        with pytest.raises(KeyboardInterrupt):
            ep.wait()
    finally:
        signal.signal(signal.SIGUSR1, previous)
        ep.stop()
    assert front.ident not in sys._current_frames()  # the front's thread really ended
    assert all(_gone(pid) for pid in workers)


def test_cli_refuses_public_address(run_cli: Any, store_dir: Path) -> None:
    proc = run_cli("serve", "--host", "0.0.0.0", "--store", store_dir)
    assert proc.returncode == 1 and "loopback only" in proc.stderr
    assert "Traceback" not in proc.stderr


def _raw_post(endpoint: Endpoint, *headers: str) -> tuple[int, bytes]:
    """POST /query with exactly these header lines and no body; the status and body of
    the answer, read until the server closes (it must: the body, if any, is unread)."""
    head = "".join(
        f"{h}\r\n" for h in ("POST /query HTTP/1.1", f"Host: 127.0.0.1:{endpoint.port}", *headers)
    )
    with socket.create_connection((endpoint.host, endpoint.port), timeout=10) as sock:
        sock.sendall(f"{head}\r\n".encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    if not answer:
        return 0, b""  # no answer at all (what curl reports as 000)
    status_line, _, rest = answer.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        (("Content-Length: abc",), 400),
        (("Content-Length: -5",), 400),
        (("Content-Length: +5",), 400),
        (("Content-Length: 5", "Content-Length: 7"), 400),
        (("Content-Length: 99999999999",), 413),  # refused from the header, nothing read
        (("Content-Length: " + "9" * 5000,), 413),  # int() of that many digits raises
        ((), 411),
        (("Transfer-Encoding: chunked",), 411),
    ],
)
def test_post_with_a_bad_content_length_is_refused(
    endpoint: Endpoint, headers: tuple[str, ...], status: int, capfd: pytest.CaptureFixture[str]
) -> None:
    """A malformed, missing or huge Content-Length gets a short text answer, not a dropped
    connection and a traceback on the serve terminal; the endpoint keeps serving."""
    got, body = _raw_post(endpoint, *headers)
    assert (got, body.count(b"\n")) == (status, 1), body
    assert "Traceback" not in capfd.readouterr().err
    ok = httpx.post(endpoint.query_url, data={"query": "ASK {}"}, trust_env=False, timeout=30)
    assert ok.status_code == 200


def test_static_pages_are_served_behind_the_host_check(store_dir: Path) -> None:
    """The HTTP layer serves fixed files too (a query page at / to come)."""
    page = b"<!doctype html><title>q</title>"
    with Endpoint(store_dir, port=0, static={"/": ("text/html; charset=utf-8", page)}) as ep:
        answer = httpx.get(ep.url + "/", trust_env=False)
        assert answer.status_code == 200 and answer.content == page
        assert answer.headers["content-type"].startswith("text/html")
        head = httpx.head(ep.url + "/", trust_env=False)
        assert head.status_code == 200 and head.headers["content-length"] == str(len(page))
        assert head.content == b""
        evil = httpx.get(ep.url + "/", headers={"Host": "evil.example"}, trust_env=False)
        assert evil.status_code == 403
        assert httpx.get(ep.url + "/other", trust_env=False).status_code == 404
