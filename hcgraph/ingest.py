"""Ingest story JSON from files and directories into a store (through :mod:`hcgraph.pipeline`).

A bad file never stops the run: it is recorded as a failure with its path and the JSON path
of the problem, and every other file is still ingested. Stories are written in batches of
whole stories, and an interrupted ingest is repaired on the next open, so the store only
ever holds complete stories.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .pipeline import BATCH, Document, Outcome, Pipeline
from .store import Store

__all__ = ["Failure", "IngestReport", "discover", "ingest_bytes", "ingest_paths"]


@dataclass(frozen=True)
class Failure:
    """One input that could not be ingested."""

    source: str
    reason: str
    json_path: str = ""


@dataclass
class IngestReport:
    """The outcome of an ingest run: one :class:`~hcgraph.pipeline.Outcome` per stored story."""

    results: list[Outcome] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)

    def count(self, status: str) -> int:
        """How many stories ended with ``status`` (added, replaced, unchanged)."""
        return sum(1 for r in self.results if r.status == status)

    @property
    def ok(self) -> bool:
        """True when no input failed."""
        return not self.failures

    def record(self, outcome: Outcome) -> None:
        """File one pipeline outcome as a result or a failure."""
        if outcome.ok:
            self.results.append(outcome)
        elif outcome.reason is not None:
            self.failures.append(Failure(outcome.source, outcome.reason, outcome.json_path or ""))


def discover(paths: Iterable[Path | str]) -> Iterator[Path]:
    """Story files under ``paths``: files as given, directories searched for ``*.json``."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.json") if p.is_file())
        else:
            yield path


def ingest_documents(
    store: Store,
    documents: Iterable[Document],
    *,
    report: IngestReport | None = None,
    on_progress: Callable[[int], None] | None = None,
    batch_size: int | None = None,
) -> IngestReport:
    """Run documents through the pipeline; failures go into the report."""
    report = report if report is not None else IngestReport()
    with Pipeline(store, batch_size=batch_size or BATCH) as pipeline:
        for outcome in pipeline.run(documents, on_progress):
            report.record(outcome)
    return report


def ingest_bytes(
    store: Store,
    documents: Iterable[tuple[bytes, str]],
    *,
    report: IngestReport | None = None,
    on_progress: Callable[[int], None] | None = None,
    retrieved_at: dt.datetime | None = None,
) -> IngestReport:
    """Ingest ``(raw_bytes, source)`` pairs (a convenience over :func:`ingest_documents`)."""
    docs = (Document(raw, source, retrieved_at) for raw, source in documents)
    return ingest_documents(store, docs, report=report, on_progress=on_progress)


def ingest_paths(
    store: Store,
    paths: Iterable[Path | str],
    *,
    on_progress: Callable[[int], None] | None = None,
    batch_size: int | None = None,
) -> IngestReport:
    """Ingest every story file found under ``paths`` (see :func:`discover`)."""
    report = IngestReport()

    def read_all() -> Iterator[Document]:
        for path in discover(paths):
            try:
                yield Document(path.read_bytes(), str(path))
            except OSError as exc:
                report.failures.append(Failure(str(path), f"cannot read: {exc.strerror or exc}"))

    return ingest_documents(
        store, read_all(), report=report, on_progress=on_progress, batch_size=batch_size
    )
