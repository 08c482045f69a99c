"""The crawl report: counts, and every failure with URL, status and reason.

Built from the frontier at the end of a run (a resumed crawl reports all of it) and written
as JSON (default ``STORE/crawl-report.json``).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .._io import write_atomic
from .discovery import FOLLOW_KINDS
from .frontier import INDEX_ROLES, Frontier, Row

__all__ = ["CrawlReport", "tally"]


@dataclass
class CrawlReport:
    """What a crawl did: ``status`` is ``complete`` or ``interrupted`` (run the same command
    to resume), ``resumed`` says this invocation continued an interrupted run, ``counts``
    and the lists say what happened to each URL (each field: "The crawl report" in
    ``docs/crawling.md``; ``requests`` counts this invocation's HTTP requests)."""

    seeds: list[str]
    status: str
    resumed: bool
    started_at: str
    finished_at: str
    elapsed_seconds: float
    options: dict[str, Any]
    counts: dict[str, int]
    failures: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    withdrawn: list[dict[str, Any]] = field(default_factory=list)
    found_by: dict[str, int] = field(default_factory=dict)
    stories: list[dict[str, Any]] = field(default_factory=list)
    index_pages: list[dict[str, Any]] = field(default_factory=list)
    report_path: str | None = None

    @property
    def exit_code(self) -> int:
        """0 all succeeded, 3 some URL failed, 130 interrupted."""
        return 130 if self.status == "interrupted" else (3 if self.failures else 0)

    @property
    def rate(self) -> float:
        """Stories stored per second in this invocation."""
        done = sum(
            self.counts.get(k, 0) for k in ("added", "replaced", "unchanged", "not_modified")
        )
        return done / self.elapsed_seconds if self.elapsed_seconds > 0 else 0.0

    def to_json(self) -> bytes:
        """The report as indented UTF-8 JSON."""
        data = asdict(self)
        data["exit_code"] = self.exit_code
        return json.dumps(data, indent=2, ensure_ascii=False).encode() + b"\n"

    def write(self, path: Path) -> None:
        """Write the JSON report atomically."""
        self.report_path = str(path)
        write_atomic(path, self.to_json(), durable=False)  # the next crawl writes it again


def _entry(row: Row, *keys: str) -> dict[str, Any]:
    return {"url": row.url, **{key: getattr(row, key) for key in keys}, "linked_from": row.parent}


def tally(frontier: Frontier, requests: int) -> dict[str, Any]:
    """The report's ``counts``, lists and discovery entries for the current run, from the
    frontier (one read of its rows, in discovery order, as each section lists them)."""
    rows = frontier.rows()
    by_state: defaultdict[str, list[Row]] = defaultdict(list)
    for row in rows:
        by_state[row.state].append(row)
    done = by_state["done"]
    puts = Counter(r.put for r in done)
    counts = {
        "stories": len(done),
        "added": puts["added"],
        "replaced": puts["replaced"],
        "unchanged": puts["unchanged"],
        "not_modified": puts["not-modified"],
        "withdrawn": len(by_state["withdrawn"]),
        "duplicates": len(by_state["duplicate"]),
        "failed": len(by_state["failed"]),
        "skipped": len(by_state["skipped"]),
        "not_fetched": sum(len(by_state[s]) for s in ("queued", "fetched", "gone")),
        "requests": requests,
    }
    return {
        "counts": counts,
        "failures": [
            _entry(r, "status", "kind", "reason", "json_path") for r in by_state["failed"]
        ],
        "skipped": [_entry(r, "reason") for r in by_state["skipped"]],
        "duplicates": [_entry(r, "story", "reason") for r in by_state["duplicate"]],
        "withdrawn": [_entry(r, "story", "status") for r in by_state["withdrawn"]],
        **_discovery(rows, by_state),
    }


def _discovery(rows: list[Row], by_state: dict[str, list[Row]]) -> dict[str, Any]:
    """How the stored stories were found (counts, one entry each) and the index pages read."""
    done = by_state["done"]
    found = Counter(_found_by(r) for r in done)
    roles = {r.url: r.role for r in rows}
    index_pages = [
        {
            "url": r.url, "kind": r.role, "found_by": r.via or "seed",
            "stories": sum(roles.get(c) in (None, "story") for c in r.related),
            "linked_from": r.parent,
        }
        for r in by_state["read"]
        if r.role in INDEX_ROLES
    ]  # fmt: skip
    return {
        "found_by": {k: found[k] for k in ("seed", *FOLLOW_KINDS) if k in found},
        "stories": [
            {"url": r.url, "story": r.story, "found_by": _found_by(r), "linked_from": r.parent}
            for r in done
        ],
        "index_pages": index_pages,
    }


def _found_by(row: Row) -> str:
    """How a stored story was found (a frontier from before ``via`` was kept: by depth)."""
    return row.via or ("seed" if row.depth == 0 else "related")
