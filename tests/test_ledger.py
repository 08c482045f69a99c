"""The ledger on its own: an old ledger refused, user counts after failed commits."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hcgraph.errors import StoreDiskError, StoreFormatError
from hcgraph.ledger import Ledger, Pending, description_hash

GRAPH = "https://w3id.org/hcgraph/graph/sources"
BODY = '<https://example.org/m> <http://purl.org/dc/terms/title> "T" .\n'
D = description_hash(GRAPH, BODY)


class _FailingCommit:
    """A connection whose next COMMIT fails (as SQLite's does on a full disk)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db, self.armed = db, True

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "COMMIT" and self.armed:
            self.armed = False
            raise sqlite3.OperationalError("database or disk is full")
        return self.db.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)


def test_a_failed_commit_leaves_counts_and_transactions_right(tmp_path: Path) -> None:
    """A story stops stating a description, and the commit fails: the ledger still says the
    story states it, so it must not be reported unused (recover would retract it from the
    store while the story is there). Before, the in-memory user counts kept the change the
    commit lost, and the transaction stayed open, so every later write failed."""
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path)
    story = Pending("https://example.org/s", "a" * 64, 1, frozenset({D}), new=True)
    ledger.begin([(D, GRAPH, "<https://example.org/m>", BODY)], [story])
    ledger.settle([story])
    ledger.clean()
    assert ledger.unused() == []  # counts the users: D has one
    real = ledger.db
    ledger.db = _FailingCommit(real)  # type: ignore[assignment]
    with pytest.raises(sqlite3.OperationalError, match="disk is full"):
        ledger.settle([Pending(story.story, "b" * 64, 1, frozenset())])
    ledger.db = real
    assert ledger.uses_of(story.story) == {D}
    assert ledger.unused() == []  # what the ledger says, as a fresh reader sees it
    assert Ledger(path).unused() == []
    ledger.clean()  # and the next write works
    assert not ledger.dirty


def test_a_failing_statement_is_a_store_error_naming_the_ledger(tmp_path: Path) -> None:
    """A full disk under the ledger is a StoreDiskError (one line at the CLI; in a crawl it
    ends the crawl resumable, no body held responsible), not a raw sqlite3.OperationalError
    that failed each body of the crawl's batch as a bad one."""
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path)
    story = Pending("https://example.org/s", "a" * 64, 1, frozenset({D}), new=True)
    ledger.db.raw = _FailingCommit(ledger.db.raw)  # type: ignore[assignment]
    with pytest.raises(StoreDiskError) as info:
        ledger.begin([(D, GRAPH, "<https://example.org/m>", BODY)], [story])
    assert str(info.value) == f"{path}: the ledger failed: database or disk is full"
    assert Ledger(path).pending() == []  # nothing of it was kept


def test_an_old_ledger_is_refused_not_converted(tmp_path: Path) -> None:
    """A ledger written before ``stated`` (one ``uses`` row per story and description) is
    of a store format no release wrote: refused, naming the file, and left as it was."""
    path = tmp_path / "ledger.sqlite"
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE uses (story TEXT NOT NULL, hash BLOB NOT NULL,
            PRIMARY KEY (story, hash)) WITHOUT ROWID;
        """
    )
    db.executemany("INSERT INTO uses VALUES (?, ?)", [("s1", D)])
    db.commit()
    db.close()
    with pytest.raises(StoreFormatError) as info:
        Ledger(path)
    assert str(info.value).startswith(f"{path}: an old ledger")
    assert str(info.value).endswith("run hcgraph rebuild")
    db = sqlite3.connect(path)
    assert db.execute("SELECT story FROM uses").fetchall() == [("s1",)]
    assert db.execute("SELECT name FROM sqlite_master WHERE name = 'stated'").fetchone() is None
    db.close()
