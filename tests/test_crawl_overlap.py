"""Two batches in flight: batch n + 1 is mapped while batch n is written, and a URL is
recorded as stored only once its batch's write has landed (resume correctness)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from crawlserver import CrawlServer, Site, page, stories_in, story

from hcgraph import pipeline
from hcgraph.crawl import crawler, recorder
from hcgraph.pipeline import Outcome

SLUGS = [f"s{n}" for n in range(9)]


@pytest.fixture
def site(crawl_server: CrawlServer) -> Site:
    site = Site(crawl_server)
    site.add("a", story("a", *(page(s) for s in SLUGS)))
    for slug in SLUGS:
        site.add(slug, story(slug))
    return site


@pytest.fixture
def landed(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Story IRIs whose batch write has returned; each write is slowed down so that the
    next batch is mapped (and could be recorded too early) while it runs."""
    done: set[str] = set()
    lock = threading.Lock()
    real = pipeline._write

    def write(store: Any, batch: Any) -> None:
        time.sleep(0.05)
        real(store, batch)
        with lock:
            done.update(m.url for m, _ in (*batch.new, *batch.replaced))

    monkeypatch.setattr(pipeline, "_write", write)
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

    def submit(self: pipeline.Pipeline, documents: Any) -> list[Outcome]:
        overlapped.append(self.writing is not None and not self.writing.done())
        return real_submit(self, documents)

    monkeypatch.setattr(recorder.Recorder, "outcome", outcome)
    monkeypatch.setattr(pipeline.Pipeline, "submit", submit)
    report = site.crawl(tmp_path)
    assert report.exit_code == 0 and report.counts["added"] == 1 + len(SLUGS)
    assert any(overlapped), "no batch was mapped while another was being written"
    assert early == []
    assert stories_in(tmp_path) == {page(s) for s in ["a", *SLUGS]}


def test_a_write_that_fails_in_flight_fails_its_story_alone(
    site: Site, tmp_path: Path, landed: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    slowed = pipeline._write

    def write(store: Any, batch: Any) -> None:
        if any("/s4/" in m.url for m, _ in batch.new):
            raise RuntimeError("boom while writing")
        slowed(store, batch)

    monkeypatch.setattr(pipeline, "_write", write)
    report = site.crawl(tmp_path)
    assert report.exit_code == 3
    (fail,) = report.failures
    assert fail["kind"] == "process-error" and "/s4/" in fail["url"]
    assert "boom while writing" in fail["reason"]
    expected = {page(s) for s in ["a", *SLUGS] if s != "s4"}
    assert stories_in(tmp_path) == expected
    assert landed == expected
    assert report.counts["added"] == len(expected)
