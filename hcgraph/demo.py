"""``hcgraph demo``: the whole job on a fresh machine, offline, in a few seconds.

It serves a sample site (the real seed story plus ``hcsample.corpus`` stories) on loopback,
crawls it over HTTP through mirrors (so every IRI is the original one), and writes
``output/``; each post-crawl output is one :class:`DemoStep` in :data:`DEMO_STEPS`.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ._io import atomic_text_writer, atomic_writer, ensure_dir, write_atomic
from .crawling import CrawlOptions, CrawlReport, crawl
from .crawling.fetch import FetchPolicy
from .store import Store

if TYPE_CHECKING:
    from hcsample.corpus import Corpus

__all__ = ["DEMO_STEPS", "DemoResult", "DemoStep", "SiteServer", "run_demo", "sample_site"]

REAL_ORIGIN = "https://hangingcontext.com"
SAMPLE_ORIGIN = "https://news.example.org"
_SEED = 7  # the sample generator's


@dataclass(frozen=True)
class DemoStep:
    """One output of the demo, made after the crawl from the store."""

    name: str
    run: Callable[[Path, Path], list[Path]]


def _export_turtle(store_dir: Path, out_dir: Path) -> list[Path]:
    from .exporting import export

    target = out_dir / "graph.ttl"
    with atomic_writer(target) as handle, Store(store_dir, read_only=True) as store:
        export(store, "turtle", handle)
    return [target]


def _draw_maps(store_dir: Path, out_dir: Path) -> list[Path]:
    from .viz import draw_map

    with Store(store_dir, read_only=True) as store:
        reuse = draw_map(store, "reuse", out=out_dir / "map.html")
        story = draw_map(store, "story", "agentic-rl-production", out=out_dir / "map-story.html")
    return [reuse.path, story.path]


def _run_queries(store_dir: Path, out_dir: Path) -> list[Path]:
    from .queries import run_query
    from .results import write_result

    written = []
    with Store(store_dir, read_only=True) as store:
        for name in ("source-reuse", "publisher-reach", "dangling-citations"):
            target = out_dir / "queries" / f"{name}.csv"  # the folder is made on first write
            with atomic_text_writer(target) as handle:
                write_result(run_query(store, name), "csv", handle)
            written.append(target)
    return written


def _audit_report(store_dir: Path, out_dir: Path) -> list[Path]:
    from .provenance.auditing import audit
    from .provenance.report_html import write_report

    with Store(store_dir, read_only=True) as store:
        report = audit(store)
    return [write_report(report, out_dir / "audit.html")]


def _pull_replies(store_dir: Path, out_dir: Path) -> list[Path]:
    """The saved manifest replies into the store, as ``hcgraph manifests fetch --dir``."""
    from .claims.pulling import pull_manifests

    replies = out_dir / REPLIES_DIR
    with Store(store_dir) as store:
        pull_manifests(store, directory=replies)
    return [replies]


#: Where the demo keeps the sample's manifest replies (one ``ID.json`` each, as curl saves them).
REPLIES_DIR = "manifest-replies"

#: The demo's post-crawl steps, run in order. Add a feature's output with one line here.
DEMO_STEPS: list[DemoStep] = [
    DemoStep("replies", _pull_replies),
    DemoStep("graph", _export_turtle),
    DemoStep("queries", _run_queries),
    DemoStep("maps", _draw_maps),
    DemoStep("audit", _audit_report),
]


def sample_site(n_stories: int = 60, seed: int = _SEED) -> tuple[dict[str, bytes], list[str]]:
    """``(files, seeds)``: the sample site (URL path ``/<host>/stories/…/index.json`` →
    bytes) and the story URLs the crawl starts from (the real story and two samples)."""
    corpus = _sample_corpus(n_stories, seed)
    return corpus.site_files(by_host=True), [str(s["url"]) for s in corpus.stories[:3]]


@lru_cache(maxsize=2)
def _sample_corpus(n_stories: int, seed: int) -> Corpus:
    from hcsample.corpus import generate_corpus

    real = json.loads(
        resources.files("hcgraph").joinpath("data/agentic-rl-production.json").read_bytes()
    )
    return generate_corpus(n_stories, seed, include_seed=real)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: SiteServer

    def log_message(self, format: str, *args: object) -> None:
        pass  # the demo prints its own summary

    def do_GET(self) -> None:
        if (body := self.server.files.get(self.path.split("?", 1)[0])) is None:
            self._send(404, b'{"error": "not in the sample site"}')
            return
        etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
        self._send(304 if self.headers.get("If-None-Match") == etag else 200, body, etag)

    def _send(self, status: int, body: bytes, etag: str | None = None) -> None:
        body = b"" if status == 304 else body
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if etag is not None:
            self.send_header("ETag", etag)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class SiteServer(ThreadingHTTPServer):
    """A static site on ``127.0.0.1`` (free port), served from a thread while in a ``with``.
    Answers ``If-None-Match`` with 304 (a second demo shows a conditional re-crawl)."""

    daemon_threads = True

    def __init__(self, files: Mapping[str, bytes]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.files = files
        self.base = f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> SiteServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


@dataclass
class DemoResult:
    """What the demo did and wrote."""

    out_dir: Path
    store_dir: Path
    report: CrawlReport
    outputs: dict[str, list[Path]] = field(default_factory=dict)
    summary: dict[str, int] = field(default_factory=dict)


_REUSED = """
SELECT (COUNT(*) AS ?n) WHERE {
  { SELECT ?m WHERE { ?s hc:citesManifest ?m } GROUP BY ?m HAVING (COUNT(?s) >= 2) }
}"""
_STORIES = "SELECT ?s WHERE { ?s a hc:Story }"
_VERDICTS = (
    "SELECT ?status (COUNT(?v) AS ?n) WHERE { ?v hc:supportStatus ?status } GROUP BY ?status"
)


def _summary(store_dir: Path, report: CrawlReport) -> dict[str, int]:
    import pyoxigraph as ox

    from .provenance._graph import count

    with Store(store_dir, read_only=True) as store:
        stories = [str(row[0].value) for row in store.query(_STORIES)]
        sample = sum(1 for s in stories if s.startswith(SAMPLE_ORIGIN + "/"))
        return {
            "stories": len(stories),
            "real_stories": len(stories) - sample,
            "sample_stories": sample,
            "sources_reused": count(store, _REUSED),
            "failures": len(report.failures),
            "quads": len(store),
            **{
                status: count(store, _VERDICTS, status=ox.Literal(status))
                for status in ("supported", "unsupported", "not-checkable")
            },
        }


def run_demo(
    out_dir: Path | str = Path("output"),
    *,
    store_dir: Path | str | None = None,
    n_stories: int = 60,
) -> DemoResult:
    """Serve the sample site on loopback, crawl it into ``out_dir`` (the store: ``store_dir``,
    default ``out_dir/store``), run :data:`DEMO_STEPS`; ``n_stories`` generated besides the
    real one."""
    out = Path(out_dir)
    ensure_dir(out)
    store = Path(store_dir) if store_dir else out / "store"
    files, seeds = sample_site(n_stories, _SEED)
    replies, report_path = out / REPLIES_DIR, out / "crawl-report.json"
    ensure_dir(replies)
    for manifest_id, body in _sample_corpus(n_stories, _SEED).replies().items():
        write_atomic(replies / f"{manifest_id}.json", body)
    with SiteServer(files) as server:
        options = CrawlOptions(
            depth=10,
            allow_hosts=(urlsplit(SAMPLE_ORIGIN).netloc,),
            mirrors=(
                f"{REAL_ORIGIN}={server.base}/{urlsplit(REAL_ORIGIN).netloc}",
                f"{SAMPLE_ORIGIN}={server.base}/{urlsplit(SAMPLE_ORIGIN).netloc}",
            ),
            ignore_robots=True,  # our own mirror
            policy=FetchPolicy(timeout=10, retries=1, backoff_base=0.05),
            report=report_path,
        )
        report = crawl(seeds, store, options)
    result = DemoResult(out, store, report, {"store": [store], "crawl report": [report_path]})
    for step in DEMO_STEPS:
        result.outputs[step.name] = step.run(store, out)
    result.summary = _summary(store, report)
    return result
