"""Batched hand-off to the query workers, against the real server: answers stay in order
on each connection, a slow query in a batch does not fail its neighbours, a worker killed
with a batch queued behind its query loses none of them, and a worker skips the queries
taken back from it.

Each test first holds every worker with a query that runs for hours, sends the queries
under test (they queue), then lets the workers go by closing those connections (the
abandoned-query kill): the fresh workers take the queued queries as batches.
"""

from __future__ import annotations

import json
import mmap
import os
import signal
import socket
import struct
import threading
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from hcgraph import Endpoint
from hcgraph.ingest import ingest_bytes
from hcgraph.serve import pool
from hcgraph.serve.server import Endpoint as _Endpoint
from hcgraph.serve.worker import SKIPPED, WHOLE, encode_query, start_worker
from hcgraph.store import Store
from hcsample.corpus import generate_corpus
from tests.conftest import SEED
from tests.support.serving import worker_pids

pytestmark = pytest.mark.slow

CARTESIAN = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("batch") / "store"
    corpus = generate_corpus(5, seed=5, include_seed=json.loads(SEED.read_text()))
    with Store(directory) as st:
        ingest_bytes(st, ((json.dumps(s).encode(), str(s["url"])) for s in corpus.stories))
    return directory


def _number(n: int) -> str:
    """A query whose answer names ``n``: which request an answer belongs to."""
    return f"SELECT ?n WHERE {{ BIND({n} AS ?n) }}"


def _request(ep: Endpoint, query: str) -> bytes:
    return (
        f"GET /query?query={quote(query)} HTTP/1.1\r\nHost: 127.0.0.1:{ep.port}\r\n"
        "Accept: text/csv\r\n\r\n"
    ).encode()


def _connect(ep: Endpoint, *queries: str) -> socket.socket:
    """A connection with ``queries`` sent on it (pipelined)."""
    sock = socket.create_connection((ep.host, ep.port), timeout=60)
    sock.sendall(b"".join(_request(ep, q) for q in queries))
    return sock


