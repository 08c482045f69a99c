"""A full disk, injected: what a crawl meets when its store's file system fills up.

:func:`install` patches, with the ``setattr`` it is given (``monkeypatch.setattr`` in the
test process; plain ``setattr`` from a ``sitecustomize`` in a CLI subprocess and in the
store worker process it starts):

* ``store``: every write of an on-disk store's engine (loads, updates, the flush on close)
  raises the ``OSError`` Oxigraph raises on a full disk;
* ``archive``: every append to the crawl archive's packs fails with ``ENOSPC``, and so does
  the store's flush on close;
* ``engine``: as ``store``, but the frontier (on another disk) keeps working;

and in the first two, once the disk is full (the ``flag`` file exists: it is made by the first
failure, whichever process it happens in) every write to the crawl frontier fails as
SQLite's does (``database or disk is full``). Only the engine, ``os.writev`` and
``sqlite3.connect`` are patched, so hcgraph's own handling of those errors is what runs.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Oxigraph's message on a full disk (RocksDB's, as seen on a 12 MB tmpfs).
ENGINE_FULL = "IO error: No space left on device: While appending to file: oxigraph/000008.log"
_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "COMMIT")
_ENGINE_WRITES = {"load", "bulk_load", "update", "remove_graph", "remove", "flush", "optimize"}


def sitecustomize(fault: str, flag: Path) -> str:
    """The text of a ``sitecustomize.py`` that installs the fault in every process."""
    here = str(Path(__file__).resolve().parent)
    return (
        f"import sys; sys.path.insert(0, {here!r})\n"
        f"import diskfull; diskfull.install(setattr, {fault!r}, {str(flag)!r})\n"
    )


def install(patch: Callable[[Any, str, Any], None], fault: str, flag: Path | str) -> None:
    """Make the disk fill up for this process (see the module docstring)."""
    import hcgraph.archive as archive_module
    from hcgraph.store import Store

    flag = Path(flag)

    def fill() -> None:
        flag.touch()

    failing = _ENGINE_WRITES if fault in ("store", "engine") else {"flush"}

    class FullEngine:
        """An Oxigraph store whose ``failing`` methods fail as on a full disk."""

        def __init__(self, engine: Any) -> None:
            self._engine = engine

        def __getattr__(self, name: str) -> Any:
            if name in failing:
                return self._full
            return getattr(self._engine, name)

        def _full(self, *_: Any, **__: Any) -> None:
            fill()
            raise OSError(ENGINE_FULL)

    opened = Store.__init__

    def open_full(self: Store, *args: Any, **kwargs: Any) -> None:
        opened(self, *args, **kwargs)
        if self.directory is not None and not self.read_only:
            self.ox = FullEngine(self.ox)  # type: ignore[assignment]

    patch(Store, "__init__", open_full)

    if fault == "archive":

        def full_writev(fd: int, buffers: Any) -> int:
            fill()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        patch(archive_module.os, "writev", full_writev)

    class FullFrontier(sqlite3.Connection):
        """A connection whose writes fail once the disk is full."""

        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
            if flag.exists() and sql.lstrip().upper().startswith(_WRITES):
                raise sqlite3.OperationalError("database or disk is full")
            return super().execute(sql, *args)

    connect = sqlite3.connect

    def connect_full(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        if str(database).endswith("frontier.sqlite") and fault != "engine":
            kwargs["factory"] = FullFrontier
        return connect(database, *args, **kwargs)

    patch(sqlite3, "connect", connect_full)
