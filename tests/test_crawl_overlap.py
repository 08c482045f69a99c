"""Two batches in flight: batch n + 1 is mapped while batch n is written, and a URL is
recorded as stored only once its batch's write has landed (resume correctness)."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hcgraph import pipeline
from hcgraph.archive import Archive
from hcgraph.crawling import crawler, recorder
from hcgraph.pipeline import Document, Outcome
from hcgraph.store import Store
from hcgraph.writer import Batch, Writer
from tests.crawlserver import CrawlServer, Site, hub_site, page, stories_in, story

SLUGS = [f"s{n}" for n in range(9)]


@pytest.fixture
def site(crawl_server: CrawlServer) -> Site:
    return hub_site(crawl_server, SLUGS)


@pytest.fixture
def landed(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Story IRIs whose batch write has returned; each write is slowed down so that the
    next batch is mapped (and could be recorded too early) while it runs."""
    done: set[str] = set()
    lock = threading.Lock()
    real = Store.load_nquads

    def load(self: Store, data: bytes, *args: Any) -> None:
        time.sleep(0.05)
        real(self, data, *args)
        graphs = {line.rsplit(b" ", 2)[-2] for line in data.splitlines() if line}
        with lock:
            done.update(g[1:-1].decode() for g in graphs if b"/stories/" in g)

    monkeypatch.setattr(Store, "load_nquads", load)
    monkeypatch.setattr(crawler, "BATCH", 2)
    return done


