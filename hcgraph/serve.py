"""A read-only SPARQL 1.1 Protocol endpoint over the store, served in-process by hcgraph.

What: :class:`Endpoint` listens on one loopback port (``/query``, GET or POST, any SPARQL
client: YASGUI, SPARQLWrapper, rdflib's SPARQLStore, curl) and evaluates each query in a
small pool of worker processes, each holding the store open read-only
(``pyoxigraph.Store.read_only``) and querying it with ``use_default_graph_as_union`` exactly
as :meth:`hcgraph.store.Store.query` does. Workers listen on no port: they read requests
from, and stream answers to, pipes of the one front process, so no query reaches the store
without passing the guard below.

Why processes: a query in pyoxigraph cannot be interrupted, so a query whose client went
away or whose time (``timeout_s``, default 30 s) ran out is stopped by killing its worker,
which is then replaced; the client of a timed-out query gets ``503`` (or, when part of the
answer was already sent, a connection closed before the final chunk, which every HTTP
client reports as an error, never as a complete document). Answers are streamed in pieces
(64 KiB), small ones sent with a ``Content-Length``.

**Guard.** (1) The query may not use ``SERVICE`` (:func:`hcgraph.sparqlguard.uses_service`;
``allow_service`` lifts this): Oxigraph would fetch the URL (SSRF). (2) The ``Host``
header must name the loopback address and port served (``127.0.0.1:PORT``,
``localhost:PORT``, ``[::1]:PORT``): a web page whose host name an attacker re-pointed at
127.0.0.1 sends its own host name and gets 403 (DNS rebinding). A request with two Host
headers, or an HTTP/1.1 request with none, gets 400 (RFC 9112). (3) Only GET/HEAD and POST
to ``/query``; updates get 403.

**Limits.** The request head must arrive within ``read_timeout_s`` (10 s; also the idle
time allowed between keep-alive requests) and the body within as long again; a head over
64 KiB gets 431, a body over 16 MiB 413. At most ``max_connections`` (256) connections are
open at once (more get 503), ``workers`` queries run at once and the rest wait (inside
their timeout). A client that stops reading an answer for ``read_timeout_s`` is dropped.

**Fresh data.** Before each query a worker looks at the database directory: if its files
changed since the worker opened it and no writer holds the database any more (the lock
file of Oxigraph's RocksDB, checked without taking it), the worker reopens it, so the
first query after an ingest or crawl finishes answers from the new data. While a writer
is running, queries answer from the data as it was when the worker last opened it.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import email.utils
import fcntl
import functools
import ipaddress
import json
import os
import pickle
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import IO, Any
from urllib.parse import SplitResult, parse_qs, urlsplit

from .damage import damage_message, is_damage
from .errors import ServeError, StoreError, first_line
from .limits import default_query_memory, died_of_memory, exceeded_message, limit_memory
from .sparqlguard import SERVICE_REFUSED, uses_service

__all__ = ["DEFAULT_PORT", "DEFAULT_TIMEOUT_S", "Endpoint", "negotiate"]

DEFAULT_PORT = 7878
DEFAULT_TIMEOUT_S = 30.0
_READY_TIMEOUT = 60.0
_MAX_BODY = 16 * 1024 * 1024
_MAX_HEAD = 64 * 1024
_CHUNK = 64 * 1024
_BACKLOG = 1024
_TICK = 0.1  # how often in-flight queries are checked for a gone client or a passed deadline

# Worker -> front frames: one type byte, a 4-byte big-endian length, the payload. An answer
# is one W frame (whole: a small answer), or S (start), D (data)..., E (end, the last data);
# W and S begin with the answer's head, ``STATUS MEDIA-TYPE\n``.
_READY, _START, _DATA, _END, _ABORT, _WHOLE = b"R", b"S", b"D", b"E", b"X", b"W"


def _loopback(host: str) -> str:
    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        raise ServeError(f"--host {host!r}: give a loopback address (127.0.0.1 or ::1)") from None
    if not address.is_loopback:
        raise ServeError(
            f"--host {host}: hcgraph serves on loopback only (127.0.0.1 or ::1); put a reverse"
            " proxy in front to publish it"
        )
    return str(address)


class Endpoint:
    """The SPARQL endpoint over a store directory; a context manager.

    Args:
        store_dir: the hcgraph store directory (its ``oxigraph/`` database is served).
        host: a loopback address (``127.0.0.1`` default, ``::1``, ``localhost``).
        port: TCP port; 0 picks a free one.
        timeout_s: per-query time limit in seconds, answer included (``None`` or 0: none).
        allow_service: let queries use ``SERVICE`` (federation; off by default, see above).
        workers: query worker processes (queries evaluated at once); default 2-4 by CPUs.
        read_timeout_s: time allowed for a request head, for its body, and idle between
            keep-alive requests; also how long a client may stop reading an answer.
        max_connections: connections open at once; more are answered 503 and closed.
        static: files served at fixed paths for GET/HEAD (path -> (media type, bytes)),
            e.g. a query page at ``/``; behind the same Host check as queries.
        fronts: HTTP server processes sharing the one listening socket: 1 (default) runs
            it in a thread of this process; each further one is a child process with
            ``workers`` workers of its own (more CPU for the HTTP side on a busy machine).
        query_memory: bytes of data each query worker may take (``RLIMIT_DATA``, see
            :mod:`hcgraph.limits`); a query needing more gets 503. ``None``: each worker's
            share of half the machine's memory; 0: no limit.

    >>> import tempfile
    >>> from hcgraph import Store
    >>> with tempfile.TemporaryDirectory() as store_dir:
    ...     Store(store_dir).close()  # an empty store
    ...     with Endpoint(store_dir, port=0) as ep:
    ...         print(ep.query_url.startswith("http://127.0.0.1:"))
    True
    """

    def __init__(
        self,
        store_dir: Path | str,
        *,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
        allow_service: bool = False,
        workers: int | None = None,
        read_timeout_s: float = 10.0,
        max_connections: int = 256,
        static: Mapping[str, tuple[str, bytes]] | None = None,
        fronts: int = 1,
        query_memory: int | None = None,
    ) -> None:
        self.host = _loopback(host)
        self.port = port
        self.db_path = Path(store_dir) / "oxigraph"
        self.timeout_s = timeout_s if timeout_s else None
        self.allow_service = allow_service
        self.workers = workers or max(2, min(4, os.cpu_count() or 2))
        self.read_timeout_s = read_timeout_s
        self.max_connections = max_connections
        self.static = dict(static or {})
        self.fronts = max(1, fronts)
        self.query_memory = (
            default_query_memory(self.workers * self.fronts)
            if query_memory is None
            else query_memory
        )
        self._children: list[subprocess.Popen[bytes]] = []
        self._front: _Front | None = None
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()

    @property
    def url(self) -> str:
        """The server's base URL."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def query_url(self) -> str:
        """The SPARQL 1.1 Protocol query endpoint."""
        return f"{self.url}/query"

    def worker_pids(self) -> list[int]:
        """Process ids of this process's query workers ready for queries now (tests and
        diagnostics; a replacement still starting is not listed)."""
        front = self._front
        workers = [] if front is None else front.all_workers
        return [w.proc.pid for w in workers if w.alive and w.ready]

    def start(self) -> Endpoint:
        """Listen, start the workers and wait until every worker has opened the store.

        Raises:
            StoreError: no store there.
            StoreFormatError: the store is of another format (see :mod:`hcgraph.store`).
            ServeError: the port is taken, or a worker or HTTP process did not start.
        """
        if not self.db_path.is_dir():
            raise StoreError(f"{self.db_path.parent}: no store here (run 'hcgraph ingest' first)")
        from .store import read_format  # here: the workers import this module, not the store

        read_format(self.db_path.parent)  # a store of another format is refused, as by Store
        sock = self._listen()
        if self.port == 0:
            self.port = int(sock.getsockname()[1])
        self._stopped.clear()
        self._children = [self._spawn_front(sock) for _ in range(self.fronts - 1)]
        front = self._front = _Front(self, sock)
        self._thread = threading.Thread(
            target=self._run, args=(front,), name="hcgraph-serve", daemon=True
        )
        self._thread.start()
        try:
            front.ready.result(timeout=_READY_TIMEOUT)
            for child in self._children:
                self._child_ready(child)
        except BaseException as exc:
            self.stop()
            if isinstance(exc, ServeError):
                raise ServeError(str(exc)) from None
            if isinstance(exc, concurrent.futures.TimeoutError):
                raise ServeError(
                    f"{self.url}: the query workers did not start within {_READY_TIMEOUT:.0f} s"
                ) from None
            raise
        return self

    def _spawn_front(self, sock: socket.socket) -> subprocess.Popen[bytes]:
        config = {
            "store_dir": str(self.db_path.parent), "host": self.host, "port": self.port,
            "timeout_s": self.timeout_s, "allow_service": self.allow_service,
            "workers": self.workers, "read_timeout_s": self.read_timeout_s,
            "max_connections": self.max_connections, "static": self.static,
            "query_memory": self.query_memory,
        }  # fmt: skip
        # The config goes through stdin (pickled: this process's own child): with static
        # files (the workbench's script is ~1 MB) it is far over the 128 KiB Linux allows for
        # one command-line argument.
        child = subprocess.Popen(
            [sys.executable, "-c", "from hcgraph.serve import _front_main; _front_main()",
             str(sock.fileno())],
            pass_fds=(sock.fileno(),), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        assert child.stdin is not None
        with child.stdin:
            pickle.dump(config, child.stdin)
        return child

    def _child_ready(self, child: subprocess.Popen[bytes]) -> None:
        assert child.stdout is not None
        readable, _, _ = select.select([child.stdout], [], [], _READY_TIMEOUT)
        line = child.stdout.readline().decode("utf-8", "replace").strip() if readable else ""
        if line != "ready":
            raise ServeError(line.removeprefix("error: ") or "an HTTP server process did not start")

    def _listen(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind((self.host, self.port))
            sock.listen(_BACKLOG)
        except OSError as exc:
            sock.close()
            if exc.errno in {98, 48, 10048}:  # EADDRINUSE on Linux, macOS, Windows
                raise ServeError(f"{self.url}: port {self.port} is already in use") from None
            raise ServeError(f"{self.url}: cannot listen: {exc.strerror or exc}") from None
        sock.setblocking(False)
        return sock

    def _run(self, front: _Front) -> None:
        try:
            front.serve()
        finally:
            self._stopped.set()

    def wait(self) -> int:
        """Block until the server stops (:meth:`stop`, from another thread); returns 0."""
        while not self._stopped.wait(0.5):
            pass
        return 0

    def stop(self) -> None:
        """Stop serving: close the port and every connection, end the workers."""
        front, self._front = self._front, None
        if front is not None:
            front.request_stop()
        children, self._children = self._children, []
        for child in children:
            with contextlib.suppress(OSError):
                child.terminate()
        for child in children:
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            if child.stdout is not None:
                child.stdout.close()
        if self._thread is not None:
            self._thread.join(timeout=15)
            self._thread = None

    def __enter__(self) -> Endpoint:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --- the front: HTTP, the guard, the worker pool ------------------------------------------


class _Refusal(Exception):
    """An answer given instead of running the query: status, one-line message."""

    def __init__(self, status: int, message: str, *, close: bool = False, allow: str = ""):
        super().__init__(message)
        self.status = status
        self.message = message
        self.close = close
        self.allow = allow


# Reason phrases; 413's by RFC 9110 (Python before 3.13 has the older "Request Entity Too Large").
_REASONS = {status.value: status.phrase for status in HTTPStatus} | {413: "Content Too Large"}


class _Worker:
    """A query worker process; its answer pipe is a raw non-blocking fd the loop watches
    (no stream objects: one ``os.read`` per readable event, frames cut from the bytes)."""

    def __init__(self, front: _Front, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.front = front
        self.proc = proc
        self.fd_in = proc.stdin.fileno()
        self.fd_out = proc.stdout.fileno()
        os.set_blocking(self.fd_out, False)
        self.buffer = b""
        self.alive = True
        self.ready = False  # the store is open: it takes queries
        self.closed = False
        self.reading = False
        self.conn: _Conn | None = None  # the connection whose query it answers

    def listen(self) -> None:
        if not self.reading and not self.closed:
            self.front.loop.add_reader(self.fd_out, self._readable)
            self.reading = True

    def pause(self) -> None:
        """Stop reading its answer (the client is slow): the worker blocks on the pipe."""
        if self.reading:
            self.front.loop.remove_reader(self.fd_out)
            self.reading = False

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd_in, view) :]

    def _readable(self) -> None:
        try:
            data = os.read(self.fd_out, 1 << 18)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.front.fail(self)
            return
        buf = self.buffer + data if self.buffer else data
        start = 0
        while len(buf) - start >= 5:
            end = start + 5 + int.from_bytes(buf[start + 1 : start + 5], "big")
            if len(buf) < end:
                break
            kind, payload = buf[start : start + 1], buf[start + 5 : end]
            start = end
            self.front.frame(self, kind, payload)
            if self.closed:
                return
        self.buffer = buf[start:] if start else buf

    def kill(self) -> None:
        if self.alive:
            self.alive = False
            with contextlib.suppress(ProcessLookupError, OSError):
                self.proc.kill()

    def close(self) -> None:
        """Kill it and close its pipes (it is reaped by the watchdog)."""
        self.kill()
        self.pause()
        if not self.closed:
            self.closed = True
            for pipe in (self.proc.stdin, self.proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()


@dataclass
class _Request:
    method: str
    target: str
    version: str
    headers: list[tuple[str, str]] = field(default_factory=list)

    def get(self, name: str) -> str | None:
        return next((value for key, value in self.headers if key == name), None)

    def get_all(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key == name]


# Connection states
_S_HEAD, _S_BODY, _S_QUERY, _S_CLOSED = 0, 1, 2, 3


class _Conn(asyncio.Protocol):
    """One client connection: asyncio ``Protocol`` callbacks, no task, no stream; its time
    limits are checked by the front's periodic watchdog (:meth:`tick`)."""

    transport: asyncio.Transport

    def __init__(self, front: _Front) -> None:
        self.front = front
        self.buffer = b""
        self.state = _S_HEAD
        self.since = time.monotonic()  # start of the wait for a head, or for a body
        self.paused_since: float | None = None  # the client stopped reading our answer
        self.eof = False
        self.advancing = False
        self.request: _Request | None = None
        self.keep = True
        self.length = 0
        # the query in flight
        self.worker: _Worker | None = None
        self.waiting = False  # queued for a worker
        self.message = b""
        self.deadline: float | None = None
        self.reason = ""
        self.sent = False

    # --- asyncio callbacks --------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        front = self.front
        if len(front.conns) >= front.ep.max_connections:
            self._refuse(_Refusal(503, "too many connections; retry", close=True))
            front.loop.call_later(1.0, self.transport.abort)
            return
        front.conns.add(self)

    def data_received(self, data: bytes) -> None:
        if self.state == _S_CLOSED:
            return
        self.buffer = self.buffer + data if self.buffer else data
        self._advance()

    def eof_received(self) -> bool:
        self.eof = True
        self._advance()
        return True  # half-open: an answer under way may still go out

    def connection_lost(self, exc: Exception | None) -> None:
        self.state = _S_CLOSED
        self.front.conns.discard(self)
        self.waiting = False
        worker = self.worker
        if worker is not None:  # its query is of no use now: stopped, the worker replaced
            self.reason = self.reason or "gone"
            self.front.fail(worker)

    def pause_writing(self) -> None:
        self.paused_since = time.monotonic()
        if self.worker is not None:
            self.worker.pause()

    def resume_writing(self) -> None:
        self.paused_since = None
        if self.worker is not None:
            self.worker.listen()
        else:
            self._advance()

    # --- the watchdog -------------------------------------------------------------------
    def tick(self, now: float) -> None:
        """A client that stopped reading is dropped, a head or a body late ends the
        connection; a query past its deadline gets 503 if still queued, else its worker is
        killed, as is the worker of a query whose client went."""
        limit = self.front.ep.read_timeout_s
        waited = now - self.since >= limit
        late = self.deadline is not None and now >= self.deadline
        if self.paused_since is not None and now - self.paused_since >= limit:
            self._abort()  # it stopped reading
        elif self.state == _S_HEAD and waited:
            self._close()
        elif self.state == _S_BODY and waited:
            self._refuse(_Refusal(400, "the request body did not arrive in time", close=True))
        elif self.waiting:  # queued for a worker
            if late:
                self.waiting = False
                self._timed_out()
        elif self.state == _S_QUERY and self.worker and not self.reason and (late or self.eof):
            self.reason = "timeout" if late else "gone"
            self.worker.kill()
            self.worker.listen()  # to see its pipe end, even if the client is slow
            if late and self.sent:
                self._abort()  # a half answer must not look whole

    # --- requests -----------------------------------------------------------------------
    def _close(self) -> None:
        self.state = _S_CLOSED
        self.transport.close()

    def _abort(self) -> None:
        self.state = _S_CLOSED
        self.transport.abort()

    def _advance(self) -> None:
        """Take requests out of the buffer while the connection is free for one (not busy
        with a query, not waiting for a slow client to read, not already doing so)."""
        if self.advancing:
            return
        self.advancing = True
        try:
            while self.paused_since is None and self._take():
                pass
        finally:
            self.advancing = False

    def _take(self) -> bool:
        """Take the next request head or body from the buffer; False when there is none
        (yet), the connection closed, or it is busy with a query."""
        if self.state == _S_HEAD:
            buf = self.buffer
            end = buf.find(b"\r\n\r\n")
            if end > _MAX_HEAD or (end == -1 and len(buf) > _MAX_HEAD + 3):
                self._refuse(_Refusal(431, "request head too large", close=True))
                return False
            if end == -1:
                if self.eof:
                    self._close()
                return False
            self.buffer = buf[end + 4 :]
            self._head(buf[: end + 4])
            return True
        if self.state == _S_BODY:
            if len(self.buffer) < self.length:
                if self.eof:
                    self._close()
                return False
            body, self.buffer = self.buffer[: self.length], self.buffer[self.length :]
            self._dispatch(body)
            return True
        return False

    def _head(self, head: bytes) -> None:
        try:
            self.request = request = _parse_head(head)
            self.front._check_host(request)
            self.keep = _keep_alive(request)
            length = _body_length(request)
        except _Refusal as refusal:
            self._refuse(refusal)
            return
        if not length:
            self._dispatch(b"")
            return
        # a client waiting for ``100 Continue`` (curl, for bodies over 1 KiB) gets it first
        expect = (request.get("expect") or "").lower()
        if request.version == "HTTP/1.1" and expect == "100-continue":
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        self.state = _S_BODY
        self.length = length
        self.since = time.monotonic()

    def _dispatch(self, body: bytes) -> None:
        request = self.request
        assert request is not None
        front = self.front
        target = urlsplit(request.target)
        if request.method in {"GET", "HEAD"} and (page := front.ep.static.get(target.path)):
            media, data = page
            self._reply(200, media, data, self.keep, [("Cache-Control", "no-cache")])
            return
        try:
            query, accept = front._query(request, target, body)
        except _Refusal as refusal:
            self._refuse(refusal)
            return
        self.state = _S_QUERY
        timeout = front.ep.timeout_s
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.reason, self.sent = "", False
        message = json.dumps({"q": query, "a": accept}).encode()
        self.message = len(message).to_bytes(4, "big") + message
        if front.idle:
            self.start(front.idle.pop())
        else:
            self.waiting = True
            front.waiting.append(self)

    @property
    def head_only(self) -> bool:
        """The request is a HEAD: its answer goes without a body."""
        return self.request is not None and self.request.method == "HEAD"

    @property
    def chunked(self) -> bool:
        """A streamed answer to the request goes in chunks (HTTP/1.1), not to the close."""
        return self.request is not None and self.request.version == "HTTP/1.1"

    def _reply(
        self, status: int, media: str, body: bytes, keep: bool, extra: list[tuple[str, str]]
    ) -> None:
        """A whole answer, sent with its length (the head only, to a HEAD); then the next
        request, or close."""
        headers = [("Content-Type", media), ("Content-Length", str(len(body))), *extra]
        head = self.front._head(status, headers, not keep)
        self.transport.write(head if self.head_only else head + body)
        self._done(keep)

    def _refuse(self, refusal: _Refusal) -> None:
        """A one-line plain answer instead of (or to) the query."""
        request = self.request
        keep = not refusal.close and request is not None and _keep_alive(request)
        allow = [("Allow", refusal.allow)] if refusal.allow else []
        body = (refusal.message + "\n").encode()
        self._reply(refusal.status, "text/plain; charset=utf-8", body, keep, allow)

    def _done(self, keep: bool) -> None:
        """The answer is written: wait for the next request, or close."""
        self.request = None
        if not keep:
            self._close()
            return
        self.state = _S_HEAD
        self.since = time.monotonic()
        self._advance()

    def _timed_out(self) -> None:
        timeout = self.front.ep.timeout_s
        message = f"the query did not finish within {timeout:g} s (hcgraph serve --timeout-s)"
        self._refuse(_Refusal(503, message))

    # --- the query in a worker ----------------------------------------------------------
    def start(self, worker: _Worker) -> None:
        self.waiting = False
        self.worker = worker
        worker.conn = self
        if self.paused_since is not None:
            worker.pause()
        try:
            worker.send(self.message)
        except OSError:
            self.front.fail(worker)

    def _release(self) -> None:
        worker, self.worker = self.worker, None
        assert worker is not None
        worker.conn = None
        if self.reason or not worker.alive:
            self.front.discard(worker)
        else:
            self.front.put_idle(worker)

    def frame(self, kind: bytes, payload: bytes) -> None:
        """One frame from the worker: a whole answer (sent with its length), or a streamed
        answer's start, data and end; then the next request."""
        if kind in (_WHOLE, _START) and not self.sent:
            head, _, body = payload.partition(b"\n")
            status, _, media = head.decode("latin-1").partition(" ")
            if kind == _START:
                self._stream(int(status), media, body)
                return
            self._release()
            if self.state != _S_CLOSED:
                vary = [("Vary", "Accept")] if status == "200" else []
                self._reply(int(status), media, body, self.keep, vary)
        elif kind == _DATA and self.sent:
            self._data(payload)
        elif kind == _END and self.sent:
            self._data(payload)
            self._release()
            if self.state != _S_CLOSED:
                if self.chunked and not self.head_only:
                    self.transport.write(b"0\r\n\r\n")  # the last chunk
                self._done(self.keep)
        else:
            assert self.worker is not None
            self.front.fail(self.worker)

    def _stream(self, status: int, media: str, body: bytes) -> None:
        """A long answer's head and first piece: streamed (chunked on HTTP/1.1; to the close
        on 1.0)."""
        if self.state == _S_CLOSED:
            return
        headers = [("Content-Type", media), ("Vary", "Accept")]
        if self.chunked:
            headers.append(("Transfer-Encoding", "chunked"))
        self.keep = self.keep and self.chunked
        self.transport.write(self.front._head(status, headers, not self.keep))
        self.sent = True
        self._data(body)

    def _data(self, payload: bytes) -> None:
        """A piece of a streamed answer."""
        if self.state != _S_CLOSED and payload and not self.head_only:
            write = self.transport.write
            write(b"%x\r\n%s\r\n" % (len(payload), payload) if self.chunked else payload)

    def worker_failed(self, out_of_memory: bool = False) -> None:
        """Its worker ended (killed by the watchdog, crashed, ran out of memory, or sent
        nonsense)."""
        self.worker = None
        if self.state == _S_CLOSED:
            return
        if self.reason == "timeout" and not self.sent:
            self._timed_out()
        elif out_of_memory and not self.sent:
            self._refuse(_Refusal(503, _memory_message(self.front.ep.query_memory)))
        elif not self.sent and not self.reason:
            self._refuse(_Refusal(500, "the query worker failed on this query"))
        else:
            self._abort()


class _Front:
    """One HTTP server process's (or thread's) side: its event loop, connections and query
    workers. ``ready`` is done once it serves, or holds why it could not start."""

    def __init__(self, endpoint: Endpoint, sock: socket.socket) -> None:
        self.ep = endpoint
        self.sock = sock
        host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
        names = {host, "localhost"} | ({"127.0.0.1"} if host == "127.0.0.1" else {"[::1]"})
        self.hosts = {f"{n}:{endpoint.port}".lower() for n in names}
        self.all_workers: list[_Worker] = []
        self.idle: list[_Worker] = []
        self.waiting: collections.deque[_Conn] = collections.deque()
        self.conns: set[_Conn] = set()
        self.dying: list[subprocess.Popen[bytes]] = []
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(lambda _loop, _context: None)  # quiet: no tracebacks
        self.stopping = asyncio.Event()
        self.closing = False
        self.started: asyncio.Future[None] = self.loop.create_future()  # every worker ready
        self.ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._ticker: asyncio.TimerHandle | None = None
        self._date = (0.0, b"")

    def request_stop(self) -> None:
        """Stop serving (from any thread, or a signal handler)."""
        if not self.loop.is_closed():
            with contextlib.suppress(RuntimeError):
                self.loop.call_soon_threadsafe(self.stopping.set)

    def serve(self) -> None:
        """Serve on the front's event loop until it stops; an error before it serves (a
        worker could not open the store) goes to ``ready``."""
        try:
            self.loop.run_until_complete(self._run())
        except BaseException as exc:
            if not self.ready.done():
                self.ready.set_exception(exc)
        finally:
            self.loop.close()

    async def _run(self) -> None:
        server: asyncio.Server | None = None
        self._ticker = self.loop.call_later(_TICK, self._tick)
        try:
            for _ in range(self.ep.workers):
                self._spawn()
            await self.started
            server = await self.loop.create_server(
                lambda: _Conn(self), sock=self.sock, backlog=_BACKLOG
            )
            self.ready.set_result(None)
            await self.stopping.wait()
        finally:
            await self._shut(server)

    async def _shut(self, server: asyncio.Server | None) -> None:
        """Stop listening, drop every connection, end the workers (5 s at most)."""
        self.closing = True
        if self._ticker is not None:
            self._ticker.cancel()
        if server is not None:
            server.close()
        else:
            self.sock.close()
        for conn in list(self.conns):
            conn.transport.abort()
        for worker in list(self.all_workers):
            self.discard(worker, replace=False)
        until = time.monotonic() + 5
        while self.dying and time.monotonic() < until:
            self.dying = [p for p in self.dying if p.poll() is None]
            await asyncio.sleep(0.01)
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)

    # --- workers ------------------------------------------------------------------------
    def _spawn(self) -> None:
        if self.closing:
            return
        try:
            proc = subprocess.Popen(
                [sys.executable, "-c", "from hcgraph.serve import _worker_main; _worker_main()",
                 str(self.ep.db_path), str(self.ep.query_memory)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        except OSError as exc:
            self._start_failed(f"a query worker did not start: {first_line(exc)}")
            return
        worker = _Worker(self, proc)
        self.all_workers.append(worker)
        worker.listen()

    def _start_failed(self, message: str) -> None:
        if not self.started.done():
            self.started.set_exception(ServeError(message))
        elif not self.closing:
            self.loop.call_later(1.0, self._spawn)

    def frame(self, worker: _Worker, kind: bytes, payload: bytes) -> None:
        """A frame from a worker: its first says whether it opened the store, the others
        belong to the query it answers."""
        if worker.ready and worker.conn is not None:
            worker.conn.frame(kind, payload)
        elif worker.ready or kind != _READY:  # a frame for no query, or the store not open
            self.fail(worker, payload.decode("utf-8", "replace") or "a query worker did not start")
        else:
            worker.ready = True
            self.put_idle(worker)
            if not self.started.done() and all(w.ready for w in self.all_workers):
                self.started.set_result(None)

    def fail(self, worker: _Worker, message: str = "the query worker exited") -> None:
        """The worker ended or broke: replace it (one still starting: see
        :meth:`_start_failed`); its query (if any) learns it."""
        conn, worker.conn = worker.conn, None
        died = _out_of_memory(worker) if conn is not None and not conn.reason else False
        self.discard(worker, replace=worker.ready)
        if not worker.ready:
            self._start_failed(message)
        elif conn is not None:
            conn.worker_failed(died)

    def discard(self, worker: _Worker, *, replace: bool = True) -> None:
        """End ``worker`` (killed, or broken) and start a fresh one in its place."""
        if worker.closed:
            return
        self.dying.append(worker.proc)
        worker.close()
        if worker in self.all_workers:
            self.all_workers.remove(worker)
        if worker in self.idle:
            self.idle.remove(worker)
        if replace:
            self._spawn()

    def put_idle(self, worker: _Worker) -> None:
        worker.listen()
        while self.waiting:
            conn = self.waiting.popleft()
            if conn.waiting:
                conn.start(worker)
                return
        self.idle.append(worker)

    def _tick(self) -> None:
        """The watchdog, every ``_TICK`` seconds: read and idle time limits, slow readers,
        query deadlines, clients gone; ended workers reaped."""
        try:
            now = time.monotonic()
            for conn in list(self.conns):
                conn.tick(now)
            if self.dying:
                self.dying = [p for p in self.dying if p.poll() is None]
        finally:
            if not self.closing:
                self._ticker = self.loop.call_later(_TICK, self._tick)

    # --- HTTP ---------------------------------------------------------------------------
    def _http_date(self) -> bytes:
        now = time.time()
        if now - self._date[0] >= 1.0:
            self._date = (now, email.utils.formatdate(now, usegmt=True).encode())
        return self._date[1]

    def _head(self, status: int, headers: list[tuple[str, str]], close: bool) -> bytes:
        """A response head: the status line, ``Date``, ``headers``, and ``Connection: close``
        if ``close``."""
        lines = "".join(f"{k}: {v}\r\n" for k, v in headers)
        lines += "Connection: close\r\n" if close else ""
        reason = _REASONS.get(status, "Error")
        return b"HTTP/1.1 %d %s\r\nDate: %s\r\n%s\r\n" % (
            status,
            reason.encode(),
            self._http_date(),
            lines.encode("latin-1"),
        )

    def _check_host(self, request: _Request) -> None:
        hosts = request.get_all("host")
        if len(hosts) > 1:
            raise _Refusal(400, "send one Host header", close=True)
        if not hosts:
            if request.version == "HTTP/1.1":
                raise _Refusal(400, "an HTTP/1.1 request needs a Host header", close=True)
            return
        if hosts[0].lower() not in self.hosts:
            raise _Refusal(403, f"Host {hosts[0]!r} is not this endpoint (DNS rebinding guard)")

    def _query(self, request: _Request, target: SplitResult, body: bytes) -> tuple[str, str]:
        """The query text and Accept header of a GET, HEAD or POST to ``/query``; otherwise,
        or for an unusable query, a refusal."""
        _check_route(request, target)
        params = parse_qs(target.query)
        if request.method == "POST":
            _add_body_params(params, request, body)
        if "default-graph-uri" in params or "named-graph-uri" in params:
            raise _Refusal(400, "default-graph-uri and named-graph-uri are not supported here")
        texts = params.get("query", [])
        if len(texts) != 1:
            raise _Refusal(400, "give one query (a 'query' parameter or a sparql-query body)")
        if not self.ep.allow_service and uses_service(texts[0]):
            raise _Refusal(400, SERVICE_REFUSED.replace("--allow-service", "serve --allow-service"))
        return texts[0], ", ".join(request.get_all("accept"))


def _check_route(request: _Request, target: SplitResult) -> None:
    """Refuse any request but a GET, HEAD or POST to ``/query``."""
    if request.method not in {"GET", "HEAD", "POST"}:
        raise _Refusal(405, "read-only endpoint: GET, HEAD or POST /query", allow="GET, HEAD, POST")
    if request.method == "POST" and target.path != "/query":
        raise _Refusal(403, "read-only endpoint: POST only to /query")
    if target.path != "/query":
        raise _Refusal(404, "not found: the SPARQL endpoint is /query")


def _add_body_params(params: dict[str, list[str]], request: _Request, body: bytes) -> None:
    """Add a POST body's parameters: a form's fields, or a ``sparql-query`` body as ``query``;
    an update (form field or body) is refused."""
    kind = (request.get("content-type") or "").split(";")[0].strip().lower()
    text = body.decode("utf-8", "replace")
    if kind == "application/x-www-form-urlencoded":
        form = parse_qs(text)
        if "update" in form:
            raise _Refusal(403, "read-only endpoint: updates are refused")
        for key, values in form.items():
            params.setdefault(key, []).extend(values)
    elif kind == "application/sparql-query":
        params.setdefault("query", []).append(text)
    elif kind == "application/sparql-update":
        raise _Refusal(403, "read-only endpoint: updates are refused")
    else:
        raise _Refusal(415, "POST the query as application/sparql-query or a form (query=...)")


def _parse_head(head: bytes) -> _Request:
    """The request line and headers of a request head (RFC 9112), or a 400 refusal."""
    lines = head[:-4].split(b"\r\n")
    parts = lines[0].decode("latin-1").split(" ")
    if len(parts) != 3 or not parts[0].isalpha() or not parts[1]:
        raise _Refusal(400, "malformed request line", close=True)
    method, target, version = parts
    if version not in {"HTTP/1.1", "HTTP/1.0"}:
        if version.startswith("HTTP/"):
            raise _Refusal(505, "HTTP/1.1 or HTTP/1.0 only", close=True)
        raise _Refusal(400, "malformed request line", close=True)
    request = _Request(method, target, version)
    for raw in lines[1:]:
        name, sep, value = raw.decode("latin-1").partition(":")
        if not sep or not name or name != name.strip() or " " in name or "\t" in name:
            raise _Refusal(400, "malformed header line", close=True)  # also obs-fold
        request.headers.append((name.lower(), value.strip(" \t")))
    return request


def _keep_alive(request: _Request) -> bool:
    tokens = {t.strip().lower() for v in request.get_all("connection") for t in v.split(",")}
    return "keep-alive" in tokens if request.version == "HTTP/1.0" else "close" not in tokens


def _body_length(request: _Request) -> int:
    """The request body's length from its Content-Length, or a refusal.

    Refused, before any of the body is read: a Transfer-Encoding (411: the body is read
    whole, so its length must be known), a POST without Content-Length (411), a
    Content-Length that is not a plain decimal number or several that disagree (400:
    ``int()`` alone would take ``+5`` and raise on ``abc`` or ``-5``), one over
    ``_MAX_BODY`` (413, read from the digits, not by reading that much).
    """
    values = {v.strip() for v in request.get_all("content-length")}
    if request.get_all("transfer-encoding") or (not values and request.method == "POST"):
        raise _Refusal(411, "send a Content-Length", close=True)
    if not values:
        return 0
    value = values.pop()
    if values or not (value.isascii() and value.isdigit()):
        raise _Refusal(400, "Content-Length must be one number of bytes", close=True)
    digits = value.lstrip("0") or "0"  # int() of thousands of digits raises, too
    if len(digits) > len(str(_MAX_BODY)) or int(digits) > _MAX_BODY:
        raise _Refusal(413, "request body too large", close=True)
    return int(digits)


# --- the worker: one process, the store read-only, one query at a time ---------------------

_SOLUTION_TYPES = (
    ("application/sparql-results+json", "JSON"), ("application/sparql-results+xml", "XML"),
    ("text/csv", "CSV"), ("text/tab-separated-values", "TSV"), ("application/json", "JSON"),
    ("application/xml", "XML"), ("text/xml", "XML"),
)  # fmt: skip
_GRAPH_TYPES = (
    ("application/n-triples", "N_TRIPLES"), ("text/turtle", "TURTLE"),
    ("application/rdf+xml", "RDF_XML"), ("application/n-quads", "N_QUADS"),
    ("application/trig", "TRIG"), ("text/plain", "N_TRIPLES"), ("application/xml", "RDF_XML"),
)  # fmt: skip


@functools.lru_cache(maxsize=256)  # clients send few distinct Accept headers
def negotiate(accept: str, offers: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
    """The offer (media type, format name) an Accept header prefers; None if none is
    acceptable. No Accept: the first offer. Ties go to the earlier offer.

    An offer's ``q`` is that of the most specific range matching it (exact, ``type/*``,
    ``*/*``; the highest among equally specific ones); ``q`` is 1 if absent, 0 if unreadable.
    """
    if not accept.strip():
        return offers[0]
    ranges = _ranges(accept)
    best, chosen = 0.0, None
    for offer in offers:
        media = offer[0]
        specific = {media: 3, f"{media.split('/')[0]}/*": 2, "*/*": 1}
        matches = [(specific[r], q) for r, q in ranges if r in specific]
        q = max(matches)[1] if matches else 0.0
        if q > best:
            best, chosen = q, offer
    return chosen


def _ranges(accept: str) -> list[tuple[str, float]]:
    """An Accept header's media ranges, lower-cased, each with its ``q``."""
    ranges: list[tuple[str, float]] = []
    for item in accept.split(","):
        media, *params = (p.strip() for p in item.split(";"))
        q = 1.0
        for key, _, value in (param.partition("=") for param in params):
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if media:
            ranges.append((media.lower(), q))
    return ranges


class _FrameWriter:
    """File-like sink for pyoxigraph's ``serialize``: frames its bytes onto the pipe, 64 KiB
    at a time, the answer's head in the first frame (a whole answer if it is also the last)."""

    def __init__(self, out: IO[bytes], status: int, media: str) -> None:
        self.out = out
        self.head: bytes | None = b"%d %s\n" % (status, media.encode())
        self.buffer = bytearray()

    def write(self, data: bytes) -> int:
        self.buffer += data
        if len(self.buffer) >= _CHUNK:
            self._send(_DATA if self.head is None else _START)
        return len(data)

    def flush(self) -> None:
        pass  # pieces go out at _CHUNK bytes or at the end, not at each flush

    def _send(self, kind: bytes) -> None:
        _frame(self.out, kind, (self.head or b"") + self.buffer)
        self.head = None
        self.buffer.clear()

    def end(self) -> None:
        self._send(_END if self.head is None else _WHOLE)


def _frame(out: IO[bytes], kind: bytes, payload: bytes = b"") -> None:
    out.write(kind + len(payload).to_bytes(4, "big") + payload)


def _damaged(db_path: str, exc: BaseException) -> str:
    """The line the CLI gives for a damaged store (:mod:`hcgraph.damage`), for an answer."""
    return damage_message(Path(db_path).parent, exc)


def _memory_message(limit: int) -> str:
    return exceeded_message("", limit, "hcgraph serve --query-memory")


def _out_of_memory(worker: _Worker) -> bool:
    """Did the worker, ended with its query unanswered, die of its memory limit? Its pipe
    closed as it exited: its status follows within moments."""
    if not worker.front.ep.query_memory:
        return False
    try:
        code = worker.proc.wait(timeout=0.5)
    except subprocess.TimeoutExpired:
        return False
    return died_of_memory(code)


def _die_with_parent() -> None:
    """Linux: the kernel kills this worker when the server process dies (even by SIGKILL)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class _Database:
    """The worker's read-only view of the store, reopened when a finished write changed it."""

    def __init__(self, path: str) -> None:
        import pyoxigraph as ox

        self.ox = ox
        self.path = path
        self._settle(self._files())
        self.store = ox.Store.read_only(path)
        self.quick: tuple[object, ...] = ()  # the first fresh() scans in full

    def _settle(self, state: tuple[tuple[str, int, int], ...]) -> None:
        """Take ``state`` as the files of the store open now, and the files of it that
        RocksDB appends to in place (the write-ahead ``.log``, ``MANIFEST-``) as those
        :meth:`_quick` looks at."""
        self.state = state
        self.appended = tuple(
            os.path.join(self.path, name)
            for name, _size, _mtime in state
            if name.endswith(".log") or name.startswith("MANIFEST-")
        )

    def _quick(self) -> tuple[object, ...]:
        """What :meth:`fresh` looks at first, in a few ``stat`` calls instead of one per
        file: the directory's mtime (any file created, deleted or renamed: new tables,
        ``CURRENT`` replaced) and the size and mtime of the appended files."""
        found: list[object] = [os.stat(self.path).st_mtime_ns]
        for path in self.appended:
            try:
                stat = os.stat(path)
            except FileNotFoundError:  # deleted since: changed
                found.append(None)
            else:
                found.append((stat.st_size, stat.st_mtime_ns))
        return tuple(found)

    def _files(self) -> tuple[tuple[str, int, int], ...]:
        """Name, size and mtime of the files holding data (not RocksDB's info ``LOG``,
        which every read-only open appends to)."""
        with os.scandir(self.path) as entries:
            return tuple(
                sorted(
                    (e.name, (s := e.stat()).st_size, s.st_mtime_ns)
                    for e in entries
                    if e.name == "CURRENT"
                    or e.name.startswith("MANIFEST-")
                    or e.name.endswith((".sst", ".log", ".blob"))
                )
            )

    def fresh(self) -> Any:
        """The store, reopened first if it changed and no writer holds it now."""
        with contextlib.suppress(OSError):
            quick = self._quick()  # taken before the scan: a later change shows
            if quick == self.quick:
                return self.store  # nothing changed: the full scan costs ~50 µs a query
            state = self._files()
            if state != self.state and not _writer_holds(os.path.join(self.path, "LOCK")):
                for delay in (0, 0.05, 0.05):  # a compaction may delete a file while we open
                    time.sleep(delay)
                    with contextlib.suppress(OSError):
                        self.store = self.ox.Store.read_only(self.path)
                        self._settle(state)
                        break
            if state == self.state:  # settled (unchanged, or reopened): quick checks again
                self.quick = quick
        return self.store


def _writer_holds(lock_path: str) -> bool:
    """True if a process holds the POSIX lock Oxigraph's RocksDB takes on its ``LOCK``
    file (asked with F_GETLK: nothing is taken, a writer starting now is not disturbed).
    Where that cannot be asked (not 64-bit Linux), False: reopen on any change."""
    if not (sys.platform.startswith("linux") and sys.maxsize > 2**32):
        return False
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except OSError:
        return False
    try:
        query = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
        return int(struct.unpack("hhqqi", answer)[0]) != fcntl.F_UNLCK
    except OSError:
        return False
    finally:
        os.close(fd)


def _front_main() -> None:
    """A further HTTP server process (``python -c ... FD``, its config pickled on stdin):
    serves the inherited listening socket with workers of its own until SIGTERM; prints
    ``ready`` once serving."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the first process's to handle
    _die_with_parent()
    endpoint = Endpoint(**pickle.load(sys.stdin.buffer))
    sock = socket.socket(fileno=int(sys.argv[1]))
    sock.setblocking(False)
    front = _Front(endpoint, sock)

    def report(done: concurrent.futures.Future[None]) -> None:
        error = done.exception()
        print("ready" if error is None else f"error: {first_line(error)}", flush=True)

    front.ready.add_done_callback(report)
    signal.signal(signal.SIGTERM, lambda _signum, _frame: front.request_stop())
    front.serve()


def _worker_main() -> None:
    """A query worker (``python -c ... DB_PATH``): answers one query at a time
    from stdin on stdout (frames), until stdin closes. Ctrl-C is the server's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    out = os.fdopen(os.dup(1), "wb", buffering=_CHUNK + 16)
    os.dup2(2, 1)  # a stray print cannot corrupt the frames
    inp = sys.stdin.buffer
    db_path = sys.argv[1]
    limit_memory(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    try:
        db = _Database(db_path)
    except (OSError, RuntimeError) as exc:  # RuntimeError: the engine's "Corruption: …"
        why = f"{db_path}: cannot open the store: {first_line(exc)}"
        _frame(out, _ABORT, (_damaged(db_path, exc) if is_damage(exc) else why).encode())
        out.flush()
        return
    _frame(out, _READY)
    out.flush()
    while True:
        size = inp.read(4)
        if len(size) < 4:
            return
        message = json.loads(inp.read(int.from_bytes(size, "big")))
        try:
            _evaluate(db, message["q"], message["a"], out)
        except BrokenPipeError:
            return
        out.flush()


def _evaluate(db: _Database, query: str, accept: str, out: IO[bytes]) -> None:
    """Answer one query onto ``out`` (frames). The guard ran in the front, the only way in:
    a second ``SERVICE`` look here cost a quarter of a cheap query's time in the worker."""
    ox = db.ox

    def refuse(status: int, message: str) -> None:
        sink = _FrameWriter(out, status, "text/plain; charset=utf-8")
        sink.write((message + "\n").encode())
        sink.end()

    try:
        result = db.fresh().query(query, use_default_graph_as_union=True)
    except SyntaxError as exc:
        refuse(400, first_line(exc))
        return
    except (OSError, RuntimeError) as exc:
        if is_damage(exc):
            refuse(500, _damaged(db.path, exc))
        elif isinstance(exc, OSError):
            refuse(
                503, f"the store could not be read (a write in progress?); retry: {first_line(exc)}"
            )
        else:
            raise
        return
    graph = isinstance(result, ox.QueryTriples)
    offers = _GRAPH_TYPES if graph else _SOLUTION_TYPES
    chosen = negotiate(accept, offers)
    if chosen is None:
        names = ", ".join(dict.fromkeys(m for m, _ in offers))
        refuse(406, f"no result format the Accept header allows; offered: {names}")
        return
    media, name = chosen
    fmt = getattr(ox.RdfFormat if graph else ox.QueryResultsFormat, name)
    sink = _FrameWriter(out, 200, media + ("; charset=utf-8" if media.startswith("text/") else ""))
    try:
        if name == "CSV" and isinstance(result, ox.QuerySolutions):  # see results_csv
            from .results_csv import csv_lines

            variables = [variable.value for variable in result.variables]
            for line in csv_lines(variables, result):
                sink.write(line.encode())
        else:
            result.serialize(sink, fmt)
    except (OSError, ValueError, SyntaxError, RuntimeError) as exc:  # errors surface in writing
        damage = is_damage(exc)
        if sink.head is not None:  # nothing sent yet: a proper error answer
            sink.buffer.clear()
            status = 500 if damage else 503 if isinstance(exc, OSError) else 400
            if isinstance(exc, RuntimeError) and not damage:
                raise
            refuse(status, _damaged(db.path, exc) if damage else first_line(exc))
        else:  # a half answer must not look whole
            _frame(out, _ABORT, (_damaged(db.path, exc) if damage else first_line(exc)).encode())
        return
    except MemoryError:  # Python's side of the answer; the engine's aborts the worker
        sink.buffer.clear()
        if sink.head is not None:
            refuse(503, _memory_message(int(sys.argv[2]) if len(sys.argv) > 2 else 0))
        else:
            _frame(out, _ABORT, b"the query needed more memory than its limit")
        return
    sink.end()
