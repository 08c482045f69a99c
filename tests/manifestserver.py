"""A real manifest API on loopback for the ``manifests fetch`` tests and bench.

It answers ``GET /manifests/by-id/{id}`` as the stories say the real one does: the bearer
key is asked for (a missing or wrong key is a 401), each id's replies are set by the test
(a queue of one-off replies, then one forever: 200, 404, 429 with ``Retry-After``, …), and
every request is counted per path, with whether it carried the right key.

Run on its own (``python tests/manifestserver.py PORT KEY N``) it serves ``N`` generated
manifests (ids ``1000000000000000000 + i``): the subprocess tests and the bench use that.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import LoopbackServer

__all__ = ["PREFIX", "ManifestServer", "Reply", "manifest_id", "reply_body"]

PREFIX = "/manifests/by-id/"


@dataclass(frozen=True)
class Reply:
    """One canned answer."""

    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (a request in flight, for kill -9)


def manifest_id(n: int) -> str:
    """The ``n``-th generated manifest id (19 digits, as the real ones)."""
    return str(1_000_000_000_000_000_000 + n)


def reply_body(ident: str, claims: int = 5, text: str = "") -> bytes:
    """A well-shaped reply for ``ident`` (``text`` goes into its first claim)."""
    doc = {
        "manifest_id": ident,
        "source": {"name": "arxiv", "url": f"https://arxiv.org/abs/{ident[-6:]}", "title": "T"},
        "signal": {
            "claims": [
                {"claim_id": f"{ident}{k}", "text": text or f"Claim {k} of {ident}: 12.5% up."}
                for k in range(claims)
            ]
        },
        "brief": f"The brief of manifest {ident}.",
    }
    return json.dumps(doc, indent=1).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Any

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        owner = self.server.owner
        path = self.path.split("?", 1)[0]
        keyed = self.headers.get("Authorization") == f"Bearer {owner.key}"
        owner.log(path, keyed)
        reply = owner.reply_for(path) if keyed else Reply(401, b'{"error":"unauthorized"}')
        if reply.delay:
            time.sleep(reply.delay)
        headers = {"Content-Type": "application/json", **reply.headers}
        try:
            self.send_response(reply.status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
        except (BrokenPipeError, ConnectionResetError):  # the client went away (kill -9)
            self.close_connection = True


class ManifestServer(LoopbackServer):
    """The loopback API. ``base`` is ``http://127.0.0.1:PORT`` (the ``--api`` to pass)."""

    def __init__(self, key: str, port: int = 0, generated: int = 0) -> None:
        self.key = key
        self.generated = generated  # ids 0..generated-1 answer a generated reply
        self.routes: dict[str, list[Reply]] = {}
        self.hits: Counter[str] = Counter()
        self.unkeyed = 0  # requests without the right key
        self._lock = threading.Lock()
        super().__init__(_Handler, port)

    def path(self, ident: str) -> str:
        return PREFIX + ident

    def route(self, ident: str, then: Reply, *first: Reply) -> None:
        """Answer ``ident`` with the ``first`` replies once each, then ``then`` forever."""
        with self._lock:
            self.routes[self.path(ident)] = [*first, then]

    def serve(self, ident: str, **reply: object) -> bytes:
        """Answer ``ident`` with a well-shaped reply (``Reply`` fields as keywords)."""
        body = reply_body(ident)
        self.route(ident, Reply(body=body, **reply))  # type: ignore[arg-type]
        return body

    def count(self, ident: str) -> int:
        with self._lock:
            return self.hits[self.path(ident)]

    def log(self, path: str, keyed: bool) -> None:
        with self._lock:
            self.hits[path] += 1
            self.unkeyed += not keyed

    def reply_for(self, path: str) -> Reply:
        with self._lock:
            queue = self.routes.get(path)
            if queue:
                return queue.pop(0) if len(queue) > 1 else queue[0]
        ident = path.removeprefix(PREFIX)
        if self.generated and ident.isdigit():
            n = int(ident) - 1_000_000_000_000_000_000
            if 0 <= n < self.generated:
                return Reply(body=reply_body(ident))
        return Reply(404, b'{"error":"not found"}')


if __name__ == "__main__":
    port, key, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    server = ManifestServer(key, port, count)
    print(server.port, flush=True)
    server.httpd.serve_forever()
