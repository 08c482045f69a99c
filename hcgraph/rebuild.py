"""Recreate the graph from the raw archive, with no network.

The archive keeps every fetched body and when it was fetched, so replaying its records in
fetch order through the same processing the crawler uses (parse, dedupe one story under two
URLs, store with the fetch time) gives the same graph as the crawl — revisions included,
because a story fetched twice with different bytes is replayed old version first. Use it
after the mapping changes, or to rebuild a lost store.

The new graph is built beside the old one and swapped in only when complete, so a failed
rebuild leaves the old store as it was.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .archive import Archive, FetchRecord
from .crawl.process import Item, Outcome, StoryProcessor
from .errors import CrawlError
from .ingest import Failure
from .store import Store

__all__ = ["RebuildReport", "rebuild"]

_BATCH = 200


@dataclass
class RebuildReport:
    """What a rebuild did.

    Attributes:
        records: fetch records read.
        bodies: distinct (URL, body) pairs replayed.
        outcomes: what happened to each replayed body.
        failures: archived 200 responses that are not valid stories (URL, reason, JSON path).
        store_dir: the rebuilt store.
    """

    records: int = 0
    bodies: int = 0
    outcomes: list[Outcome] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    store_dir: Path | None = None

    def count(self, put: str) -> int:
        """Replayed bodies the store reported as ``put`` (added, replaced, unchanged)."""
        return sum(1 for o in self.outcomes if o.put == put)

    @property
    def stories(self) -> int:
        """Distinct stories in the rebuilt graph."""
        return len({o.story_url for o in self.outcomes if o.ok})

    @property
    def exit_code(self) -> int:
        """0 when every archived story body was rebuilt, 3 when some were not stories."""
        return 3 if self.failures else 0


def _source(record: FetchRecord) -> str:
    # Must match what the crawler recorded: the logical final URL, or the local file path.
    return record.fetch_url if record.url.startswith("file:") else record.final_url


def _items(archive: Archive, report: RebuildReport) -> Iterator[Item]:
    seen: set[tuple[str, str]] = set()
    for record in archive.records():
        report.records += 1
        if record.sha256 is None or record.error is not None:
            continue
        if record.status not in (200, 304, None):
            continue  # an error page: kept in the archive, never a story
        key = (record.url, record.sha256)
        if key in seen:
            continue  # a 304 or an unchanged re-fetch: nothing new
        seen.add(key)
        report.bodies += 1
        yield Item(record.url, archive.get_body(record.sha256), _source(record), record.time)


def rebuild(store_dir: Path | str, archive_dir: Path | str | None = None) -> RebuildReport:
    """Rebuild ``store_dir``'s graph from ``archive_dir`` (default ``STORE/archive``).

    Raises:
        CrawlError: there is no archive.
        StoreError: the store is in use by another process.
    """
    store_dir = Path(store_dir)
    archive = Archive(Path(archive_dir) if archive_dir else store_dir / "archive")
    if not archive.exists():
        raise CrawlError(f"{archive.directory}: no raw archive here (run 'hcgraph crawl' first)")
    if (store_dir / "oxigraph").exists():
        Store(store_dir).close()  # fails now, not after the work, if another process holds it
    staging = store_dir / ".rebuild"
    shutil.rmtree(staging, ignore_errors=True)
    report = RebuildReport(store_dir=store_dir)
    with Store(staging) as store:
        processor = StoryProcessor(store)
        batch: list[Item] = []
        for item in _items(archive, report):
            batch.append(item)
            if len(batch) >= _BATCH:
                _run(processor, batch, report)
                batch = []
        _run(processor, batch, report)
    _swap(staging / "oxigraph", store_dir / "oxigraph")
    shutil.rmtree(staging, ignore_errors=True)
    return report


def _run(processor: StoryProcessor, batch: list[Item], report: RebuildReport) -> None:
    if not batch:
        return
    for item, outcome in zip(batch, processor.process(batch), strict=True):
        report.outcomes.append(outcome)
        if outcome.reason is not None:
            report.failures.append(Failure(item.source, outcome.reason, outcome.json_path or ""))


def _swap(new: Path, target: Path) -> None:
    """Put ``new`` in place of ``target``; the old database is removed only afterwards."""
    old = target.with_name(target.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    new.rename(target)
    shutil.rmtree(old, ignore_errors=True)
