"""The store's one writer: a batch's future ends when it has landed, batches that arrive
while a load runs join one segment, and a write that cannot be recovered breaks the writer."""

from __future__ import annotations

import itertools
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hcgraph.errors import StoreError
from hcgraph.ingest import ingest_paths
from hcgraph.ledger import Ledger
from hcgraph.pipeline import Document, Pipeline, recover
from hcgraph.store import Store
from hcsample.corpus import generate_corpus
from tests.conftest import cli_env


@pytest.fixture(autouse=True)
def _fixed_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")


def _documents(n: int) -> list[Document]:
    bodies = generate_corpus(n, seed=3).site_files().values()
    return [Document(body, f"s{k}.json") for k, body in enumerate(bodies)]


def _held_loads(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, list[int]]:
    """Every bulk load waits for the event; the list gets each load's size in bytes."""
    go = threading.Event()
    loads: list[int] = []
    real = Store.load_nquads

    def load(self: Store, data: bytes, *args: Any) -> None:
        go.wait(30)
        loads.append(len(data))
        real(self, data, *args)

    monkeypatch.setattr(Store, "load_nquads", load)
    return go, loads


def test_a_batch_future_ends_once_its_stories_are_in_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = _documents(3)
    with Store(tmp_path / "st") as store, Pipeline(store) as pipeline:
        go, _ = _held_loads(monkeypatch)
        landed = pipeline.submit(docs)  # mapped: its load waits
        assert not landed.done() and store.story_graphs() == []
        go.set()
        outcomes = landed.result(30)
        assert [o.status for o in outcomes] == ["added"] * 3
        assert sorted(store.story_graphs()) == sorted(str(o.story_url) for o in outcomes)
        assert pipeline.writer.state == "idle"
        assert not store.ledger.dirty


def test_batches_submitted_during_a_load_join_one_segment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = _documents(8)
    with Store(tmp_path / "st") as store, Pipeline(store) as pipeline:
        go, loads = _held_loads(monkeypatch)
        first = pipeline.submit(docs[:2])
        later = [pipeline.submit(docs[k : k + 2]) for k in range(2, 8, 2)]
        go.set()
        for landed in [first, *later]:
            assert all(o.status == "added" for o in landed.result(30))
        assert len(loads) == 2  # the first batch's load, then one for the three after it
        assert len(store.story_graphs()) == 8


def test_a_write_that_cannot_be_recovered_breaks_the_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = _documents(2)
    real = Ledger.settle

    def failing(self: Ledger, *args: Any) -> Any:
        raise StoreError("disk full (injected)")

    with Store(tmp_path / "st") as store:
        with Pipeline(store) as pipeline:
            monkeypatch.setattr(Ledger, "settle", failing)  # the write and its recovery fail
            with pytest.raises(StoreError, match="injected"):
                pipeline.submit(docs[:1]).result(30)
            assert pipeline.writer.state == "broken"
            monkeypatch.setattr(Ledger, "settle", real)
            with pytest.raises(StoreError, match=r"earlier write failed \(disk full"):
                pipeline.submit(docs[1:])
        with Pipeline(store) as again:  # reopened: recovered, and writing again
            # the first had landed whole before its settle failed: recovery kept it
            assert [o.status for o in again.process(docs)] == ["unchanged", "added"]
        assert not store.ledger.dirty and len(store.story_graphs()) == 2


