"""`hcgraph serve` under hostile or careless clients, against the real server.

Half-sent requests, missing or repeated Host headers, a body shorter than its
Content-Length, abandoned and runaway queries, 48 clients at once, every listening port in
the process tree asked for SERVICE, Ctrl-C with a query in flight, and writes while serving.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import httpx
import psutil
import pytest

from hcgraph import Endpoint
from hcgraph.ingest import ingest_bytes
from hcgraph.store import Store
from hcsample.corpus import generate_corpus
from tests.conftest import SEED, cli_env, free_port
from tests.support.serving import worker_pids

pytestmark = pytest.mark.slow

# Every triple with every triple with every triple: runs for hours on any real store.
CARTESIAN_COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
CARTESIAN_ROWS = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
STORIES = (
    "PREFIX hc: <https://w3id.org/hcgraph/ns#> SELECT (COUNT(DISTINCT ?s) AS ?n) { ?s a hc:Story }"
)


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("hostile") / "store"
    corpus = generate_corpus(20, seed=5, include_seed=json.loads(SEED.read_text()))
    with Store(directory) as st:
        ingest_bytes(st, ((json.dumps(s).encode(), str(s["url"])) for s in corpus.stories))
    return directory


@pytest.fixture()
def endpoint(store_dir: Path) -> Iterator[Endpoint]:
    with Endpoint(store_dir, port=0, read_timeout_s=1.0, timeout_s=None, workers=2) as ep:
        yield ep


def _raw(ep: Endpoint, data: bytes, timeout: float = 30) -> bytes:
    """Send ``data`` on a fresh connection and read until the server closes it."""
    with socket.create_connection((ep.host, ep.port), timeout=timeout) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer else 0


def _count(ep: Endpoint, query: str = STORIES) -> int:
    answer = httpx.get(
        ep.query_url, params={"query": query}, headers={"Accept": "text/csv"},
        trust_env=False, timeout=60,
    )  # fmt: skip
    assert answer.status_code == 200, answer.text
    return int(answer.text.split()[1])


def _gone(pid: int) -> bool:
    """Wait (bounded) for a process to end; True if it did."""
    try:
        psutil.Process(pid).wait(timeout=30)
    except psutil.NoSuchProcess:
        return True
    except psutil.TimeoutExpired:
        return False
    return True


def _replaced(ep: Endpoint, old: int) -> None:
    """Wait (bounded) until the endpoint has a fresh worker ready in place of ``old``."""
    for _ in range(600):
        pids = worker_pids(ep)
        if pids and old not in pids:
            return
        time.sleep(0.05)
    raise AssertionError("no replacement worker")


def _busy(pid: int) -> None:
    """Wait (bounded) until a worker is computing (its CPU time grows)."""
    proc = psutil.Process(pid)
    start = sum(proc.cpu_times()[:2])
    for _ in range(300):
        if sum(proc.cpu_times()[:2]) - start > 0.2:
            return
        time.sleep(0.05)
    raise AssertionError("the worker never started the query")


def test_half_sent_requests_are_closed_by_the_read_timeout(endpoint: Endpoint) -> None:
    """100 clients that never finish their request head are dropped, not held forever;
    the endpoint answers others meanwhile."""
    socks = [socket.create_connection((endpoint.host, endpoint.port)) for _ in range(100)]
    try:
        for sock in socks:
            host = f"127.0.0.1:{endpoint.port}"
            sock.sendall(f"GET /query?query=ASK%7B%7D HTTP/1.1\r\nHost: {host}\r\n".encode())
            sock.settimeout(30)
        assert _count(endpoint) == 21
        for sock in socks:
            assert sock.recv(1024) == b""  # closed by the server (else: socket.timeout)
    finally:
        for sock in socks:
            sock.close()


@pytest.mark.parametrize(
    ("head", "status"),
    [
        ("GET /query?query=ASK%7B%7D HTTP/1.1\r\n", 400),  # HTTP/1.1 without Host
        ("GET /query?query=ASK%7B%7D HTTP/1.1\r\nHost: {h}\r\nHost: {h}\r\n", 400),
        ("GET /query?query=ASK%7B%7D HTTP/1.1\r\nHost: {h}\r\nHost: evil.example\r\n", 400),
        ("GET /query?query=ASK%7B%7D HTTP/1.1\r\nHost: evil.example:1\r\n", 403),
        ("GET /query?query=ASK%7B%7D HTTP/1.0\r\n", 200),  # HTTP/1.0 has no Host rule
        ("GET /query?query=ASK%7B%7D HTTP/1.1\r\nHost: {h}\r\nConnection: close\r\n", 200),
    ],
)
def test_host_header_rules(endpoint: Endpoint, head: str, status: int) -> None:
    answer = _raw(endpoint, (head.format(h=f"127.0.0.1:{endpoint.port}") + "\r\n").encode())
    assert _status(answer) == status, answer
    body = answer.partition(b"\r\n\r\n")[2]
    assert body.count(b"\n") == (1 if status != 200 else body.count(b"\n"))


@pytest.mark.parametrize(
    ("head", "status"),
    [
        # absolute form: the target's authority is judged, as the Host header is
        ("GET http://evil.example/query?query=ASK%7B%7D HTTP/1.1\r\nHost: {h}\r\n", 403),
        ("GET http://evil.example:{p}/query?query=ASK%7B%7D HTTP/1.0\r\n", 403),
        ("GET http://{h}/query?query=ASK%7B%7D HTTP/1.1\r\nHost: evil.example\r\n", 403),
        ("GET http://{h}/query?query=ASK%7B%7D HTTP/1.1\r\nHost: {h}\r\n", 200),
        ("GET http://{h}/query?query=ASK%7B%7D HTTP/1.0\r\n", 200),
        ("GET https://{h}/query?query=ASK%7B%7D HTTP/1.1\r\nHost: {h}\r\n", 400),
        # "//host/path" is a path, not an authority
        ("GET //{h}/query?query=ASK%7B%7D HTTP/1.1\r\nHost: {h}\r\n", 404),
    ],
)
def test_host_rule_for_absolute_form_targets(endpoint: Endpoint, head: str, status: int) -> None:
    """`GET http://evil.example/query` must not slip past the DNS rebinding guard."""
    text = head.format(h=f"127.0.0.1:{endpoint.port}", p=endpoint.port) + "Connection: close\r\n"
    answer = _raw(endpoint, (text + "\r\n").encode())
    assert _status(answer) == status, answer
    if status == 403:
        assert b"DNS rebinding" in answer


def test_the_connection_cap_holds_for_the_whole_server(store_dir: Path) -> None:
    """A cap of 4 allows 4 connections open at once (of 12), the rest get a 503 at once; a
    place freed is taken again."""
    with Endpoint(store_dir, port=0, workers=1, max_connections=4,
                  read_timeout_s=20, timeout_s=None) as ep:  # fmt: skip
        request = (
            f"GET /query?query=ASK%7B%7D HTTP/1.1\r\nHost: 127.0.0.1:{ep.port}\r\n"
            "Connection: close\r\n\r\n"
        ).encode()
        socks = [socket.create_connection((ep.host, ep.port), timeout=30) for _ in range(12)]
        try:
            refused, held = [], []
            for sock in socks:  # the refused get a 503 at once; the others wait for a request
                sock.settimeout(3)
                try:
                    refused.append(sock.recv(65536))
                except TimeoutError:
                    held.append(sock)
            assert len(held) == 4, refused
            assert all(_status(a) == 503 and b"too many connections" in a for a in refused)
            for sock in held:
                sock.settimeout(30)
                sock.sendall(request)
                assert _status(sock.recv(65536)) == 200
        finally:
            for sock in socks:
                sock.close()
        for _ in range(100):  # the places are given back: a new client is served
            try:
                if _status(_raw(ep, request)) == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            raise AssertionError("no place given back")


def _unread_tail(ep: Endpoint) -> tuple[socket.socket, int]:
    """A keep-alive client that reads nothing, sent 48 KiB answers one at a time until the
    kernel's buffers are full and the server holds the last one's rest: under the 64 KiB past
    which the server sees that the client stopped reading (``pause_writing``). The socket and
    the number of requests sent."""
    front = ep._front
    assert front is not None and not front.conns
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((ep.host, ep.port))
    request = f"GET /48k HTTP/1.1\r\nHost: 127.0.0.1:{ep.port}\r\n\r\n".encode()
    for _ in range(100):
        if front.conns:
            break
        time.sleep(0.01)
    (conn,) = front.conns
    sent = 0
    while not conn.transport.get_write_buffer_size():
        assert sent < 2000, "the kernel's buffers never filled"
        since = conn.since
        sock.sendall(request)
        sent += 1
        for _ in range(1000):  # the answer is written (the wait for the next head begins)
            if conn.since != since:
                break
            time.sleep(0.002)
    left = conn.transport.get_write_buffer_size()
    assert 0 < left < 65536 and conn.paused_since is None, (left, conn.paused_since)
    return sock, sent


@pytest.mark.parametrize("end", ["idle", "eof", "close"])
def test_a_closed_connection_whose_client_reads_nothing_gives_its_place_back(
    store_dir: Path, end: str
) -> None:
    """The server closes a connection (idle past the read timeout, the client's end of
    sending, ``Connection: close``) with the rest of an answer unread and too little of it
    to count as a client that stopped reading: the client still gets only the read timeout
    to take it, not as long as it keeps its socket open (it held its place: 256 such
    connections locked everyone out)."""
    static = {"/48k": ("text/plain", b"x" * 48 * 1024)}
    with Endpoint(store_dir, port=0, workers=1, max_connections=1, read_timeout_s=1.0,
                  static=static) as ep:  # fmt: skip
        sock, _sent = _unread_tail(ep)
        try:
            if end == "eof":
                sock.shutdown(socket.SHUT_WR)
            elif end == "close":
                sock.sendall(
                    f"GET /48k HTTP/1.1\r\nHost: 127.0.0.1:{ep.port}\r\n"
                    "Connection: close\r\n\r\n".encode()
                )
            front = ep._front
            assert front is not None
            for _ in range(100):  # the read timeout (twice at most) and a margin
                if not front.conns:
                    break
                time.sleep(0.05)
            assert not front.conns
            answer = _raw(ep, f"GET /48k HTTP/1.1\r\nHost: 127.0.0.1:{ep.port}\r\n"
                              "Connection: close\r\n\r\n".encode())  # fmt: skip
            assert _status(answer) == 200
        finally:
            sock.close()


def test_a_closing_connection_sends_all_to_a_client_reading_in_time(store_dir: Path) -> None:
    """The rest of the answers of a closing connection goes out whole to a client that
    starts reading again within the read timeout."""
    static = {"/48k": ("text/plain", b"x" * 48 * 1024)}
    with Endpoint(store_dir, port=0, workers=1, read_timeout_s=1.0, static=static) as ep:
        sock, sent = _unread_tail(ep)
        with sock:
            sock.sendall(
                f"GET /48k HTTP/1.1\r\nHost: 127.0.0.1:{ep.port}\r\n"
                "Connection: close\r\n\r\n".encode()
            )
            time.sleep(0.5)
            sock.settimeout(30)
            answers = b""
            while chunk := sock.recv(65536):  # up to the server's close
                answers += chunk
        assert answers.count(b"HTTP/1.1 200 OK\r\n") == sent + 1
        assert answers.count(b"x" * 48 * 1024) == sent + 1


def _places_free(ep: Endpoint, free: int, cap: int) -> None:
    """Wait (bounded) until at most ``cap - free`` connections are open in ``ep``."""
    front = ep._front
    assert front is not None
    for _ in range(400):
        if len(front.conns) <= cap - free:
            return
        time.sleep(0.05)
    raise AssertionError(f"{len(front.conns)} connections still held")


def _takes_exactly(ep: Endpoint, cap: int) -> None:
    """``cap`` clients at once are answered; one more gets 503 at once."""
    ask = f"GET /query?query=ASK%7B%7D HTTP/1.1\r\nHost: 127.0.0.1:{ep.port}\r\n\r\n".encode()
    socks = [socket.create_connection((ep.host, ep.port), timeout=30) for _ in range(cap + 1)]
    try:
        for sock in socks[:cap]:
            sock.sendall(ask)
        for sock in socks[:cap]:
            assert _status(sock.recv(65536)) == 200
        extra = socks[cap].recv(65536)
        assert _status(extra) == 503 and b"too many connections" in extra
    finally:
        for sock in socks:
            sock.close()


def _reset(sock: socket.socket) -> None:
    """Close with a TCP reset (nothing unsent is delivered)."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def test_connections_ended_every_way_give_their_places_back(store_dir: Path) -> None:
    """Connections closed, reset, left half-sent, idle, pipelined and dropped, refused, given
    bad requests, past their query's time limit, gone mid-query, not reading, or held by a
    client killed outright, three rounds over: the server then still takes exactly its cap
    of connections at once, and again after a stop and a start with connections open."""
    cap = 6
    static = {"/big": ("text/plain", b"x" * (16 << 20))}
    with Endpoint(store_dir, port=0, workers=1, max_connections=cap, read_timeout_s=1.0,
                  timeout_s=2, static=static) as ep:  # fmt: skip
        host = f"Host: 127.0.0.1:{ep.port}\r\n"
        ask = f"GET /query?query=ASK%7B%7D HTTP/1.1\r\n{host}\r\n".encode()
        slow = f"GET /query?query={quote(CARTESIAN_COUNT)} HTTP/1.1\r\n{host}\r\n".encode()
        sends = {
            "nothing": b"",
            "half a head": b"GET /query?query=ASK%7B%7D HTTP/1.1\r\nHo",
            "a request": ask,
            "20 pipelined": ask * 20,
            "a short body": (
                f"POST /query HTTP/1.1\r\n{host}Content-Type: application/sparql-query\r\n"
                "Content-Length: 100\r\n\r\nASK {}"
            ).encode(),
            "garbage": b"NOT HTTP AT ALL\r\n\r\n",
            "a huge head": b"GET / HTTP/1.1\r\nX: " + b"a" * 70000 + b"\r\n\r\n",
            "chunked": (
                f"POST /query HTTP/1.1\r\n{host}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
            ).encode(),
            "another host": b"GET /query?query=ASK%7B%7D HTTP/1.1\r\nHost: evil.example\r\n\r\n",
            "a query past its time": slow,
            "a big answer": f"GET /big HTTP/1.1\r\n{host}\r\n".encode(),
        }
        leaving: list[socket.socket] = []
        for _round in range(3):
            for data in sends.values():
                for end in ("close", "reset", "shut", "leave", "read and leave"):
                    _places_free(ep, 1, cap)
                    sock = socket.create_connection((ep.host, ep.port), timeout=30)
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                    sock.sendall(data)
                    if end == "close":
                        sock.close()
                    elif end == "reset":
                        _reset(sock)
                    elif end == "shut":  # the client's end of sending, then gone
                        sock.shutdown(socket.SHUT_WR)
                        time.sleep(0.01)
                        sock.close()
                    else:  # the server must end it (read timeout, query timeout, 4xx)
                        if end == "read and leave":
                            with contextlib.suppress(OSError):
                                sock.recv(1024)
                        leaving.append(sock)
            # more clients than places at once: the rest get 503
            crowd = [socket.create_connection((ep.host, ep.port)) for _ in range(cap + 4)]
            for i, sock in enumerate(crowd):
                (_reset if i % 2 else socket.socket.close)(sock)
            # a client killed outright with connections open (half a head, a query running)
            _places_free(ep, 3, cap)
            client = subprocess.Popen(
                [sys.executable, "-c", (
                    "import socket, sys, time\n"
                    f"s = [socket.create_connection(('127.0.0.1', {ep.port})) for _ in range(3)]\n"
                    f"s[0].sendall({sends['half a head']!r})\n"
                    f"s[1].sendall({slow!r})\n"
                    "print('ready', flush=True)\n"
                    "time.sleep(60)\n"
                )],
                stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            assert client.stdout is not None and client.stdout.readline() == "ready\n"
            client.kill()
            client.communicate()
        _places_free(ep, cap, cap)
        time.sleep(0.5)  # the last clients' connections are all accepted (and closed) too
        _places_free(ep, cap, cap)
        for sock in leaving:
            sock.close()
        _takes_exactly(ep, cap)
        # a stop with connections open (idle, half-sent, mid-query), and a start again
        held = [socket.create_connection((ep.host, ep.port)) for _ in range(cap)]
        held[0].sendall(sends["half a head"])
        held[1].sendall(slow)
        held[2].sendall(ask)
        _places_free(ep, 0, cap)
        ep.stop()
        for sock in held:
            sock.close()
        ep.start()
        _takes_exactly(ep, cap)


def test_a_stop_while_clients_connect_closes_every_connection(store_dir: Path) -> None:
    """Clients connecting as the server stops: each connection accepted is closed too, none
    left open (its client waiting for ever, the front's loop not closing)."""
    ep = Endpoint(store_dir, port=0, workers=1)
    for _ in range(5):
        ep.start()
        socks = [socket.create_connection((ep.host, ep.port), timeout=5) for _ in range(50)]
        ep.stop()
        try:
            for sock in socks:
                with contextlib.suppress(ConnectionResetError):
                    assert sock.recv(1024) == b""  # else: TimeoutError
        finally:
            for sock in socks:
                sock.close()


def test_a_body_shorter_than_its_content_length_is_dropped(endpoint: Endpoint) -> None:
    head = (
        f"POST /query HTTP/1.1\r\nHost: 127.0.0.1:{endpoint.port}\r\n"
        "Content-Type: application/sparql-query\r\nContent-Length: 100\r\n\r\nASK {}"
    )
    answer = _raw(endpoint, head.encode())  # returns only once the server closed
    assert _status(answer) == 400 and b"did not arrive" in answer


def test_an_abandoned_query_is_stopped_when_its_client_goes(store_dir: Path) -> None:
    with Endpoint(store_dir, port=0, timeout_s=None, workers=1) as ep:
        (pid,) = worker_pids(ep)
        sock = socket.create_connection((ep.host, ep.port))
        sock.sendall(
            f"GET /query?query={quote(CARTESIAN_COUNT)} HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{ep.port}\r\n\r\n".encode()
        )
        _busy(pid)
        sock.close()
        assert _gone(pid)  # the worker was killed, not left computing
        assert _count(ep) == 21  # and replaced
        assert worker_pids(ep) != [pid]


def test_a_client_that_stops_reading_is_dropped(store_dir: Path) -> None:
    """An endless answer to a client that reads nothing: dropped after the read timeout,
    its worker stopped, instead of a connection and a worker held forever."""
    with Endpoint(store_dir, port=0, timeout_s=None, workers=1, read_timeout_s=1) as ep:
        (pid,) = worker_pids(ep)
        query = "CONSTRUCT { ?a ?b ?f } WHERE { ?a ?b ?c . ?d ?e ?f }"
        with socket.create_connection((ep.host, ep.port)) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.sendall(
                f"GET /query?query={quote(query)} HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{ep.port}\r\n\r\n".encode()
            )
            assert _gone(pid)  # nothing read, yet the worker goes
        assert _count(ep) == 21


def test_a_query_past_its_timeout_gets_503_and_is_stopped(store_dir: Path) -> None:
    with Endpoint(store_dir, port=0, timeout_s=1, workers=1) as ep:
        (pid,) = worker_pids(ep)
        answer = httpx.get(ep.query_url, params={"query": CARTESIAN_COUNT}, trust_env=False,
                           timeout=60)  # fmt: skip
        assert answer.status_code == 503
        assert answer.text.count("\n") == 1 and "--timeout-s" in answer.text
        assert _gone(pid)
        _replaced(ep, pid)  # its replacement's start-up is not part of the next query's time
        assert _count(ep) == 21


def test_a_timeout_mid_answer_is_an_error_not_a_short_document(store_dir: Path) -> None:
    """Rows were already streamed when the time ran out: the answer ends without its final
    chunk, which the client reports, instead of a 200 with half a JSON document."""
    with Endpoint(store_dir, port=0, timeout_s=5, workers=1) as ep:
        (pid,) = worker_pids(ep)
        with (
            pytest.raises(httpx.TransportError),
            httpx.stream(
                "GET", ep.query_url, params={"query": CARTESIAN_ROWS}, trust_env=False, timeout=60
            ) as answer,  # fmt: skip
        ):
            assert answer.status_code == 200
            for _ in answer.iter_bytes():
                pass
        _replaced(ep, pid)
        assert _count(ep) == 21


def test_a_construct_answer_is_streamed(endpoint: Endpoint, store_dir: Path) -> None:
    with Store(store_dir, read_only=True) as st:
        (row,) = st.query("SELECT (COUNT(*) AS ?n) { GRAPH ?g { ?s ?p ?o } }")
        triples = int(row[0].value)
    query = "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }"
    accept = {"Accept": "application/n-triples"}
    with httpx.stream("GET", endpoint.query_url, params={"query": query}, trust_env=False,
                      headers=accept, timeout=60) as answer:  # fmt: skip
        assert answer.headers["transfer-encoding"] == "chunked"
        assert "content-length" not in answer.headers
        lines = sum(chunk.count(b"\n") for chunk in answer.iter_bytes())
    assert lines == triples


class _Probe(BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:
        type(self).hits += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        body = b'{"head":{"vars":[]},"results":{"bindings":[{}]}}'
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, format: str, *args: object) -> None:
        pass


def _serve_cli(store_dir: Path, *args: str) -> tuple[subprocess.Popen[str], int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hcgraph", "serve", "--port", str(port), "--store",
         str(store_dir), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(), text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    banner = proc.stderr.readline() if proc.stderr else ""
    assert f"http://127.0.0.1:{port}/query" in banner, banner
    return proc, port


def test_no_listening_port_in_the_process_tree_runs_service(store_dir: Path) -> None:
    """Whatever port the serve process or its children listen on, a SERVICE query sent
    there never reaches the probe (the old Oxigraph backend port did)."""
    _Probe.hits = 0
    probe = ThreadingHTTPServer(("127.0.0.1", 0), _Probe)
    threading.Thread(target=probe.serve_forever, daemon=True).start()
    service = (
        f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{probe.server_port}/sparql> {{ ?s ?p ?o }} }}"
    )
    proc, _port = _serve_cli(store_dir)
    try:
        tree = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
        ports = {
            c.laddr.port
            for p in tree
            for c in p.net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN
        }
        assert ports  # the endpoint itself, at least
        for port in ports:
            for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
                with httpx.Client(trust_env=False, timeout=30) as client:
                    client.get(f"http://127.0.0.1:{port}/query", params={"query": service},
                               headers={"Host": host})  # fmt: skip
                    client.post(f"http://127.0.0.1:{port}/query", data={"query": service},
                                headers={"Host": host})  # fmt: skip
        assert _Probe.hits == 0
    finally:
        proc.kill()
        proc.communicate()
        probe.shutdown()
        probe.server_close()


