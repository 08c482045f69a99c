"""The ledger on its own: migration of an old ledger, user counts after failed commits."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hcgraph.errors import StoreDiskError
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


def test_an_old_ledger_is_migrated_with_its_pending_writes(tmp_path: Path) -> None:
    """A ledger written before ``stated`` (one ``uses`` row per story and description),
    left dirty by an interrupted write of a new story: the uses become ``stated`` rows,
    and recovery can still drop the interrupted story's uses."""
    path = tmp_path / "ledger.sqlite"
    e, f = description_hash(GRAPH, "e"), description_hash(GRAPH, "f")
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE descr (hash BLOB PRIMARY KEY, graph TEXT NOT NULL, subject TEXT NOT NULL,
            body TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE uses (story TEXT NOT NULL, hash BLOB NOT NULL,
            PRIMARY KEY (story, hash)) WITHOUT ROWID;
        CREATE INDEX uses_hash ON uses (hash);
        CREATE TABLE pending (story TEXT PRIMARY KEY, sha TEXT, quads INTEGER NOT NULL,
            hashes BLOB NOT NULL, new INTEGER NOT NULL);
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('dirty', '1');
        """
    )
    db.executemany(
        "INSERT INTO descr VALUES (?, ?, ?, ?)",
        [(h, GRAPH, "<https://example.org/m>", b) for h, b in ((D, BODY), (e, "e"), (f, "f"))],
    )
    db.executemany("INSERT INTO uses VALUES (?, ?)", [("s1", D), ("s2", D), ("s2", e), ("s3", f)])
    db.execute("INSERT INTO pending VALUES ('s3', ?, 5, x'', 1)", ("c" * 64,))
    db.commit()
    db.close()
    ledger = Ledger(path)
    assert (ledger.uses_of("s1"), ledger.uses_of("s2"), ledger.uses_of("s3")) == (
        {D},
        {D, e},
        {f},
    )
    assert ledger.dirty and [p.story for p in ledger.pending()] == ["s3"]
    assert ledger.unused() == []
    ledger.drop_pending(ledger.pending()[0])  # recovery: s3 never landed
    assert ledger.unused() == [f]
    tables = {r[0] for r in ledger.db.execute("SELECT name FROM sqlite_master")}
    assert "uses" not in tables
    ledger.close()
    assert Ledger(path).unused() == [f]  # the counts a fresh reader makes agree
