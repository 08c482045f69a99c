"""The store worker process (:mod:`hcgraph.crawling.worker`): the crawl's pipeline in a process
of its own. What it must keep: the same graph as the thread, errors that keep their type
across the pipe, a worker that dies ending the crawl without losing what was stored (the
resume finishes it), Ctrl-C left to the crawl, and writes finished when the parent is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import sys
import types
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from hcgraph.crawling import CrawlOptions, crawl
from hcgraph.crawling.worker import ProcessRunner, _Remote, _wire
from hcgraph.errors import CrawlError, StoreError
from hcgraph.pipeline import Document
from hcgraph.store import Store
from tests.crawlserver import FAST, CrawlServer, Site, hub_site, page, quads_of, stories_in, story

SLUGS = [f"s{n}" for n in range(6)]
ALL = [page("a"), *(page(s) for s in SLUGS)]

pytestmark = pytest.mark.slow  # each crawl starts a worker process


@pytest.fixture(autouse=True)
def spawned_workers() -> Iterator[None]:
    """This module is about the worker process itself: it is started here as the package
    starts it (``python -P -c``, a child of this process), not forked from the session's
    server (``store_worker_forks`` in tests/conftest.py). (Not the test's ``monkeypatch``:
    a test may undo that one.)"""
    import subprocess

    from hcgraph.crawling import worker

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(worker, "subprocess", subprocess)
        yield


@pytest.fixture
def site(crawl_server: CrawlServer) -> Site:
    return hub_site(crawl_server, SLUGS)


def _workers() -> list[psutil.Process]:
    return [
        p for p in psutil.Process().children() if "hcgraph.crawling.worker" in " ".join(p.cmdline())
    ]


def _crawl_sending(site: Site, store: Path, sig: int) -> object:
    """Crawl, sending ``sig`` to the store worker as soon as the first fetch is done."""
    sent: list[int] = []

    def progress(_: object) -> None:
        if not sent:
            for worker in _workers():
                os.kill(worker.pid, sig)
                sent.append(worker.pid)

    opts = CrawlOptions(mirrors=(site.mirror,), policy=FAST)
    try:
        return crawl(ALL, store, opts, on_progress=progress)
    finally:
        assert sent, "no store worker process was running"


@pytest.mark.timeout(120)
def test_process_and_thread_workers_store_the_same_graph(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")  # reaches the worker's environment
    by_process = site.crawl(tmp_path / "p")
    by_thread = site.crawl(tmp_path / "t", store_worker="thread")
    assert by_process.exit_code == by_thread.exit_code == 0
    assert stories_in(tmp_path / "p") == set(ALL)
    assert quads_of(tmp_path / "p") == quads_of(tmp_path / "t")


@pytest.mark.timeout(120)
def test_a_killed_worker_ends_the_crawl_and_the_resume_finishes_it(
    site: Site, tmp_path: Path
) -> None:
    with pytest.raises(CrawlError, match=r"processing failed: the store worker process ended"):
        _crawl_sending(site, tmp_path, signal.SIGKILL)
    for _ in range(3):  # the resume: the bodies of the killed batch one at a time
        try:
            report = site.crawl(tmp_path, *ALL)
            break
        except CrawlError:  # pragma: no cover - a resume that dies would fail below
            continue
    assert report.status == "complete"
    # Nothing is lost: every page is stored, or - if it was alone in the batch the worker
    # died on, so it may be what killed it - recorded as failed with the reason.
    failed = {f["url"].removesuffix("index.json") for f in report.failures}
    assert len(failed) <= 1
    assert all("store worker process ended (exit code -9)" in f["reason"] for f in report.failures)
    assert stories_in(tmp_path) | failed == set(ALL)
    assert not stories_in(tmp_path) & failed
    assert not _workers()


@pytest.mark.timeout(120)
def test_the_worker_leaves_ctrl_c_to_the_crawl(site: Site, tmp_path: Path) -> None:
    report = _crawl_sending(site, tmp_path, signal.SIGINT)
    assert report.exit_code == 0  # type: ignore[attr-defined]
    assert stories_in(tmp_path) == set(ALL)


def _docs(*slugs: str) -> list[Document]:
    return [Document(story(s), f"{page(s)}index.json", key=f"{page(s)}index.json") for s in slugs]


@pytest.mark.timeout(60)
def test_the_worker_finishes_its_writes_when_the_parent_goes_away(tmp_path: Path) -> None:
    async def scenario() -> int:
        runner = ProcessRunner(tmp_path, {})
        await runner.start()
        await runner.submit(_docs("x", "y"))  # mapped; its write runs on in the worker
        runner._conn.close()  # the parent is gone, without a word
        return await asyncio.to_thread(runner._process.wait, 30)

    assert asyncio.run(scenario()) == 0
    assert stories_in(tmp_path) == {page("x"), page("y")}


@pytest.mark.timeout(60)
def test_a_store_the_worker_cannot_open_is_a_store_error(tmp_path: Path) -> None:
    async def scenario() -> None:
        runner = ProcessRunner(tmp_path, {}, wait=0.2)
        try:
            await runner.start()
        finally:
            await runner.close()

    with Store(tmp_path), pytest.raises(StoreError, match="the store is in use by "):
        asyncio.run(scenario())


@pytest.mark.timeout(60)
def test_a_batch_error_in_the_worker_is_raised_in_the_parent(tmp_path: Path) -> None:
    async def scenario() -> None:
        runner = ProcessRunner(tmp_path, {})
        await runner.start()
        try:
            await runner.process(_docs("x"))
            runner._conn.send(("no-such-op", None))  # an error inside the worker's loop
            runner._reply = asyncio.get_running_loop().create_future()
            with pytest.raises(ValueError, match="unknown op 'no-such-op'"):  # its own type
                await runner._reply
            assert [o.status for o in await runner.process(_docs("y"))] == ["added"]
        finally:
            await runner.close()

    asyncio.run(scenario())
    assert stories_in(tmp_path) == {page("x"), page("y")}


class _Unpicklable(Exception):
    def __init__(self, a: int, b: int) -> None:
        super().__init__(f"{a}/{b}")


class _BadStore(StoreError):
    def __init__(self, a: int, b: int) -> None:
        super().__init__(f"store {a}/{b}")


def test_errors_cross_the_pipe_with_their_type() -> None:
    assert isinstance(pickle.loads(pickle.dumps(_wire(StoreError("disk full")))), StoreError)
    same = _wire(ValueError("bad"))
    assert type(same) is ValueError and str(same) == "bad"
    stand_in = _wire(_Unpicklable(1, 2))
    assert isinstance(stand_in, _Remote) and str(stand_in) == "_Unpicklable: 1/2"
    store_error = _wire(_BadStore(1, 2))  # still a StoreError: the crawl ends on it
    assert type(store_error) is StoreError and str(store_error) == "store 1/2"
    pickle.loads(pickle.dumps(store_error))


def _gone(runner: ProcessRunner) -> bool:
    """True once the worker has exited (killing it if not, so no test leaves it behind)."""
    if runner._process.poll() is not None:
        return True
    runner._process.kill()
    runner._process.wait(10)
    return False


async def _cancel_soon(call: Coroutine[Any, Any, object]) -> None:
    """Start ``call``, cancel it at its first wait, and check it ended cancelled."""
    task = asyncio.ensure_future(call)
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.timeout(60)
def test_close_after_a_cancelled_call_ends_the_worker(tmp_path: Path) -> None:
    # A Ctrl-C without handle_signals cancels the crawl's task, and with it a call in flight
    # (the processor's submit or process); run()'s finally then closes the runner.
    async def scenario() -> ProcessRunner:
        runner = ProcessRunner(tmp_path, {})
        await runner.start()
        await _cancel_soon(runner.process(_docs("x")))  # the request is on its way
        await asyncio.wait_for(runner.close(), 30)
        return runner

    runner = asyncio.run(scenario())
    assert _gone(runner)


@pytest.mark.timeout(60)
def test_close_after_a_cancelled_start_ends_the_worker(tmp_path: Path) -> None:
    # Ctrl-C while the worker opens the store: close() must not wait for a worker that,
    # once open, waits for requests that never come.
    async def scenario() -> ProcessRunner:
        runner = ProcessRunner(tmp_path, {})
        await _cancel_soon(runner.start())
        await asyncio.wait_for(runner.close(), 20)
        return runner

    runner = asyncio.run(scenario())
    assert _gone(runner)


@pytest.mark.timeout(60)
def test_the_worker_imports_this_hcgraph_not_one_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # e.g. `hcgraph crawl` (or bench/ab_crawl.py) run from inside another checkout
    other = tmp_path / "elsewhere" / "hcgraph"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("raise ImportError('the hcgraph in the cwd')\n")
    monkeypatch.chdir(other.parent)

    async def scenario() -> None:
        runner = ProcessRunner(tmp_path / "store", {})
        try:
            await runner.start()
            assert [o.status for o in await runner.process(_docs("x"))] == ["added"]
        finally:
            await runner.close()

    asyncio.run(scenario())
    assert stories_in(tmp_path / "store") == {page("x")}


@pytest.mark.timeout(60)
def test_a_batch_in_flight_when_the_worker_dies_fails_its_future(tmp_path: Path) -> None:
    # The crawler awaits the future of the batch in flight when the next submit raised; if
    # the worker died, that future must end with a StoreError ("not known to be in the
    # store": both batches go to _process_batch, which ends the crawl with them as
    # suspects), not wait for ever or pass for landed.
    async def scenario() -> None:
        runner = ProcessRunner(tmp_path, {})
        await runner.start()
        try:
            landed = await runner.submit(_docs("x"))
            os.kill(runner.pid, signal.SIGKILL)
            with pytest.raises(StoreError, match="store worker process ended"):
                await runner.submit(_docs("y"))
            if not landed.done() or landed.exception() is not None:
                with pytest.raises(StoreError, match="store worker process ended"):
                    await landed
        finally:
            await runner.close()

    asyncio.run(scenario())


@pytest.mark.timeout(120)
def test_a_worker_dying_with_a_batch_in_flight_ends_the_crawl_with_suspects(
    crawl_server: CrawlServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = Site(crawl_server)
    slugs = [f"t{n}" for n in range(120)]
    for n, slug in enumerate(slugs):
        site.add(slug, story(slug, id=str(1_900_000_000_000_000_000 + n)))  # ids all differ
    seeds = [page(s) for s in slugs]
    submit = ProcessRunner.submit
    killed: list[int] = []

    async def kill_in_flight(self: ProcessRunner, documents: Any) -> Any:
        landed = await submit(self, documents)
        if not landed.done() and not killed:  # its write is in flight: the worker dies now
            os.kill(self.pid, signal.SIGKILL)
            killed.append(len(documents))
        return landed

    monkeypatch.setattr(ProcessRunner, "submit", kill_in_flight)
    with pytest.raises(CrawlError, match=r"processing failed: the store worker process ended"):
        site.crawl(tmp_path, *seeds, concurrency=16)
    assert killed, "no batch was submitted with another in flight"
    monkeypatch.undo()
    report = site.crawl(tmp_path, *seeds)  # the resume: the suspects one at a time
    assert report.status == "complete" and report.exit_code == 0
    assert stories_in(tmp_path) == set(seeds)
    assert not _workers()


@pytest.mark.timeout(120)
def test_a_sigterm_to_the_crawl_and_its_worker_is_a_clean_stop(site: Site, tmp_path: Path) -> None:
    # `systemctl stop` (and any kill of the whole cgroup) sends SIGTERM to every process of
    # the crawl at once: the worker included, though it is in a session of its own. The
    # crawl (handle_signals, as the CLI) stops cleanly, as it does with the thread.
    sent: list[int] = []

    def progress(_: object) -> None:
        if not sent:
            for worker in _workers():
                os.kill(worker.pid, signal.SIGTERM)
                sent.append(worker.pid)
            os.kill(os.getpid(), signal.SIGTERM)

    opts = CrawlOptions(mirrors=(site.mirror,), policy=FAST)
    report = crawl(ALL, tmp_path, opts, on_progress=progress, handle_signals=True)
    assert sent, "no store worker process was running"
    assert report.status == "interrupted" and report.failures == []
    resumed = site.crawl(tmp_path, *ALL)
    assert resumed.exit_code == 0 and resumed.failures == []
    assert stories_in(tmp_path) == set(ALL)
    assert not _workers()


class _OnlyHere:
    """A type the worker cannot import: pickled as a class of a module that exists only in
    this process (the test module itself is importable there, as ``tests.…``)."""


_ONLY_HERE = "hcgraph_only_in_the_test_process"
_OnlyHere.__module__ = _ONLY_HERE
sys.modules[_ONLY_HERE] = types.ModuleType(_ONLY_HERE)
sys.modules[_ONLY_HERE]._OnlyHere = _OnlyHere  # type: ignore[attr-defined]


@pytest.mark.timeout(60)
def test_a_call_that_breaks_the_worker_loop_is_not_answered_as_a_success(
    tmp_path: Path,
) -> None:
    # Anything the loop does not catch as an Exception of the op (a request that does not
    # unpickle in the worker, a BaseException such as pyo3's PanicException from the store)
    # ended the loop, and the worker's closing reply ("reply", True, None) was taken as the
    # answer to that call: process() returned None instead of raising.
    async def scenario() -> None:
        runner = ProcessRunner(tmp_path, {})
        await runner.start()
        try:
            doc = Document(_OnlyHere(), "x", key="x")  # type: ignore[arg-type]
            with pytest.raises(ModuleNotFoundError, match=_ONLY_HERE):
                await runner.process([doc])
        finally:
            with contextlib.suppress(StoreError):  # the worker is gone, maybe not yet seen
                await runner.close()

    asyncio.run(scenario())


@pytest.mark.timeout(60)
def test_a_worker_that_does_not_end_is_stopped_with_a_store_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hcgraph.crawling import worker

    monkeypatch.setattr(worker, "_CLOSE_WAIT", 0.5)

    async def scenario() -> ProcessRunner:
        runner = ProcessRunner(tmp_path, {})
        await runner.start()
        os.kill(runner.pid, signal.SIGSTOP)  # a worker stuck in its last write
        with pytest.raises(StoreError, match="did not finish its writes in 0 s and was stopped"):
            await runner.close()
        return runner

    runner = asyncio.run(scenario())
    assert _gone(runner)


def test_the_worker_imports_none_of_the_fetching_side() -> None:
    """The store worker needs the pipeline and the store, not httpx, the frontier or the
    archive: ``hcgraph.crawling`` is lazy, so importing its worker module loads none of them."""
    import subprocess
    import sys

    from tests.conftest import cli_env

    code = (
        "import sys; import hcgraph.crawling.worker\n"
        "fetching = ('httpx', 'hcgraph.crawling.crawler', 'hcgraph.crawling.frontier',\n"
        "            'hcgraph.archive')\n"
        "print(sorted(m for m in fetching if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=cli_env(), capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
