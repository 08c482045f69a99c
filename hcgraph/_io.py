"""Writing output files: the one atomic, durable "write a temp file, then rename" helper.

Every file hcgraph writes goes through :func:`atomic_writer`: whole new file or the old one,
never torn; an :class:`OSError` becomes one :class:`~hcgraph.errors.OutputError` naming the
path. Symlinks, devices, FIFOs and ``/dev/stdout``: docs/security.md ("Files").
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TextIO

from .errors import OutputError

__all__ = [
    "NotRegular",
    "atomic_text_writer",
    "atomic_writer",
    "ensure_dir",
    "read_at_most",
    "read_regular",
    "sync_dir",
    "write_atomic",
]


_READ_PIECE = 1024 * 1024


def read_at_most(handle: BinaryIO, limit: int) -> bytes:
    """Up to ``limit`` bytes from ``handle``, read in pieces of at most 1 MiB (memory follows
    the bytes read: ``handle.read(limit)`` allocates ``limit`` up front)."""
    pieces: list[bytes] = []
    left = limit
    while left > 0 and (piece := handle.read(min(left, _READ_PIECE))):
        pieces.append(piece)
        left -= len(piece)
    return b"".join(pieces)


class NotRegular(ValueError):
    """A path that is no regular file: not read (the message says what it is)."""


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def _check_regular(mode: int) -> None:
    """Refuse anything but a regular file (a FIFO may block forever, a device never end)."""
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "no regular file")
        raise NotRegular(f"not a regular file ({kind}): not read")


def read_regular(path: Path, limit: int) -> bytes:
    """Up to ``limit`` bytes of the regular file ``path`` (:class:`NotRegular` otherwise;
    :class:`OSError` as raised). The input files of ingest and of a crawl's local seeds."""
    _check_regular(path.stat().st_mode)  # before opening: opening a FIFO blocks
    # Non-blocking open, then checked again: a FIFO swapped in after the stat cannot block.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        _check_regular(os.fstat(fd).st_mode)
        os.set_blocking(fd, True)
        return read_at_most(handle, limit)  # the size on disk may change; never past it


def ensure_dir(path: Path) -> None:
    """Create a directory and its parents (:class:`OutputError` if it cannot be)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{path}: cannot create directory: {_why(exc)}") from None


@contextlib.contextmanager
def atomic_writer(
    path: Path | str, *, private: bool = False, durable: bool = True
) -> Iterator[BinaryIO]:
    """Open a temporary file beside ``path`` (parents created); on a clean exit it replaces
    ``path``, else :class:`OutputError` and ``path`` as it was. ``private``: mode ``0600``
    (secrets); ``durable``: fsync file and directory (off only for reports a rerun rewrites).
    """
    target = Path(path)
    fd = _own_descriptor(target)
    dest, straight = _destination(target)
    if fd is not None or straight:  # a device, FIFO or stdout: a rename would replace it
        yield from _write_through(target, fd)
        return
    mode = 0o600 if private else 0o666
    try:
        try:
            fd, tmp = _temp_beside(dest, mode)
        except FileNotFoundError:  # the directory is missing: make it (only then: a crawl
            ensure_dir(dest.parent)  # writes thousands of files into existing folders)
            fd, tmp = _temp_beside(dest, mode)
    except OSError as exc:
        raise OutputError(f"{target}: cannot write: {_why(exc)}") from None
    try:
        with os.fdopen(fd, "wb") as raw:
            yield raw
            raw.flush()
            if durable:
                os.fsync(raw.fileno())
        os.replace(tmp, dest)
        if durable:
            sync_dir(dest.parent)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"{target}: cannot write: {_why(exc)}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_text_writer(path: Path | str) -> Iterator[TextIO]:
    """:func:`atomic_writer` in UTF-8 text mode (newlines written exactly as given)."""
    with atomic_writer(path) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
        yield text
        text.flush()
        text.detach()


def write_atomic(
    path: Path | str, data: bytes, *, private: bool = False, durable: bool = True
) -> None:
    """Write ``data`` to ``path`` with :func:`atomic_writer` (all or nothing)."""
    with atomic_writer(path, private=private, durable=durable) as handle:
        handle.write(data)


def _destination(target: Path) -> tuple[Path, bool]:
    """Where :func:`atomic_writer` puts the file: ``(path, straight)``, ``straight`` for an
    existing device or FIFO (written as it is). A symlink is resolved, so the rename keeps
    the link; a directory stays the target (the rename fails and says so)."""
    with contextlib.suppress(OSError):
        mode = os.stat(target).st_mode  # follows symlinks
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            return target, True
    if os.path.islink(target):
        return Path(os.path.realpath(target)), False
    return target, False


#: Names of this process's own descriptors (``/dev/stdout`` links to ``/proc/self/fd/1``).
_OWN_FD = re.compile(r"/(?:dev/fd|proc/self/fd)/(\d+)")
_STD_NAMES = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def _own_descriptor(target: Path) -> int | None:
    """The descriptor ``target`` names if it is one of this process's own (``/dev/stdout``,
    ``/dev/fd/N``, or a link chain to one), else ``None``: writing to a copy of it writes
    where the shell meant (renaming over it or opening it would clobber ``>> log``)."""
    name = os.path.abspath(target)
    for _ in range(40):  # the kernel's own limit on a chain of links
        if name in _STD_NAMES:
            return _STD_NAMES[name]
        match = _OWN_FD.fullmatch(name)
        if match:
            return int(match.group(1))
        if not os.path.islink(name):
            return None
        name = os.path.normpath(os.path.join(os.path.dirname(name), os.readlink(name)))
    return None


def _write_through(target: Path, fd: int | None = None) -> Iterator[BinaryIO]:
    """Write straight into an existing device or FIFO, or into a copy of descriptor ``fd``
    (no temporary file, no rename)."""
    try:
        with os.fdopen(os.dup(fd), "wb") if fd is not None else open(target, "wb") as raw:
            yield raw
            raw.flush()
    except OSError as exc:
        raise OutputError(f"{target}: cannot write: {_why(exc)}") from None


def _temp_beside(target: Path, mode: int) -> tuple[int, str]:
    """A new temporary file beside ``target``, created with ``mode`` less the umask (a
    random name, ``O_EXCL``: never an existing file or link)."""
    tmp = str(target.parent / f".{target.name}.{secrets.token_hex(8)}.tmp")
    return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), tmp


def sync_dir(directory: Path) -> None:
    """``fsync`` a directory, so the names created in it survive a power cut (best effort)."""
    with contextlib.suppress(OSError):  # not every filesystem lets a directory be fsync-ed
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)
