"""Recreate the graph from the raw archive, with no network.

The archive keeps every fetched body and when it was fetched, so replaying its records in
fetch order through the same processing the crawler uses (parse, dedupe one story under two
URLs, store with the fetch time) gives the same graph as the crawl — revisions included,
because a story fetched twice with different bytes is replayed old version first, and
withdrawals included: a story's URL answering 404/410 twice in a row (the records of both
fetches are in the archive, as the crawler confirmed it) withdraws the story at the second
answer's time, and a later 200 or 304 brings it back. Use it after the mapping changes, or
to rebuild a lost store.

The new graph is built beside the old one and swapped in only when complete, so a failed
rebuild leaves the old store as it was.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .archive import Archive, FetchRecord
from .crawling.identity_check import identity_mismatch, variant_of
from .damage import is_damage
from .errors import ArchiveError, CrawlError, StoreDamagedError
from .ingest import Failure
from .pipeline import Document, Outcome, Pipeline
from .store import Store

__all__ = ["RebuildReport", "rebuild"]


@dataclass
class RebuildReport:
    """What a rebuild did.

    Attributes:
        records: fetch records read.
        bodies: distinct (URL, body) pairs replayed.
        stories: distinct stories in the rebuilt graph.
        withdrawn: how many of them are withdrawn (their URL answered 404/410 twice in a row).
        counts: replayed bodies per store status (added, replaced, unchanged).
        outcomes: what happened to each replayed body; empty when the rebuild ran with
            ``keep_outcomes=False`` (``hcgraph rebuild`` does: memory then stays flat
            however large the archive, an outcome being ~1 KB).
        failures: archived 200 responses that are not valid stories (URL, reason, JSON path).
        unreadable: records whose body the archive cannot give back (missing, or its bytes
            no longer match its SHA-256: damage on disk): skipped, the rebuild goes on.
        store_dir: the rebuilt store.
    """

    records: int = 0
    bodies: int = 0
    stories: int = 0
    withdrawn: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    outcomes: list[Outcome] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    unreadable: list[Failure] = field(default_factory=list)
    store_dir: Path | None = None

    def count(self, status: str) -> int:
        """Replayed bodies the store reported as ``status`` (added, replaced, unchanged)."""
        return self.counts[status]

    @property
    def exit_code(self) -> int:
        """0 when every archived story body was rebuilt, 3 when some were not stories or
        could not be read."""
        return 3 if self.failures or self.unreadable else 0


def _source(record: FetchRecord) -> str:
    # Must match what the crawler recorded: the logical final URL, or the local file path.
    return record.fetch_url if record.url.startswith("file:") else record.final_url


def _documents(archive: Archive, report: RebuildReport) -> Iterator[Document]:
    seen: set[bytes] = set()  # 16-byte digests of (URL, body hash): an archive's worth stays small
    gone: set[str] = set()  # URLs whose last record answered 404/410
    comebacks: dict[str, int] = {}  # URL → withdrawals replayed: a body after one is new again
    for record in archive.records():
        report.records += 1
        if record.error is None and record.status in _GONE:
            # The crawler's rule: the second 404/410 in a row confirms the withdrawal (the
            # pipeline marks the story stored from this URL, if there is one and it is current).
            if record.url in gone:
                comebacks[record.url] = comebacks.get(record.url, 0) + 1
                yield Document(b"", _source(record), record.time, record.url, withdrawn=True)
            gone.add(record.url)
            continue
        gone.discard(record.url)
        if record.sha256 is None or record.error is not None:
            continue
        if record.status not in (200, 304, None):
            continue  # an error page: kept in the archive, never a story
        epoch = comebacks.get(record.url, 0)
        key = hashlib.blake2b(
            f"{record.url}\0{record.sha256}\0{epoch}".encode(), digest_size=16
        ).digest()
        if key in seen:
            continue  # a 304 or an unchanged re-fetch: nothing new
        seen.add(key)
        report.bodies += 1
        try:
            body = archive.get_body(record.sha256)
        except ArchiveError as exc:  # one damaged body loses that fetch, not the rebuild
            report.unreadable.append(Failure(record.url, str(exc)))
            continue
        if _variant(body, record):
            continue  # the crawl recorded it as a duplicate and stored nothing from it
        yield Document(body, _source(record), record.time, record.url)


_GONE = (404, 410)


def _variant(body: bytes, record: FetchRecord) -> bool:
    """The body was fetched from a variant of its story's URL (``//stories/x/``): the crawl
    counted it a duplicate (:func:`hcgraph.crawling.identity_check.variant_of`) and fetched
    the story at its own URL, so replaying it would store the story under the wrong source."""
    if record.url.startswith("file:"):
        return False
    fetched = [record.url, *record.redirects]
    return identity_mismatch(body, fetched) is not None and variant_of(body, fetched) is not None


def rebuild(
    store_dir: Path | str,
    archive_dir: Path | str | None = None,
    *,
    keep_outcomes: bool = True,
    drop_unarchived: bool = False,
) -> RebuildReport:
    """Rebuild ``store_dir``'s graph from ``archive_dir`` (default ``STORE/archive``).

    Only crawled stories are in the archive: a story ingested from a local file (or bytes),
    or a crawled one replaced by a local file, cannot be rebuilt from it. If the store holds
    any, the rebuild refuses before doing anything, unless ``drop_unarchived``: then those
    stories are left out (re-ingest their files afterwards). ``keep_outcomes=False`` keeps
    counts and failures only, not one :class:`~hcgraph.pipeline.Outcome` per replayed body.
    Withdrawals replay from the archive's 404/410 records; one made by hand (``hcgraph
    ingest --withdraw``), which the archive does not hold, is kept from the old store.

    Raises:
        CrawlError: there is no archive, or the store holds stories it does not (and
            ``drop_unarchived`` is false).
        StoreError: the store is in use by another process.

    A damaged store (:class:`~hcgraph.errors.StoreDamagedError`) is rebuilt too, with
    ``drop_unarchived`` (what only it held cannot be listed, so nothing is checked).
    """
    store_dir = Path(store_dir)
    withdrawals: dict[str, dt.datetime] = {}  # the store's, to keep those made by hand
    archive = Archive(Path(archive_dir) if archive_dir else store_dir / "archive")
    if not archive.exists():
        raise CrawlError(f"{archive.directory}: no raw archive here (run 'hcgraph crawl' first)")
    if (store_dir / "oxigraph").exists():
        # Opened now (it fails now, not after the work, if another process holds it).
        try:
            with Store(store_dir, any_format=True) as old:
                lost = [url for url, sha in old.raw_documents() if not archive.has_body(sha)]
                withdrawals = old.withdrawn_stories()
        except (StoreDamagedError, RuntimeError, OSError) as exc:
            if not isinstance(exc, StoreDamagedError) and not is_damage(exc):
                raise
            if not drop_unarchived:  # what only the store held cannot be listed
                raise CrawlError(
                    f"{store_dir}: the store is damaged, so the stories it holds that the "
                    "archive does not (ingested from local files) cannot be listed: pass "
                    "--drop-unarchived to rebuild it from the archive alone"
                ) from None
            lost = []
        if lost and not drop_unarchived:
            raise CrawlError(_unarchived_message(store_dir, archive, lost))
    staging = store_dir / ".rebuild"
    shutil.rmtree(staging, ignore_errors=True)
    report = RebuildReport(store_dir=store_dir)
    # Crawl mode with no earlier claims: one story under two URLs is deduplicated as the
    # crawl did it.
    with Store(staging) as store:
        with Pipeline(store, crawl_claims={}) as pipeline:
            for outcome in pipeline.run(_documents(archive, report)):
                if keep_outcomes:
                    report.outcomes.append(outcome)
                if outcome.status is not None:
                    report.counts[outcome.status] += 1
                if outcome.reason is not None and not outcome.withdrawal:
                    report.failures.append(
                        Failure(outcome.source, outcome.reason, outcome.json_path or "")
                    )
            # Withdrawals the archive does not hold (``hcgraph ingest --withdraw``) are kept,
            # with their time, for the stories the archive does rebuild.
            pipeline.process(
                [
                    Document(b"", url, when, withdrawn=True)
                    for url, when in sorted(withdrawals.items())
                    if store.raw_sha256(url) is not None and store.withdrawn_at(url) is None
                ]
            )
        _reload_replies(store, store_dir)
        report.stories = len(store.story_graphs())  # the staging store started empty
        report.withdrawn = len(store.withdrawn_stories())
    for name in _DATABASE:
        _swap(staging / name, store_dir / name)
    shutil.rmtree(staging, ignore_errors=True)
    return report


def _reload_replies(store: Store, store_dir: Path) -> None:
    """The manifest replies kept beside the raw archive back into the graph, and the
    stories checked against them (as ``hcgraph manifests fetch`` left them)."""
    from .claims.fetching import manifest_archive
    from .claims.replies import load_replies
    from .claims.verdicts import check_support

    with manifest_archive(store_dir) as archive:
        if not archive.exists():
            return
    load_replies(store, store_dir)
    check_support(store)


def _unarchived_message(store_dir: Path, archive: Archive, lost: list[str]) -> str:
    shown = ", ".join(sorted(lost)[:3]) + (f" and {len(lost) - 3} more" if len(lost) > 3 else "")
    return (
        f"{store_dir}: {len(lost)} stories in the store are not in the archive "
        f"{archive.directory} (ingested from local files, or replaced by one): {shown}. "
        "A rebuild would drop them: re-ingest their files after it, and pass "
        "--drop-unarchived (rebuild(drop_unarchived=True)) to rebuild without them"
    )


_DATABASE = (
    "oxigraph", "ledger.sqlite", "ledger.sqlite-wal", "ledger.sqlite-shm", "format.json",
    "compacted.json",
)  # fmt: skip


def _swap(new: Path, target: Path) -> None:
    """Put ``new`` in place of ``target``; the old one is removed only afterwards."""
    old = target.with_name(target.name + ".old")
    _remove(old)
    if target.exists():
        target.rename(old)
    if new.exists():
        new.rename(target)
    _remove(old)


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
