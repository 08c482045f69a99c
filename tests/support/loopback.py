"""A threaded HTTP server on 127.0.0.1 for the tests' fake sites and APIs: the socket, the
serving thread, ``start``/``stop``. A subclass holds what its handler reads, through
``self.server.owner``."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: Any


class LoopbackServer:
    """``base`` is ``http://127.0.0.1:PORT`` (``port`` 0: any free one)."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], port: int = 0) -> None:
        self.httpd = _Server(("127.0.0.1", port), handler)
        self.httpd.owner = self
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> Self:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
