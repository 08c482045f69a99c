"""The streaming pipeline under faults: a failed segment load, a retraction racing the next
batch, a retraction interrupted between the ledger and the store."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import hcgraph.pipeline as pl
from hcgraph.errors import StoreError
from hcgraph.ingest import ingest_bytes, ingest_paths
from hcgraph.ledger import Ledger
from hcgraph.pipeline import recover
from hcgraph.store import Store
from hcgraph.writer import Batch
from hcsample.corpus import generate_corpus


@pytest.fixture(autouse=True)
def _fixed_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")


def _assert_same(store: Store, expected: Store) -> None:
    """``store`` holds exactly what ``expected`` (a clean ingest) holds, shared graphs too."""
    assert store.graph_names() == expected.graph_names()
    for graph in expected.graph_names():
        assert store.sorted_lines(graph) == expected.sorted_lines(graph), graph


def test_a_failed_segment_load_is_recovered_not_marked_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first segment's bulk load fails while the next segment is gathered: the run
    raises, and what it leaves is recovered on the next open, so a re-run gives exactly a
    clean ingest. Before, the next segment was still loaded and the ledger marked clean
    with the failed stories pending: their descriptions were 'known' but never stored."""
    corpus = generate_corpus(60, seed=7)
    stories = tmp_path / "stories"
    corpus.write(stories)
    real = Store.load_nquads
    calls = []

    def failing_first(self: Store, data: Any) -> None:
        calls.append(len(data))
        if len(calls) == 1:
            raise StoreError("disk full (injected)")
        real(self, data)

    with Store(tmp_path / "st") as store:
        monkeypatch.setattr(Store, "load_nquads", failing_first)
        with pytest.raises(StoreError, match="injected"):
            ingest_paths(store, [stories], batch_size=10)
        monkeypatch.setattr(Store, "load_nquads", real)
        # the failed write is still to be recovered: nothing claims the store consistent
        assert store.ledger.dirty or not store.ledger.pending()
    with Store(tmp_path / "st") as store:
        assert ingest_paths(store, [stories]).ok
        clean = Store(None)
        assert ingest_paths(clean, [stories]).ok
        _assert_same(store, clean)


def _seed_variants(seed_bytes: bytes) -> tuple[bytes, bytes, bytes]:
    """The seed story; its next version (manifest 0 retitled); another story citing the
    seed's manifests unchanged (so it states the description the next version drops)."""
    seed = json.loads(seed_bytes)
    changed = json.loads(seed_bytes)
    changed["manifests"][0]["title"] = "A retitled manifest"
    other = json.loads(seed_bytes)
    other["id"] = "9" + str(other["id"])
    other["url"] = other["url"].rstrip("/") + "-copy/"
    return json.dumps(seed).encode(), json.dumps(changed).encode(), json.dumps(other).encode()