def test_48_clients_with_a_connection_per_request_get_no_errors(endpoint: Endpoint) -> None:
    url = f"/query?query={quote('ASK { ?s ?p ?o }')}"

    def client(_: int) -> list[int]:
        statuses = []
        for _ in range(15):
            conn = http.client.HTTPConnection(endpoint.host, endpoint.port, timeout=60)
            try:
                conn.request("GET", url, headers={"Connection": "close"})
                answer = conn.getresponse()
                answer.read()
                statuses.append(answer.status)
            except OSError as exc:
                statuses.append(-1)
                print("error:", exc)
            finally:
                conn.close()
        return statuses

    with ThreadPoolExecutor(48) as pool:
        statuses = [s for batch in pool.map(client, range(48)) for s in batch]
    assert statuses == [200] * (48 * 15)


def test_ctrl_c_with_a_query_in_flight_stops_cleanly(store_dir: Path) -> None:
    proc, port = _serve_cli(store_dir, "--timeout-s", "0")
    workers = psutil.Process(proc.pid).children(recursive=True)
    assert workers
    sock = socket.create_connection(("127.0.0.1", port))
    try:
        sock.sendall(
            f"GET /query?query={quote(CARTESIAN_COUNT)} HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{port}\r\n\r\n".encode()
        )
        for _ in range(300):  # a worker has the query
            if any(w.cpu_times().user > 0.5 for w in workers):
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        sock.close()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0
    assert err.strip() == "stopped", err
    assert all(_gone(w.pid) for w in workers)


