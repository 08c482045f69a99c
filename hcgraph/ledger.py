"""Who said what about shared things: the reference counts behind "each thing stated once".

A manifest cited by many stories is described once, in a shared graph. ``STORE/ledger.sqlite``
keeps ``descr`` (each distinct description: one story's triples about one shared subject, by
hash) and ``stated`` (per story, its hashes in one blob: cheap on every ingest; who uses a
description is counted in memory when a retraction first asks), so a description leaves the
graph with its last user. A write marks the ledger dirty and its stories *pending* before
touching Oxigraph (crash safety: ``hcgraph.writer.recover`` checks them).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from ._sqlite import Database, transaction
from .errors import StoreDiskError, StoreFormatError

__all__ = ["Ledger", "Pending", "description_hash"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS descr (
    hash BLOB PRIMARY KEY, graph TEXT NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS descr_subject ON descr (subject, graph);
CREATE TABLE IF NOT EXISTS stated (story TEXT PRIMARY KEY, hashes BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS pending (
    story TEXT PRIMARY KEY, sha TEXT, quads INTEGER NOT NULL, hashes BLOB NOT NULL,
    new INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_HASH = 16
# Ledgers with a ``uses`` row per (story, description) predate store format 1: refused.
_OLD_TABLE = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'uses'"


def description_hash(graph: str, body: str) -> bytes:
    """The identity of one description: 16 bytes of BLAKE2b over its graph and text."""
    return hashlib.blake2b(f"{graph}\n{body}".encode(), digest_size=_HASH).digest()


@dataclass(frozen=True)
class Pending:
    """A story write that began but was not settled: ``sha`` the version (None: a removal),
    ``quads`` its graph's size, ``hashes`` what it states; a ``new`` story's uses are
    recorded when the write begins (it has nothing to retract)."""

    story: str
    sha: str | None
    quads: int
    hashes: frozenset[bytes]
    new: bool = False


class Ledger:
    """The description ledger of one store (``None`` path: in memory)."""

    def __init__(self, path: Path | None) -> None:
        """Open (or create) the ledger at ``path``.

        Raises:
            StoreDiskError: the file cannot be opened.
            StoreFormatError: it is a ledger of the old form (``uses`` rows).
        """
        # One writer thread uses it after the pipeline opened it: no same-thread check.
        self.db = Database(path, StoreDiskError, "cannot open the ledger", check_same_thread=False)
        if path is not None:
            self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = NORMAL")
        if self.db.execute(_OLD_TABLE).fetchone() is not None:
            self.db.close()
            raise StoreFormatError(
                f"{path}: an old ledger (a 'uses' row per story and description), which this "
                "hcgraph no longer reads; run hcgraph rebuild"
            )
        self.db.executescript(_SCHEMA)
        self.db.what = "the ledger failed"
        self._known: set[bytes] | None = None
        self._users: Counter[bytes] | None = None  # description → stories stating it

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    # --- reading ------------------------------------------------------------------------
    def preload(self) -> None:
        """Read the hashes of every known description into memory (once)."""
        if self._known is None:
            self._known = {row[0] for row in self.db.execute("SELECT hash FROM descr")}

    def known(self, digest: bytes) -> bool:
        """True if the description is already in the ledger (and so in the graph)."""
        self.preload()
        assert self._known is not None
        return digest in self._known

    def uses_of(self, story: str) -> set[bytes]:
        """The descriptions ``story`` currently states."""
        row = self.db.execute("SELECT hashes FROM stated WHERE story = ?", (story,)).fetchone()
        return set() if row is None else set(_unpack(row[0]))

    def subject_of(self, digest: bytes) -> tuple[str, str] | None:
        """(graph, subject) of a description, or None if unknown."""
        row = self.db.execute(
            "SELECT graph, subject FROM descr WHERE hash = ?", (digest,)
        ).fetchone()
        return None if row is None else (row[0], row[1])

    def bodies_in_use(self, graph: str, subject: str) -> list[str]:
        """Texts of the descriptions of ``subject`` that some story still states."""
        rows = self.db.execute(
            "SELECT hash, body FROM descr WHERE subject = ? AND graph = ? ORDER BY hash",
            (subject, graph),
        )
        return [body for digest, body in rows if self._in_use(digest)]

    def bodies(self, digests: Iterable[bytes]) -> Iterator[tuple[str, str]]:
        """(graph, body) of the given descriptions."""
        for digest in digests:
            row = self.db.execute("SELECT graph, body FROM descr WHERE hash = ?", (digest,))
            if (found := row.fetchone()) is not None:
                yield found[0], found[1]

    def unused(self) -> list[bytes]:
        """Descriptions no story states any more (left by an interrupted retraction)."""
        rows = self.db.execute("SELECT hash FROM descr")
        return [digest for (digest,) in rows if not self._in_use(digest)]

    def pending(self) -> list[Pending]:
        """Story writes that began and were not settled (after a crash)."""
        rows = self.db.execute("SELECT story, sha, quads, hashes, new FROM pending ORDER BY story")
        return [Pending(s, sha, n, _unpack(blob), bool(new)) for s, sha, n, blob, new in rows]

    @property
    def dirty(self) -> bool:
        """True while a write is in progress (or was interrupted)."""
        row = self.db.execute("SELECT value FROM meta WHERE key = 'dirty'").fetchone()
        return row is not None and row[0] == "1"

    # --- writing ------------------------------------------------------------------------
    def begin(
        self,
        descriptions: Iterable[tuple[bytes, str, str, str]],
        pending: Iterable[Pending],
    ) -> None:
        """Before a store write: record the new descriptions (hash, graph, subject, body) and
        the stories the write adds, replaces or removes."""
        rows = list(descriptions)
        with self._transaction():
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('dirty', '1')")
            self.db.executemany("INSERT OR IGNORE INTO descr VALUES (?, ?, ?, ?)", rows)
            for p in pending:
                if p.new:
                    self._state(p.story, p.hashes, new=True)
                row = (p.story, p.sha, p.quads, b"" if p.new else _pack(p.hashes), p.new)
                self.db.execute("INSERT OR REPLACE INTO pending VALUES (?, ?, ?, ?, ?)", row)
        if self._known is not None:
            self._known.update(row[0] for row in rows)

    def settle(self, stories: Iterable[Pending]) -> set[bytes]:
        """After a store write: make each story's uses its new ones, and clear it as pending;
        returns the descriptions that lost their last user (to retract from the graph)."""
        dropped: set[bytes] = set()
        with self._transaction():
            for p in stories:
                if not p.new:  # a new story's uses were recorded by begin()
                    dropped |= self._state(p.story, p.hashes)
                self.db.execute("DELETE FROM pending WHERE story = ?", (p.story,))
        return {h for h in dropped if not self._in_use(h)}

    def forget(self, digests: Iterable[bytes]) -> None:
        """Delete descriptions (retracted from the graph)."""
        keys = list(digests)
        with self._transaction():
            self.db.executemany("DELETE FROM descr WHERE hash = ?", [(h,) for h in keys])
        if self._known is not None:
            self._known.difference_update(keys)

    def drop_pending(self, p: Pending) -> None:
        """Clear a pending record without applying it (its write did not land)."""
        with self._transaction():
            if p.new:
                self._state(p.story, frozenset())
            self.db.execute("DELETE FROM pending WHERE story = ?", (p.story,))

    def clean(self) -> None:
        """Mark the ledger consistent with the store again (not while a story is still
        pending: a write that failed stays for :func:`hcgraph.writer.recover`)."""
        with self._transaction():
            if self.db.execute("SELECT 1 FROM pending LIMIT 1").fetchone() is None:
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('dirty', '0')")

    def _transaction(self) -> AbstractContextManager[None]:
        """A write transaction; the in-memory user counts are dropped if it rolls back."""
        return transaction(self.db, self._forget_users)

    def _forget_users(self) -> None:
        self._users = None

    def _state(self, story: str, hashes: frozenset[bytes], *, new: bool = False) -> set[bytes]:
        """Make ``hashes`` what ``story`` states (inside a transaction); the hashes it no
        longer states (a ``new`` story's old row is read only for counted users)."""
        old = None if new and self._users is None else self.uses_of(story)
        if hashes:
            self.db.execute("INSERT OR REPLACE INTO stated VALUES (?, ?)", (story, _pack(hashes)))
        else:
            self.db.execute("DELETE FROM stated WHERE story = ?", (story,))
        if old is None:  # a new story while nobody counts users: nothing to give back
            return set()
        if self._users is not None:
            self._users.subtract(old - hashes)
            self._users.update(hashes - old)
        return old - hashes

    def _in_use(self, digest: bytes) -> bool:
        """True if some story states the description (counts users on first call)."""
        if self._users is None:
            rows = self.db.execute("SELECT hashes FROM stated")
            self._users = Counter(h for (blob,) in rows for h in _unpack(blob))
        return self._users[digest] > 0


def _pack(hashes: Iterable[bytes]) -> bytes:
    return b"".join(sorted(hashes))


def _unpack(blob: bytes) -> frozenset[bytes]:
    return frozenset(blob[i : i + _HASH] for i in range(0, len(blob), _HASH))