def test_a_description_retracted_by_a_replacement_stays_for_the_next_batch(
    tmp_path: Path, seed_bytes: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batch 1 replaces a story, whose write (on the writer thread) retracts a description
    only its old version stated; batch 2, prepared meanwhile, adds a story stating that
    description. Before, batch 2 took it as known (the retraction had not happened yet) and
    did not write it: the store lost the description the new story states."""
    v1, v2, other = _seed_variants(seed_bytes)
    prepared = threading.Event()
    real_prepare, real_replace = pl.Pipeline._prepare, Store.replace_graph

    def prepare(self: pl.Pipeline, doc: pl.Document, *args: Any) -> pl.Outcome:
        outcome = real_prepare(self, doc, *args)
        if doc.source == "other":
            prepared.set()
        return outcome

    def replace_graph(self: Store, *args: Any, **kwargs: Any) -> None:
        prepared.wait(10)  # the writer is slower than the next batch's mapping
        real_replace(self, *args, **kwargs)

    with Store(tmp_path / "st") as store:
        assert ingest_bytes(store, [(v1, "v1")]).ok
        monkeypatch.setattr(pl.Pipeline, "_prepare", prepare)
        monkeypatch.setattr(Store, "replace_graph", replace_graph)
        with pl.Pipeline(store, batch_size=1) as pipeline:
            docs = [pl.Document(v2, "v2"), pl.Document(other, "other")]
            statuses = [o.status for o in pipeline.run(docs)]
        assert statuses == ["replaced", "added"]
        monkeypatch.undo()
        monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")
        clean = Store(None)  # the same three documents, one write at a time
        for raw, source in ((v1, "v1"), (v2, "v2"), (other, "other")):
            assert ingest_bytes(clean, [(raw, source)]).ok
        _assert_same(store, clean)


def test_a_retraction_interrupted_before_the_store_is_finished_on_recovery(
    tmp_path: Path, seed_bytes: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replacement's retraction fails between the ledger and the store (a crash, a full
    disk): the next open recovers and the store says what a clean run says. Before, the
    ledger forgot the dropped description first, so recovery never found it and the
    manifest kept its old title beside the new one."""
    v1, v2, _ = _seed_variants(seed_bytes)
    real = Store.set_subject

    def failing(self: Store, *args: Any) -> None:
        raise StoreError("disk full (injected)")

    with Store(tmp_path / "st") as store:
        assert ingest_bytes(store, [(v1, "v1")]).ok
        monkeypatch.setattr(Store, "set_subject", failing)
        with pytest.raises(StoreError, match="injected"):
            ingest_bytes(store, [(v2, "v2")])
        monkeypatch.setattr(Store, "set_subject", real)
        assert store.ledger.dirty
    with Store(tmp_path / "st") as store:
        recover(store)
        assert not store.ledger.dirty
        clean = Store(None)
        for raw, source in ((v1, "v1"), (v2, "v2")):
            assert ingest_bytes(clean, [(raw, source)]).ok
        _assert_same(store, clean)


def test_a_landed_story_with_a_repeated_entry_survives_recovery(
    tmp_path: Path, seed_bytes: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process stops after the load, before the ledger settles: recovery keeps every
    story that landed whole. A story listing one publisher twice maps to a repeated triple
    the store holds once; its expected quad count counted it twice, so recovery took the
    whole story for a partial load and removed it."""
    story = json.loads(seed_bytes)
    story["publishers"].append(story["publishers"][0])
    raw = json.dumps(story).encode()
    real = Ledger.settle

    def stopped(self: Ledger, *args: Any) -> Any:
        raise KeyboardInterrupt  # as if killed between the load and the settle

    with Store(tmp_path / "st") as store:
        monkeypatch.setattr(Ledger, "settle", stopped)
        with pytest.raises(KeyboardInterrupt):
            ingest_bytes(store, [(raw, "dup")])
        monkeypatch.setattr(Ledger, "settle", real)
    with Store(tmp_path / "st") as store:
        recover(store)
        assert store.story_graphs() == [story["url"]]
        clean = Store(None)
        assert ingest_bytes(clean, [(raw, "dup")]).ok
        _assert_same(store, clean)


def test_a_batch_that_fails_to_encode_is_not_settled_with_its_segment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch raises while its N-Quads are made (after the ledger recorded its stories):
    the segment's earlier batches are loaded and settled, that batch's stories are not.
    Before, they were settled with the segment although never loaded, and the ledger
    marked clean: their descriptions stayed 'known', and a re-run never wrote them."""
    corpus = generate_corpus(40, seed=7)
    stories = tmp_path / "stories"
    corpus.write(stories)
    real = Batch.nquads
    calls = []

    def failing_second(self: Batch) -> bytes:
        calls.append(self)
        if len(calls) == 2:
            raise MemoryError("injected")
        return real(self)

    with Store(tmp_path / "st") as store:
        monkeypatch.setattr(Batch, "nquads", failing_second)
        with pytest.raises(MemoryError, match="injected"):
            ingest_paths(store, [stories], batch_size=10)
        monkeypatch.setattr(Batch, "nquads", real)
    with Store(tmp_path / "st") as store:
        assert ingest_paths(store, [stories]).ok
        clean = Store(None)
        assert ingest_paths(clean, [stories]).ok
        _assert_same(store, clean)


def test_a_story_whose_write_failed_claims_nothing_in_a_crawl(
    tmp_path: Path, seed_bytes: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crawl batch's write fails for a story, and so does its retry (the crawler records
    it failed): the story is not in the store, so another URL serving a story with its id
    is stored, not reported a duplicate of the failed URL. Before, the failed story kept
    its claim on its IRI and id for the rest of the crawl."""
    seed = json.loads(seed_bytes)
    other = dict(seed, url=seed["url"].rstrip("/") + "-copy/")  # the same id
    real = Store.load_nquads

    def load(self: Store, data: bytes, *args: Any) -> None:
        if f"<{seed['url']}> .\n".encode() in data:
            raise RuntimeError("boom while writing")
        real(self, data, *args)

    monkeypatch.setattr(Store, "load_nquads", load)
    with Store(tmp_path / "st") as store, pl.Pipeline(store, crawl_claims={}) as pipeline:
        failing = pl.Document(seed_bytes, "https://x.example/1", key="https://x.example/1")
        landed = pipeline.submit([failing])
        with pytest.raises(RuntimeError, match="boom"):
            landed.result()
        with pytest.raises(RuntimeError, match="boom"):
            pipeline.process([failing])  # the crawler's retry of the body alone
        raw = json.dumps(other).encode()
        (outcome,) = pipeline.process([pl.Document(raw, "https://x.example/2", key="u2")])
        assert outcome.duplicate_of is None and outcome.status == "added"
        assert store.story_graphs() == [other["url"]]
