"""The raw archive: bodies by SHA-256 and fetch records, written without a rename."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from hcgraph.archive import Archive, FetchRecord
from hcgraph.errors import CrawlError, OutputError

BODY = b'{"schema": "hangingcontext.desk/1", "headline": "caf\xc3\xa9"}' * 50


def _record(url: str = "https://s.example/a/index.json") -> FetchRecord:
    return FetchRecord(url, url, url, 200, "2026-11-30T20:00:00.123456+00:00", "0" * 64, 3)


def test_body_round_trip_and_written_once(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "raw")
    sha = archive.put_body(BODY)
    assert sha == hashlib.sha256(BODY).hexdigest() and archive.get_body(sha) == BODY
    mtime = archive.body_path(sha).stat().st_mtime_ns
    assert archive.put_body(BODY) == sha  # the same content again: the file is kept
    assert archive.body_path(sha).stat().st_mtime_ns == mtime
    assert not [p for p in archive.bodies.rglob("*") if p.name.endswith(".tmp")]


def test_torn_body_is_detected_and_repaired_by_the_next_put(tmp_path: Path) -> None:
    """A crash mid-write leaves a torn file under the final name (no rename is used)."""
    archive = Archive(tmp_path / "raw")
    sha = hashlib.sha256(BODY).hexdigest()
    path = archive.body_path(sha)
    path.parent.mkdir(parents=True)
    path.write_bytes(BODY[:100])  # what a kill half-way through the write leaves
    with pytest.raises(CrawlError, match="corrupt"):
        archive.get_body(sha)
    assert archive.put_body(BODY) == sha
    assert archive.get_body(sha) == BODY


def test_records_in_the_same_microsecond_are_all_kept(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "raw")
    paths = [archive.add_record(_record()) for _ in range(3)]
    assert len(set(paths)) == 3 and all(p.is_file() for p in paths)
    assert [r.url for r in archive.records()] == [_record().url] * 3


def test_torn_record_is_skipped_when_read(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "raw")
    good = archive.add_record(_record("https://s.example/b/index.json"))
    (good.parent / "20261130T200000.000000Z-000000000000.json").write_bytes(b'{"url": "ht')
    assert [r.url for r in archive.records()] == ["https://s.example/b/index.json"]


def test_unwritable_archive_is_a_clear_error(tmp_path: Path) -> None:
    """A file where a shard directory belongs (works as root too, unlike a chmod)."""
    archive = Archive(tmp_path / "raw")
    shard = archive.body_path(hashlib.sha256(BODY).hexdigest()).parent
    shard.parent.mkdir(parents=True)
    shard.write_bytes(b"not a directory")
    with pytest.raises(OutputError, match="cannot write"):
        archive.put_body(BODY)
