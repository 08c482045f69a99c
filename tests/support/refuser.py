"""A loopback HTTP server answering every request with one status and body: a hostile or
refusing triple store for the push tests (its error text reaches the terminal)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["refusing_server"]


def _handler(status: int, body: bytes) -> type[BaseHTTPRequestHandler]:
    """Answer every request with ``status`` and ``body`` (after reading the request's)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = _answer

    return Handler


@contextlib.contextmanager
def refusing_server(status: int, body: bytes) -> Iterator[str]:
    """Serve on a free loopback port while the ``with`` block runs; yields its base URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(status, body))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