def test_stored_is_recorded_only_after_the_write_landed(
    site: Site, tmp_path: Path, landed: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    early: list[str] = []
    overlapped: list[bool] = []
    real_outcome = recorder.Recorder.outcome
    real_submit = pipeline.Pipeline.submit

    def outcome(self: recorder.Recorder, result: Outcome) -> bool:
        if result.ok and result.story_url not in landed:
            early.append(str(result.story_url))
        return real_outcome(self, result)

    def submit(self: pipeline.Pipeline, documents: Any) -> Any:
        overlapped.append(self.writer.state != "idle")
        return real_submit(self, documents)

    monkeypatch.setattr(recorder.Recorder, "outcome", outcome)
    monkeypatch.setattr(pipeline.Pipeline, "submit", submit)
    report = site.crawl(tmp_path, store_worker="thread")
    assert report.exit_code == 0 and report.counts["added"] == 1 + len(SLUGS)
    assert any(overlapped), "no batch was mapped while another was being written"
    assert early == []
    assert stories_in(tmp_path) == {page(s) for s in ["a", *SLUGS]}


def _before_each_batch(monkeypatch: pytest.MonkeyPatch, check: Any) -> None:
    """Call ``check(documents)`` before the pipeline takes each batch (either way in)."""
    real_submit, real_process = pipeline.Pipeline.submit, pipeline.Pipeline.process

    def submit(self: pipeline.Pipeline, documents: Any) -> Any:
        check(documents)
        return real_submit(self, documents)

    def process(self: pipeline.Pipeline, documents: Any) -> list[Outcome]:
        check(documents)
        return real_process(self, documents)

    monkeypatch.setattr(pipeline.Pipeline, "submit", submit)
    monkeypatch.setattr(pipeline.Pipeline, "process", process)


def test_every_body_is_synced_to_disk_before_its_batch_goes_to_the_store(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A power cut must not leave the store holding a story whose body the archive lost
    (``rebuild`` could not recreate it): the pack is fsync-ed before each batch is written."""
    written: list[bytes] = []
    synced: set[bytes] = set()
    unsynced: list[str] = []
    real_put, real_sync = Archive.put_body, Archive.sync

    def put_body(self: Archive, data: bytes) -> str:
        written.append(data)
        return real_put(self, data)

    def sync(self: Archive, *bodies: Any) -> None:
        done = list(written)
        real_sync(self, *bodies)
        synced.update(done)

    def check(documents: Any) -> None:
        unsynced.extend(str(d.key) for d in documents if d.body not in synced)

    monkeypatch.setattr(Archive, "put_body", put_body)
    monkeypatch.setattr(Archive, "sync", sync)
    _before_each_batch(monkeypatch, check)
    monkeypatch.setattr(crawler, "BATCH", 2)
    report = site.crawl(tmp_path, store_worker="thread")
    assert report.exit_code == 0 and report.counts["added"] == 1 + len(SLUGS)
    assert written and unsynced == []


def _own_manifest(slug: str) -> bytes:
    """A story citing a manifest (and claim) no other story cites."""
    n = 1_830_000_000_000_000_000 + sum(map(ord, slug))
    return story(
        slug,
        manifests=[{"manifest_id": str(n), "source_name": f"pub-{slug}"}],
        sections=[{"heading": "h", "paragraphs": [{"markdown": "text", "cites": [
            {"manifest_id": str(n), "claim_ids": [str(n + 7)]}]}]}],
    )  # fmt: skip


def _own_manifest_site(server: CrawlServer) -> Site:
    """The hub site, each story citing a manifest of its own."""
    site = Site(server)
    site.add("a", story("a", *(page(s) for s in SLUGS)))
    for slug in SLUGS:
        site.add(slug, _own_manifest(slug))
    return site


def _assert_consistent(store_dir: Path) -> None:
    """Every manifest a stored story lists is described, and nothing is left for the next
    open to repair."""
    with Store(store_dir, read_only=True) as st:
        undescribed = st.query(
            "SELECT ?story ?m WHERE { ?story hc:listsManifest ?m "
            "FILTER NOT EXISTS { ?m dcterms:identifier ?id } }"
        )
        assert [(str(r[0].value), str(r[1].value)) for r in undescribed] == []
    with Store(store_dir) as st:
        assert not st.ledger.dirty and not st.ledger.pending()


def test_a_write_that_fails_in_flight_fails_its_story_alone(
    crawl_server: CrawlServer, tmp_path: Path, landed: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each load holding story s4 fails: s4 fails alone, the rest of its batch (and the batch
    before, if it had not landed) is stored one body at a time, each with the manifests it
    cites. Before, the failed write had entered the batch's new descriptions as known, so
    the stories written again after it listed manifests the store never described."""
    site = _own_manifest_site(crawl_server)
    slowed = Store.load_nquads

    def load(self: Store, data: bytes, *args: Any) -> None:
        if b"/stories/s4/> .\n" in data:  # a quad in s4's graph
            raise RuntimeError("boom while writing")
        slowed(self, data, *args)

    monkeypatch.setattr(Store, "load_nquads", load)
    monkeypatch.setattr(crawler, "BATCH", 3)
    report = site.crawl(tmp_path, store_worker="thread")
    assert report.exit_code == 3
    (fail,) = report.failures
    assert fail["kind"] == "process-error" and "/s4/" in fail["url"]
    assert "boom while writing" in fail["reason"]
    expected = {page(s) for s in ["a", *SLUGS] if s != "s4"}
    assert stories_in(tmp_path) == expected
    assert landed == expected
    assert report.counts["added"] == len(expected)
    _assert_consistent(tmp_path)


def test_a_batch_that_fails_to_encode_fails_its_story_alone(
    crawl_server: CrawlServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crawl batch raises while its N-Quads are made (on the pipeline's thread, before its
    load starts): s4 fails alone and the rest is stored one body at a time, each with the
    manifests it cites. Before, the ledger had recorded the batch's stories and new
    descriptions before the encoding failed, so the retried stories took those descriptions
    for stored and the store never described their manifests."""
    site = _own_manifest_site(crawl_server)
    real = Batch.nquads

    def nquads(self: Batch) -> bytes:
        if any("/s4/" in p.story for p in self.pending):
            raise MemoryError("boom while encoding")
        return real(self)

    monkeypatch.setattr(Batch, "nquads", nquads)
    monkeypatch.setattr(crawler, "BATCH", 3)
    report = site.crawl(tmp_path, store_worker="thread")
    assert report.exit_code == 3
    (fail,) = report.failures
    assert fail["kind"] == "process-error" and "/s4/" in fail["url"]
    expected = {page(s) for s in ["a", *SLUGS] if s != "s4"}
    assert stories_in(tmp_path) == expected
    assert report.counts["added"] == len(expected)
    _assert_consistent(tmp_path)


def test_a_recrawl_write_that_fails_after_part_landed_still_reports_replaced(
    crawl_server: CrawlServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A re-crawl batch's transactions fail at s4 after the batch's other replacements
    landed: recovery keeps those, and their one-at-a-time retry finds their new version in
    the store. They were replaced in this run, so they are reported replaced (before:
    'unchanged', as if the server had not changed them)."""
    site = hub_site(crawl_server, SLUGS)
    assert site.crawl(tmp_path, store_worker="thread").counts["added"] == len(SLUGS) + 1
    for slug in SLUGS:
        site.add(slug, story(slug, headline=f"Story {slug}, corrected"))
    real_write, real_replace = Writer._write, Store.replace_graph

    def write(self: Writer, batches: Any) -> None:  # s4 last: the others land before it fails
        for batch in batches:
            batch.replaced.sort(key=lambda replaced: "/s4/" in replaced[0])
        real_write(self, batches)

    def replace_graph(self: Store, graph: str, *args: Any) -> None:
        if "/s4/" in graph:
            raise RuntimeError("boom while replacing")
        real_replace(self, graph, *args)

    monkeypatch.setattr(Writer, "_write", write)
    monkeypatch.setattr(Store, "replace_graph", replace_graph)
    monkeypatch.setattr(crawler, "BATCH", 3)
    report = site.crawl(tmp_path, store_worker="thread")
    (fail,) = report.failures
    assert fail["kind"] == "process-error" and "/s4/" in fail["url"]
    assert report.counts["replaced"] == len(SLUGS) - 1
    assert report.counts["unchanged"] + report.counts["not_modified"] == 1  # the hub
    with Store(tmp_path) as st:
        assert not st.ledger.dirty and not st.ledger.pending()


class _Writing:
    """Stands in for a batch's future: its write ends when the test says so."""

    def __init__(self) -> None:
        self.ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()


class _Fetching:
    """Stands in for the crawl's scheduler: whether fetches may still bring bodies."""

    more = True

    def may_fetch(self) -> bool:
        return self.more


def _doc(n: int) -> Document:
    return Document(b"{}", f"https://site.example/stories/s{n}/index.json")


def test_a_batch_grows_while_the_one_before_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(crawler, "BATCH", 4)

    async def scenario() -> tuple[list[int], list[int], list[int], list[int]]:
        c = crawler.Crawler([page("a")], tmp_path)
        queue = c._queue = asyncio.Queue()
        fetching = _Fetching()
        c._scheduler = fetching  # type: ignore[assignment]
        writing = _Writing()
        # A write in flight: one queued body does not make a batch; more are waited for.
        await queue.put(_doc(0))
        grown: list[Document] = []
        fill = asyncio.create_task(c._fill(grown, writing.ended))
        await asyncio.sleep(0.05)
        assert not fill.done()
        for n in range(1, 6):
            await queue.put(_doc(n))
        assert await fill is False
        # ... until the write ends: then the batch goes with what it has.
        short: list[Document] = []
        writing = _Writing()
        fill = asyncio.create_task(c._fill(short, writing.ended))
        await asyncio.sleep(0.05)
        writing.ended.set_result(None)
        await fill
        # No write in flight: only what is queued already.
        await queue.put(_doc(6))
        alone: list[Document] = []
        assert await c._fill(alone, None) is False
        # A write in flight, but no fetch can bring more (the crawl's tail): no waiting.
        await queue.put(_doc(7))
        fetching.more = False
        tail: list[Document] = []
        fill = asyncio.create_task(c._fill(tail, _Writing().ended))
        await asyncio.sleep(0.05)
        assert fill.done() and await fill is False
        # ... nor once the last fetch ends while the batch waits.
        fetching.more = True
        last: list[Document] = []
        fill = asyncio.create_task(c._fill(last, _Writing().ended))
        await asyncio.sleep(0.05)
        assert not fill.done()
        await queue.put(_doc(8))
        fetching.more = False
        assert await asyncio.wait_for(fill, 1) is False
        return [len(grown)], [len(short)], [len(alone)], [len(tail), len(last)]

    assert asyncio.run(scenario()) == ([4], [2], [1], [1, 1])


def test_bodies_an_earlier_run_left_unsynced_are_synced_before_the_resume_stores_them(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that ends before its fetched bodies were processed (its sync failed here; a
    stop or a kill leaves the same) never flushed their pack. The resume stores them from
    the archive: that pack must be flushed first, or a power cut could leave stories
    ``rebuild`` cannot recreate."""
    from hcgraph.errors import OutputError

    synced: dict[str, int] = {}  # pack → its size when last flushed
    unsynced: list[str] = []
    real_fdatasync, real_fsync = os.fdatasync, os.fsync

    def flushed(real: Any) -> Any:
        def flush(fd: int) -> None:
            real(fd)
            path = os.path.realpath(f"/proc/self/fd/{fd}")
            synced[path] = max(synced.get(path, 0), os.fstat(fd).st_size)

        return flush

    def check(documents: Any) -> None:
        packs = [(str(p.resolve()), p.read_bytes()) for p in tmp_path.rglob("*.pack")]
        for d in documents:
            ends = [(path, data.find(d.body) + len(d.body)) for path, data in packs]
            if not any(d.body in data for _, data in packs) or not any(
                synced.get(path, 0) >= end for path, end in ends if end >= len(d.body)
            ):
                unsynced.append(str(d.key))

    def refused(self: Archive, *bodies: Any) -> None:
        raise OutputError("the disk refused")

    monkeypatch.setattr(os, "fdatasync", flushed(real_fdatasync))
    monkeypatch.setattr(os, "fsync", flushed(real_fsync))
    _before_each_batch(monkeypatch, check)
    monkeypatch.setattr(crawler, "BATCH", 2)
    real_sync = Archive.sync
    monkeypatch.setattr(Archive, "sync", refused)
    with pytest.raises(OutputError):
        site.crawl(tmp_path, store_worker="thread")
    monkeypatch.setattr(Archive, "sync", real_sync)
    report = site.crawl(tmp_path, store_worker="thread")
    assert report.exit_code == 0 and stories_in(tmp_path) == {page(s) for s in ["a", *SLUGS]}
    assert unsynced == []
