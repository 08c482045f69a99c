"""The raw archive: append-only packs of bodies (by SHA-256) and fetch records, what a crash
or a full disk leaves in them, and the older one-file-per-fetch layout, which is still read."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hcgraph import archive as archive_module
from hcgraph.archive import Archive, FetchRecord
from hcgraph.errors import ArchiveError, CrawlError, OutputError, StoreError

BODY = b'{"schema": "hangingcontext.desk/1", "headline": "caf\xc3\xa9"}' * 50
SHA = hashlib.sha256(BODY).hexdigest()


def _record(
    url: str = "https://s.example/a/index.json", when: str = "2026-11-30T20:00:00.123456+00:00"
) -> FetchRecord:
    return FetchRecord(url, url, url, 200, when, SHA, len(BODY))


def _packs(archive: Archive) -> list[Path]:
    return sorted(archive.packs.glob("*.pack"))


def test_body_round_trip_and_stored_once(tmp_path: Path) -> None:
    with Archive(tmp_path / "raw") as archive:
        assert archive.put_body(BODY) == SHA and archive.get_body(SHA) == BODY
        (pack,) = _packs(archive)
        size = pack.stat().st_size
        assert archive.put_body(BODY) == SHA  # the same content again: not written again
        assert pack.stat().st_size == size
    fresh = Archive(tmp_path / "raw")  # another process reads it from the pack's headers
    assert fresh.has_body(SHA) and fresh.get_body(SHA) == BODY
    assert not fresh.has_body("0" * 64)
    with pytest.raises(ArchiveError, match="missing"):
        fresh.get_body("0" * 64)


def test_records_come_back_in_fetch_order_across_packs(tmp_path: Path) -> None:
    """Each crawl writes its own pack; a record is read back by fetch time, not by pack."""
    with Archive(tmp_path / "raw") as first:
        first.add_record(_record("https://s.example/late", "2026-11-30T22:00:00+00:00"))
        first.add_record(_record("https://s.example/early", "2026-11-30T20:00:00+00:00"))
    with Archive(tmp_path / "raw") as second:
        second.add_record(_record("https://s.example/middle", "2026-11-30T21:00:00+00:00"))
        # another time zone, the same instant order in UTC
        second.add_record(_record("https://s.example/first", "2026-11-30T20:30:00+05:00"))
    assert len(_packs(Archive(tmp_path / "raw"))) == 2
    urls = [r.url.rsplit("/", 1)[1] for r in Archive(tmp_path / "raw").records()]
    assert urls == ["first", "early", "middle", "late"]


def test_records_in_the_same_microsecond_are_all_kept_in_order(tmp_path: Path) -> None:
    with Archive(tmp_path / "raw") as archive:
        for n in range(3):
            archive.add_record(_record().__class__(**{**_record().__dict__, "attempts": n + 1}))
    assert [r.attempts for r in Archive(tmp_path / "raw").records()] == [1, 2, 3]


def test_a_torn_tail_loses_only_the_torn_entry(tmp_path: Path) -> None:
    """What a kill mid-write leaves: the entries before it are read; the next crawl writes a
    new pack, never after the torn bytes."""
    with Archive(tmp_path / "raw") as archive:
        archive.put_body(BODY)
        archive.add_record(_record("https://s.example/kept"))
        (pack,) = _packs(archive)
    whole = pack.read_bytes()
    cut_short = b"HCA1 B %s 9999 - %d\n" % (b"2" * 64, len(whole)) + BODY[:100]
    for torn in (b"HCA1 B " + b"1" * 30, cut_short):
        pack.write_bytes(whole + torn)
        again = Archive(tmp_path / "raw")
        assert [r.url for r in again.records()] == ["https://s.example/kept"]
        assert again.get_body(SHA) == BODY and not again.has_body("2" * 64)
    with Archive(tmp_path / "raw") as later:
        later.add_record(_record("https://s.example/after", "2026-11-30T21:00:00+00:00"))
    assert pack.read_bytes() == whole + torn  # left as it was
    assert [r.url for r in Archive(tmp_path / "raw").records()] == [
        "https://s.example/kept",
        "https://s.example/after",
    ]


def _zero(pack: Path, needle: bytes) -> None:
    """Overwrite the first copy of ``needle`` with zeros (what a power cut can leave)."""
    data = pack.read_bytes()
    at = data.index(needle)
    pack.write_bytes(data[:at] + b"\0" * len(needle) + data[at + len(needle) :])


def test_a_corrupt_body_is_reported_and_written_again_by_the_next_put(tmp_path: Path) -> None:
    with Archive(tmp_path / "raw") as archive:
        archive.put_body(BODY)
    (pack,) = _packs(archive)
    _zero(pack, BODY[:64])
    with pytest.raises(ArchiveError, match="corrupt"):
        Archive(tmp_path / "raw").get_body(SHA)
    with Archive(tmp_path / "raw") as repair:
        assert repair.put_body(BODY) == SHA
        assert repair.get_body(SHA) == BODY
    assert Archive(tmp_path / "raw").get_body(SHA) == BODY  # the newer copy wins on reading


def test_a_corrupt_record_is_skipped_and_the_rest_are_read(tmp_path: Path) -> None:
    with Archive(tmp_path / "raw") as archive:
        archive.add_record(_record("https://s.example/zeroed", "2026-11-30T20:00:00+00:00"))
        archive.add_record(_record("https://s.example/kept", "2026-11-30T21:00:00+00:00"))
    (pack,) = _packs(archive)
    _zero(pack, b"https://s.example/zeroed")
    assert [r.url for r in Archive(tmp_path / "raw").records()] == ["https://s.example/kept"]


def test_a_corrupt_body_is_an_archive_error_not_a_crawl_error() -> None:
    """The archive is part of the store: a body it cannot give back is a store error."""
    assert issubclass(ArchiveError, StoreError) and not issubclass(ArchiveError, CrawlError)


def test_unwritable_archive_is_a_clear_error(tmp_path: Path) -> None:
    """A file where the packs directory belongs (works as root too, unlike a chmod)."""
    archive = Archive(tmp_path / "raw")
    archive.directory.mkdir()
    archive.packs.write_bytes(b"not a directory")
    with pytest.raises(OutputError, match="cannot"):
        archive.put_body(BODY)


def test_a_failed_write_is_cut_back_and_the_next_goes_to_a_new_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Disk full half-way through an entry: nothing torn is left, nothing earlier is lost."""
    real = os.writev
    archive = Archive(tmp_path / "raw")
    archive.add_record(_record("https://s.example/before", "2026-11-30T20:00:00+00:00"))
    (pack,) = _packs(archive)
    size = pack.stat().st_size

    def half_then_full(fd: int, buffers: list[bytes]) -> int:
        real(fd, [b"".join(buffers)[:50]])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(archive_module.os, "writev", half_then_full)
    with pytest.raises(OutputError, match="No space left"):
        archive.put_body(BODY)
    assert pack.stat().st_size == size  # cut back to the last whole entry
    monkeypatch.setattr(archive_module.os, "writev", real)
    archive.put_body(BODY)
    archive.add_record(_record("https://s.example/after", "2026-11-30T21:00:00+00:00"))
    archive.close()
    assert len(_packs(archive)) == 2
    fresh = Archive(tmp_path / "raw")
    assert [r.url for r in fresh.records()] == [
        "https://s.example/before",
        "https://s.example/after",
    ]
    assert fresh.get_body(SHA) == BODY


