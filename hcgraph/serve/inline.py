"""Queries the HTTP front answers itself: those known to be quick on the store as it is now.

A query goes to the worker pool (:mod:`~hcgraph.serve.pool`) the first time it is seen,
and whenever it is not known quick: there its time limit (503), its memory limit
(``--query-memory``), the kill of an abandoned query and the damaged-store message hold.
A query (its text and Accept header) whose last answer took under :data:`QUICK_S`, on the
same store state, is known quick: the front evaluates it itself, by the worker's own
:func:`~hcgraph.serve.worker.evaluate` and frames, so its answer is a worker's byte for
byte, without the hand-off (a pipe write, a worker's wake-up, the answer read back) that
costs more than a cheap query does. A worker's time is taken by the front from the moment
the worker could start the query to its answer's end: an upper bound. The front's own
runs are timed in CPU time (the front's thread), so that a busy machine taking the core
away does not make a quick query look slow, and on the clock too (``WAITED_S`` at most).
Queries are answered inline at the end of the event loop's turn, together, after one look
at the store (the workers' rule, per batch).

Why an inline query needs none of the limits: it finished in under ``QUICK_S`` the last
time, on the same data, and evaluating a query over unchanged data is deterministic, so it
finishes again in about that time (far below any timeout; its memory in proportion); its
client cannot abandon it midway, the front does nothing else meanwhile. The data is the
same: the front opens the store read-only with the workers' freshness rule
(:meth:`~hcgraph.serve.worker.Database.fresh`, looked at before every query) and forgets
every query it knew when the store changed. The residual risk: the time is measured, not
proven. A run that takes longer (the machine busy, pages no longer cached) holds this
front's other connections that long, once: the query is forgotten and goes to the workers
the next time. A change to the store the front's look cannot see (files rewritten to the
same sizes and times) is not followed, by the front or by the workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .worker import Answers, Database, evaluate

if TYPE_CHECKING:
    from .endpoint import Query
    from .http import Conn

QUICK_S = Answers.QUICK_S  # 2 ms: an inline query holds the front's other clients this long
WAITED_S = 0.02  # an inline run's time on the clock, at most (the rest: waiting for a core)
KNOWN = 1024  # queries remembered as quick, at most
LONGEST = 4096  # characters of a query text remembered, at most


class Inline:
    """The front's read-only view of the store, the queries known quick on it, and those
    to answer at the end of the event loop's turn."""

    def __init__(self, loop: asyncio.AbstractEventLoop, db_path: Path) -> None:
        self.loop = loop
        self.db: Database | None = None
        with contextlib.suppress(OSError, RuntimeError):  # the workers say why, to each query
            self.db = Database(str(db_path))
        self.store: Any = None if self.db is None else self.db.store
        self.known: set[Query] = set()
        self.due: list[Conn] = []
        self.answered = 0  # queries answered inline so far (tests, diagnostics)

    def learn(self, query: Query, seconds: float) -> None:
        """``query`` was answered by a worker in ``seconds``: remember it if that was quick."""
        if seconds < QUICK_S and len(query.text) <= LONGEST and self.db is not None:
            if len(self.known) >= KNOWN:
                self.known.clear()
            self.known.add(query)

    def take(self, conn: Conn, query: Query) -> bool:
        """Answer ``conn``'s query here, if known quick, once the loop's turn is over (with
        the others of that turn, after one look at the store); False: the pool answers it."""
        if query not in self.known:
            return False
        self.due.append(conn)
        if len(self.due) == 1:
            self.loop.call_soon(self.run)
        return True

    def run(self) -> None:
        """Answer the queries taken this turn; every one arrived before this look at the
        store, which forgets every query known quick if the store changed."""
        due, self.due = self.due, []
        assert self.db is not None
        if (store := self.db.fresh()) is not self.store:
            self.store = store
            self.known.clear()
        clock, cpu = time.monotonic(), time.thread_time()
        for conn in due:
            query = conn.query
            if conn.closed or query is None:
                continue
            if not self._answer(conn, query):
                conn.to_pool()
            now, used = time.monotonic(), time.thread_time()  # the answer's writing counted
            if used - cpu >= QUICK_S or now - clock >= WAITED_S:
                self.known.discard(query)  # slow this time: the workers take it from now on
            clock, cpu = now, used

    def _answer(self, conn: Conn, query: Query) -> bool:
        """Answer ``query`` onto ``conn`` if still known quick; False: the pool answers it
        (not known quick now, or it failed before anything was sent, as it would kill a
        worker)."""
        if query not in self.known or self.db is None:
            return False
        try:
            evaluate(self.db, query.text, query.accept, _Frames(conn), self.store)
        except Exception:  # an engine error: a worker gives the answer it gives
            self.known.discard(query)
            if not conn.sent:
                return False
            conn.worker_failed()  # a half answer must not look whole
        self.answered += 1
        return True


class _Frames:
    """:func:`evaluate`'s sink for an inline answer: each frame (written whole, in one
    call) goes straight to the connection, as a worker's would."""

    def __init__(self, conn: Conn) -> None:
        self.conn = conn

    def write(self, data: bytes) -> int:
        self.conn.frame(data[:1], data[5:])
        return len(data)
