"""``hcgraph serve`` with one piece swapped or taken away, for ``bench_serve.py``.

``httptools`` is the server as shipped (llhttp, batches, uvloop). ``batch1`` sends the
workers one query per pipe write (no batching); ``asyncio`` runs the front on asyncio's own
event loop instead of uvloop. ``h11`` swaps in the pure-Python h11
parser on the same front (same worker pool, same routing): h11 used as a parser only (a
fresh ``h11.Connection`` per request, fed what the last one left), so the comparison is of
the parsers, not of response formatting.

Usage (from bench_serve.py)::

    python bench/_serve_variant.py PORT STORE httptools|h11|batch1|asyncio WORKERS
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from pathlib import Path

import h11

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hcgraph.serve import Endpoint, front, http, pool
from hcgraph.serve.endpoint import MAX_HEAD, Refusal, Request
from hcgraph.serve.http import RequestParser


class H11Parser(RequestParser):
    """The shipped parser's interface (``feed``, ``queue``, ``in_body``) on h11."""

    def __init__(self) -> None:
        super().__init__()
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        self.h11_request: Request | None = None

    def feed(self, data: bytes) -> None:
        if self.broken:
            return
        self.h11.receive_data(data)
        try:
            self._pump()
        except h11.RemoteProtocolError as exc:
            self._fail(Refusal(exc.error_status_hint, f"malformed request: {exc}", close=True))

    def _pump(self) -> None:
        while True:
            event = self.h11.next_event()
            if event is h11.NEED_DATA or isinstance(event, h11.ConnectionClosed):
                return
            if isinstance(event, h11.Request):
                headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in event.headers]
                version = "HTTP/" + event.http_version.decode()
                request = Request(event.method.decode(), event.target.decode("latin-1"), version,
                                  headers)  # fmt: skip
                tokens = {t.strip().lower() for k, v in request.headers if k == "connection"
                          for t in v.split(",")}  # fmt: skip
                request.keep = ("keep-alive" in tokens if version == "HTTP/1.0"
                                else "close" not in tokens)  # fmt: skip
                self.h11_request = request
                self.in_body = True
            elif isinstance(event, h11.Data):
                self.body += event.data
            elif isinstance(event, h11.EndOfMessage):
                request, self.h11_request = self.h11_request, None
                assert request is not None
                request.body = bytes(self.body)
                self.body = bytearray()
                self.queue.append(request)
                self.in_body = False
                rest, _closed = self.h11.trailing_data
                self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
                self.h11.receive_data(rest)
            else:  # PAUSED cannot happen: a fresh Connection per request
                return


def main() -> None:
    port, store, parser, workers = sys.argv[1:5]
    if parser == "h11":
        http.RequestParser = H11Parser  # type: ignore[misc]
    elif parser == "batch1":
        pool.MAX_BATCH = 1
    elif parser == "asyncio":
        front.new_loop = asyncio.new_event_loop
    endpoint = Endpoint(store, port=int(port), workers=int(workers), timeout_s=30)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with endpoint:
        stop.wait()


if __name__ == "__main__":
    main()