def test_a_full_pack_rolls_over_to_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive_module, "PACK_LIMIT", 4000)
    bodies = [BODY + str(n).encode() for n in range(6)]
    with Archive(tmp_path / "raw") as archive:
        for n, body in enumerate(bodies):
            archive.put_body(body)
            archive.add_record(_record(f"https://s.example/{n}", f"2026-11-30T20:00:0{n}+00:00"))
    fresh = Archive(tmp_path / "raw")
    assert len(_packs(fresh)) >= 3
    assert [r.url for r in fresh.records()] == [f"https://s.example/{n}" for n in range(6)]
    assert all(fresh.get_body(hashlib.sha256(b).hexdigest()) == b for b in bodies)


_WRITER = """
import hashlib, sys, datetime as dt
from hcgraph.archive import Archive, FetchRecord
archive = Archive(sys.argv[1])
n = 0
while True:
    body = (b"body %d " % n) * (50 + n % 3000)
    sha = archive.put_body(body)
    when = (dt.datetime(2026, 11, 30, tzinfo=dt.UTC) + dt.timedelta(seconds=n)).isoformat()
    url = "https://s.example/%d" % n
    archive.add_record(FetchRecord(url, url, url, 200, when, sha, len(body)))
    n += 1
    if n == 200:
        print("ready", flush=True)
"""


