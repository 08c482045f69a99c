"""The store's one writer: a batch's future ends when it has landed, batches that arrive
while a load runs join one segment, and a write that cannot be recovered breaks the writer."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from hcgraph.errors import StoreError
from hcgraph.ledger import Ledger
from hcgraph.pipeline import Document, Pipeline
from hcgraph.store import Store
from hcsample.corpus import generate_corpus


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


def test_a_batch_future_resolves_after_the_writer_settled_its_books(tmp_path: Path) -> None:
    # Whoever the future wakes (a done-callback runs at once, on the writer's thread) sees
    # the writer idle and the batch's URLs no longer in flight.
    seen: list[str] = []
    with Store(tmp_path / "st") as store, Pipeline(store) as pipeline:
        landed = pipeline.submit(_documents(2))
        landed.add_done_callback(lambda _f: seen.append(pipeline.writer.state))
        assert [o.status for o in landed.result(30)] == ["added"] * 2
    assert seen == ["idle"]
