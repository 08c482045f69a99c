"""``hcgraph check --deep``: read every index of the store, to find damage before it is served.

Oxigraph keeps each quad in several RocksDB indexes and a query reads only those it needs
(a damaged ``ospg`` table shows only to a look-up by object); RocksDB checks each block it
reads. pyoxigraph has no whole-index scan, so each index is read through the pattern look-ups
that use it (:data:`INDEXES`), and every read must give the same quads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from .archive import Archive
from .damage import damage_message, is_damage
from .errors import StoreDamagedError, StoreError
from .store import Store

__all__ = ["INDEXES", "DeepReport", "deep_check"]

#: The indexes read, in the order :func:`deep_check` reads them.
INDEXES = ("graphs", "gspo", "gpos", "gosp", "dspo", "dpos", "dosp", "spog", "posg", "ospg")

_DEFAULT = ox.DefaultGraph()
#: An index, the terms to look up, and the look-up reading that index.
_Look = tuple[str, set[Any], Callable[[Any], Iterator[ox.Quad]]]


@dataclass
class DeepReport:
    """What a clean deep check read: named graphs, quads (each index gave all of them), quads
    read through each index (:data:`INDEXES`; ``graphs`` counts graphs), and wall time."""

    store_dir: Path
    graphs: int = 0
    quads: int = 0
    reads: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def summary(self) -> str:
        """One line: what was read, and that it was whole."""
        return (
            f"deep check: read {len(self.reads)} indexes of {self.store_dir} ({self.quads:,}"
            f" quads in {self.graphs:,} graphs, each through every index) in"
            f" {self.seconds:.1f} s: no damage"
        )


class _Damage(Exception):
    """Damage found: ``args`` are where, and the failed read's error or a text."""


def deep_check(store: Store) -> DeepReport:
    """Read every index of ``store`` (an on-disk store, open read-only is enough).

    Raises:
        StoreDamagedError: a table could not be read (named), or the indexes disagree;
            the message says what to do (rebuild from the raw archive, or re-ingest).
        StoreError: ``store`` is an in-memory store.
    """
    if store.directory is None:
        raise StoreError("an in-memory store has no files to check")
    started = time.perf_counter()
    report = DeepReport(store.directory)
    try:
        _read_all(store, report)
    except _Damage as found:
        raise _named(store, found) from None
    report.seconds = time.perf_counter() - started
    return report


def _read_all(store: Store, report: DeepReport) -> None:
    reads = dict.fromkeys(INDEXES, 0)
    seen: tuple[set[Any], set[Any], set[Any]] = (set(), set(), set())  # s, p, o
    with _reading("the graphs index"):
        graphs = [ox.NamedNode(g) for g in store.graph_names()]
    reads["graphs"] = report.graphs = len(graphs)
    targets: list[tuple[ox.NamedNode | ox.DefaultGraph, str, tuple[str, str, str]]] = [
        (g, f"graph <{g.value}>", ("gspo", "gpos", "gosp")) for g in graphs
    ]
    targets.append((_DEFAULT, "the default graph", ("dspo", "dpos", "dosp")))
    for graph, name, indexes in targets:
        _read_graph(store, graph, name, indexes, reads, seen)
    report.quads = reads["gspo"] + reads["dspo"]
    looks: list[_Look] = [
        ("spog", seen[0], lambda t: store.quads(t, None, None, None)),
        ("posg", seen[1], lambda t: store.quads(None, t, None, None)),
        ("ospg", seen[2], lambda t: store.quads(None, None, t, None)),
    ]
    _read_through(looks, reads, "", "gspo and dspo", report.quads, "the store")
    report.reads = reads


def _read_graph(
    store: Store,
    graph: ox.NamedNode | ox.DefaultGraph,
    name: str,
    indexes: tuple[str, str, str],
    reads: dict[str, int],
    seen: tuple[set[Any], set[Any], set[Any]],
) -> None:
    """One graph through its three indexes, adding its terms to ``seen`` (s, p, o)."""
    spo, pos, osp = indexes
    preds: set[Any] = set()
    objs: set[Any] = set()
    count = 0
    with _reading(f"the {spo} index ({name})"):
        for quad in store.quads(graph=graph):
            count += 1
            seen[0].add(quad.subject)
            preds.add(quad.predicate)
            objs.add(quad.object)
    reads[spo] += count
    looks: list[_Look] = [
        (pos, preds, lambda t: store.quads(None, t, None, graph)),
        (osp, objs, lambda t: store.quads(None, None, t, graph)),
    ]
    _read_through(looks, reads, f" ({name})", spo, count, name)
    seen[1].update(preds)
    seen[2].update(objs)


@contextmanager
def _reading(where: str) -> Iterator[None]:
    """A read failure in the block raised as damage found in ``where``."""
    try:
        yield
    except (RuntimeError, OSError) as exc:  # id2str's missing string is no "Corruption"
        raise _Damage(where, exc) from None


def _read_through(
    looks: list[_Look], reads: dict[str, int], where: str, other: str, want: int, name: str
) -> None:
    """Read each index through its look-up of every term: each must give the ``want``
    quads of ``name`` that index ``other`` gave."""
    for index, terms, pattern in looks:
        with _reading(f"the {index} index{where}"):
            got = sum(1 for term in terms for _ in pattern(term))
        if got != want:
            raise _Damage(
                f"the {index} index",
                f"the indexes disagree: {index} holds {got:,} quads of {name} where {other}"
                f" holds {want:,}",
            )
        reads[index] += got


def _named(store: Store, found: _Damage) -> StoreDamagedError:
    """The damage as one line, with what to do (how many stories only the store holds)."""
    assert store.directory is not None
    where, cause = found.args
    if isinstance(cause, BaseException) and not is_damage(cause):
        cause = f"Corruption: {cause}"  # a failed read of a store that opened is damage
    message = damage_message(store.directory, cause, where=where, unarchived=_unarchived(store))
    return StoreDamagedError(message)


def _unarchived(store: Store) -> int | None:
    """Stories the store holds whose raw bytes its archive lacks; ``None`` when the damage
    keeps them from being listed (or there is no archive)."""
    assert store.directory is not None
    archive = Archive(store.directory / "archive")
    if not archive.exists():
        return None
    try:
        shas = [store.raw_sha256(story) for story in store.story_graphs()]
        return sum(1 for sha in shas if sha is None or not archive.has_body(sha))
    except (RuntimeError, OSError, StoreError):
        return None
