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

**No outbound requests, no DNS rebinding.** Oxigraph answers ``SERVICE <url> {…}`` by
fetching ``url`` (SSRF: any service this machine reaches, loopback included), and its server
(0.5) has no switch to disable federation. So the server listens on a private loopback port
and a small guard in front of it (the public port) passes requests on only if (1) the query
does not use ``SERVICE`` (:func:`hcgraph.sparqlguard.uses_service`; ``allow_service``
lifts this), and (2) the ``Host`` header names the loopback address and port it serves
(``127.0.0.1:PORT``, ``localhost:PORT``, ``[::1]:PORT``): a web page whose host name an
attacker re-pointed at 127.0.0.1 sends its own host name and gets 403, so it cannot read the
endpoint from a victim's browser. Only GET/HEAD anywhere and POST to ``/query`` pass.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO
from urllib.parse import parse_qs, urlsplit

import httpx

from .errors import StoreError
from .sparqlguard import SERVICE_REFUSED, uses_service

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
        allow_service: let queries use ``SERVICE`` (federation; off by default, see above).

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
        timeout_s: int | None = None,
        allow_service: bool = False,
    ) -> None:
        self.host = _loopback(host)
        self.allow_service = allow_service
        self.backend_port = 0
        self._guard: _GuardServer | None = None
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

    @property
    def backend_url(self) -> str:
        """The Oxigraph server's own (private, unguarded) base URL."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.backend_port}"

    def command(self) -> list[str]:
        """The Oxigraph server command line (it listens on the private backend port)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        cmd = [
            oxigraph_binary(), "serve-read-only", "--location", str(self.db_path),
            "--bind", f"{host}:{self.backend_port}", "--union-default-graph",
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
        self.backend_port = _free_port(self.host)
        # stderr goes to a file, not a pipe: a chatty server can never block on a full pipe
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the server
        self.process = subprocess.Popen(
            self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log
        )
        self._wait_ready()
        try:
            self._guard = _GuardServer(self)
        except OSError as exc:
            self.stop()
            raise StoreError(f"{self.url}: cannot listen: {exc.strerror or exc}") from None
        threading.Thread(
            target=self._guard.serve_forever, name="hcgraph-serve", daemon=True
        ).start()
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
                    answer = client.get(f"{self.backend_url}/query", params={"query": "ASK {}"})
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
        if self._guard is not None:
            guard, self._guard = self._guard, None
            guard.shutdown()
            guard.server_close()
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

    def __exit__(self, *exc: object) -> None:
        self.stop()


_MAX_BODY = 16 * 1024 * 1024
_PASS_HEADERS = ("Accept", "Content-Type")


class _GuardServer(ThreadingHTTPServer):
    """The public side of :class:`Endpoint`: checks each request, then relays it."""

    daemon_threads = True

    def __init__(self, endpoint: Endpoint) -> None:
        self.address_family = socket.AF_INET6 if ":" in endpoint.host else socket.AF_INET
        self.endpoint = endpoint
        host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
        names = {host, "localhost"} | ({"127.0.0.1"} if host == "127.0.0.1" else {"[::1]"})
        self.hosts = {f"{n}:{endpoint.port}".lower() for n in names}
        super().__init__((endpoint.host, endpoint.port), _GuardHandler)


class _GuardHandler(BaseHTTPRequestHandler):
    server: _GuardServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet, as the Oxigraph server it fronts

    def do_GET(self) -> None:
        self._handle(b"")

    def do_HEAD(self) -> None:
        self._handle(b"")

    def do_POST(self) -> None:
        length = self._body_length()
        if length is None:
            return
        body = self.rfile.read(length)
        if urlsplit(self.path).path != "/query":
            self._refuse(403, "read-only endpoint: POST only to /query")
            return
        self._handle(body)

    def _body_length(self) -> int | None:
        """The POST body's length from its Content-Length, or None once refused.

        Refused, before any of the body is read: chunked or no Content-Length (411: the
        body is read whole, so its length must be known), a Content-Length that is not
        a plain decimal number or several that disagree (400: ``int()`` alone would take
        ``+5`` and raise on ``abc`` or ``-5``), one over ``_MAX_BODY`` (413, read from
        the digits, not by reading that much).
        """
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self._refuse(411, "send a Content-Length", close=True)
            return None
        values = {v.strip() for v in self.headers.get_all("Content-Length", [])}
        if not values:
            self._refuse(411, "send a Content-Length", close=True)
            return None
        value = values.pop()
        if values or not (value.isascii() and value.isdigit()):
            self._refuse(400, "Content-Length must be one number of bytes", close=True)
            return None
        digits = value.lstrip("0") or "0"  # int() of thousands of digits raises, too
        if len(digits) > len(str(_MAX_BODY)) or int(digits) > _MAX_BODY:
            self._refuse(413, "request body too large", close=True)
            return None
        return int(digits)

    def _queries(self, body: bytes) -> list[str]:
        texts = parse_qs(urlsplit(self.path).query).get("query", [])
        if body:
            kind = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
            text = body.decode("utf-8", "replace")
            if kind == "application/x-www-form-urlencoded":
                texts += parse_qs(text).get("query", [])
            else:
                texts.append(text)
        return texts

    def _handle(self, body: bytes) -> None:
        host = self.headers.get("Host")
        if host is not None and host.strip().lower() not in self.server.hosts:
            self._refuse(403, f"Host {host!r} is not this endpoint (DNS rebinding guard)")
            return
        if not self.server.endpoint.allow_service and any(
            uses_service(t) for t in self._queries(body)
        ):
            self._refuse(400, SERVICE_REFUSED.replace("--allow-service", "serve --allow-service"))
            return
        ep = self.server.endpoint
        conn = http.client.HTTPConnection(ep.host, ep.backend_port, timeout=None)
        try:
            headers = {k: v for k in _PASS_HEADERS if (v := self.headers.get(k)) is not None}
            conn.request(self.command, self.path, body=body or None, headers=headers)
            answer = conn.getresponse()
            data = answer.read()
        except OSError as exc:
            self._refuse(502, f"the Oxigraph server did not answer: {exc}")
            return
        finally:
            conn.close()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() in {"content-type", "content-disposition", "vary", "allow"}:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _refuse(self, status: int, message: str, *, close: bool = False) -> None:
        """Answer ``status`` with a one-line text body. ``close``: the request body was
        not read, so the connection ends here (what is left of it is no next request)."""
        data = (message + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
