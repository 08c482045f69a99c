"""SQLite databases whose failures are hcgraph errors, not raw ``sqlite3`` ones.

The crawl frontier and the store's ledger are SQLite files; on a full disk any statement may
fail with ``sqlite3.OperationalError``. :class:`Database` raises it as the caller's own error
naming the file, so the CLI prints one line and a crawl stops resumable (not blaming a body).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from .errors import HcgraphError, first_line

__all__ = ["Database", "transaction"]

P = ParamSpec("P")
T = TypeVar("T")


class Database:
    """A ``sqlite3.Connection`` (autocommit: transactions are explicit ``BEGIN``/``COMMIT``)
    whose statements raise ``error(f"{path}: {what}: reason")`` instead of ``sqlite3.Error``."""

    def __init__(
        self,
        path: Path | None,
        error: Callable[[str], HcgraphError],
        what: str,
        *,
        check_same_thread: bool = True,
    ) -> None:
        self.path = path
        self._error = error
        self.what = what
        self.raw: sqlite3.Connection = self._guard(
            sqlite3.connect,
            ":memory:" if path is None else str(path),
            isolation_level=None,
            check_same_thread=check_same_thread,
        )

    def _guard(self, call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return call(*args, **kwargs)
        except sqlite3.Error as exc:
            where = self.path if self.path is not None else ":memory:"
            raise self._error(f"{where}: {self.what}: {first_line(exc)}") from exc

    def execute(self, sql: str, parameters: Iterable[Any] = ()) -> sqlite3.Cursor:
        """Run one statement."""
        return self._guard(self.raw.execute, sql, tuple(parameters))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        """Run one statement for each of ``rows``."""
        return self._guard(self.raw.executemany, sql, rows)

    def executescript(self, script: str) -> sqlite3.Cursor:
        """Run a script of statements."""
        return self._guard(self.raw.executescript, script)

    def close(self) -> None:
        """Close the connection."""
        self._guard(self.raw.close)


@contextlib.contextmanager
def transaction(db: Database, on_rollback: Callable[[], None] | None = None) -> Iterator[None]:
    """``BEGIN`` … ``COMMIT`` on ``db``: one commit for every statement inside (inside an
    open transaction: part of it). On an error, a failed ``COMMIT`` too (a full disk may
    leave the transaction open), it is rolled back and ``on_rollback`` is called."""
    if db.raw.in_transaction:
        yield
        return
    db.execute("BEGIN")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        if db.raw.in_transaction:  # SQLite may have rolled back already
            db.execute("ROLLBACK")
        if on_rollback is not None:
            on_rollback()
        raise
