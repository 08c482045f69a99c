"""Bulk dumps for triple-store loaders: N-Quads, gzipped, in shards of whole story graphs.

Bulk loaders (``oxigraph load``, QLever's index builder, Virtuoso's ``ld_dir``, GraphDB's
importer, Amazon Neptune's loader) are fastest on a few large compressed files they can read
in parallel. :func:`write_shards` writes ``graph-00000.nq.gz``, ``graph-00001.nq.gz``, ...:
each story graph sits whole in one shard (a loader that fails on one file leaves whole
stories out, never half of one), graphs go in IRI order with their lines sorted, and gzip
headers carry no name or time, so the same store gives byte-identical shards.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from ._io import atomic_writer, ensure_dir
from .errors import ExportError
from .store import Store

__all__ = ["SHARD_PATTERN", "gzip_writer", "shard_name", "write_shards"]

SHARD_PATTERN = re.compile(r"^graph-\d{5,}\.nq(\.gz)?$")
_LEVEL = 6  # gzip -6: most of -9's size at a fraction of its time


def shard_name(index: int, *, compress: bool) -> str:
    """``graph-00007.nq.gz`` (or ``.nq``) for shard ``index``."""
    return f"graph-{index:05d}.nq" + (".gz" if compress else "")


@contextmanager
def gzip_writer(out: BinaryIO) -> Iterator[BinaryIO]:
    """Wrap ``out`` in a deterministic gzip stream (no file name, mtime 0)."""
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=_LEVEL, mtime=0, filename="") as gz:
        yield gz  # type: ignore[misc]


def write_shards(
    store: Store, directory: Path | str, max_quads: int, *, compress: bool = True
) -> list[Path]:
    """Write the store's story graphs as N-Quads shards of at most ``max_quads`` quads.

    A shard is closed before a graph that would push it past ``max_quads``; a single
    graph larger than that gets a shard of its own. Shards left in ``directory`` by an
    earlier, larger dump are removed, so the directory always holds exactly this dump.

    Returns:
        The shard paths, in order.

    Raises:
        ExportError: ``max_quads`` < 1, or the directory cannot be written.
    """
    if max_quads < 1:
        raise ExportError("--split needs a positive number of quads per shard")
    target = Path(directory)
    try:
        ensure_dir(target)
        written = _write(store, target, max_quads, compress)
        keep = {p.name for p in written}
        for old in target.iterdir():
            if SHARD_PATTERN.match(old.name) and old.name not in keep:
                old.unlink()
    except OSError as exc:
        raise ExportError(f"{target}: cannot write shards: {exc.strerror or exc}") from exc
    return written


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
    path = target / shard_name(index, compress=compress)
    with atomic_writer(path) as raw:
        if compress:
            with gzip_writer(raw) as gz:
                gz.writelines(lines)
        else:
            raw.writelines(lines)
    return path
