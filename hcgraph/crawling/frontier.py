"""The persistent crawl frontier: every URL seen, its depth and state, in SQLite.

The frontier (``STORE/crawl/frontier.sqlite``) is written through on every change in WAL
mode, so a crash loses nothing recorded and the same command resumes. A URL's ``state``::

    queued ──fetch──▶ fetched ──parse+store──▶ done
       │                 │                      └──▶ duplicate (same story as another URL)
       │                 └──────────────────────▶ failed (bad body: not JSON, not a story…)
       ├──fetch failed──▶ failed (HTTP error, timeout, too large, redirect refused…)
       ├──404/410 twice in a row──▶ gone ──its story stored──▶ withdrawn (marked so)
       └──robots.txt───▶ skipped
    (off-site and non-http links are inserted straight as ``skipped``; a story's own
    canonical URL, when it differs from the URL it was fetched under, as ``alias``)

Its ``role``: ``story`` (its JSON), ``index`` (an HTML page listing stories), ``sitemap``,
``robots`` (read for its ``Sitemap:`` lines) or ``page`` (a seed page: a story unless its JSON
is missing, then an index). Index pages go ``queued ──fetch+parse──▶ read`` with their links,
in one transaction. ``via`` says how a URL was found (``seed`` or a ``--follow`` kind);
``lastmod`` is a sitemap's ``<lastmod>``. ``fetched`` means the body is safe in the raw
archive: a resume processes it from there.

A *run* is one crawl command, identified by a fingerprint of what decides its result.
Re-running an unfinished run resumes it; a finished one starts a re-crawl, which sends the
``validators`` kept from earlier runs (that table survives runs, as does ``gone``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .._sqlite import Database, transaction
from ..errors import CrawlError

__all__ = ["INDEX_ROLES", "Frontier", "Row", "Validators"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS run (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS urls (
    url TEXT PRIMARY KEY,
    depth INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    state TEXT NOT NULL,
    parent TEXT,
    sha256 TEXT,
    source TEXT,
    fetched_at TEXT,
    story TEXT,
    related TEXT,
    status INTEGER,
    kind TEXT,
    reason TEXT,
    json_path TEXT,
    put TEXT,
    via TEXT,
    role TEXT,
    lastmod TEXT
);
CREATE INDEX IF NOT EXISTS urls_queue ON urls (state, depth, seq);
CREATE TABLE IF NOT EXISTS stories (story TEXT PRIMARY KEY, url TEXT NOT NULL, id TEXT);
CREATE TABLE IF NOT EXISTS validators (
    url TEXT PRIMARY KEY, etag TEXT, last_modified TEXT, sha256 TEXT, fetched_at TEXT
);
CREATE TABLE IF NOT EXISTS gone (url TEXT PRIMARY KEY);
"""
# Columns added since the first frontier schema: added to an older file when it is opened.
_ADDED = {
    "urls": ("via TEXT", "role TEXT", "lastmod TEXT"),
    "validators": ("fetched_at TEXT",),
}


@dataclass(frozen=True)
class Validators:
    """What the last fetch of a URL returned, for a conditional re-fetch."""

    etag: str | None
    last_modified: str | None
    sha256: str | None
    fetched_at: str | None = None  # when the body was last fetched whole (200)


@dataclass(frozen=True)
class Row:
    """One URL of the frontier (see the module docstring for ``state``)."""

    url: str
    depth: int
    state: str
    parent: str | None = None
    sha256: str | None = None
    source: str | None = None
    fetched_at: str | None = None
    story: str | None = None
    related: tuple[str, ...] = ()
    status: int | None = None
    kind: str | None = None
    reason: str | None = None
    json_path: str | None = None
    put: str | None = None
    via: str | None = None
    role: str | None = None
    lastmod: str | None = None


_ROW_COLUMNS = ", ".join(f.name for f in fields(Row))
#: Roles whose links are read, not stored as stories.
INDEX_ROLES = frozenset({"index", "sitemap", "robots"})


def _link(entry: str | list[str]) -> tuple[str, str, str]:
    """A ``related`` entry: a related story's JSON URL (a bare string), or ``[url, via, role]``."""
    if isinstance(entry, str):
        return entry, "related", "story"
    return entry[0], entry[1], entry[2]


def _row(values: tuple[Any, ...]) -> Row:
    fields = list(values)
    fields[8] = tuple(_link(e)[0] for e in json.loads(fields[8])) if fields[8] else ()
    return Row(*fields)


