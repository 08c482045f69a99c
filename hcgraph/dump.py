"""Bulk dumps for triple-store loaders: N-Quads, gzipped, in shards of whole story graphs.

Bulk loaders are fastest on a few large compressed files read in parallel.
:func:`write_shards` writes ``graph-00000.nq.gz``, …: each story graph whole in one shard
(a failed file loses whole stories, never half of one), graphs in IRI order with sorted
lines, gzip headers without name or time, so the same store gives the same bytes.
"""

from __future__ import annotations

import ctypes
import errno
import gzip
import os
import re
import secrets
import shutil
from contextlib import nullcontext
from pathlib import Path
from typing import BinaryIO, cast

from ._io import atomic_writer, ensure_dir, sync_dir
from .errors import ExportError
from .store import Store

__all__ = ["SHARD_PATTERN", "gzip_writer", "write_shards"]

SHARD_PATTERN = re.compile(r"^graph-\d{5,}\.nq(\.gz)?$")
_LEVEL = 6  # gzip -6: most of -9's size at a fraction of its time


def gzip_writer(out: BinaryIO) -> BinaryIO:
    """A deterministic gzip stream (no file name, mtime 0) into ``out``; close it to finish."""
    gz = gzip.GzipFile(fileobj=out, mode="wb", compresslevel=_LEVEL, mtime=0, filename="")
    return cast(BinaryIO, gz)


def write_shards(
    store: Store, directory: Path | str, max_quads: int, *, compress: bool = True
) -> list[Path]:
    """Write the store's story graphs as N-Quads shards of at most ``max_quads`` quads (a
    larger graph gets a shard of its own).

    The directory always holds one whole dump: the shards are written into a new directory
    beside it, which then takes its place in one step (``renameat2`` exchange, else two
    renames); a failed export leaves the old dump as it was.

    Raises:
        ExportError: ``max_quads`` < 1, the directory holds files that are not shards, or
            it cannot be written.
    """
    if max_quads < 1:
        raise ExportError("--split needs a positive number of quads per shard")
    target = Path(os.path.realpath(directory))  # through a symlink: the link stays
    shown = Path(directory)
    try:
        _check_target(target, shown)
        ensure_dir(target.parent)
        _clean_leftovers(target)
        staging = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.new")
        os.mkdir(staging)
        try:
            names = [p.name for p in _write(store, staging, max_quads, compress)]
            sync_dir(staging)
            _swap_in(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)  # the old dump, or a failed new one
    except OSError as exc:
        raise ExportError(f"{shown}: cannot write shards: {exc.strerror or exc}") from exc
    return [shown / name for name in names]


def _check_target(target: Path, shown: Path) -> None:
    if not target.exists():
        return
    if not target.is_dir():
        raise ExportError(f"{shown}: not a directory (--split writes a directory of shards)")
    others = sorted(p.name for p in target.iterdir() if not SHARD_PATTERN.match(p.name))
    if others:
        more = f" and {len(others) - 1} more" if len(others) > 1 else ""
        raise ExportError(
            f"{shown}: holds {others[0]!r}{more}, not a shard: --split replaces the whole "
            "directory; give an empty one, or one an earlier --split wrote"
        )


def _clean_leftovers(target: Path) -> None:
    """Remove what a killed export into ``target`` left beside it."""
    prefix = f".{target.name}."
    for path in target.parent.iterdir():
        if path.name.startswith(prefix) and path.name.endswith((".new", ".old")):
            shutil.rmtree(path, ignore_errors=True)


def _swap_in(staging: Path, target: Path) -> None:
    """Put ``staging`` where ``target`` is; afterwards ``staging`` holds the old dump (or
    nothing), for the caller to remove. Durable: the parent directory is synced."""
    if not target.exists():
        os.rename(staging, target)
    elif not _exchange(staging, target):
        old = staging.with_suffix(".old")
        os.rename(target, old)  # a crash between these two leaves the old dump in .old
        os.rename(staging, target)
        os.rename(old, staging)
    sync_dir(target.parent)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories atomically (Linux ``renameat2(RENAME_EXCHANGE)``); ``False``
    where the system or filesystem cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]  # fmt: skip
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _write(store: Store, target: Path, max_quads: int, compress: bool) -> list[Path]:
    written: list[Path] = []
    pending: list[bytes] = []
    for iri in store.graph_names():
        lines = store.sorted_lines(iri, quads=True)
        if pending and len(pending) + len(lines) > max_quads:
            written.append(_flush(target, len(written), pending, compress))
            pending = []
        pending.extend(lines)
    if pending or not written:
        written.append(_flush(target, len(written), pending, compress))
    return written


def _flush(target: Path, index: int, lines: list[bytes], compress: bool) -> Path:
    path = target / (f"graph-{index:05d}.nq" + (".gz" if compress else ""))
    with atomic_writer(path) as raw, gzip_writer(raw) if compress else nullcontext(raw) as out:
        out.writelines(lines)
    return path
