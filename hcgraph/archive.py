"""The raw archive: every body the crawler fetched, content-addressed, with fetch metadata.

The archive is the source of truth for the graph: ``hcgraph rebuild`` recreates the store from
it with no network, so a changed mapping never needs a re-crawl. Layout (under the store
directory)::

    STORE/archive/
      bodies/ab/abcdef…            the body bytes (after Content-Encoding), named by SHA-256
      records/2026-11-29/20261129T231700.123456Z-<12 hex of sha256(url)>.json
                                   one metadata record per fetch (see FetchRecord)

Bodies are written once (same bytes, same file); records are never changed. Both are created
once under their final name (:func:`hcgraph._io.write_new`; a temporary file and a rename
cost ~4x the write here, two files per fetch). A crash mid-write (even SIGKILL) can leave a
torn file, and that is safe: a torn body is found by its SHA-256 (on read, and by the next
fetch of the same bytes, which writes it again) and no record names it, since a fetch's
record is written after its body; a torn record does not parse and is skipped, so that
fetch is made again. Record names sort by fetch time.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import _io
from .errors import CrawlError

__all__ = ["Archive", "FetchRecord", "write_atomic"]


@dataclass(frozen=True)
class FetchRecord:
    """Metadata of one fetch (or of one local file read by a crawl).

    Attributes:
        url: the logical URL asked for (the original site's, even when fetched from a mirror).
        final_url: the logical URL of the last response, after redirects.
        fetch_url: where the bytes were really fetched from (a mirror URL, or ``url``).
        status: HTTP status of the last response; ``None`` for a network failure or a file.
        fetched_at: when the response ended (UTC, ISO 8601).
        sha256: SHA-256 of the body in ``bodies/``; ``None`` when there was no body. For a
            304 it is the earlier body the server confirmed unchanged.
        size: body length in bytes.
        headers: selected response headers (content-type, etag, last-modified, …).
        etag / last_modified: the validators sent back on the next crawl.
        error: why the fetch failed, if it did.
        attempts: requests made (retries included).
        redirects: logical URLs passed through.
    """

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

    def to_json(self) -> bytes:
        """The record as sorted, UTF-8 JSON."""
        return json.dumps(asdict(self), sort_keys=True, ensure_ascii=False).encode()

    @classmethod
    def from_json(cls, data: bytes) -> FetchRecord:
        """Parse a record (unknown keys from newer versions are ignored)."""
        raw: dict[str, Any] = json.loads(data)
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in raw.items() if k in known})


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file and a rename (all or nothing), not
    fsync-ed: for reports (the crawl report, the audit page), which running the command
    again writes again if a power cut loses them.
    """
    _io.write_atomic(path, data, durable=False)


class Archive:
    """A raw archive directory (created on first write)."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.bodies = self.directory / "bodies"
        self.records_dir = self.directory / "records"

    def body_path(self, sha256: str) -> Path:
        """Where the body with this SHA-256 lives."""
        return self.bodies / sha256[:2] / sha256

    def put_body(self, data: bytes) -> str:
        """Store a body (once per distinct content); return its SHA-256.

        Written once under its final name (:func:`hcgraph._io.write_new`): a copy torn by a
        crash is found by its hash here and by :meth:`get_body`, and written again here.
        """
        sha = hashlib.sha256(data).hexdigest()
        path = self.body_path(sha)
        try:
            _io.write_new(path, data)
        except FileExistsError:
            if not self._intact(path, sha):  # torn by a crash mid-write: write it again
                path.unlink(missing_ok=True)
                _io.write_new(path, data)
        return sha

    @staticmethod
    def _intact(path: Path, sha256: str) -> bool:
        try:
            return hashlib.sha256(path.read_bytes()).hexdigest() == sha256
        except OSError:
            return False

    def has_body(self, sha256: str) -> bool:
        """True if the body is in the archive."""
        return self.body_path(sha256).is_file()

    def get_body(self, sha256: str) -> bytes:
        """The body with this SHA-256.

        Raises:
            CrawlError: it is not in the archive (or its bytes no longer match the hash).
        """
        try:
            data = self.body_path(sha256).read_bytes()
        except OSError as exc:
            raise CrawlError(
                f"archive {self.directory}: body {sha256} missing: {exc.strerror}"
            ) from None
        if hashlib.sha256(data).hexdigest() != sha256:
            raise CrawlError(f"archive {self.directory}: body {sha256} is corrupt")
        return data

    def add_record(self, record: FetchRecord) -> Path:
        """Write one fetch record; return its path."""
        when = record.time.astimezone(dt.UTC)
        url_hash = hashlib.sha256(record.url.encode()).hexdigest()[:12]
        stamp = when.strftime("%Y%m%dT%H%M%S.%fZ")
        path = self.records_dir / when.strftime("%Y-%m-%d") / f"{stamp}-{url_hash}.json"
        data, n = record.to_json(), 1
        while True:
            try:
                _io.write_new(path, data)
                return path
            except FileExistsError:  # the same URL twice in one microsecond: keep both
                n += 1
                path = path.with_name(f"{stamp}-{url_hash}-{n}.json")

    def records(self) -> Iterator[FetchRecord]:
        """Every fetch record, oldest first. Unreadable records are skipped."""
        if not self.records_dir.is_dir():
            return
        for day in sorted(p for p in self.records_dir.iterdir() if p.is_dir()):
            for path in sorted(day.glob("*.json")):
                try:
                    yield FetchRecord.from_json(path.read_bytes())
                except (OSError, ValueError, TypeError):
                    continue

    def exists(self) -> bool:
        """True if any record was ever written here."""
        return self.records_dir.is_dir()
