"""Review of crawl/push/fetch (2026-12-07): the manifest API client against absurd answers."""

from __future__ import annotations

import gzip
import json
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar

import httpx
import pytest

from hcgraph.claims.fetching import fetch_manifests, manifest_archive
from hcgraph.claims.reply import parse_reply
from hcgraph.errors import ManifestError
from tests.manifestserver import manifest_id, reply_body
from tests.support.loopback import LoopbackServer
from tests.test_manifests_fetch import ENVIRON, Api, ids, options, run


@pytest.mark.parametrize("retry_after", ["999999999999", "1" * 400], ids=["31k-years", "inf"])
def test_a_429_asking_to_wait_past_year_9999_stops_the_run_cleanly(
    tmp_path: Path, retry_after: str
) -> None:
    """The resume date overflowed ``datetime`` and the run ended in a traceback."""
    api = Api(**{manifest_id(1): [httpx.Response(429, headers={"Retry-After": retry_after})]})
    report, _archive = run(api, manifest_archive(tmp_path), ids(1, 2))
    assert report.stopped == "rate-limited"
    assert report.resume_after is None
    assert report.left == ids(1, 2)
    assert any("rate" in line for line in report.lines())


def test_a_claim_id_given_twice_with_two_texts_is_bad_shape(tmp_path: Path) -> None:
    """The second text silently replaced the first ("nothing is guessed", says reply.py)."""
    doc = json.loads(reply_body(manifest_id(1), claims=3))
    doc["signal"]["claims"][2]["claim_id"] = doc["signal"]["claims"][0]["claim_id"]
    api = Api(**{manifest_id(1): [httpx.Response(200, content=json.dumps(doc).encode())]})
    report, _archive = run(api, manifest_archive(tmp_path), ids(1))
    ((ident, path, reason),) = report.bad_shape
    assert (ident, path) == (manifest_id(1), "signal.claims[2].claim_id")
    assert "signal.claims[0]" in reason


def test_a_claim_given_twice_with_the_same_text_is_read() -> None:
    doc = json.loads(reply_body(manifest_id(1), claims=2))
    doc["signal"]["claims"].append(dict(doc["signal"]["claims"][0]))
    reply = parse_reply(json.dumps(doc).encode(), "x.json", manifest_id(1))
    assert len(reply.claims) == 2


class _Trickle(BaseHTTPRequestHandler):
    """A gzip reply whose header carries a long comment, sent a byte at a time: bytes keep
    coming (no read times out) but nothing decodes out of them for as long as it goes on."""

    protocol_version = "HTTP/1.1"
    finished: ClassVar[list[bool]] = []  # one entry a reply: whether all of it was sent

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        ident = self.path.rsplit("/", 1)[-1]
        body = gzip.compress(reply_body(ident), mtime=0)
        # FLG.FCOMMENT (bit 4) set, a zero-terminated comment after the 10-byte header
        comment = b"x" * 40 + b"\0"
        body = body[:3] + bytes([body[3] | 0x10]) + body[4:10] + comment + body[10:]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            for at in range(10 + len(comment)):
                self.wfile.write(body[at : at + 1])
                self.wfile.flush()
                time.sleep(0.25)
            self.wfile.write(body[10 + len(comment) :])
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.finished.append(False)
        else:
            self.finished.append(True)


@pytest.mark.slow
def test_a_reply_trickling_bytes_that_decode_to_nothing_times_out(tmp_path: Path) -> None:
    """The deadline was checked only when decoded bytes came out: a gzip header's comment,
    a byte every 0.25 s, was waited out whatever the timeout (here 1 s): to its end (10 s),
    or for ever. The client now gives up at its deadline, long before the server is done."""
    server = LoopbackServer(_Trickle).start()
    try:
        api = f"{server.base}/m/{{manifest_id}}"
        opts = options(api, timeout=1.0, retries=0)
        report = fetch_manifests(ids(1), manifest_archive(tmp_path), opts, environ=ENVIRON)
        for _ in range(100):  # the server notices the closed connection at its next write
            if _Trickle.finished:
                break
            time.sleep(0.1)
    finally:
        server.stop()
    assert _Trickle.finished == [False]
    assert report.fetched == []
    ((ident, reason),) = report.failed
    assert ident == manifest_id(1) and "timed out after 1 s" in reason


@pytest.mark.parametrize("api", ["http://[::1/{manifest_id}", "http://a.example/\x00/"])
def test_an_api_url_httpx_refuses_is_one_line(tmp_path: Path, api: str) -> None:
    """``--api`` passed the http(s) check, then httpx raised InvalidURL: a traceback."""
    with pytest.raises(ManifestError, match="not a URL") as info:
        fetch_manifests(ids(1), manifest_archive(tmp_path), options(api), environ=ENVIRON)
    assert "\n" not in str(info.value) and "\x00" not in str(info.value)
