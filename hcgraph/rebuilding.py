"""Recreate the graph from the raw archive, with no network.

The archive's records are replayed in fetch order through the crawler's own processing, into
a new graph beside the old one, swapped in only when complete.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import shutil
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .archive import Archive, FetchRecord
from .crawling.identity_check import identity_mismatch, variant_of
from .damage import is_damage
from .errors import ArchiveError, CrawlError, StoreDamagedError, StoreError
from .ingest import Failure
from .pipeline import Document, Outcome, Pipeline
from .store import Store

__all__ = ["RebuildReport", "rebuild"]


@dataclass
class RebuildReport:
    """What a rebuild did: fetch ``records`` read, bodies replayed (``bodies``: each URL's
    distinct bodies, and a revert's again), stories (and ``withdrawn`` ones) in
    the new graph, replayed bodies per store status (``counts``), each one's ``outcomes``
    (unless ``keep_outcomes=False``), archived responses that are not valid stories
    (``failures``) and bodies that cannot be read back (``unreadable``, skipped)."""

    records: int = 0
    bodies: int = 0
    stories: int = 0
    withdrawn: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    outcomes: list[Outcome] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    unreadable: list[Failure] = field(default_factory=list)
    store_dir: Path | None = None

    def take(self, outcome: Outcome, repeat: bool, keep_outcomes: bool) -> None:
        """Count one replayed document's outcome; ``repeat``: its URL had this body before,
        others between (see ``_documents``)."""
        if repeat and outcome.status in ("unchanged", None):
            # A, a page that is no story, A (or that page again): no revert, the story
            # stayed A; counted, and its failure listed, once as before
            self.bodies -= 1
            return
        if keep_outcomes:
            self.outcomes.append(outcome)
        if outcome.status is not None:
            self.counts[outcome.status] += 1
        if outcome.reason is not None and not outcome.withdrawal:
            self.failures.append(Failure(outcome.source, outcome.reason, outcome.json_path or ""))

    @property
    def exit_code(self) -> int:
        """0 when every archived story body was rebuilt, else 3."""
        return 3 if self.failures or self.unreadable else 0


def _source(record: FetchRecord) -> str:
    """What the crawler recorded as the source: the final URL, or the local file path."""
    return record.fetch_url if record.url.startswith("file:") else record.final_url


def _documents(archive: Archive, report: RebuildReport, again: deque[bool]) -> Iterator[Document]:
    """The archive's fetches as documents, in fetch order; for each one yielded, ``again``
    gets whether its URL had this body before, others between: a revert if the story
    changed meanwhile, which only the pipeline's outcome tells (see :meth:`RebuildReport.take`)."""
    last: dict[str, bytes] = {}  # URL → 16-byte digest of its last body (none after a withdrawal)
    seen: set[bytes] = set()  # 16-byte digests of the (URL, body) pairs replayed
    gone: set[str] = set()  # URLs whose last record answered 404/410
    for record in archive.records():
        report.records += 1
        if record.error is None and record.status in (404, 410):
            if record.url in gone:  # the crawler's rule: the second in a row withdraws
                last.pop(record.url, None)  # a body after it is new again
                again.append(False)
                yield Document(b"", _source(record), record.time, record.url, withdrawn=True)
            gone.add(record.url)
            continue
        gone.discard(record.url)
        sha = _body_sha256(record)
        if sha is None:
            continue  # no body, or an error page: kept in the archive, never a story
        key = hashlib.blake2b(sha.encode(), digest_size=16).digest()
        if last.get(record.url) != key:  # else a 304 or an unchanged re-fetch: nothing new
            pair = hashlib.blake2b(f"{record.url}\0{sha}".encode(), digest_size=16).digest()
            repeat = record.url in last and pair in seen
            last[record.url] = key  # bytes seen before, after others, are a revert: replayed
            seen.add(pair)
            report.bodies += 1
            for doc in _document(archive, record, sha, report):
                again.append(repeat)
                yield doc


_BODIES = (200, 304, None)


def _body_sha256(record: FetchRecord) -> str | None:
    """The SHA-256 of the body a fetch left to replay; None for an error or an error page."""
    return record.sha256 if record.error is None and record.status in _BODIES else None


def _document(
    archive: Archive, record: FetchRecord, sha: str, report: RebuildReport
) -> Iterator[Document]:
    """The record's body as a document, unless it is unreadable (counted) or was fetched from
    a variant of its story's URL, which the crawl counted a duplicate (``variant_of``)."""
    try:
        body = archive.get_body(sha)
    except ArchiveError as exc:  # one damaged body loses that fetch, not the rebuild
        report.unreadable.append(Failure(record.url, str(exc)))
        return
    fetched = [record.url, *record.redirects]
    local = record.url.startswith("file:")
    if local or identity_mismatch(body, fetched) is None or variant_of(body, fetched) is None:
        yield Document(body, _source(record), record.time, record.url)


def rebuild(
    store_dir: Path | str,
    archive_dir: Path | str | None = None,
    *,
    keep_outcomes: bool = True,
    drop_unarchived: bool = False,
) -> RebuildReport:
    """Rebuild ``store_dir``'s graph from ``archive_dir`` (default ``STORE/archive``), keeping
    the old store's withdrawals made by hand; ``keep_outcomes=False`` keeps counts and failures.

    Raises:
        CrawlError: there is no archive, or the store holds stories it does not (ingested from
            local files) and not ``drop_unarchived``.
        StoreError: the store is in use by another process.
    """
    store_dir = Path(store_dir)
    archive = Archive(Path(archive_dir) if archive_dir else store_dir / "archive")
    if not archive.exists():
        raise CrawlError(f"{archive.directory}: no raw archive here (run 'hcgraph crawl' first)")
    with contextlib.ExitStack() as held:  # the old store's write lock, until the swap
        withdrawals = _old_withdrawals(store_dir, archive, drop_unarchived, held)
        report = _replay(store_dir, archive, withdrawals, keep_outcomes)
        held.close()
        for name in _DATABASE:
            _swap(store_dir / ".rebuild" / name, store_dir / name)
    shutil.rmtree(store_dir / ".rebuild", ignore_errors=True)
    return report


def _replay(
    store_dir: Path, archive: Archive, withdrawals: dict[str, dt.datetime], keep_outcomes: bool
) -> RebuildReport:
    """The archive replayed into a new store in ``STORE/.rebuild``; what it held."""
    staging = store_dir / ".rebuild"
    shutil.rmtree(staging, ignore_errors=True)
    report = RebuildReport(store_dir=store_dir)
    again: deque[bool] = deque()  # one a document, in order: as its outcome comes back
    with Store(staging) as store:  # crawl mode: a story under two URLs deduplicated
        with Pipeline(store, crawl_claims={}) as pipeline:
            for outcome in pipeline.run(_documents(archive, report, again)):
                report.take(outcome, again.popleft(), keep_outcomes)
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
    return report


def _old_withdrawals(
    store_dir: Path, archive: Archive, drop_unarchived: bool, held: contextlib.ExitStack
) -> dict[str, dt.datetime]:
    """The old store's withdrawals, after refusing to drop stories the archive lacks; the
    store is left open in ``held``, so no other process can take it meanwhile."""
    if not (store_dir / "oxigraph").exists():
        return {}
    try:
        old = held.enter_context(Store(store_dir, any_format=True))
        lost = [url for url, sha in old.raw_documents() if not archive.has_body(sha)]
        withdrawals = old.withdrawn_stories()
    except (StoreDamagedError, RuntimeError, OSError) as exc:
        if not isinstance(exc, StoreDamagedError) and not is_damage(exc):
            raise
        with contextlib.suppress(StoreError, RuntimeError, OSError):
            held.close()  # a damaged store is not held: closing it later could fail too
        if not drop_unarchived:  # what only the store held cannot be listed
            raise CrawlError(
                f"{store_dir}: the store is damaged, so the stories it holds that the "
                "archive does not (ingested from local files) cannot be listed: pass "
                "--drop-unarchived to rebuild it from the archive alone"
            ) from None
        return {}
    if lost and not drop_unarchived:
        raise CrawlError(_unarchived_message(store_dir, archive, lost))
    return withdrawals


def _reload_replies(store: Store, store_dir: Path) -> None:
    """The manifest replies kept beside the raw archive back into the graph, and the
    stories checked against them."""
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