def test_a_batch_is_prepared_with_fewer_collections_and_the_threshold_comes_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a batch is parsed and mapped, the cycle collector's young generation waits for
    GC_YOUNG allocations (ingest's CPU, bench/RESULTS.md); after it, the caller's threshold
    is back, and a threshold of 0 (collection off) is left alone."""
    import gc

    import hcgraph.pipeline as pl

    seen: list[int] = []
    real = pl.parse_story

    def spy(raw: bytes, source: str) -> Any:
        seen.append(gc.get_threshold()[0])
        return real(raw, source)

    monkeypatch.setattr(pl, "parse_story", spy)
    before = gc.get_threshold()
    docs = _documents(3)
    try:
        with Store(tmp_path / "store") as store, Pipeline(store) as pipeline:
            assert all(o.ok for o in pipeline.process(docs[:2]))
            assert gc.get_threshold() == before
            gc.set_threshold(0)
            assert all(o.ok for o in pipeline.process(docs[2:]))
            assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*before)
    assert seen == [max(pl.GC_YOUNG, before[0])] * 2 + [0]


def _until(done: Any, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_an_ingest_streams_its_batches_into_one_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pipeline.run hands each batch to the bulk load already running (one load a segment,
    one set of tables to compact); the load ends, and the futures with it, at the end."""
    docs = _documents(75)
    loads: list[list[int]] = []  # each streamed load: the size of each chunk it read
    real = Store._stream

    def spy(self: Store, head: list[bytes], chunks: Any) -> None:
        loads.append([len(b"".join(head))])
        real(self, head, (loads[-1].append(len(c)) or c for c in chunks))

    monkeypatch.setattr(Store, "_stream", spy)
    with Store(tmp_path / "st") as store, Pipeline(store, batch_size=25) as pipeline:

        def documents() -> Any:
            for k, doc in enumerate(docs):
                if k in (25, 50):  # the batches before are in the running load already
                    _until(lambda k=k: len(loads) == 1 and len(loads[0]) == k // 25)
                    assert pipeline.writer.state == "loading"
                yield doc

        assert all(o.status == "added" for o in pipeline.run(documents()))
        assert len(loads) == 1 and len(loads[0]) == 3
        assert len(store.story_graphs()) == 75 and not store.ledger.dirty


@pytest.mark.slow  # a subprocess, killed
def test_a_streamed_load_killed_leaves_only_whole_stories(tmp_path: Path) -> None:
    """SIGKILL an ingest while batches stream into its one bulk load: after recovery, each
    stored story's graph is what a clean ingest writes, and a re-run stores them all."""
    corpus = generate_corpus(200, seed=7)
    corpus.write(tmp_path / "stories")
    script = textwrap.dedent(f"""
        from hcgraph.ingest import ingest_paths
        from hcgraph.store import Store
        real = Store._stream
        def told(chunks):
            for chunk in chunks:
                print("chunk", flush=True)
                yield chunk
        Store._stream = lambda self, head, chunks: real(self, head, told(chunks))
        with Store({str(tmp_path / "st")!r}) as st:
            ingest_paths(st, [{str(tmp_path / "stories")!r}], batch_size=40)
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", script], env=cli_env(), stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert [proc.stdout.readline() for _ in range(3)] == ["chunk\n"] * 3
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    proc.stdout.close()
    with Store(tmp_path / "st") as store:
        assert store.ledger.dirty  # killed inside the load
        recover(store)
        graphs = store.story_graphs()
        assert len(graphs) < 200 and not store.ledger.dirty
        by_url = {s["url"]: s["slug"] for s in corpus.stories}
        expected = Store(None)
        ingest_paths(expected, sorted(tmp_path / "stories" / f"{by_url[u]}.json" for u in graphs))
        assert store.graph_names() == expected.graph_names()
        for graph in expected.graph_names():
            assert store.sorted_lines(graph) == expected.sorted_lines(graph), graph
        assert ingest_paths(store, [tmp_path / "stories"]).ok
        assert len(store.story_graphs()) == 200


def test_a_streamed_load_that_fails_fails_its_batches_and_is_recovered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Store._stream

    def bad_end(self: Store, head: list[bytes], chunks: Any) -> None:
        real(self, head, itertools.chain(chunks, [b"<urn:x> <bad\n"]))  # the engine refuses

    monkeypatch.setattr(Store, "_stream", bad_end)
    with Store(tmp_path / "st") as store, Pipeline(store, batch_size=25) as pipeline:
        with pytest.raises(StoreError, match="write failed"):
            list(pipeline.run(_documents(50)))
        assert pipeline.writer.state == "idle" and not store.ledger.dirty
        assert store.story_graphs() == []  # the load never committed: nothing, not a part
