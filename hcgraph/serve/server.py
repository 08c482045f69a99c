"""The :class:`Endpoint`: the listening socket, the HTTP front serving it, its lifetime."""

from __future__ import annotations

import concurrent.futures
import ipaddress
import os
import socket
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ServeError, StoreError
from ..limits import default_query_memory

if TYPE_CHECKING:
    from .front import Front

__all__ = ["DEFAULT_PORT", "DEFAULT_TIMEOUT_S", "Endpoint"]

DEFAULT_PORT = 7878
DEFAULT_TIMEOUT_S = 30.0
_READY_TIMEOUT = 60.0
BACKLOG = 1024  # the listening socket's, also when the front's event loop listens again


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
        allow_service: let queries use ``SERVICE`` (federation; off by default).
        workers: query worker processes (queries evaluated at once); default 2-4 by CPUs.
        read_timeout_s: time allowed for a request head, its body, idle keep-alive, and a
            client that stopped reading an answer.
        max_connections: connections open at once in the whole server; more get 503.
        static: path -> (media type, bytes) served for GET/HEAD (the workbench at ``/``).
        query_memory: bytes of data each query worker may take (:mod:`hcgraph.limits`;
            more: 503). ``None``: its share of half the machine's memory; 0: no limit.

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
        self.query_memory = (
            default_query_memory(self.workers) if query_memory is None else query_memory
        )
        self._front: Front | None = None
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()  # set while nothing serves
        self._stopped.set()

    @property
    def url(self) -> str:
        """The server's base URL."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def query_url(self) -> str:
        """The SPARQL 1.1 Protocol query endpoint."""
        return f"{self.url}/query"

    def start(self) -> Endpoint:
        """Listen, start the workers and wait until every worker has opened the store.

        Raises:
            StoreError: no store there.
            StoreFormatError: the store is of another format (see :mod:`hcgraph.store`).
            ServeError: the port is taken, or a worker did not start.
        """
        if not self.db_path.is_dir():
            raise StoreError(f"{self.db_path.parent}: no store here (run 'hcgraph ingest' first)")
        from ..store import read_format  # here: workers need not import the store module

        read_format(self.db_path.parent)  # a store of another format is refused, as by Store
        sock = self._listen()
        if self.port == 0:
            self.port = int(sock.getsockname()[1])
        from .front import Front  # here: the front module imports this one

        front = self._front = Front(self, sock)
        self._thread = threading.Thread(
            target=self._run, args=(front,), name="hcgraph-serve", daemon=True
        )
        self._stopped.clear()
        self._thread.start()
        try:
            front.ready.result(timeout=_READY_TIMEOUT)
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

    def _listen(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind((self.host, self.port))
            sock.listen(BACKLOG)
        except OSError as exc:
            sock.close()
            if exc.errno in {98, 48, 10048}:  # EADDRINUSE on Linux, macOS, Windows
                raise ServeError(f"{self.url}: port {self.port} is already in use") from None
            raise ServeError(f"{self.url}: cannot listen: {exc.strerror or exc}") from None
        sock.setblocking(False)
        return sock

    def _run(self, front: Front) -> None:
        try:
            front.serve()
        finally:
            self._stopped.set()

    def wait(self) -> None:
        """Block until the server stops (:meth:`stop`, from another thread)."""
        # On an Event, in steps (Ctrl-C reaches this thread meanwhile), not by joining the
        # thread: a KeyboardInterrupt inside Thread.join marks the thread stopped while it
        # runs (Python 3.11), and stop's join would then return before the front ended.
        while not self._stopped.wait(0.5):
            pass

    def stop(self) -> None:
        """Stop serving: close the port and every connection, end the workers."""
        front, self._front = self._front, None
        if front is not None:
            front.request_stop()
        if self._thread is not None:
            self._thread.join(timeout=15)
            self._thread = None

    def __enter__(self) -> Endpoint:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
