"""The raw archive: every body the crawler fetched, content-addressed, with fetch metadata.

The source of truth for the graph: ``hcgraph rebuild`` recreates the store from it with no
network. Append-only pack files under ``STORE/archive/packs/``, one entry a body (stored once,
named by its SHA-256) or a fetch record (with its sort key), each one ``writev`` on an
``O_APPEND`` file; docs/crawling.md ("The raw archive") gives the entry format and what
reading does with what a crash or a full disk leaves (a torn tail, zeros, a cut-back pack).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from . import _io
from .errors import ArchiveError, OutputError

__all__ = ["PACK_LIMIT", "Archive", "FetchRecord"]

#: A pack grows to about this many bytes before the next write starts a new one.
PACK_LIMIT = 256 * 1024 * 1024
_MAGIC = b"HCA1"
_HEADER_MAX = 256  # a header is ~100 bytes; anything longer is not a header
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class FetchRecord:
    """Metadata of one fetch (or local file read by a crawl): ``url`` is the URL asked for,
    ``final_url`` the one after redirects, ``fetch_url`` where the bytes came from (a
    mirror, or ``url``); ``status`` is None for a network failure or a file."""

    url: str
    final_url: str
    fetch_url: str
    status: int | None
    fetched_at: str
    sha256: str | None = None
    size: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    etag: str | None = None
    last_modified: str | None = None
    error: str | None = None
    attempts: int = 1
    redirects: list[str] = field(default_factory=list)

    @property
    def time(self) -> dt.datetime:
        """``fetched_at`` as an aware datetime."""
        return dt.datetime.fromisoformat(self.fetched_at)

    @property
    def sort_key(self) -> str:
        """``TIME-URLHASH`` (UTC microseconds, 12 hex of the URL's SHA-256): read order."""
        stamp = self.time.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        return f"{stamp}-{hashlib.sha256(self.url.encode()).hexdigest()[:12]}"

    def to_json(self) -> bytes:
        """The record as sorted, UTF-8 JSON (without ``asdict``'s deep copy)."""
        fields = {name: getattr(self, name) for name in self.__dataclass_fields__}
        return json.dumps(fields, sort_keys=True, ensure_ascii=False).encode()

    @classmethod
    def from_json(cls, data: bytes) -> FetchRecord:
        """Parse a record (unknown keys from newer versions are ignored)."""
        raw: dict[str, Any] = json.loads(data)
        return cls(**{k: v for k, v in raw.items() if k in cls.__dataclass_fields__})


class _Entry(NamedTuple):
    """Where one entry's payload lies in a pack."""

    pack: Path
    offset: int
    length: int
    sha256: str
    key: str  # a record's sort key; "-" for a body


def _scan(pack: Path) -> Iterator[tuple[bytes, _Entry]]:
    """The entries of one pack, by their headers only (kind, where), up to a torn tail;
    zeros (a power cut) are passed over to the next header."""
    try:
        handle = pack.open("rb")
    except OSError:
        return
    with handle:
        size = os.fstat(handle.fileno()).st_size
        start, lost = 0, False  # lost: looking for the next header after zeros
        while start < size:
            handle.seek(start)
            line = handle.readline(_HEADER_MAX)
            if start == 0:
                _refuse_newer(pack, line)
            entry = _header(pack, line, start, size)
            if entry is not None:
                kind, found = entry
                handle.seek(found.offset + found.length)
                end = handle.read(1)
                if end in (b"\n", b"\0"):  # zeros: a damaged payload, found by its hash
                    yield kind, found
                    start, lost = found.offset + found.length + 1, False
                    continue
            if not lost and b"\0" not in line:
                return  # the end, or a torn tail
            start, lost = _next_header(handle, start + 1, size), True


def _refuse_newer(pack: Path, line: bytes) -> None:
    """Raise if the pack's first header is a newer format's (``HCA2 …``), not a torn pack."""
    magic = line.split(b" ", 1)[0]
    if magic[:3] == _MAGIC[:3] and magic[3:].isdigit() and magic != _MAGIC:
        raise ArchiveError(
            f"{pack}: pack format {magic.decode()}, written by a newer hcgraph; this hcgraph "
            f"reads {_MAGIC.decode()}: upgrade hcgraph to read this archive"
        )


def _header(pack: Path, line: bytes, start: int, size: int) -> tuple[bytes, _Entry] | None:
    """The entry whose header is ``line`` (at ``start``), if it is one that fits the pack."""
    parts = line.split()
    if b"\0" in line or len(parts) != 6 or parts[0] != _MAGIC or parts[1] not in (b"B", b"R"):
        return None
    try:
        length, at = int(parts[3]), int(parts[5])
        sha, key = parts[2].decode("ascii"), parts[4].decode("ascii")
    except ValueError:
        return None
    offset = start + len(line)
    if at != start or length < 0 or len(sha) != 64 or offset + length + 1 > size:
        return None  # a payload cut short
    return parts[1], _Entry(pack, offset, length, sha, key)


def _next_header(handle: BinaryIO, start: int, size: int) -> int:
    """Where the next line starting with the magic begins at or after ``start`` (or ``size``)."""
    needle, chunk = b"\n" + _MAGIC + b" ", 1 << 20
    at = start - 1
    while at < size:
        handle.seek(at)
        data = handle.read(chunk + len(needle))
        found = data.find(needle)
        if found >= 0:
            return at + found + 1
        at += chunk
    return size


class Archive:
    """A raw archive directory (created on first write): one writer at a time, readers
    beside it; thread-safe within one process."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.packs = self.directory / "packs"
        self._lock = threading.Lock()
        self._index: dict[str, _Entry] | None = None  # body SHA-256 → its newest copy
        self._fd: int | None = None  # the pack being written
        self._pack: Path | None = None
        self._end = 0  # where the next entry goes in it
        self._unsynced: list[int] = []  # descriptors of packs closed since the last sync
        self._new_pack = False  # a pack was created since the last sync: its name too
        self._kept: set[str] = set()  # bodies put again but already here: sync their files

    # --- writing ----------------------------------------------------------------------------
    def put_body(self, data: bytes) -> str:
        """Store a body (once, or again if its copy no longer matches its hash); return its
        SHA-256.

        Raises:
            OutputError: the archive cannot be written.
        """
        sha = hashlib.sha256(data).hexdigest()
        with self._lock:
            copy = self._index_of().get(sha)
            if copy is None or _verified(copy) is None:
                self._index_of()[sha] = self._append(b"B", sha, data, "-")
            else:
                self._kept.add(sha)
        return sha

    def add_record(self, record: FetchRecord) -> str:
        """Append one fetch record; return its sort key.

        Raises:
            OutputError: the archive cannot be written.
        """
        data, key = record.to_json(), record.sort_key
        with self._lock:
            self._append(b"R", hashlib.sha256(data).hexdigest(), data, key)
        return key

    def close(self) -> None:
        """Close the pack being written (the next write opens a new one); no sync."""
        with self._lock:
            self._close_pack()
            fds, self._unsynced = self._unsynced, []
        for fd in fds:
            os.close(fd)

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _append(self, kind: bytes, sha: str, data: bytes, key: str) -> _Entry:
        if self._fd is None or self._end >= PACK_LIMIT:
            self._open_pack()
        assert self._fd is not None and self._pack is not None
        fields = (kind, sha.encode(), len(data), key.encode(), self._end)
        header = _MAGIC + b" %s %s %d %s %d\n" % fields
        want = len(header) + len(data) + 1
        try:
            written = os.writev(self._fd, [header, data, b"\n"])
            if written != want:
                raise OSError(28, "short write (disk full?)")
        except OSError as exc:
            self._fail(exc)
        entry = _Entry(self._pack, self._end + len(header), len(data), sha, key)
        self._end += want
        return entry

    def _open_pack(self) -> None:
        self._close_pack()
        _io.ensure_dir(self.packs)
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | _CLOEXEC
        for n in range(1, 1000):
            suffix = "" if n == 1 else f"-{n}"
            path = self.packs / f"{stamp}-{os.getpid()}{suffix}.pack"
            try:
                self._fd = os.open(path, flags, 0o666)  # less the umask
            except FileExistsError:
                continue
            except OSError as exc:
                raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
            self._pack, self._end, self._new_pack = path, 0, True
            return
        raise OutputError(f"{self.packs}: cannot create a new pack file")

    def _fail(self, exc: OSError) -> None:
        """Cut the pack back to its last whole entry and close it; raise ``OutputError``."""
        assert self._fd is not None
        path = self._pack
        with contextlib.suppress(OSError):  # if this fails too, reading stops at the tear
            os.ftruncate(self._fd, self._end)
        empty = self._end == 0
        self._close_pack()
        if empty and path is not None:  # else every retry on a full disk leaves one behind
            path.unlink(missing_ok=True)
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None

    def _close_pack(self) -> None:
        if self._fd is not None:
            fd, self._fd, self._pack = self._fd, None, None
            self._unsynced.append(fd)  # closed by the next sync() or close()

    def sync(self, bodies: Iterable[str] = ()) -> None:
        """Flush what was written so far to disk (``fdatasync``), and the files of ``bodies``
        (SHA-256s of bodies written before this object was made); writes go on meanwhile.

        Raises:
            OutputError: the disk refused (the data may not be on it).
        """
        with self._lock:
            fds, older, new_pack = self._take_unsynced(bodies)
        try:
            _fdatasync(fds, older)
        except OSError as exc:
            with self._lock:
                self._new_pack = self._new_pack or new_pack
            raise OutputError(f"{self.packs}: cannot sync: {exc.strerror or exc}") from None
        if new_pack:  # its name in packs/, and packs/ itself the first time
            _io.sync_dir(self.packs)
            _io.sync_dir(self.directory)

    def _take_unsynced(self, bodies: Iterable[str]) -> tuple[list[int], set[Path], bool]:
        """What :meth:`sync` flushes (lock held): descriptors written since the last sync,
        the other packs holding ``bodies``, and whether a pack is new."""
        bodies = {*bodies, *self._kept}
        index = self._index_of() if bodies else {}
        older = {index[sha].pack for sha in bodies if sha in index}
        if self._pack is not None:
            older.discard(self._pack)
        try:
            current = [] if self._fd is None else [os.dup(self._fd)]
        except OSError as exc:  # the closed packs stay listed: synced or closed later
            raise OutputError(f"{self.packs}: cannot sync: {exc.strerror or exc}") from None
        fds, self._unsynced, self._kept = [*self._unsynced, *current], [], set()
        new_pack, self._new_pack = self._new_pack, False
        return fds, older, new_pack

    # --- reading ----------------------------------------------------------------------------
    def has_body(self, sha256: str) -> bool:
        """True if the body is in the archive."""
        with self._lock:
            return sha256 in self._index_of()

    def intact_body(self, sha256: str) -> bytes | None:
        """The body if it is here and still matches its hash, else None (no rescan)."""
        if not self.has_body(sha256):
            return None
        try:
            return self.get_body(sha256)
        except ArchiveError:
            return None

    def get_body(self, sha256: str) -> bytes:
        """The body with this SHA-256.

        Raises:
            ArchiveError: it is not in the archive (or its bytes no longer match the hash).
        """
        with self._lock:
            entry = self._index_of().get(sha256)
            if entry is None:
                self._index = None  # perhaps written since, by another writer: look again
                entry = self._index_of().get(sha256)
        try:
            if entry is None:
                raise OSError(2, "not in any pack")
            data = _read(entry)
        except OSError as exc:
            missing = f"archive {self.directory}: body {sha256} missing: {exc.strerror}"
            raise ArchiveError(missing) from None
        if hashlib.sha256(data).hexdigest() != sha256:
            good = self._other_copy(sha256, entry) if entry is not None else None
            if good is None:
                raise ArchiveError(f"archive {self.directory}: body {sha256} is corrupt")
            data = good
        return data

    def _other_copy(self, sha256: str, bad: _Entry) -> bytes | None:
        """An intact copy of a body besides ``bad`` (the wall clock may have been set back)."""
        for entry in self._entries(b"B"):
            data = _verified(entry) if entry.sha256 == sha256 and entry != bad else None
            if data is not None:
                with self._lock:
                    self._index_of()[sha256] = entry
                return data
        return None

    def records(self) -> Iterator[FetchRecord]:
        """Every readable fetch record, oldest first, each once (a pack restored from a
        backup holds them twice: a 404 read twice would withdraw)."""
        key, read = "", set[str]()  # the records of the current sort key already read
        # stable: one key twice keeps the order written
        for item in sorted(self._entries(b"R"), key=lambda f: f.key):
            if item.key != key:
                key, read = item.key, set()
            if item.sha256 in read:
                continue
            try:
                data = _read(item)
                if hashlib.sha256(data).hexdigest() == item.sha256:
                    record = FetchRecord.from_json(data)
                    read.add(item.sha256)  # a damaged first copy leaves the second to read
                    yield record
            except (OSError, ValueError, TypeError):
                continue

    def exists(self) -> bool:
        """True if anything was ever written here."""
        return self.packs.is_dir()

    def _entries(self, kind: bytes) -> Iterator[_Entry]:
        """The entries of one kind (``B`` bodies, ``R`` records), in the order written."""
        packs = sorted(self.packs.glob("*.pack"), key=_pack_order) if self.exists() else []
        for path in packs:
            yield from (entry for found, entry in _scan(path) if found == kind)

    def _index_of(self) -> dict[str, _Entry]:
        """The body index, built on first use (lock held); a later copy wins."""
        if self._index is None:
            self._index = {entry.sha256: entry for entry in self._entries(b"B")}
        return self._index


def _fdatasync(fds: list[int], older: Iterable[Path]) -> None:
    """``fdatasync`` each descriptor and each file of ``older``; every descriptor is closed."""
    try:
        for path in older:
            with contextlib.suppress(FileNotFoundError):  # an old body not there: no data
                fds.append(os.open(path, os.O_RDONLY | _CLOEXEC))
        for fd in fds:
            os.fdatasync(fd)
    finally:
        for fd in fds:  # every one, even if closing one fails
            with contextlib.suppress(OSError):
                os.close(fd)


def _pack_order(path: Path) -> tuple[str, str, int]:
    """A pack's place in creation order: ``STAMP-PID.pack`` before ``STAMP-PID-N.pack``."""
    stamp, _, rest = path.stem.partition("-")
    pid, _, n = rest.partition("-")
    return stamp, pid, int(n) if n.isdecimal() else 1


def _verified(entry: _Entry) -> bytes | None:
    """The entry's payload if it reads back matching its hash, else None."""
    try:
        data = _read(entry)
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == entry.sha256 else None


def _read(entry: _Entry) -> bytes:
    fd = os.open(entry.pack, os.O_RDONLY | _CLOEXEC)
    try:
        data = os.pread(fd, entry.length, entry.offset)
    finally:
        os.close(fd)
    if len(data) != entry.length:
        raise OSError(5, "pack cut short")
    return data