@pytest.mark.slow
def test_a_killed_writer_leaves_every_record_with_its_body(tmp_path: Path) -> None:
    """SIGKILL at an arbitrary point of a stream of writes: every record read back has its
    body, intact, and they are a gapless prefix of what was written."""
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": root}
    with subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(tmp_path / "raw")], stdout=subprocess.PIPE, env=env
    ) as proc:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        time.sleep(0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    archive = Archive(tmp_path / "raw")
    records = list(archive.records())
    assert len(records) >= 200
    assert [r.url for r in records] == [f"https://s.example/{n}" for n in range(len(records))]
    for n, record in enumerate(records):
        assert record.sha256 is not None
        assert archive.get_body(record.sha256) == (b"body %d " % n) * (50 + n % 3000)


def test_a_zeroed_page_mid_pack_loses_only_the_entries_it_covers(tmp_path: Path) -> None:
    """A power cut can leave a page of zeros anywhere in the last unsynced part of a pack
    (page-sized, so it takes a header or a payload's closing newline with it): the entries
    after it were written whole and are still read."""
    bodies = [(b"body %d " % n) * 300 for n in range(10)]  # ~2.4 KiB each
    with Archive(tmp_path / "raw") as archive:
        for n, body in enumerate(bodies):
            sha = archive.put_body(body)
            url = f"https://s.example/{n}"
            when = f"2026-11-30T20:00:{n:02d}+00:00"
            archive.add_record(FetchRecord(url, url, url, 200, when, sha, len(body)))
    (pack,) = _packs(archive)
    data = bytearray(pack.read_bytes())
    data[4096:8192] = b"\0" * 4096
    pack.write_bytes(bytes(data))
    fresh = Archive(tmp_path / "raw")
    urls = [r.url for r in fresh.records()]
    assert urls[0] == "https://s.example/0" and urls[-3:] == [
        f"https://s.example/{n}" for n in (7, 8, 9)
    ]
    for n in (7, 8, 9):
        assert fresh.get_body(hashlib.sha256(bodies[n]).hexdigest()) == bodies[n]


def test_a_zeroed_payload_end_skips_that_entry_only(tmp_path: Path) -> None:
    """Zeros over the end of a record, its closing newline included: that record is skipped."""
    with Archive(tmp_path / "raw") as archive:
        archive.add_record(_record("https://s.example/zeroed", "2026-11-30T20:00:00+00:00"))
        archive.add_record(_record("https://s.example/kept", "2026-11-30T21:00:00+00:00"))
    (pack,) = _packs(archive)
    data = pack.read_bytes()
    end = data.index(b"\nHCA1 R", 1)  # the first record's closing newline
    pack.write_bytes(data[: end - 20] + b"\0" * 21 + data[end + 1 :])
    assert [r.url for r in Archive(tmp_path / "raw").records()] == ["https://s.example/kept"]


def test_a_record_whose_header_is_partly_zeroed_is_not_read_out_of_order(
    tmp_path: Path,
) -> None:
    """Zeros inside a record's sort key must not move the record to the front."""
    with Archive(tmp_path / "raw") as archive:
        archive.add_record(_record("https://s.example/a", "2026-11-30T20:00:00+00:00"))
        archive.add_record(_record("https://s.example/b", "2026-11-30T21:00:00+00:00"))
    (pack,) = _packs(archive)
    data = pack.read_bytes()
    key = _record("https://s.example/b", "2026-11-30T21:00:00+00:00").sort_key.encode()
    at = data.index(key) + 4
    pack.write_bytes(data[:at] + b"\0" * 4 + data[at + 4 :])
    assert [r.url for r in Archive(tmp_path / "raw").records()] == ["https://s.example/a"]


def test_packs_opened_in_the_same_microsecond_are_read_in_the_order_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second pack in the same microsecond is named ``…-<pid>-2.pack``, which sorts before
    ``…-<pid>.pack`` by name: the newer copy of a body must still win, and records with one
    key must keep the order they were written in."""
    import datetime as dt

    class Frozen(dt.datetime):
        @classmethod
        def now(cls, tz: dt.tzinfo | None = None) -> Frozen:
            return cls(2026, 12, 1, 10, 0, 0, 123456, tzinfo=tz)

    monkeypatch.setattr(archive_module.dt, "datetime", Frozen)
    with Archive(tmp_path / "raw") as first:
        first.put_body(BODY)
        first.add_record(_record())
    (pack,) = _packs(first)
    _zero(pack, BODY[:64])
    with Archive(tmp_path / "raw") as second:
        second.put_body(BODY)  # the first copy is corrupt: written again, in a new pack
        second.add_record(FetchRecord(**{**_record().__dict__, "attempts": 2}))
    assert len(_packs(second)) == 2
    fresh = Archive(tmp_path / "raw")
    assert fresh.get_body(SHA) == BODY
    assert [r.attempts for r in fresh.records()] == [1, 2]


def test_a_reader_finds_the_body_of_every_record_it_reads(tmp_path: Path) -> None:
    """One reader object beside a writer: a record its ``records()`` returns has a body its
    ``get_body`` finds, also one written after the reader's first ``get_body``."""
    with Archive(tmp_path / "raw") as writer:
        writer.put_body(BODY)
        writer.add_record(_record())
        reader = Archive(tmp_path / "raw")
        assert reader.get_body(SHA) == BODY
        later = b'{"headline": "later"}'
        writer.put_body(later)
        writer.add_record(
            FetchRecord(**{**_record().__dict__, "sha256": hashlib.sha256(later).hexdigest()})
        )
        for record in reader.records():
            assert record.sha256 is not None and reader.get_body(record.sha256)


def _records_around_a_zeroed_body(
    tmp_path: Path, body: bytes, marker: bytes, shift: int, width: int
) -> list[str]:
    """Records a and b with ``body`` between them; ``width`` zeros from ``shift`` bytes after
    the first ``marker`` in the pack; the URLs of the records read back."""
    with Archive(tmp_path / "raw") as archive:
        archive.add_record(_record("https://s.example/a", "2026-11-30T20:00:00+00:00"))
        archive.put_body(body)
        archive.add_record(_record("https://s.example/b", "2026-11-30T21:00:00+00:00"))
    (pack,) = _packs(archive)
    data = pack.read_bytes()
    at = data.index(marker) + shift
    pack.write_bytes(data[:at] + b"\0" * width + data[at + width :])
    return [r.url for r in Archive(tmp_path / "raw").records()]


def test_after_zeros_a_line_that_only_looks_like_a_header_is_passed_over(
    tmp_path: Path,
) -> None:
    text = b"log:\nHCA1 is not a header\n" * 20
    # the text's header and its first line, zeroed
    urls = _records_around_a_zeroed_body(tmp_path, text, b"HCA1 B", 0, 100)
    assert urls == ["https://s.example/a", "https://s.example/b"]


def test_a_good_copy_of_a_body_is_found_whatever_the_pack_names_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pack names come from the wall clock, which a reboot after a power cut can set back:
    the copy written again because the first was zeroed may sort before it."""
    import datetime as dt

    times = iter(
        [dt.datetime(2026, 12, 1, 10, tzinfo=dt.UTC), dt.datetime(2026, 1, 1, tzinfo=dt.UTC)]
    )

    class Clock(dt.datetime):
        @classmethod
        def now(cls, tz: dt.tzinfo | None = None) -> dt.datetime:
            return next(times)

    monkeypatch.setattr(archive_module.dt, "datetime", Clock)
    with Archive(tmp_path / "raw") as first:
        first.put_body(BODY)
    _zero(_packs(first)[0], BODY[:64])
    with Archive(tmp_path / "raw") as second:  # the clock is set back now
        second.put_body(BODY)
    assert len(_packs(second)) == 2
    assert Archive(tmp_path / "raw").get_body(SHA) == BODY


def test_an_entry_forged_inside_a_body_is_never_read(tmp_path: Path) -> None:
    """A fetched page can hold bytes that look like a whole entry. Even when damage before it
    makes reading search for the next header, a header is believed only at the offset it
    names, so the forged record (a hostile page claiming another site's URL) is not read."""
    fake = FetchRecord(
        "https://victim.example/x/", "https://victim.example/x/", "x", 200,
        "2026-11-30T20:30:00+00:00", SHA, len(BODY),
    )  # fmt: skip
    data = fake.to_json()
    forged = b"HCA1 R %s %d %s 0\n%s\n" % (
        hashlib.sha256(data).hexdigest().encode(),
        len(data),
        fake.sort_key.encode(),
        data,
    )
    hostile = b"<html>\n" + forged + b"</html>\n"
    # zeros over the body's header: reading searches on from there
    urls = _records_around_a_zeroed_body(tmp_path, hostile, b"<html>", -40, 40)
    assert urls == ["https://s.example/a", "https://s.example/b"]


def test_a_first_write_that_fails_leaves_no_empty_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(fd: int, buffers: list[bytes]) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(archive_module.os, "writev", full)
    archive = Archive(tmp_path / "raw")
    for _ in range(3):  # a crawl retrying on a full disk
        with pytest.raises(OutputError, match="No space left"):
            archive.put_body(BODY)
    assert _packs(archive) == []


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_sync_flushes_every_pack_written_and_leaks_no_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive_module, "PACK_LIMIT", 1000)  # one body a pack
    synced: list[int] = []
    real = os.fdatasync
    monkeypatch.setattr(archive_module.os, "fdatasync", lambda fd: synced.append(fd) or real(fd))
    before = _open_fds()
    archive = Archive(tmp_path / "raw")
    for n in range(3):  # three packs: two full ones closed, one open
        archive.put_body(BODY + str(n).encode())
    archive.sync()
    assert len(synced) == 3 and _open_fds() == before + 1  # the pack still being written
    archive.sync()
    assert len(synced) == 4
    archive.put_body(BODY + b"more")  # a fourth pack, the third now waits for a sync
    archive.close()
    assert _open_fds() == before
    assert len(_packs(archive)) == 4


def test_a_sync_that_fails_early_leaks_no_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of descriptors when the open pack is duplicated: the packs closed since the last
    sync are still closed (not dropped from the list, open for ever), and the error is the
    archive's ``OutputError``, not a bare ``OSError``."""
    monkeypatch.setattr(archive_module, "PACK_LIMIT", 1000)  # one body a pack
    before = _open_fds()
    archive = Archive(tmp_path / "raw")
    for n in range(3):  # two full packs closed, one open
        archive.put_body(BODY + str(n).encode())

    def no_more(fd: int) -> int:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(archive_module.os, "dup", no_more)
    with pytest.raises(OutputError, match="Too many open files"):
        archive.sync()
    monkeypatch.undo()
    archive.close()
    assert _open_fds() == before


def test_intact_body_does_not_rescan_the_packs_for_a_body_that_is_not_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resume after a power cut (or a re-crawl) asks about every body the frontier names;
    one the archive lost must not cost a scan of every pack each time (~0.4 s for 50,000
    entries: a thousand lost bodies would stall the resume for minutes)."""
    with Archive(tmp_path / "raw") as archive:
        archive.put_body(BODY)
    archive = Archive(tmp_path / "raw")
    assert archive.intact_body(SHA) == BODY  # the index is built once
    scans: list[Path] = []
    real = archive_module._scan

    def scan(pack: Path) -> Any:
        scans.append(pack)
        return real(pack)

    monkeypatch.setattr(archive_module, "_scan", scan)
    for n in range(3):
        assert archive.intact_body(hashlib.sha256(b"lost %d" % n).hexdigest()) is None
    assert scans == []


def test_sync_flushes_the_directory_entry_of_a_new_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pack created since the last sync is only found after a power cut if its name in
    ``packs/`` (and ``packs/`` itself, the first time) reached the disk too: flushing the
    file alone does not promise that (the store's own durable writes flush the directory)."""
    flushed: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        real(fd)
        flushed.append(os.path.realpath(f"/proc/self/fd/{fd}"))

    monkeypatch.setattr(archive_module.os, "fsync", fsync)
    archive = Archive(tmp_path / "raw")
    archive.put_body(BODY)
    archive.sync()
    assert str(archive.packs.resolve()) in flushed
    assert str(archive.directory.resolve()) in flushed
    flushed.clear()
    archive.put_body(BODY + b"more")  # the same pack: its name is on disk already
    archive.sync()
    assert flushed == []
    archive.close()


def test_a_body_kept_from_an_earlier_run_is_synced_with_the_next_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crawl that puts a body an earlier, interrupted run wrote (and never flushed) keeps
    that copy: the next sync flushes the earlier pack too."""
    with Archive(tmp_path / "raw") as earlier:
        earlier.put_body(BODY)
    (old_pack,) = _packs(earlier)
    flushed: list[str] = []
    real = os.fdatasync

    def fdatasync(fd: int) -> None:
        flushed.append(os.path.realpath(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(archive_module.os, "fdatasync", fdatasync)
    later = Archive(tmp_path / "raw")
    assert later.put_body(BODY) == SHA  # kept, not written again
    later.add_record(_record())
    later.sync()
    assert str(old_pack.resolve()) in flushed
    flushed.clear()
    later.sync()  # flushed once is enough
    assert str(old_pack.resolve()) not in flushed
    later.close()
