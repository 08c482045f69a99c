"""A loopback HTTP server that counts the requests it gets: the oracle of the SSRF tests.

Oxigraph answers ``SERVICE <url> {…}`` by fetching ``url``; pointing ``url`` at this probe
turns "did the query leave the machine?" into ``probe.hits``. It answers every GET and POST
with one SPARQL JSON solution (``?x = "secret"``), as a remote endpoint would.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["Probe"]

_ANSWER = json.dumps(
    {
        "head": {"vars": ["x"]},
        "results": {"bindings": [{"x": {"type": "literal", "value": "secret"}}]},
    }
).encode()


class Probe:
    """Serve on ``127.0.0.1`` (a free port) until :meth:`close`; ``hits`` counts requests."""

    def __init__(self) -> None:
        probe = self
        self._lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _answer(self) -> None:
                with probe._lock:
                    probe.hits += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/sparql-results+json")
                self.send_header("Content-Length", str(len(_ANSWER)))
                self.end_headers()
                self.wfile.write(_ANSWER)

            do_GET = do_POST = _answer

        self.hits = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.url = f"{self.base}probe"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
