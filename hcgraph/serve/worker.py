"""The query worker: one process holding the store open read-only, one query at a time.

A worker reads queries from its stdin (a 4-byte big-endian length, then the Accept
header (latin-1), a newline, the query (UTF-8); a batch of them comes in one write: the
worker reads all there are, looks once whether the store changed, and answers them) and
writes each answer on its stdout as frames, in order: one type byte, a 4-byte big-endian
length, the payload. An answer is one ``W`` frame (whole: a small answer), or ``S``
(start), ``D`` (data)..., ``E`` (end, the last data); ``W`` and ``S`` begin with the
answer's head, ``STATUS MEDIA-TYPE\n``. ``X`` aborts a half-sent answer; ``K`` answers a
query skipped: the server took it back (its number, counted from 1, is within the skip
flag's range, two 8-byte little-endian numbers in memory both map). Its first frame is ``R`` (the
store is open) or ``X`` (why not). It runs under its memory limit
(:func:`hcgraph.limits.limit_memory`) and names damage met in the store as the CLI does.
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Protocol

from ..damage import damage_message, is_damage
from ..errors import first_line
from ..limits import exceeded_message, limit_memory
from ..rdftext import XML_FORBIDDEN_UTF8
from .endpoint import GRAPH_TYPES, SOLUTION_TYPES, negotiate

CHUNK = 64 * 1024
READY, START, DATA, END, ABORT, WHOLE = b"R", b"S", b"D", b"E", b"X", b"W"
SKIPPED = b"K"
_JSON = SOLUTION_TYPES[0]
_JSON_HEAD = b"200 %s\n" % _JSON[0].encode()
_TRUE, _FALSE = b'{"head":{},"boolean":true}', b'{"head":{},"boolean":false}'


class Sink(Protocol):
    """Where frames go: :class:`Answers` (the pipe), or any binary file."""

    def write(self, data: bytes, /) -> int: ...


def start_worker(
    db_path: Path, query_memory: int = 0, skip_fd: int = -1
) -> subprocess.Popen[bytes]:
    """Start a query worker process on the database at ``db_path``, its data limited to
    ``query_memory`` bytes (0: no limit), reading its skip flag from the shared memory
    ``skip_fd`` (-1: none) (raises OSError)."""
    return subprocess.Popen(
        [sys.executable, "-c", "from hcgraph.serve.worker import main; main()", str(db_path),
         str(query_memory), str(skip_fd)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        pass_fds=(skip_fd,) if skip_fd >= 0 else (),
    )  # fmt: skip


def memory_message(limit: int) -> str:
    """The answer to a query that needed more memory than ``limit``."""
    return exceeded_message("", limit, "hcgraph serve --query-memory")


def damaged(db_path: str, exc: BaseException) -> str:
    """The line the CLI gives for a damaged store (:mod:`hcgraph.damage`), for an answer."""
    return damage_message(Path(db_path).parent, exc)


def _memory_limit() -> int:
    return int(sys.argv[2]) if len(sys.argv) > 2 else 0


def _skip_flag() -> mmap.mmap | None:
    fd = int(sys.argv[3]) if len(sys.argv) > 3 else -1
    return None if fd < 0 else mmap.mmap(fd, mmap.PAGESIZE, access=mmap.ACCESS_READ)


def main() -> None:
    """A query worker (``python -c ... DB_PATH [QUERY_MEMORY [SKIP_FD]]``): answers one
    query at a time from stdin on stdout (frames, held by :class:`Answers`) until stdin
    closes. Ctrl-C is the server's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    out = Answers(os.dup(1))
    os.dup2(2, 1)  # a stray print cannot corrupt the frames
    db_path = sys.argv[1]
    limit_memory(_memory_limit())
    try:
        db = Database(db_path)
    except (OSError, RuntimeError) as exc:  # RuntimeError: the engine's "Corruption: …"
        why = f"{db_path}: cannot open the store: {first_line(exc)}"
        frame(out, ABORT, (damaged(db_path, exc) if is_damage(exc) else why).encode())
        out.flush()
        return
    frame(out, READY)
    out.flush()
    skip, number, pending, store = _skip_flag(), 0, bytearray(), None
    try:
        while (batch := read_batch(0, pending)) is not None:
            if (fresh := db.fresh()) is not store:  # every query of the batch came before
                out.quick.clear()  # quick on other data says nothing of this store
                store = fresh
            for message in batch:
                number += 1
                if skip is not None and skipped(skip, number):
                    frame(out, SKIPPED)  # taken back by the server: another worker runs it
                    continue
                accept, _, query = message.partition(b"\n")
                out.before(query)
                evaluate(db, query.decode("utf-8", "surrogatepass"), accept.decode("latin-1"),
                         out, store)  # fmt: skip
                out.after(query)
            out.flush()
    except BrokenPipeError:
        return


