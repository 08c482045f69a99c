"""The one line that names a damaged store: which file, and what to do about it.

A damaged block surfaces as the engine's ``Corruption: … in DIR/000016.sst …`` (a
``RuntimeError``) wherever it is first read; every command words it here. Imports nothing
heavy (``serve``'s query workers use it).
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import StoreDamagedError, first_line

__all__ = ["damage_error", "damage_found", "damage_message", "damaged_file", "is_damage"]

# "... in /store/oxigraph/000016.sst offset 2221222 size 2200": the file RocksDB read.
_FILE = re.compile(r"\s+in\s+(\S+\.(?:sst|blob|log))\b")


def is_damage(exc: BaseException) -> bool:
    """True if ``exc`` is the engine reporting damaged files (``Corruption: …``)."""
    return isinstance(exc, RuntimeError | OSError) and "Corruption" in str(exc)


def damaged_file(exc: BaseException | str) -> Path | None:
    """The table (``.sst``) the engine named in its corruption message, if it named one."""
    match = _FILE.search(str(exc))
    return Path(match.group(1)) if match else None


def damage_message(
    directory: Path | str,
    exc: BaseException | str,
    *,
    where: str = "",
    unarchived: int | None = None,
) -> str:
    """One line: the store, the damaged file (when the engine named it), why (``where``: what
    was being read), what to do (``unarchived``: stories the raw archive lacks, ``None``
    when the damage kept them from being listed)."""
    directory = Path(directory)
    text = first_line(exc) if isinstance(exc, BaseException) else exc.strip().splitlines()[0]
    table = damaged_file(text)
    why = _FILE.sub("", text).strip() if table else text
    if where:
        why = f"{why}; found reading {where}"
    head = f"{directory}: the store is damaged"
    head += f": {table} cannot be read ({why})" if table else f" ({why})"
    return f"{head}; {_advice(directory, unarchived)}"


def _advice(directory: Path, unarchived: int | None) -> str:
    """What to do: rebuild from the raw archive (and re-ingest what it does not hold), or,
    with no archive, ingest the story files again."""
    rebuild = f"'hcgraph rebuild --drop-unarchived --store {directory}'"
    if not (directory / "archive" / "packs").is_dir():  # as hcgraph.archive.Archive.exists
        return f"it has no raw archive to rebuild from: move {directory} away and ingest again"
    if unarchived == 0:
        return f"its raw archive holds every story: rebuild it with {rebuild}"
    if unarchived is not None:
        return (
            f"rebuild it from its raw archive with {rebuild}, then re-ingest the files of the"
            f" {unarchived} stories the archive does not hold (ingested from local files)"
        )
    return f"rebuild it from its raw archive with {rebuild}, then re-ingest any local story files"


def damage_error(directory: Path | str, exc: BaseException | str) -> StoreDamagedError:
    """:func:`damage_message` as the error every command raises for it."""
    return StoreDamagedError(damage_message(directory, exc))


def damage_found(exc: BaseException) -> StoreDamagedError | None:
    """The damage ``exc`` reports, for the store holding the table it names
    (``STORE/oxigraph/NNNNNN.sst``); ``None`` when it is no damage or names no table."""
    table = damaged_file(exc) if is_damage(exc) else None
    if table is None or table.parent.name != "oxigraph":
        return None
    return damage_error(table.parent.parent, exc)
