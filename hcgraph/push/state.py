"""What was pushed where: per endpoint, the content hash of each graph last pushed.

JSON in the store directory (``push-state.json``, replaced atomically; endpoint URLs never
hold credentials). Each acknowledged graph is appended at once to a journal beside it (a
JSON line a graph, ``fsync``-ed every :data:`SYNC_EVERY` lines), so a push killed midway
keeps what went; a graph about to be bulk-loaded is *forgotten* first (``"sha256": null``).
Loading folds the journal in (a torn last line is ignored); saving removes it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._io import write_atomic
from ..errors import OutputError, PushError

__all__ = ["STATE_FILE", "SYNC_EVERY", "PushState"]

STATE_FILE = "push-state.json"
#: Journal lines written between two ``fsync`` calls.
SYNC_EVERY = 32
_FORMAT = "hcgraph-push-state/1"


class PushState:
    """Hashes of the graphs pushed to each endpoint, loaded from and saved to ``path``
    (``None``: in memory only)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.journal = path.with_suffix(".journal") if path is not None else None
        self._endpoints: dict[str, dict[str, Any]] = {}
        self._fd: int | None = None
        self._unsynced = 0
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise PushError(
                    f"{path}: unreadable push state ({exc}); delete it to start over"
                ) from exc
            if not isinstance(data, dict) or data.get("format") != _FORMAT or not _shaped(data):
                raise PushError(f"{path}: not an hcgraph push state file")
            self._endpoints = dict(data.get("endpoints", {}))
        self._replay()

    def _replay(self) -> None:
        """Fold in the acknowledgements a push journalled but did not save (it was killed)."""
        if self.journal is None:
            return
        try:
            lines = self.journal.read_bytes().splitlines()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise PushError(f"{self.journal}: unreadable push journal ({exc})") from exc
        for line in lines:
            entry = _entry(line)
            if entry is None:
                continue  # a line torn by the kill: that graph is sent again
            endpoint, graph, sha256 = entry
            if sha256 is None:  # forgotten (see forget)
                self.graphs(endpoint).pop(graph, None)
            else:
                self.graphs(endpoint)[graph] = sha256

    @classmethod
    def for_store(cls, directory: Path | None) -> PushState:
        """The state file of the store at ``directory`` (in memory for ``None``)."""
        return cls(directory / STATE_FILE if directory is not None else None)

    def graphs(self, endpoint: str) -> dict[str, str]:
        """Graph IRI → SHA-256 last pushed to ``endpoint``."""
        entry = self._endpoints.setdefault(endpoint, {"graphs": {}})
        graphs: dict[str, str] = entry.setdefault("graphs", {})
        return graphs

    def is_current(self, endpoint: str, iri: str, sha256: str) -> bool:
        """True when ``endpoint`` last received exactly this content for ``iri``."""
        return self.graphs(endpoint).get(iri) == sha256

    def record(self, endpoint: str, iri: str, sha256: str) -> None:
        """Note that ``endpoint`` acknowledged ``iri`` as ``sha256``, in memory and in the journal.

        Raises:
            PushError: the journal cannot be written (disk full, permission denied).
        """
        self.graphs(endpoint)[iri] = sha256
        self._append(_line(endpoint, iri, sha256), 1)

    def forget(self, endpoint: str, iris: Iterable[str]) -> None:
        """Drop what ``endpoint`` last acknowledged for ``iris``, in memory and in the journal
        (``fsync``-ed before returning): before a replacement that is not atomic (a bulk load).

        Raises:
            PushError: the journal cannot be written.
        """
        graphs = self.graphs(endpoint)
        gone = [iri for iri in iris if graphs.pop(iri, None) is not None]
        if not gone:
            return
        self._append(b"".join(_line(endpoint, iri, None) for iri in gone), len(gone), sync=True)

    def _append(self, data: bytes, lines: int, *, sync: bool = False) -> None:
        """Append whole journal lines in one ``write``; ``fsync`` every :data:`SYNC_EVERY`
        (or now, with ``sync``)."""
        if self.journal is None:
            return
        try:
            if self._fd is None:
                flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
                self._fd = os.open(self.journal, flags, 0o666)
            os.write(self._fd, data)
            self._unsynced += lines
            if sync or self._unsynced >= SYNC_EVERY:
                self._sync()
        except OSError as exc:
            raise PushError(f"cannot record the push state in {self.journal}: {exc}") from None

    def _sync(self) -> None:
        if self._fd is not None and self._unsynced:
            os.fsync(self._fd)
        self._unsynced = 0

    def save(self, endpoint: str) -> None:
        """Stamp ``endpoint`` with the time and write the file atomically."""
        entry = self._endpoints.setdefault(endpoint, {"graphs": {}})
        entry["pushed_at"] = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
        if self.path is None:
            return
        data = {"format": _FORMAT, "endpoints": self._endpoints}
        text = json.dumps(data, indent=1, sort_keys=True) + "\n"
        try:
            if self._fd is not None:  # the journal: synced, closed, then folded into the file
                try:
                    self._sync()
                finally:
                    os.close(self._fd)
                    self._fd = None
            write_atomic(self.path, text.encode("utf-8"))
            if self.journal is not None:
                self.journal.unlink(missing_ok=True)
        except OutputError as exc:
            raise PushError(f"cannot save the push state: {exc}") from None
        except OSError as exc:
            raise PushError(f"cannot save the push state: {self.journal}: {exc}") from None


def _shaped(data: dict[str, Any]) -> bool:
    """True when the file's ``endpoints`` are objects whose ``graphs`` are objects (a file
    edited by hand into another shape failed later, in a traceback)."""
    endpoints = data.get("endpoints", {})
    return isinstance(endpoints, dict) and all(
        isinstance(e, dict) and isinstance(e.get("graphs", {}), dict) for e in endpoints.values()
    )


def _entry(line: bytes) -> tuple[str, str, str | None] | None:
    """``(endpoint, graph, sha256)`` of a journal line; None if it is not one."""
    try:
        entry = json.loads(line)
        endpoint, graph, sha256 = entry["endpoint"], entry["graph"], entry["sha256"]
    except (ValueError, TypeError, KeyError):  # torn, or not an object with those keys
        return None
    if isinstance(endpoint, str) and isinstance(graph, str) and isinstance(sha256, str | None):
        return endpoint, graph, sha256
    return None


def _line(endpoint: str, iri: str, sha256: str | None) -> bytes:
    """One journal line: ``endpoint`` acknowledged ``iri`` as ``sha256`` (None: forgotten)."""
    return json.dumps({"endpoint": endpoint, "graph": iri, "sha256": sha256}).encode() + b"\n"