class Answers:
    """The worker's answer pipe: frames are gathered and written together, at the end of
    a batch, at ``CHUNK`` bytes, and before any query not known to be quick (one that ran
    under ``QUICK_S`` the last time this worker ran it): an answer waits behind quick
    queries only (``HOLD_S`` at most), never behind one that may run long, so the
    server's deadlines and its giving back of a slow query's batch see what they saw
    with an answer written as it ended."""

    QUICK_S = 0.002
    HOLD_S = 0.002
    KNOWN = 1024  # query texts remembered as quick, at most
    LONGEST = 4096  # bytes of a query text remembered, at most

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.since = 0.0  # when the oldest answer held was written
        self.quick: set[bytes] = set()
        self.started = 0.0

    def write(self, data: bytes) -> int:
        if not self.buffer:
            self.since = time.monotonic()
        self.buffer += data
        if len(self.buffer) >= CHUNK:
            self.flush()
        return len(data)

    def flush(self) -> None:
        view = memoryview(self.buffer)
        try:
            while view:
                view = view[os.write(self.fd, view) :]
        finally:
            view.release()
            self.buffer.clear()

    def before(self, query: bytes) -> None:
        """A query starts: what is held goes out first unless the query is known quick
        and what is held is fresh."""
        now = self.started = time.monotonic()
        if self.buffer and (query not in self.quick or now - self.since >= self.HOLD_S):
            self.flush()

    def after(self, query: bytes) -> None:
        """A query ended: remember whether it was quick."""
        if time.monotonic() - self.started < self.QUICK_S and len(query) <= self.LONGEST:
            if len(self.quick) >= self.KNOWN:
                self.quick.clear()
            self.quick.add(query)
        else:
            self.quick.discard(query)


def skipped(skip: mmap.mmap, number: int) -> bool:
    """Is query ``number`` within the skip flag's range (taken back by the server)?"""
    return int.from_bytes(skip[:8], "little") <= number <= int.from_bytes(skip[8:16], "little")


def encode_query(query: str, accept: str) -> bytes:
    """A query as the server sends it to a worker (see the module docstring)."""
    data = b"%s\n%s" % (accept.encode("latin-1", "replace"), query.encode("utf-8", "surrogatepass"))
    return len(data).to_bytes(4, "big") + data


def read_batch(fd: int, pending: bytearray) -> list[bytes] | None:
    """The queries sent so far (waiting for one at least), cut from ``pending`` plus what
    one read of ``fd`` brings; None once the server closed the pipe."""
    while True:
        messages, start = [], 0
        while len(pending) - start >= 4:
            end = start + 4 + int.from_bytes(pending[start : start + 4], "big")
            if end > len(pending):
                break
            messages.append(bytes(pending[start + 4 : end]))
            start = end
        del pending[:start]
        if messages:
            return messages
        data = os.read(fd, 1 << 16)
        if not data:
            return None
        pending += data


def evaluate(db: Database, query: str, accept: str, out: Sink, store: Any = None) -> None:
    """Answer one query onto ``out`` (frames), on ``store`` (None: ``db.fresh()``); the
    guard ran in the front, the only way in."""
    result = _run(db, query, out, db.fresh() if store is None else store)
    if result is None or _json_boolean(db, result, accept, out):
        return  # an error answered, or an ASK answered in SPARQL JSON
    chosen = _chosen(db, result, accept, out)
    if chosen is None:
        return
    media, name = chosen
    sink = FrameWriter(out, 200, media + ("; charset=utf-8" if media.startswith("text/") else ""))
    try:
        serialize(db.ox, result, name, sink)
    except (OSError, ValueError, SyntaxError, RuntimeError) as exc:  # errors surface in writing
        _failed(db.path, sink, exc)
        return
    except MemoryError:  # Python's side of the answer; the engine's aborts the worker
        sink.buffer.clear()
        if sink.head is not None:
            refuse(out, 503, memory_message(_memory_limit()))
        else:
            frame(out, ABORT, b"the query needed more memory than its limit")
        return
    sink.end()


