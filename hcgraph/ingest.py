"""Ingest story JSON from files and directories into a store.

A bad file never stops the run: it is recorded as a failure with its path and the JSON path
of the problem, and every other file is still ingested. Parsing and mapping happen before
anything is written, and stories are written in batches of whole stories, so an interrupted
ingest leaves complete stories only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import StoryError
from .identity import replace_refusal
from .model import Story, parse_story
from .store import PutResult, Store

__all__ = ["MAX_BYTES", "Failure", "IngestReport", "discover", "ingest_bytes", "ingest_paths"]

BATCH = 500
#: Largest story file read (as ``hcgraph crawl --max-bytes``).
MAX_BYTES = 10 * 1024 * 1024


class _TooLarge(Exception):
    pass


def _read_capped(path: Path, cap: int) -> bytes:
    with path.open("rb") as handle:
        data = handle.read(cap + 1)  # the size on disk may change; never read past the cap
    if len(data) > cap:
        raise _TooLarge(f"file too large: more than the {cap}-byte cap (--max-bytes)")
    return data


@dataclass(frozen=True)
class Failure:
    """One input that could not be ingested."""

    source: str
    reason: str
    json_path: str = ""
    problems: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class IngestReport:
    """The outcome of an ingest run."""

    results: list[PutResult] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)

    def count(self, status: str) -> int:
        """How many stories ended with ``status`` (added, replaced, unchanged)."""
        return sum(1 for r in self.results if r.status == status)

    @property
    def ok(self) -> bool:
        """True when no input failed."""
        return not self.failures


def discover(paths: Iterable[Path | str]) -> Iterator[Path]:
    """Story files under ``paths``: files as given, directories searched for ``*.json``."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.json") if p.is_file())
        else:
            yield path


def ingest_bytes(
    store: Store,
    documents: Iterable[tuple[bytes, str]],
    *,
    report: IngestReport | None = None,
    on_progress: Callable[[int], None] | None = None,
    replace: bool = False,
) -> IngestReport:
    """Parse, map and store ``(raw_bytes, source)`` pairs; failures go into the report.

    A document may not replace a story that was crawled from its URL unless ``replace``.
    """
    report = report if report is not None else IngestReport()
    batch: list[tuple[Story, bytes, str]] = []
    for raw, source in documents:
        try:
            story = parse_story(raw, source)
        except StoryError as exc:
            report.failures.append(Failure(source, exc.reason, exc.json_path, exc.problems))
        else:
            refusal = None if replace else replace_refusal(store, story.url, raw)
            if refusal is None:
                batch.append((story, raw, source))
            else:
                report.failures.append(Failure(source, refusal, "url"))
        if len(batch) >= BATCH:
            report.results.extend(store.put_stories(batch))
            batch = []
        if on_progress is not None:
            on_progress(1)
    if batch:
        report.results.extend(store.put_stories(batch))
    return report


def ingest_paths(
    store: Store,
    paths: Iterable[Path | str],
    *,
    on_progress: Callable[[int], None] | None = None,
    max_bytes: int = MAX_BYTES,
    replace: bool = False,
) -> IngestReport:
    """Ingest every story file found under ``paths`` (see :func:`discover`); a file larger
    than ``max_bytes`` is a failure, never read into memory; ``replace`` lets a file replace
    a story that was crawled from its URL."""
    report = IngestReport()

    def read_all() -> Iterator[tuple[bytes, str]]:
        for path in discover(paths):
            try:
                yield _read_capped(path, max_bytes), str(path)
            except _TooLarge as exc:
                report.failures.append(Failure(str(path), str(exc)))
            except OSError as exc:
                report.failures.append(Failure(str(path), f"cannot read: {exc.strerror or exc}"))

    return ingest_bytes(store, read_all(), report=report, on_progress=on_progress, replace=replace)