def _story(n: int) -> tuple[bytes, str]:
    (story,) = generate_corpus(n, seed=77).stories[n - 1 : n]
    return json.dumps(story).encode(), str(story["url"])


def test_a_write_after_the_server_started_is_seen_by_the_next_query(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    with Store(store_dir) as st:
        ingest_bytes(st, [_story(1)])
    with Endpoint(store_dir, port=0, workers=2) as ep:
        assert _count(ep) == 1
        with Store(store_dir) as st:  # an ingest while serving
            ingest_bytes(st, [_story(2)])
        assert _count(ep) == 2
        assert _count(ep) == 2  # and on the other worker


def test_a_write_running_when_the_server_starts_is_seen_once_it_finishes(
    tmp_path: Path,
) -> None:
    store_dir = tmp_path / "store"
    with Store(store_dir) as st:
        ingest_bytes(st, [_story(1)])
    # the writer runs in a process of its own, as an ingest or crawl would
    code = (
        "import sys, json\n"
        "from hcgraph.store import Store\n"
        "from hcgraph.ingest import ingest_bytes\n"
        "from tests.test_serve_hostile import _story\n"
        "with Store(sys.argv[1]) as st:\n"
        "    ingest_bytes(st, [_story(2)])\n"
        "    print('written', flush=True)\n"
        "    sys.stdin.readline()\n"
        "    ingest_bytes(st, [_story(3)])\n"
    )
    writer = subprocess.Popen(
        [sys.executable, "-c", code, str(store_dir)], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True, env=cli_env(), cwd=Path(__file__).parent.parent,
    )  # fmt: skip
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "written\n"
        with Endpoint(store_dir, port=0, workers=1) as ep:
            before = _count(ep)  # the data as it was when the server opened it
            assert before in {1, 2}
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.close()
            assert writer.wait(timeout=60) == 0
            assert _count(ep) == 3
    finally:
        if writer.poll() is None:
            writer.kill()
        for pipe in (writer.stdin, writer.stdout):
            if pipe is not None:
                pipe.close()
        writer.wait()


def test_a_client_expecting_100_continue_gets_it(endpoint: Endpoint) -> None:
    """curl sends `Expect: 100-continue` for bodies over 1 KiB and waits for it."""
    body = "query=" + quote("ASK { ?s ?p ?o }" + " " * 2000)
    with socket.create_connection((endpoint.host, endpoint.port), timeout=30) as sock:
        sock.sendall(
            f"POST /query HTTP/1.1\r\nHost: 127.0.0.1:{endpoint.port}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\nExpect: 100-continue\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        )
        assert sock.recv(1024).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(body.encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert _status(answer) == 200 and answer.endswith(b'"boolean":true}')