def _chosen(db: Database, result: Any, accept: str, out: Sink) -> tuple[str, str] | None:
    """The format (media type, name) the Accept header prefers for ``result``; None once
    a 406 went out instead."""
    offers = GRAPH_TYPES if isinstance(result, db.ox.QueryTriples) else SOLUTION_TYPES
    chosen = negotiate(accept, offers)
    if chosen is None:
        names = ", ".join(dict.fromkeys(m for m, _ in offers))
        refuse(out, 406, f"no result format the Accept header allows; offered: {names}")
    return chosen


def _json_boolean(db: Database, result: Any, accept: str, out: Sink) -> bool:
    """Answer an ASK whose client takes SPARQL JSON with fixed bytes, not the engine's Python
    writer; False if the answer is not one."""
    if isinstance(result, db.ox.QueryBoolean) and negotiate(accept, SOLUTION_TYPES) == _JSON:
        frame(out, WHOLE, _JSON_HEAD + (_TRUE if result else _FALSE))
        return True
    return False


def _run(db: Database, query: str, out: Sink, store: Any) -> Any:
    """The query's result, or None once an error answer went out instead."""
    try:
        return store.query(query, use_default_graph_as_union=True)
    except SyntaxError as exc:
        refuse(out, 400, first_line(exc))
    except (OSError, RuntimeError) as exc:
        if is_damage(exc):
            refuse(out, 500, damaged(db.path, exc))
        elif isinstance(exc, OSError):
            why = "the store could not be read (a write in progress?); retry: "
            refuse(out, 503, why + first_line(exc))
        else:
            raise
    return None


def serialize(ox: Any, result: Any, name: str, sink: FrameWriter) -> None:
    """Write ``result`` to ``sink`` in the format ``name`` (our CSV: see results_csv)."""
    if name == "CSV" and isinstance(result, ox.QuerySolutions):
        from ..results_csv import csv_lines

        variables = [variable.value for variable in result.variables]
        for line in csv_lines(variables, result):
            sink.write(line.encode())
    else:
        graph = isinstance(result, ox.QueryTriples)
        out = XmlChars(sink) if name in ("XML", "RDF_XML") else sink
        result.serialize(out, getattr(ox.RdfFormat if graph else ox.QueryResultsFormat, name))


class XmlChars:
    """A sink for an XML answer (pyoxigraph's XML writers copy every character as it is)
    that stops it (``ValueError``: a 400 if nothing was sent yet, else an aborted answer)
    at a character XML 1.0 cannot carry, as ``hcgraph query --format xml`` refuses it."""

    def __init__(self, sink: FrameWriter) -> None:
        self.sink = sink
        self.tail = b""  # the end of the last write: U+FFFF may be split between two

    def write(self, data: bytes) -> int:
        bad = XML_FORBIDDEN_UTF8.search(self.tail + bytes(data))
        if bad is not None:
            char = f"U+{ord(bad.group().decode('utf-8')):04X}"
            raise ValueError(
                f"the answer holds {char}, which XML 1.0 cannot carry; ask for "
                "application/sparql-results+json (or N-Triples, Turtle for a graph)"
            )
        self.tail = bytes(data[-2:])
        return self.sink.write(data)

    def flush(self) -> None:
        self.sink.flush()


def _failed(db_path: str, sink: FrameWriter, exc: Exception) -> None:
    """An error met while writing the answer: a proper error answer if nothing was sent
    yet (an unexpected engine error is raised), else an ``X`` frame: a half answer must not
    look whole."""
    damage = is_damage(exc)
    line = damaged(db_path, exc) if damage else first_line(exc)
    if sink.head is None:
        frame(sink.out, ABORT, line.encode())
        return
    sink.buffer.clear()
    if isinstance(exc, RuntimeError) and not damage:
        raise exc
    refuse(sink.out, 500 if damage else 503 if isinstance(exc, OSError) else 400, line)


def refuse(out: Sink, status: int, message: str) -> None:
    """A one-line plain-text answer instead of the query's."""
    sink = FrameWriter(out, status, "text/plain; charset=utf-8")
    sink.write((message + "\n").encode())
    sink.end()


