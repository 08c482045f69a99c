"""Ingest story JSON from files and directories into a store (through :mod:`hcgraph.pipeline`).

A bad file never stops the run: it becomes a failure with its path and JSON path, and every
other file is still ingested.
"""

from __future__ import annotations

import datetime as dt
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ._io import NotRegular, read_regular
from .errors import InputError, failure_text, problem_lines
from .errors import one_line as _v
from .pipeline import BATCH, Document, Outcome, Pipeline
from .store import Store

if TYPE_CHECKING:
    from rich.text import Text

__all__ = [
    "MAX_BYTES",
    "Failure",
    "IngestReport",
    "check_paths",
    "discover",
    "ingest_bytes",
    "ingest_paths",
    "withdraw_stories",
]

#: Largest story file read (as ``hcgraph crawl --max-bytes``).
MAX_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True)
class Failure:
    """One input that could not be ingested."""

    source: str
    reason: str
    json_path: str = ""
    problems: list[tuple[str, str]] = field(default_factory=list)

    def render(self) -> list[tuple[str, Text]]:
        """``failed: SOURCE: PROBLEM`` on ``"err"``, a line per problem, text escaped."""
        from rich.text import Text

        lines = problem_lines(self.problems) or [failure_text(self.json_path, self.reason)]
        return [("err", Text.assemble(("failed:", "red"), f" {_v(self.source)}: {_v(line)}"))
                for line in lines]  # fmt: skip


@dataclass
class IngestReport:
    """The outcome of an ingest run: counts, failures, and one
    :class:`~hcgraph.pipeline.Outcome` per stored story in ``results`` (with
    ``keep_results=False`` only repeated urls and duplicate ids: memory stays flat)."""

    #: Each document's outcome, in order (kept only while ``keep_results``).
    results: list[Outcome] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    keep_results: bool = True
    counts: Counter[str] = field(default_factory=Counter)
    #: Called with each failure as it is recorded, so a long run can show failures as met.
    on_failure: Callable[[Failure], None] | None = None

    def fail(self, failure: Failure) -> None:
        """Record one failure, and tell :attr:`on_failure`."""
        self.failures.append(failure)
        if self.on_failure is not None:
            self.on_failure(failure)

    def count(self, status: str) -> int:
        """How many stories ended with ``status`` (added, replaced, unchanged, withdrawn)."""
        return self.counts[status]

    @property
    def stored(self) -> int:
        """How many documents were stored (added, replaced or unchanged; not withdrawals)."""
        return self.counts.total() - self.counts["withdrawn"]

    @property
    def ok(self) -> bool:
        """True when no input failed."""
        return not self.failures

    @property
    def id_clashes(self) -> list[Outcome]:
        """Stored stories whose ``id`` another story IRI already has (both are kept)."""
        return [r for r in self.results if r.id_clash is not None]

    @property
    def repeats(self) -> list[Outcome]:
        """Stories whose ``url`` an earlier document of this run had (the later one wins)."""
        return [r for r in self.results if r.repeat_of is not None]

    def render(self, where: str, *, withdrew: bool = False) -> list[tuple[str, Text]]:
        """The run as ``(stream, line)`` pairs: warnings on ``"err"``, counts on ``"out"``."""
        from rich.text import Text

        warnings = [
            f"{_v(r.source)}: same url {_v(r.story_url)} as {_v(r.repeat_of)} earlier in "
            "this run; the later file replaced it"
            for r in self.repeats
        ] + [
            f"{_v(r.source)}: id {_v(r.story_id)} of {_v(r.story_url)} is also the id of "
            f"{_v(r.id_clash)}; both are stored (hcgraph check flags them)"
            for r in self.id_clashes
        ]
        dupes = ""
        if self.repeats or self.id_clashes:
            dupes = f", {len(self.repeats)} repeated url, {len(self.id_clashes)} duplicate id"
        counts = ", ".join(f"{self.count(s)} {s}" for s in ("added", "replaced", "unchanged"))
        gone = f"{self.count('withdrawn')} withdrawn, " if withdrew else ""
        summary = (
            f"ingested {self.stored} stories ({counts}{dupes}), {gone}{len(self.failures)} failed"
        )
        lines = [("err", Text.assemble(("warning:", "yellow"), f" {w}")) for w in warnings]
        return [*lines, ("out", Text(f"{summary} -> {_v(where)}"))]

    def record(self, outcome: Outcome) -> None:
        """File one pipeline outcome as a result or a failure."""
        if outcome.ok:
            assert outcome.status is not None
            self.counts[outcome.status] += 1
            if self.keep_results or outcome.id_clash is not None or outcome.repeat_of is not None:
                self.results.append(outcome)
        elif outcome.withdrawal:
            self.fail(Failure(outcome.source, "no story in the store has this URL"))
        elif outcome.reason is not None:
            problems = list(outcome.problems)
            self.fail(Failure(outcome.source, outcome.reason, outcome.json_path or "", problems))