class Frontier:
    """The frontier database; ``path=None`` keeps it in memory.

    Raises:
        CrawlError: the database cannot be opened (not SQLite, locked by a running crawl).
    """

    def __init__(self, path: Path | None) -> None:
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self.db = Database(path, CrawlError, "cannot open the crawl frontier")
        self.db.execute("PRAGMA journal_mode=WAL")
        # NORMAL: a commit survives the process being killed (only power loss can undo it).
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)
        for table, columns in _ADDED.items():
            have = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
            for column in columns:
                if column.split()[0] not in have:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
        # From here on a failing statement (a full disk: "database or disk is full") is a
        # CrawlError naming the file, so the crawl ends with one line, resumable.
        self.db.what = "the crawl frontier failed"
        self._seq = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM urls").fetchone()[0]
        self._depth = 0

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    def batch(self) -> AbstractContextManager[None]:
        """Group changes into one transaction (one commit)."""
        return transaction(self.db)

    def get_setting(self, key: str) -> str | None:
        """A run setting."""
        row = self.db.execute("SELECT value FROM run WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_setting(self, key: str, value: str) -> None:
        """Save a run setting."""
        self.db.execute("INSERT OR REPLACE INTO run (key, value) VALUES (?, ?)", (key, value))

    def begin(self, fingerprint: str, max_depth: int) -> bool:
        """Start (forgetting the last run's URLs and claims) or resume the run with this
        fingerprint; True if an unfinished run resumes."""
        self._depth = max_depth
        same = self.get_setting("fingerprint") == fingerprint
        if same and self.get_setting("status") == "running":
            return True
        with self.batch():
            self.db.execute("DELETE FROM urls")
            self.db.execute("DELETE FROM stories")
            self.set_setting("fingerprint", fingerprint)
            self.set_setting("status", "running")
        self._seq = 0
        return False

    def finish(self) -> None:
        """Mark the run finished (the next same command starts a re-crawl)."""
        self.set_setting("status", "complete")

    def add(
        self,
        url: str,
        depth: int,
        parent: str | None = None,
        *,
        via: str | None = None,
        role: str = "story",
        lastmod: str | None = None,
    ) -> bool:
        """Queue ``url`` at ``depth`` unless seen; True if newly queued. A URL seen deeper
        moves up, with the links of a crawled one (``--depth`` is the shortest number of
        hops, whatever order fetches finish in); the latest ``lastmod`` listed is kept."""
        if depth > self._depth:
            return False
        work = [(url, depth, parent, via, role, lastmod)]
        while work:
            u, d, p, v, r, m = work.pop()
            row = self.db.execute(
                "SELECT depth, state, related, role FROM urls WHERE url = ?", (u,)
            ).fetchone()
            if row is None:
                self._seq += 1
                self.db.execute(
                    "INSERT INTO urls (url, depth, seq, state, parent, via, role, lastmod) "
                    "VALUES (?, ?, ?, 'queued', ?, ?, ?, ?)",
                    (u, d, self._seq, p, v, r, m),
                )
                if u == url:  # newly queued: nothing was seen to move up
                    return True
                continue
            if m is not None and row[1] == "queued":  # the latest listed (UTC ISO: text order)
                self.db.execute(
                    "UPDATE urls SET lastmod = MAX(COALESCE(lastmod, ''), ?) WHERE url = ?",
                    (m, u),
                )
            work.extend(self._moved_up(u, d, *row))
        return False

    def _moved_up(
        self, url: str, depth: int, old_depth: int, state: str, related: str | None,
        role: str | None,
    ) -> list[tuple[str, int, str | None, str | None, str, None]]:  # fmt: skip
        """Move a URL seen before up to ``depth`` if that is shallower; the links of a
        crawled one then move with it (a story's one hop deeper, an index page's at its
        depth): they are returned as :meth:`add` takes them, to be moved in turn."""
        if depth >= old_depth:
            return []
        self.db.execute("UPDATE urls SET depth = ? WHERE url = ?", (depth, url))
        hop = 0 if role in INDEX_ROLES else 1
        if state not in ("done", "read") or not related or depth + hop > self._depth:
            return []
        children = map(_link, json.loads(related))
        return [(link, depth + hop, url, via, kind, None) for link, via, kind in children]

    def add_final(self, url: str, depth: int, state: str, parent: str | None, reason: str) -> None:
        """Record a URL that is never fetched (``skipped``/``alias``), unless already seen."""
        self._seq += 1
        self.db.execute(
            "INSERT OR IGNORE INTO urls (url, depth, seq, state, parent, reason) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (url, depth, self._seq, state, parent, reason),
        )

    def queued(self, limit: int, exclude: set[str]) -> list[tuple[str, int]]:
        """Up to ``limit`` queued URLs, shallowest first, not in ``exclude`` (already leased)."""
        rows = self.db.execute(
            "SELECT url, depth FROM urls WHERE state = 'queued' ORDER BY depth, seq LIMIT ?",
            (limit + len(exclude),),
        ).fetchall()
        return [(u, d) for u, d in rows if u not in exclude][:limit]

    def count(self, state: str) -> int:
        """How many URLs are in ``state``."""
        row = self.db.execute("SELECT COUNT(*) FROM urls WHERE state = ?", (state,)).fetchone()
        return int(row[0])

    def mark(self, url: str, state: str, **columns: object) -> None:
        """Put ``url`` in ``state`` (see the module docstring), setting ``columns`` too
        (names from the code, never from input)."""
        columns["state"] = state
        assignments = ", ".join(f"{name} = ?" for name in columns)
        self.db.execute(f"UPDATE urls SET {assignments} WHERE url = ?", (*columns.values(), url))

    def mark_fetched(
        self, url: str, sha256: str, source: str, fetched_at: str, status: int | None
    ) -> None:
        """The body is in the archive; processing is next."""
        self.mark(
            url, "fetched", sha256=sha256, source=source, fetched_at=fetched_at, status=status
        )

    def mark_failed(
        self, url: str, *, status: int | None, kind: str, reason: str, json_path: str | None = None
    ) -> None:
        """The URL failed for good in this run (a ``status`` of None keeps the one recorded)."""
        known = {} if status is None else {"status": status}
        self.mark(url, "failed", **known, kind=kind, reason=reason, json_path=json_path)

    def mark_done(self, url: str, story: str, put: str, related: Iterable[str | list[str]]) -> None:
        """The story is in the store; ``related`` are its in-scope links: JSON URLs of
        related stories, or ``[url, via, role]`` for others (an edition page...)."""
        self.mark(url, "done", story=story, put=put, related=json.dumps(list(related)))

    def requeue_gone(self) -> None:
        """Put back in the queue the URLs an interrupted run left ``gone``."""
        self.db.execute("UPDATE urls SET state = 'queued' WHERE state = 'gone'")

    def mark_read(
        self, url: str, children: Iterable[str | list[str]], reason: str | None = None
    ) -> None:
        """An index page was read; ``children``: the links it queued (as in :meth:`mark_done`)."""
        self.mark(url, "read", related=json.dumps(list(children)), reason=reason)

    def row(self, url: str) -> Row | None:
        """The URL's row, or None if unseen."""
        found = self.db.execute(f"SELECT {_ROW_COLUMNS} FROM urls WHERE url = ?", (url,)).fetchone()
        return None if found is None else _row(found)

    def depth_of(self, url: str) -> int | None:
        """The URL's current depth, or None if unseen."""
        row = self.db.execute("SELECT depth FROM urls WHERE url = ?", (url,)).fetchone()
        return None if row is None else int(row[0])

    def rows(self, *states: str) -> list[Row]:
        """Rows in the given states (all rows if none given), in discovery order."""
        where = f" WHERE state IN ({','.join('?' * len(states))})" if states else ""
        sql = f"SELECT {_ROW_COLUMNS} FROM urls{where} ORDER BY seq"
        return [_row(r) for r in self.db.execute(sql, states)]

    def claim(self, story: str, url: str, story_id: str | None) -> None:
        """Remember that ``story`` was crawled under ``url``."""
        self.db.execute(
            "INSERT OR IGNORE INTO stories (story, url, id) VALUES (?, ?, ?)",
            (story, url, story_id),
        )

    def claims(self) -> dict[str, tuple[str, str | None]]:
        """story IRI → (crawl URL, story id) for this run."""
        rows = self.db.execute("SELECT story, url, id FROM stories").fetchall()
        return {s: (u, i) for s, u, i in rows}

    def gone_urls(self) -> set[str]:
        """URLs whose last fetch (any run) answered 404 or 410."""
        return {str(u) for (u,) in self.db.execute("SELECT url FROM gone")}

    def set_gone(self, url: str, gone: bool) -> None:
        """Record whether the last fetch of ``url`` answered 404 or 410."""
        if gone:
            self.db.execute("INSERT OR IGNORE INTO gone (url) VALUES (?)", (url,))
        else:
            self.db.execute("DELETE FROM gone WHERE url = ?", (url,))

    def validators(self, url: str) -> Validators | None:
        """ETag/Last-Modified from the last successful fetch of ``url`` (any run)."""
        row = self.db.execute(
            "SELECT etag, last_modified, sha256, fetched_at FROM validators WHERE url = ?",
            (url,),
        ).fetchone()
        return None if row is None else Validators(*row)

    def set_validators(self, url: str, v: Validators) -> None:
        """Save the validators of a successful fetch."""
        self.db.execute(
            "INSERT OR REPLACE INTO validators (url, etag, last_modified, sha256, fetched_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (url, v.etag, v.last_modified, v.sha256, v.fetched_at),
        )

    def confirmed(self, url: str, when: str) -> None:
        """A 304 confirmed the kept body of ``url`` at ``when``."""
        self.db.execute("UPDATE validators SET fetched_at = ? WHERE url = ?", (when, url))