class FrameWriter:
    """File-like sink for pyoxigraph's ``serialize``: frames its bytes onto the pipe, 64 KiB
    at a time, the answer's head in the first frame (a whole answer if it is also the last)."""

    def __init__(self, out: Sink, status: int, media: str) -> None:
        self.out = out
        self.head: bytes | None = b"%d %s\n" % (status, media.encode())
        self.buffer = bytearray()

    def write(self, data: bytes) -> int:
        self.buffer += data
        if len(self.buffer) >= CHUNK:
            self._send(DATA if self.head is None else START)
        return len(data)

    def flush(self) -> None:
        pass  # pieces go out at CHUNK bytes or at the end, not at each flush

    def _send(self, kind: bytes) -> None:
        frame(self.out, kind, (self.head or b"") + self.buffer)
        self.head = None
        self.buffer.clear()

    def end(self) -> None:
        self._send(END if self.head is None else WHOLE)


def frame(out: Sink, kind: bytes, payload: bytes = b"") -> None:
    out.write(kind + len(payload).to_bytes(4, "big") + payload)


def die_with_parent() -> None:
    """Linux: the kernel kills this worker when the server process dies (even by SIGKILL)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Database:
    """The worker's read-only view of the store, reopened when a finished write changed it."""

    def __init__(self, path: str) -> None:
        import pyoxigraph as ox

        self.ox = ox
        self.path = path
        self._settle(self._files())
        self.store = ox.Store.read_only(path)
        self.quick: tuple[object, ...] = ()  # the first fresh() scans in full

    def _settle(self, state: tuple[tuple[str, int, int], ...]) -> None:
        """Take ``state`` as the files of the store open now, and the files of it that
        RocksDB appends to in place (the write-ahead ``.log``, ``MANIFEST-``) as those
        :meth:`_quick` looks at."""
        self.state = state
        self.appended = tuple(
            os.path.join(self.path, name)
            for name, _size, _mtime in state
            if name.endswith(".log") or name.startswith("MANIFEST-")
        )

    def _quick(self) -> tuple[object, ...]:
        """What :meth:`fresh` looks at first, in a few ``stat`` calls instead of one per
        file: the directory's mtime (any file created, deleted or renamed: new tables,
        ``CURRENT`` replaced) and the size and mtime of the appended files."""
        found: list[object] = [os.stat(self.path).st_mtime_ns]
        for path in self.appended:
            try:
                stat = os.stat(path)
            except FileNotFoundError:  # deleted since: changed
                found.append(None)
            else:
                found.append((stat.st_size, stat.st_mtime_ns))
        return tuple(found)

    def _files(self) -> tuple[tuple[str, int, int], ...]:
        """Name, size and mtime of the files holding data (not RocksDB's info ``LOG``,
        which every read-only open appends to)."""
        with os.scandir(self.path) as entries:
            return tuple(
                sorted(
                    (e.name, (s := e.stat()).st_size, s.st_mtime_ns)
                    for e in entries
                    if e.name == "CURRENT"
                    or e.name.startswith("MANIFEST-")
                    or e.name.endswith((".sst", ".log", ".blob"))
                )
            )

    def fresh(self) -> Any:
        """The store, reopened first if it changed and no writer holds it now."""
        with contextlib.suppress(OSError):
            quick = self._quick()  # taken before the scan: a later change shows
            if quick == self.quick:
                return self.store  # nothing changed: no full scan
            state = self._files()
            if state != self.state and not writer_holds(os.path.join(self.path, "LOCK")):
                for delay in (0, 0.05, 0.05):  # a compaction may delete a file while we open
                    time.sleep(delay)
                    with contextlib.suppress(OSError):
                        self.store = self.ox.Store.read_only(self.path)
                        self._settle(state)
                        break
            if state == self.state:  # settled (unchanged, or reopened): quick checks again
                self.quick = quick
        return self.store


def writer_holds(lock_path: str) -> bool:
    """True if a process holds the POSIX lock Oxigraph's RocksDB takes on its ``LOCK``
    file (asked with F_GETLK: nothing is taken, a writer starting now is not disturbed).
    Where that cannot be asked (not 64-bit Linux), False: reopen on any change."""
    if not (sys.platform.startswith("linux") and sys.maxsize > 2**32):
        return False
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except OSError:
        return False
    try:
        query = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
        return int(struct.unpack("hhqqi", answer)[0]) != fcntl.F_UNLCK
    except OSError:
        return False
    finally:
        os.close(fd)
