"""A read-only SPARQL 1.1 Protocol endpoint over the store, run by the Oxigraph server.

What: :class:`Endpoint` starts ``oxigraph serve-read-only`` (the server from the PyPI package
``oxigraph``) on the store's database directory, bound to a loopback address, with
``--union-default-graph`` so the default graph is the union of all graphs exactly as
in :meth:`hcgraph.store.Store.query`. Queries go to ``http://HOST:PORT/query`` (GET or POST,
any SPARQL client: YASGUI, SPARQLWrapper, rdflib's SPARQLStore, curl).

Why an existing server: the SPARQL protocol, content negotiation and result formats are
Oxigraph's, over the very same on-disk store, instead of a home-made HTTP layer. Read-only
mode lets several readers share the database; do not ingest while it runs (Oxigraph calls a
concurrent writer undefined behaviour).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO

import httpx

from .errors import StoreError

__all__ = ["DEFAULT_PORT", "Endpoint", "oxigraph_binary"]

DEFAULT_PORT = 7878
_READY_TIMEOUT = 30.0


def oxigraph_binary() -> str:
    """Path of the ``oxigraph`` server binary: beside this Python first, then on PATH.

    Raises:
        StoreError: not installed (``pip install oxigraph``, or ``hcgraph[serve]``).
    """
    beside = Path(sys.executable).parent / ("oxigraph.exe" if os.name == "nt" else "oxigraph")
    if beside.is_file():
        return str(beside)
    found = shutil.which("oxigraph")
    if found is None:
        raise StoreError(
            "the Oxigraph server is not installed: pip install oxigraph (or 'hcgraph[serve]')"
        )
    return found


def _loopback(host: str) -> str:
    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        raise StoreError(f"--host {host!r}: give a loopback address (127.0.0.1 or ::1)") from None
    if not address.is_loopback:
        raise StoreError(
            f"--host {host}: hcgraph serves on loopback only (127.0.0.1 or ::1); put a reverse"
            " proxy in front to publish it"
        )
    return str(address)


def _free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class Endpoint:
    """The Oxigraph server over a store directory; a context manager.

    Args:
        store_dir: the hcgraph store directory (its ``oxigraph/`` database is served).
        host: a loopback address (``127.0.0.1`` default, ``::1``, ``localhost``).
        port: TCP port; 0 picks a free one.
        timeout_s: per-query timeout the server enforces, in seconds (None: none).

    >>> with Endpoint("output/store", port=0) as ep:   # doctest: +SKIP
    ...     print(ep.query_url)
    """

    def __init__(
        self,
        store_dir: Path | str,
        *,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        timeout_s: int | None = None,
    ) -> None:
        self.host = _loopback(host)
        self.db_path = Path(store_dir) / "oxigraph"
        self.port = port
        self.timeout_s = timeout_s
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        """The server's base URL."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def query_url(self) -> str:
        """The SPARQL 1.1 Protocol query endpoint."""
        return f"{self.url}/query"

    def command(self) -> list[str]:
        """The server command line."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        cmd = [
            oxigraph_binary(), "serve-read-only", "--location", str(self.db_path),
            "--bind", f"{host}:{self.port}", "--union-default-graph",
        ]  # fmt: skip
        if self.timeout_s is not None:
            cmd += ["--timeout-s", str(int(self.timeout_s))]
        return cmd

    def start(self) -> Endpoint:
        """Start the server and wait until it answers a query.

        Raises:
            StoreError: no store there, the port is taken, or the server did not start.
        """
        if not self.db_path.is_dir():
            raise StoreError(f"{self.db_path.parent}: no store here (run 'hcgraph ingest' first)")
        if self.port == 0:
            self.port = _free_port(self.host)
        self._check_port_free()
        # stderr goes to a file, not a pipe: a chatty server can never block on a full pipe
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the server
        self.process = subprocess.Popen(
            self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log
        )
        self._wait_ready()
        return self

    def _check_port_free(self) -> None:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((self.host, self.port))
            except OSError:
                raise StoreError(f"{self.url}: port {self.port} is already in use") from None

    def _wait_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + _READY_TIMEOUT
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while time.monotonic() < deadline:  # bounded: ~30 s at most
                if self.process.poll() is not None:
                    err = self._read_log()
                    reason = err.strip().splitlines()[-1] if err.strip() else "exited"
                    raise StoreError(f"oxigraph server did not start: {reason}")
                with contextlib.suppress(httpx.HTTPError):
                    answer = client.get(self.query_url, params={"query": "ASK {}"})
                    if answer.status_code == 200:
                        return
                time.sleep(0.1)
        self.stop()
        raise StoreError(
            f"oxigraph server did not answer on {self.url} within {_READY_TIMEOUT:.0f} s"
        )

    def wait(self) -> int:
        """Block until the server exits; returns its exit code."""
        assert self.process is not None
        return self.process.wait()

    def stop(self) -> None:
        """Stop the server (terminate, then kill after 5 s)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        finally:
            if self._log is not None:
                self._log.close()
                self._log = None

    def _read_log(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")

    def __enter__(self) -> Endpoint:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
