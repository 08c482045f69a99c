"""Limits on one query: the memory it may take, and the time (``query`` and ``serve``).

Each query runs in a process of its own, its data segment capped with ``RLIMIT_DATA`` (not
``RLIMIT_AS``: RocksDB reserves address space); docs/queries.md ("Memory limits") says why.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import re
import signal
import sys
import tempfile
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import IO, Any

from .damage import damage_found
from .errors import HcgraphError, QueryError

__all__ = [
    "DEFAULT_SHARE",
    "MIN_QUERY_MEMORY",
    "default_query_memory",
    "describe_size",
    "died_of_memory",
    "exceeded_message",
    "limit_memory",
    "parse_memory",
    "physical_memory",
    "run_limited",
]

#: The share of the machine's memory all query processes together may take by default.
DEFAULT_SHARE = 0.5
#: The smallest limit accepted: Python with the store open takes ~100 MB before a query.
MIN_QUERY_MEMORY = 256 << 20

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)
_OOM_MARK = b"memory allocation of"  # Rust's message before it aborts


def parse_memory(text: str) -> int:
    """Bytes from ``2G``, ``512M``, ``1.5GiB``, ``300000000`` (``0``/``off``/``none``: no limit).

    >>> parse_memory("2G"), parse_memory("512m"), parse_memory("off")
    (2147483648, 536870912, 0)

    Raises:
        ValueError: not a size, or a limit under :data:`MIN_QUERY_MEMORY`.
    """
    if text.strip().lower() in {"0", "off", "none"}:
        return 0
    if (match := _SIZE.fullmatch(text)) is None:
        raise ValueError(f"{text!r} is not a size (say 2G, 512M or 0 for no limit)")
    size = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if 0 < size < MIN_QUERY_MEMORY:
        raise ValueError(
            f"{text!r} is less than the {describe_size(MIN_QUERY_MEMORY)} a query process"
            " needs before its query starts"
        )
    return size


def describe_size(size: int) -> str:
    """``2.0 GiB``, ``512 MiB``: a limit as people read it.

    >>> describe_size(2 << 30), describe_size(300 << 20)
    ('2.0 GiB', '300 MiB')
    """
    if size >= 1 << 30:
        return f"{size / (1 << 30):.1f} GiB"
    return f"{size / (1 << 20):.0f} MiB"


def physical_memory() -> int | None:
    """The memory this process may use: the machine's, or its cgroup's limit when lower
    (a container); ``None`` when it cannot be learnt."""
    total: int | None = None
    with contextlib.suppress(ValueError, OSError, AttributeError):
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        with contextlib.suppress(OSError, ValueError):
            text = Path(path).read_text().strip()
            if text != "max" and (total is None or int(text) < total):
                total = int(text)
    return total if total and total > 0 else None


def default_query_memory(processes: int = 1) -> int:
    """Each of ``processes`` query processes' share of :data:`DEFAULT_SHARE` of the memory
    (at least :data:`MIN_QUERY_MEMORY`); 0 (no limit) where the memory is unknown."""
    if (total := physical_memory()) is None:
        return 0
    return max(MIN_QUERY_MEMORY, int(total * DEFAULT_SHARE) // max(1, processes))


def limit_memory(size: int) -> None:
    """Cap this process's data segment at ``size`` bytes (0: leave it); never raises it
    above a lower cap already set. A no-op where ``RLIMIT_DATA`` does not exist."""
    if size <= 0:
        return
    try:
        import resource
    except ImportError:  # not POSIX
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = size if hard == resource.RLIM_INFINITY else min(size, hard)
    if soft == resource.RLIM_INFINITY or soft > cap:
        # OverflowError: a cap past what the OS can hold (99999999G) is no cap at all
        with contextlib.suppress(ValueError, OSError, OverflowError):
            resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))


def exceeded_message(name: str, size: int, option: str = "--query-memory") -> str:
    """The one line for a query stopped at its memory limit (``name``: the query's)."""
    head = f"{name}: " if name else ""
    return (
        f"{head}the query needed more than {describe_size(size)} of memory ({option});"
        f" stopped. Narrow it (a LIMIT, a more selective pattern, fewer rows to sort or"
        f" group), or allow it more with {option}. A light query (a COUNT, an ASK) that runs"
        " out has likely met a damaged table: 'hcgraph check --deep' names it"
    )


def died_of_memory(exitcode: int | None, output: bytes = b"") -> bool:
    """True if a query process that ended without an answer ran out of memory (Oxigraph's
    abort, or an uncaught ``MemoryError`` at the end of ``output``, its stderr)."""
    last = output.strip().splitlines()[-1:]
    return (
        _OOM_MARK in output
        or exitcode == -signal.SIGABRT
        or (bool(last) and last[0].startswith(b"MemoryError"))  # Python's, uncaught
    )


def _child(conn: Connection, err: int, memory: int, target: Callable[..., Any], args: Any) -> None:
    os.dup2(err, 2)  # what Oxigraph prints before it aborts is read by the parent
    limit_memory(memory)
    answer: Any
    try:
        answer = target(*args)
    except HcgraphError as exc:
        answer = exc
    except MemoryError:
        answer = MemoryError()  # without the traceback that holds the memory
    except (RuntimeError, OSError) as exc:  # a damaged table: named as in the CLI's process
        if (damage := damage_found(exc)) is None:
            raise
        answer = damage
    try:
        conn.send(answer)
    except MemoryError:
        conn.send(MemoryError())
    except Exception as exc:  # an error object that does not pickle
        conn.send(QueryError(str(exc)))


def run_limited(
    target: Callable[..., Any],
    *args: Any,
    name: str,
    timeout_s: float | None = None,
    memory: int = 0,
    daemon: bool = True,
) -> Any:
    """``target(*args)`` in a child process with at most ``memory`` bytes of data (0: no cap),
    stopped after ``timeout_s`` seconds (``None``: never); an
    :class:`~hcgraph.errors.HcgraphError` it raises is raised here. ``daemon=False`` lets it
    start processes (they inherit the cap; it is killed all the same when the call ends early).

    Raises:
        QueryError: the time ran out (the child is killed), the query needed more memory,
            or the child ended without an answer.
    """
    context: Any = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    )
    receive, send = context.Pipe(duplex=False)
    with tempfile.TemporaryFile() as err:
        child = context.Process(
            target=_child, args=(send, err.fileno(), memory, target, args), daemon=daemon
        )
        child.start()
        send.close()
        try:
            if not receive.poll(timeout_s):
                raise QueryError(
                    f"{name}: the query did not finish within {timeout_s:g} s (--timeout-s);"
                    " stopped"
                )
            try:
                answer = receive.recv()
            except EOFError:
                child.join()
                answer = _ended(name, child.exitcode, _stderr(err, 1 << 16), memory)
        finally:
            if child.is_alive():
                child.kill()
            child.join()
            receive.close()
        if not isinstance(answer, BaseException) and (data := _stderr(err)):
            sys.stderr.write(data.decode("utf-8", "replace"))  # a warning the child printed
            sys.stderr.flush()
    if isinstance(answer, MemoryError):
        raise QueryError(exceeded_message(name, memory))
    if isinstance(answer, BaseException):
        raise answer
    return answer


def _ended(name: str, exitcode: int | None, output: bytes, memory: int) -> Any:
    """What a child that sent no answer stands for: out of memory, or died."""
    if memory and died_of_memory(exitcode, output):
        return MemoryError()
    last = output.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {exitcode}"]
    return QueryError(f"{name}: the query process ended without an answer ({last[0]})")


def _stderr(err: IO[bytes], tail: int | None = None) -> bytes:
    """What the child wrote to its stderr (only the last ``tail`` bytes, if given)."""
    with contextlib.suppress(OSError):
        end = err.seek(0, os.SEEK_END)
        err.seek(0 if tail is None else max(0, end - tail))
        return err.read()
    return b""
