"""Shared fixtures: the real seed story, temporary stores, and ways to run the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hcgraph.cli import cli
from hcgraph.store import Store

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SEED = FIXTURES / "agentic-rl-production.json"
SEED_URL = "https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/"


#: Fixtures that start a process or a server: a test using one is slow by definition.
SLOW_FIXTURES = frozenset(
    {
        "run_cli",  # python -m hcgraph in a subprocess (an interpreter start per call)
        "fresh_cli_forkserver",  # the same, for terminal and shell tests
        "oxigraph",  # the Oxigraph server
        "oxigraph_session",
        "auth_proxy",  # an HTTP proxy in front of it
        "crawl_server",  # the crawl tests' HTTP server
        "endpoint",  # hcgraph serve (tests/test_serve.py)
        "browser",  # headless Chromium
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses a :data:`SLOW_FIXTURES` fixture ``slow``, so
    ``-m "not slow"`` stays a quick in-process loop while CI still runs everything."""
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def seed_path() -> Path:
    """The real story every suite starts from."""
    return SEED


@pytest.fixture
def seed_bytes() -> bytes:
    return SEED.read_bytes()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh on-disk store in a temporary directory."""
    with Store(tmp_path / "store") as st:
        yield st


@pytest.fixture
def invoke() -> object:
    """Run the CLI in-process: ``invoke("ingest", path, "--store", dir)`` → click Result."""
    runner = CliRunner()

    def run(*args: object) -> Result:
        return runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)

    return run


#: The session's store-worker server's sockets once a CLI fork server runs: ``cli_env()``
#: names them (``tests.support.storeworker.ENV``), so a forked CLI's crawl forks its worker.
_STORE_WORKER_SOCKETS: list[str] = []


def cli_env() -> dict[str, str]:
    """Environment for subprocess runs: this checkout's package first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["SOURCE_DATE_EPOCH"] = env.get("SOURCE_DATE_EPOCH", "1790000000")
    if _STORE_WORKER_SOCKETS:
        env["HCGRAPH_TEST_STORE_WORKER"] = " ".join(_STORE_WORKER_SOCKETS)
    return env


@pytest.fixture(scope="session", autouse=True)
def store_worker_forks() -> Iterator[object]:
    """In-process crawls fork their store worker from a server that imported it once,
    instead of starting an interpreter per crawl (tests/support/storeworker.py); off with
    ``HCGRAPH_TEST_FORKSERVER=0`` (then ``None``)."""
    if os.environ.get("HCGRAPH_TEST_FORKSERVER", "1") == "0":
        yield None
        return
    from tests.support.storeworker import forked_store_workers

    with forked_store_workers(cli_env(), ROOT) as shim:
        yield shim
    _STORE_WORKER_SOCKETS.clear()


def _cli_servers(preload: tuple[str, ...], store_worker_forks: object) -> object:
    """Fork servers for CLI commands whose crawls fork their store workers from the
    session's store-worker server (started now if no crawl has yet)."""
    from tests.support.forkserver import ForkServer
    from tests.support.storeworker import WorkerSubprocess

    assert isinstance(store_worker_forks, WorkerSubprocess)
    if not _STORE_WORKER_SOCKETS:
        _STORE_WORKER_SOCKETS.extend(store_worker_forks.server().sockets)
    return ForkServer(cli_env(), preload=(*preload, "tests.support.storeworker"))


@pytest.fixture(scope="session")
def cli_forkserver(store_worker_forks: object) -> Iterator[object]:
    """Interpreters that imported hcgraph once and fork a real process per CLI call
    (tests/support/forkserver.py); ``None`` when ``HCGRAPH_TEST_FORKSERVER=0``."""
    if store_worker_forks is None:
        yield None
        return
    from tests.support.forkserver import PRELOAD, ForkServer

    server = _cli_servers(PRELOAD, store_worker_forks)
    assert isinstance(server, ForkServer)
    yield server
    server.close()


@pytest.fixture(scope="session")
def fresh_cli_forkserver(store_worker_forks: object) -> Iterator[object]:
    """Like ``cli_forkserver``, but its servers preload the libraries and not ``hcgraph.cli``,
    so each command makes its rich consoles for its own streams and environment (a
    pseudo-terminal, ``TERM``, ``COLUMNS``): for tests about what a terminal or a shell
    sees (tests/support/forkserver.py). ``None`` when ``HCGRAPH_TEST_FORKSERVER=0``."""
    if store_worker_forks is None:
        yield None
        return
    from tests.support.forkserver import PRELOAD_NO_CLI, ForkServer

    server = _cli_servers(PRELOAD_NO_CLI, store_worker_forks)
    assert isinstance(server, ForkServer)
    yield server
    server.close()


