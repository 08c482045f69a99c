"""A disk that fills up during a crawl (the store's, the archive's, the frontier's): one
``error:`` line and exit 1, never a traceback; the first error is the one reported (the
store's flush on close, failing too, must not replace it); and the same command run once
there is space again resumes and stores every story.

The full disk is injected (tests/support/diskfull.py): into the CLI's process and its
store worker through a ``sitecustomize``, into this process with ``monkeypatch``.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hcgraph.crawling.frontier import Frontier
from hcgraph.errors import CrawlError
from tests.conftest import cli_env
from tests.crawlserver import CrawlServer, Site, page, stories_in, story
from tests.support import diskfull

SLUGS = [f"d{n}" for n in range(30)]
EVERY = {page("a"), *(page(s) for s in SLUGS)}

pytestmark = pytest.mark.slow  # crawls in subprocesses, with a store worker process


@pytest.fixture
def site(crawl_server: CrawlServer) -> Site:
    """Story ``a`` linking to the others, every one with an id of its own."""
    site = Site(crawl_server)
    site.add("a", story("a", *(page(s) for s in SLUGS)))
    for n, slug in enumerate(SLUGS):
        site.add(slug, story(slug, id=str(1_900_000_000_000_000_000 + n)))
    return site


def _crawl_cli(
    site: Site, store: Path, hook: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``hcgraph crawl`` (the default store worker: a process), with ``hook`` (a directory
    holding a sitecustomize.py) first on the path of every process it starts."""
    env = cli_env()
    if hook is not None:
        env["PYTHONPATH"] = f"{hook}{os.pathsep}{env['PYTHONPATH']}"
    args = [page("a"), "--store", store, "--mirror", site.mirror, "--ignore-robots"]
    return subprocess.run(
        [sys.executable, "-m", "hcgraph", "crawl", *map(str, args), "--depth", "1"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert result.returncode == 1, result.stderr
    return lines[0]


@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("fault", "first"),
    [
        # the store cannot be written; then neither can the frontier, nor the store's flush
        ("store", f"write failed: {diskfull.ENGINE_FULL}"),
        # the archive cannot be appended to; then neither the frontier nor the store's flush
        ("archive", ".pack: cannot write: No space left on device"),
    ],
)
def test_a_full_disk_ends_the_cli_crawl_with_one_line_and_the_rerun_completes(
    site: Site, tmp_path: Path, fault: str, first: str
) -> None:
    """Before, the store worker's failing close raised a raw ``OSError`` from the crawl's
    ``finally`` over the real error, after a ``sqlite3.OperationalError`` from the frontier:
    three tracebacks, exit 1, no summary."""
    hook = tmp_path / "hook"
    hook.mkdir()
    flag = tmp_path / "full"
    (hook / "sitecustomize.py").write_text(diskfull.sitecustomize(fault, flag))
    store = tmp_path / "store"
    line = _one_error_line(_crawl_cli(site, store, hook))
    assert flag.exists(), "the fault was not injected"
    assert first in line  # the first error, not the close's or the frontier's after it
    assert "database or disk is full" not in line
    again = _crawl_cli(site, store)  # there is space again: the same command
    assert again.returncode == 0, again.stderr
    assert "crawl complete (resumed)" in again.stdout
    assert stories_in(store) == EVERY


@pytest.mark.timeout(120)
def test_a_full_disk_with_the_thread_worker_is_one_crawl_error(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The library's crawl with the pipeline in a thread: a ``CrawlError`` carrying the
    store's error (before: ``sqlite3.OperationalError`` from the frontier, raised while
    handling it, and the store's failing close after it)."""
    diskfull.install(monkeypatch.setattr, "store", tmp_path / "full")
    store = tmp_path / "store"
    with pytest.raises(CrawlError, match=r"processing failed: .*No space left on device"):
        site.crawl(store, page("a"), depth=1, store_worker="thread")
    monkeypatch.undo()
    # The injected engine's frames in the error's traceback (a reference cycle) hold the
    # real engine and its lock until collected; Oxigraph's own methods leave no frames.
    gc.collect()
    report = site.crawl(store, page("a"), depth=1, store_worker="thread")
    assert report.status == "complete" and report.resumed and report.exit_code == 0
    assert stories_in(store) == EVERY


@pytest.mark.timeout(120)
def test_a_full_disk_holds_no_story_responsible(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's disk is full for two runs (the frontier's is not): no story is recorded
    as failed for it (before, the resume retried the batch one body at a time and recorded
    the first as failed, as if it had killed the writer), and with room the third run
    stores every story and exits 0."""
    diskfull.install(monkeypatch.setattr, "engine", tmp_path / "full")
    store = tmp_path / "store"
    for _ in range(2):
        with pytest.raises(CrawlError, match=r"No space left on device.*once the store's disk"):
            site.crawl(store, page("a"), depth=1, store_worker="thread")
        gc.collect()  # the injected engine's frames hold the real engine's lock
    monkeypatch.undo()
    gc.collect()
    report = site.crawl(store, page("a"), depth=1, store_worker="thread")
    assert report.failures == [] and report.exit_code == 0
    assert stories_in(store) == EVERY


def test_a_frontier_write_on_a_full_disk_is_a_crawl_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flag = tmp_path / "full"
    diskfull.install(monkeypatch.setattr, "store", flag)
    path = tmp_path / "crawl" / "frontier.sqlite"
    frontier = Frontier(path)
    flag.touch()
    try:
        with pytest.raises(CrawlError) as info:
            frontier.set_setting("suspects", "[]")
    finally:
        frontier.close()
    assert str(info.value) == f"{path}: the crawl frontier failed: database or disk is full"


_LOW_DISK = """\
import shutil

_real = shutil.disk_usage
_calls = [0]


def _usage(path):
    # The first look (the seed's batch) tells the truth; then the disk is nearly full.
    _calls[0] += 1
    found = _real(path)
    return found if _calls[0] <= 1 else found._replace(free=1_000_000)


shutil.disk_usage = _usage
"""


@pytest.mark.timeout(240)
def test_a_crawl_stops_before_the_disk_is_full_and_the_rerun_completes(
    site: Site, tmp_path: Path
) -> None:
    """Free space is checked before each batch goes to the store (in the store worker
    process): the crawl stops with one line naming the store, the free bytes and the
    estimate, the seed's batch stays stored, and the same command resumes once there is
    room. Before, nothing looked: the crawl ran on until the disk was full."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_LOW_DISK)
    store = tmp_path / "store"
    line = _one_error_line(_crawl_cli(site, store, hook))
    assert line.startswith(
        f"error: processing failed: {store}: not enough free disk space for the next "
    ), line
    assert "1,000,000 bytes free, they need about " in line
    assert "run the same command again to resume once the store's disk has room" in line
    assert stories_in(store) == {page("a")}  # the batch before it: kept
    again = _crawl_cli(site, store)  # there is room again: the same command
    assert again.returncode == 0, again.stderr
    assert "crawl complete (resumed)" in again.stdout
    assert stories_in(store) == EVERY