class _Answers:
    """Reads the answers on a connection in a thread: (status, body, arrival time) each."""

    def __init__(self, sock: socket.socket, count: int) -> None:
        self.sock, self.count = sock, count
        self.got: list[tuple[int, str, float]] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        reader = self.sock.makefile("rb")
        for _ in range(self.count):
            status_line = reader.readline()
            if not status_line:
                return
            length = 0
            while (line := reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            body = reader.read(length).decode()
            self.got.append((int(status_line.split()[1]), body, time.monotonic()))

    def wait(self) -> list[tuple[int, str, float]]:
        self.thread.join(timeout=120)
        self.sock.close()
        return self.got


def _pool(ep: Endpoint) -> pool.Pool:
    assert isinstance(ep, _Endpoint) and ep._front is not None
    return ep._front.pool


def _until(check: object, what: str) -> None:
    for _ in range(1200):
        if check():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError(what)


def _hold_workers(ep: Endpoint) -> list[socket.socket]:
    """Give every worker a query that runs for hours (each on its own connection)."""
    holders = []
    for _ in worker_pids(ep):
        holders.append(_connect(ep, CARTESIAN))
        time.sleep(0.2)  # one at a time: each to an idle worker
    _until(lambda: all(w.batch for w in _pool(ep).all), "the workers never got busy")
    return holders


def _queued(ep: Endpoint, count: int) -> None:
    _until(lambda: len(_pool(ep).waiting) >= count, "the queries never queued")


def test_answers_stay_in_order_on_every_connection(store_dir: Path) -> None:
    """16 connections, 3 pipelined queries each, one worker: the queries go in batches
    (the first 16 in one), and every connection gets its own answers, in its order."""
    with Endpoint(store_dir, port=0, timeout_s=None, workers=1) as ep:
        holders = _hold_workers(ep)
        socks = [_connect(ep, *(_number(c * 10 + i) for i in range(3))) for c in range(16)]
        readers = [_Answers(sock, 3) for sock in socks]
        _queued(ep, 16)
        for holder in holders:
            holder.close()  # the worker is killed; its replacement takes the queue
        for c, reader in enumerate(readers):
            got = reader.wait()
            assert [(status, body.split()[1]) for status, body, _ in got] == [
                (200, str(c * 10 + i)) for i in range(3)
            ]
        assert _pool(ep).largest == 16


def test_a_query_timing_out_in_a_batch_does_not_fail_its_neighbours(store_dir: Path) -> None:
    """A runaway query at the head of a batch: after a moment the rest of its batch is
    given back and answered by the other worker, long before the runaway's 503."""
    with Endpoint(store_dir, port=0, timeout_s=12, workers=2) as ep:
        holders = _hold_workers(ep)
        runaway = _Answers(_connect(ep, CARTESIAN), 1)
        time.sleep(0.1)  # first in line
        neighbours = [_Answers(_connect(ep, _number(n)), 1) for n in range(1, 6)]
        _queued(ep, 6)
        for holder in holders:
            holder.close()
        answers = [reader.wait() for reader in neighbours]
        (late,) = runaway.wait()
        assert late[0] == 503 and "--timeout-s" in late[1]
        for n, got in enumerate(answers, 1):
            assert [(status, body.split()[1]) for status, body, _ in got] == [(200, str(n))]
            assert got[0][2] < late[2]  # answered before the runaway's time ran out
        assert _pool(ep).largest >= 3  # the runaway and two neighbours went together
        assert _pool(ep).given_back >= 2


def test_a_worker_killed_with_a_batch_queued_loses_none_of_it(
    store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker dies under the head of a batch (nothing given back yet): the head gets
    500, the queries behind it go to the replacement and get their answers."""
    monkeypatch.setattr(pool, "STEAL_AFTER_S", 1e9)
    with Endpoint(store_dir, port=0, timeout_s=None, workers=1) as ep:
        holders = _hold_workers(ep)
        head = _Answers(_connect(ep, CARTESIAN), 1)
        time.sleep(0.1)
        behind = [_Answers(_connect(ep, _number(n)), 1) for n in range(1, 4)]
        _queued(ep, 4)
        holders[0].close()
        _until(lambda: _pool(ep).largest == 4, "the batch never went out")
        (worker,) = _pool(ep).all
        os.kill(worker.proc.pid, signal.SIGKILL)
        (failed,) = head.wait()
        assert failed[0] == 500 and "worker failed" in failed[1]
        for n, reader in enumerate(behind, 1):
            assert [(s, body.split()[1]) for s, body, _ in reader.wait()] == [(200, str(n))]
        assert _pool(ep).given_back == 3


def test_a_worker_skips_the_queries_taken_back_from_it(store_dir: Path) -> None:
    """The skip flag: queries numbered within its range are answered ``K`` without being
    run, the others answered."""
    fd = os.memfd_create("skip-test")
    os.ftruncate(fd, mmap.PAGESIZE)
    flag = mmap.mmap(fd, mmap.PAGESIZE)
    proc = start_worker(store_dir / "oxigraph", 0, fd)
    os.close(fd)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.read(5) == b"R" + bytes(4)  # the store is open
        flag[:16] = (2).to_bytes(8, "little") + (3).to_bytes(8, "little")
        for n in (1, 2, 3, 4):
            proc.stdin.write(encode_query(_number(n), "text/csv"))
        proc.stdin.flush()
        frames = []
        for _ in range(4):
            kind, size = struct.unpack(">cI", proc.stdout.read(5))
            frames.append((kind, proc.stdout.read(size)))
        assert [kind for kind, _ in frames] == [WHOLE, SKIPPED, SKIPPED, WHOLE]
        assert [frames[0][1].split()[-1], frames[3][1].split()[-1]] == [b"1", b"4"]
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()
        flag.close()