def shown_path(path: Path | str) -> str:
    """``path`` as text that can always be written out: bytes that are not UTF-8 become
    ``\\xff`` escapes, not the lone surrogates no UTF-8 output accepts.

    >>> shown_path(b"a\\xff.json".decode("utf-8", "surrogateescape"))
    'a\\\\xff.json'
    """
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def check_paths(paths: Iterable[Path | str]) -> None:
    """Refuse the run, before the store is opened, when a path given does not exist.

    Raises:
        InputError: naming the first missing path (and how many more there are).
    """
    missing = [Path(p) for p in paths if not os.path.exists(p)]
    if missing:
        more = f" (and {len(missing) - 1} more missing paths)" if len(missing) > 1 else ""
        raise InputError(f"{shown_path(missing[0])}: no such file or directory{more}")


def discover(paths: Iterable[Path | str]) -> Iterator[Path]:
    """Story files under ``paths``: files as given, directories searched for ``*.json``."""
    return (path for path, _ in _discover_located(paths, absolute=False))


def _discover_located(paths: Iterable[Path | str], *, absolute: bool) -> Iterator[tuple[Path, str]]:
    """Story files with their ``hc:sourceLocation``: the path relative to the directory
    given (a file: its name), or with ``absolute`` the absolute path."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            # Relative strings (a Path is ~4x the memory), in Path order: part by part.
            found = (f.relative_to(path).as_posix() for f in path.rglob("*.json") if f.is_file())
            for rel in sorted(found, key=lambda rel: rel.split("/")):
                file = path / rel
                yield file, shown_path(file.resolve() if absolute else rel)
        else:
            yield path, shown_path(path.resolve() if absolute else path.name)


def ingest_documents(
    store: Store,
    documents: Iterable[Document],
    *,
    report: IngestReport | None = None,
    on_progress: Callable[[int], None] | None = None,
    batch_size: int | None = None,
    replace: bool = False,
) -> IngestReport:
    """Run documents through the pipeline; failures go into the report. A document may
    replace a story crawled from its URL only with ``replace``."""
    report = report if report is not None else IngestReport()
    pipeline = Pipeline(store, batch_size=batch_size or BATCH, protect_crawled=not replace)
    with pipeline:
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
    replace: bool = False,
) -> IngestReport:
    """Ingest ``(raw_bytes, source)`` pairs (see :func:`ingest_documents`)."""
    docs = (Document(raw, source, retrieved_at) for raw, source in documents)
    return ingest_documents(store, docs, report=report, on_progress=on_progress, replace=replace)


def ingest_paths(
    store: Store,
    paths: Iterable[Path | str],
    *,
    on_progress: Callable[[int], None] | None = None,
    batch_size: int | None = None,
    max_bytes: int = MAX_BYTES,
    replace: bool = False,
    absolute_paths: bool = False,
    report: IngestReport | None = None,
) -> IngestReport:
    """Ingest every story file found under ``paths`` (see :func:`discover`).

    A file larger than ``max_bytes``, or no regular file, is a failure; the graph records
    each file's relative path, or with ``absolute_paths`` its absolute one.
    """
    report = report if report is not None else IngestReport()

    def read_all() -> Iterator[Document]:
        for path, location in _discover_located(paths, absolute=absolute_paths):
            source = shown_path(path)
            try:
                data = read_regular(path, max_bytes + 1)
            except NotRegular as exc:
                report.fail(Failure(source, str(exc)))
                continue
            except OSError as exc:
                report.fail(Failure(source, f"cannot read: {exc.strerror or exc}"))
                continue
            if len(data) > max_bytes:
                reason = f"file too large: more than the {max_bytes}-byte cap (--max-bytes)"
                report.fail(Failure(source, reason))
            else:
                yield Document(data, source, location=location)

    return ingest_documents(
        store,
        read_all(),
        report=report,
        on_progress=on_progress,
        batch_size=batch_size,
        replace=replace,
    )


def withdraw_stories(
    store: Store,
    urls: Iterable[str],
    *,
    report: IngestReport | None = None,
) -> IngestReport:
    """Mark stored stories withdrawn now (``hcgraph ingest --withdraw URL``), as a crawl does
    on 404/410; each URL is a story IRI or the URL or file it was ingested from."""
    docs = (Document(b"", url, withdrawn=True) for url in urls)
    return ingest_documents(store, docs, report=report)