@pytest.fixture
def run_cli(cli_forkserver: object) -> object:
    """Run ``python -m hcgraph`` in a child process (the real entry point, real exit codes),
    forked from an interpreter that imported hcgraph already (see ``cli_forkserver``)."""
    from tests.support.forkserver import ForkServer

    def run(
        *args: object, cwd: Path | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        if isinstance(cli_forkserver, ForkServer):
            return cli_forkserver.run(list(map(str, args)), env=cli_env(), cwd=cwd, timeout=timeout)
        return subprocess.run(
            [sys.executable, "-m", "hcgraph", *map(str, args)],
            capture_output=True, text=True, cwd=cwd, env=cli_env(), timeout=timeout,
        )  # fmt: skip

    return run


# --- issue 6: a real Oxigraph server (the `oxigraph` binary from PyPI) -------------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class OxigraphServer:
    """``oxigraph serve --location DIR --bind 127.0.0.1:PORT --union-default-graph``.

    ``start()`` waits (bounded) until the server answers SPARQL; ``stop()`` terminates it.
    The location survives a stop, so a restart on the same port serves the same data.
    """

    def __init__(self, location: Path, port: int | None = None) -> None:
        self.location = location
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> OxigraphServer:
        import shutil
        import time

        import httpx

        binary = shutil.which("oxigraph")
        if binary is None:
            pytest.fail("the oxigraph server binary is missing: pip install oxigraph")
        self.proc = subprocess.Popen(
            [binary, "serve", "--location", str(self.location),
             "--bind", f"127.0.0.1:{self.port}", "--union-default-graph"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        for _ in range(200):  # up to ~20 s on a busy machine
            if self.proc.poll() is not None:
                pytest.fail(f"oxigraph serve exited with {self.proc.returncode}")
            try:
                if httpx.get(f"{self.url}/query", params={"query": "ASK {}"}).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        pytest.fail("oxigraph serve did not answer within 20 s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def update(self, sparql: str) -> None:
        import httpx

        response = httpx.post(
            f"{self.url}/update", content=sparql.encode(),
            headers={"Content-Type": "application/sparql-update"},
        )  # fmt: skip
        response.raise_for_status()

    def select(self, sparql: str) -> list[dict[str, dict[str, str]]]:
        """Rows of a SELECT as SPARQL JSON bindings."""
        import httpx

        response = httpx.post(
            f"{self.url}/query", data={"query": sparql},
            headers={"Accept": "application/sparql-results+json"}, timeout=60,
        )  # fmt: skip
        response.raise_for_status()
        rows: list[dict[str, dict[str, str]]] = response.json()["results"]["bindings"]
        return rows

    def graph_counts(self) -> dict[str, int]:
        rows = self.select("SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g")
        return {row["g"]["value"]: int(row["n"]["value"]) for row in rows}


@pytest.fixture(scope="session")
def oxigraph_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OxigraphServer]:
    """One Oxigraph server for the whole test session."""
    server = OxigraphServer(tmp_path_factory.mktemp("oxigraph") / "data").start()
    yield server
    server.stop()


@pytest.fixture
def oxigraph(oxigraph_session: OxigraphServer) -> OxigraphServer:
    """The session's Oxigraph server, emptied for this test."""
    oxigraph_session.update("DROP ALL")
    return oxigraph_session


@pytest.fixture(scope="session")
def crawl_server() -> Iterator[object]:
    """One real HTTP server on 127.0.0.1 for all crawl tests (see tests/crawlserver.py)."""
    from tests.crawlserver import CrawlServer

    server = CrawlServer().start()
    yield server
    server.stop()


# --- issue 4: a generated corpus in a store, with its ground truth ------------------------


@dataclass(frozen=True)
class CorpusStore:
    """A generated corpus (seed story first), ingested into an in-memory store."""

    stories: list[dict[str, object]]
    store: Store
    truth: object  # tests.support.groundtruth.GroundTruth


@pytest.fixture(scope="session")
def corpus_store() -> Iterator[CorpusStore]:
    """300 generated stories plus the seed, with reuse, dangling citations and mismatches."""
    import json

    from hcgraph.ingest import ingest_bytes
    from hcsample.corpus import generate_corpus
    from tests.support.groundtruth import ground_truth

    corpus = generate_corpus(300, seed=41, include_seed=json.loads(SEED.read_text()))
    with Store(None) as st:
        report = ingest_bytes(st, ((json.dumps(s).encode(), str(s["url"])) for s in corpus.stories))
        assert not report.failures, report.failures[:3]
        yield CorpusStore(corpus.stories, st, ground_truth(corpus.stories))


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """A headless Debian Chromium per browser test module. Not session-wide: Playwright's
    sync API keeps an event loop running while it is open, and later tests use asyncio."""
    from playwright.sync_api import sync_playwright

    from tests.support.chromium import CHROMIUM, TEST_ARGS

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=TEST_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def tabs(browser: object) -> Iterator[object]:
    """The module's reusable pages (:class:`tests.support.chromium.Tabs`): a test that only
    needs a freshly loaded page gets one without starting a renderer process."""
    from tests.support.chromium import Tabs

    pool = Tabs(browser)
    yield pool
    pool.close()
