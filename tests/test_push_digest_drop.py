"""A server that challenges (Digest) and then drops the connection on the authenticated
request, as Virtuoso sometimes does for a wrong password: the push says the credentials were
refused (naming the user, never the secret), not that the server is out of reach; a drop
that does not repeat costs nothing.

A real loopback HTTP/1.1 server (keep-alive, as Virtuoso): the unauthenticated request gets
``401`` with a Digest challenge, an authenticated one is dropped (closed, or reset) while
``drops`` lasts, then answered ``201``.
"""

from __future__ import annotations

import json
import os
import socket
import struct
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from hcgraph import Store, ingest_bytes
from hcgraph.push import PushOptions, PushState, credentials_from_env, push_graphs, resolve_endpoint
from tests.support.loopback import LoopbackServer

SECRET = "wr0ng-Pa55"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_PUT(self) -> None:
        owner = self.server.owner  # type: ignore[attr-defined]
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        header = self.headers.get("Authorization", "")
        if not header:
            self._answer(401, 'Digest realm="r", nonce="n0nce", qop="auth", algorithm=MD5')
            return
        owner.authenticated.append(header.split(" ", 1)[0])
        if owner.drops > 0:
            owner.drops -= 1
            self.close_connection = True  # FIN, no answer: "Server disconnected"
            if owner.style == "reset":  # RST: the client reads ECONNRESET (a ReadError)
                linger = struct.pack("ii", 1, 0)
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                os.close(self.connection.detach())  # before socketserver's shutdown(): no FIN
            return
        self._answer(201, None)

    def _answer(self, status: int, challenge: str | None) -> None:
        self.send_response(status)
        if challenge:
            self.send_header("WWW-Authenticate", challenge)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    srv = LoopbackServer(_Handler).start()
    srv.drops = 0  # type: ignore[attr-defined]
    srv.style = "close"  # type: ignore[attr-defined]
    srv.authenticated = []  # type: ignore[attr-defined]
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def store(seed_bytes: bytes) -> Iterator[Store]:
    """Two story graphs (and the shared ones)."""
    docs = []
    for n in range(2):
        story = json.loads(seed_bytes)
        story["url"] = f"https://hangingcontext.com/stories/2026-10-2{n}/drop-{n}/"
        story["slug"] = f"drop-{n}"
        docs.append((json.dumps(story).encode(), f"{n}.json"))
    with Store(None) as st:
        assert ingest_bytes(st, docs).ok
        yield st


def _push(store: Store, server: LoopbackServer, value: str):  # type: ignore[no-untyped-def]
    creds = credentials_from_env("HC_PW", {"HC_PW": value})
    endpoint = resolve_endpoint(server.base, authenticated=True)
    options = PushOptions(concurrency=1, retries=0, bulk="never")
    return push_graphs(store, endpoint, options, credentials=creds, state=PushState(None))


@pytest.mark.slow
@pytest.mark.parametrize("value", [f"alice:{SECRET}", f"Digest alice:{SECRET}"])
@pytest.mark.parametrize("style", ["close", "reset"])
def test_a_drop_after_the_challenge_is_refused_credentials(
    store: Store, server: LoopbackServer, value: str, style: str
) -> None:
    server.drops = 10**6  # type: ignore[attr-defined]
    server.style = style  # type: ignore[attr-defined]
    report = _push(store, server, value)
    assert report.pushed == 0 and not report.failures
    assert report.aborted == (
        f"{server.base}/store: HTTP 401: the credentials were refused (user alice from $HC_PW);"
        " the server closed the connection instead of answering"
    )
    assert SECRET not in report.aborted
    # The challenged request, then once more at once (preemptive Digest): no more.
    assert server.authenticated == ["Digest", "Digest"]  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_drop_that_does_not_repeat_is_retried_once(store: Store, server: LoopbackServer) -> None:
    server.drops = 1  # type: ignore[attr-defined]
    report = _push(store, server, f"alice:{SECRET}")
    assert report.ok and report.pushed == report.graphs > 2
    assert len(server.authenticated) == report.graphs + 1  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_drop_without_a_challenge_is_still_unreachable(store: Store) -> None:
    """No ``401`` came first: a dropped connection is the network's, as before."""

    class Dropper(_Handler):
        def do_PUT(self) -> None:
            self.close_connection = True

    srv = LoopbackServer(Dropper).start()
    try:
        report = _push(store, srv, f"alice:{SECRET}")
    finally:
        srv.stop()
    assert report.aborted is not None and report.aborted.startswith(
        f"cannot reach {srv.base}/store: "
    )
