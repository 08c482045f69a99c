"""Shared fixtures: the real seed story, temporary stores, and ways to run the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hcgraph.cli import cli
from hcgraph.store import Store

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SEED = FIXTURES / "agentic-rl-production.json"
SEED_URL = "https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/"


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


def cli_env() -> dict[str, str]:
    """Environment for subprocess runs: this checkout's package first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["SOURCE_DATE_EPOCH"] = env.get("SOURCE_DATE_EPOCH", "1790000000")
    return env


@pytest.fixture
def run_cli() -> object:
    """Run ``python -m hcgraph`` in a subprocess (the real entry point, real exit codes)."""

    def run(*args: object, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hcgraph", *map(str, args)],
            capture_output=True, text=True, cwd=cwd, env=cli_env(), timeout=timeout,
        )  # fmt: skip

    return run


@pytest.fixture(scope="session")
def crawl_server() -> Iterator[object]:
    """One real HTTP server on 127.0.0.1 for all crawl tests (see tests/crawlserver.py)."""
    from crawlserver import CrawlServer

    server = CrawlServer().start()
    yield server
    server.stop()
