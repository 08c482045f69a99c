"""Issue 14, item 2: compression bombs are refused with memory bounded by the cap.

Each bomb decodes to 300 MB. The crawl runs in a subprocess (its own peak RSS, measured
with psutil and getrusage) against the loopback server; the peak may exceed the baseline
by at most ``--max-bytes`` plus a generous 64 MB.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import zlib
from pathlib import Path

import brotli
import pytest

from hcgraph.crawling.decoding import Decoder
from tests.conftest import cli_env
from tests.crawlserver import CrawlServer, Reply, Site, page, story

pytestmark = pytest.mark.slow

DECODED = 300 * 1024 * 1024
CAP = 10 * 1024 * 1024
SLACK = 64 * 1024 * 1024
_ZEROS = b"\0" * (1 << 20)


@functools.cache
def _zlib_bomb(wbits: int) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return b"".join(c.compress(_ZEROS) for _ in range(DECODED >> 20)) + c.flush()


@functools.cache
def _brotli_bomb() -> bytes:
    c = brotli.Compressor(quality=5)
    return b"".join(c.process(_ZEROS) for _ in range(DECODED >> 20)) + c.finish()


BOMBS = {
    "gzip": lambda: (_zlib_bomb(31), "gzip", False),
    "deflate": lambda: (_zlib_bomb(15), "deflate", False),
    "br": lambda: (_brotli_bomb(), "br", False),
    "gzip-chunked": lambda: (_zlib_bomb(31), "gzip", True),
}

SCRIPT = """
import json, resource, sys
import psutil
from hcgraph.crawling import CrawlOptions, FetchPolicy, crawl
seed, store, mirror, cap, warm = sys.argv[1:6]
options = CrawlOptions(
    mirrors=(mirror,), ignore_robots=True,
    policy=FetchPolicy(timeout=20, retries=0, max_bytes=int(cap)),
)
# Warm up on a plain story first (imports, the store engine, the ingest pipeline): what the
# peak grows past that crawl's own peak is the bomb's doing.
crawl([warm], store + "-warm", options)
base = psutil.Process().memory_info().rss
warm_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
report = crawl([seed], store, options)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"base": base, "peak": peak, "warm_peak": warm_peak, "failures": report.failures,
                  "added": report.counts["added"]}))
"""


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_bomb_is_cut_off_with_bounded_memory(
    crawl_server: CrawlServer, tmp_path: Path, name: str
) -> None:
    body, encoding, chunked = BOMBS[name]()
    assert len(body) < 400_000
    site = Site(crawl_server)
    site.add("a", story("a", page("bomb")))
    site.add("warm", story("warm"))
    site.add("bomb", b"", Reply(body=body, headers={"Content-Encoding": encoding}, chunked=chunked))
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, page("a"), str(tmp_path / "st"), site.mirror, str(CAP),
         page("warm")],
        capture_output=True, text=True, env=cli_env(), timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["added"] == 1
    (fail,) = out["failures"]
    assert fail["kind"] == "too-large", fail
    # What the bomb adds beyond the peak of crawling a plain story in the same process.
    grown = out["peak"] - max(out["base"], out["warm_peak"])
    assert grown < CAP + SLACK, f"peak RSS grew by {grown / 2**20:.0f} MB ({out})"


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", lambda b: zlib.compress(b, wbits=31)),
        ("deflate", zlib.compress),
        ("deflate", lambda b: zlib.compress(b, wbits=-15)),  # raw deflate, as some servers
        ("br", brotli.compress),
        ("gzip, br", lambda b: brotli.compress(zlib.compress(b, wbits=31))),
        ("identity", lambda b: b),
    ],
)
def test_decoder_round_trips(encoding: str, encode: object) -> None:
    data = bytes(range(256)) * 5000
    raw = encode(data)  # type: ignore[operator]
    decoder = Decoder(encoding)
    pieces = [p for n in range(0, len(raw), 1000) for p in decoder.feed(raw[n : n + 1000])]
    pieces.extend(decoder.flush())
    assert b"".join(pieces) == data
    assert max(map(len, pieces)) <= 2 * 64 * 1024  # brotli's limit is approximate
