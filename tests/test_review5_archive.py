"""Review of the raw archive and rebuild (2026-12-07): an archive holding a record twice (packs
copied back from a backup, two archives merged) is read as the fetches it records, once each."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hcgraph import rebuilding
from hcgraph.archive import Archive, FetchRecord
from hcgraph.errors import ArchiveError, StoreBusyError
from hcgraph.rebuilding import rebuild
from hcgraph.store import Store

SEED = Path(__file__).resolve().parent / "fixtures" / "agentic-rl-production.json"
URL = "https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/"


def _crawled(store_dir: Path) -> Path:
    """An archive: the story fetched (200), then one 404 (not yet a withdrawal)."""
    body = SEED.read_bytes()
    with Archive(store_dir / "archive") as archive:
        sha = archive.put_body(body)
        archive.add_record(FetchRecord(URL, URL, URL, 200, "2026-10-20T01:00:00+00:00", sha))
        archive.add_record(FetchRecord(URL, URL, URL, 404, "2026-10-21T01:00:00+00:00"))
    (pack,) = (store_dir / "archive" / "packs").glob("*.pack")
    return pack


def test_a_record_held_twice_is_read_once(tmp_path: Path) -> None:
    pack = _crawled(tmp_path)
    shutil.copy(pack, pack.with_name("29990101T000000.000000Z-1.pack"))
    records = list(Archive(tmp_path / "archive").records())
    assert [r.status for r in records] == [200, 404]


def test_a_duplicated_404_does_not_withdraw_the_story_on_rebuild(tmp_path: Path) -> None:
    """One 404 is not a withdrawal (the crawler's rule is two in a row); the same 404
    record read twice must not count as two."""
    pack = _crawled(tmp_path)
    once = rebuild(tmp_path)
    assert (once.stories, once.withdrawn, once.records) == (1, 0, 2)
    shutil.copy(pack, pack.with_name("29990101T000000.000000Z-1.pack"))
    twice = rebuild(tmp_path)
    assert (twice.stories, twice.withdrawn, twice.records) == (1, 0, 2)


def test_a_pack_from_a_newer_hcgraph_is_refused_not_read_as_empty(tmp_path: Path) -> None:
    """A pack in another format (``HCA2``) was skipped like a torn one: the rebuild made an
    empty graph (exit 0), or told to --drop-unarchived every story the store held."""
    pack = _crawled(tmp_path / "store")
    pack.write_bytes(pack.read_bytes().replace(b"HCA1 ", b"HCA2 "))
    with pytest.raises(ArchiveError, match=r"\.pack: pack format HCA2, written by a newer"):
        list(Archive(tmp_path / "store" / "archive").records())
    with pytest.raises(ArchiveError, match="upgrade hcgraph"):
        rebuild(tmp_path / "fresh", tmp_path / "store" / "archive")
    assert not (tmp_path / "fresh" / "oxigraph").exists()


def test_the_newer_pack_is_one_line_from_the_cli(invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pack = _crawled(tmp_path)
    assert rebuild(tmp_path).stories == 1
    pack.write_bytes(pack.read_bytes().replace(b"HCA1 ", b"HCA2 "))
    result = invoke("rebuild", "--store", str(tmp_path))
    assert result.exit_code == 1
    assert result.output.startswith("error: ") and "HCA2" in result.output
    assert "Traceback" not in result.output and "--drop-unarchived" not in result.output


def test_the_store_stays_held_while_the_rebuild_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old store was opened only to list its withdrawals, then let go: an ingest (or a
    crawl) run during the replay wrote into it, and the swap then threw that away."""
    _crawled(tmp_path)
    assert rebuild(tmp_path).stories == 1  # a store to rebuild
    seen: list[str] = []
    replay = rebuilding._documents

    def meanwhile(archive: Archive, report: rebuilding.RebuildReport, *more: Any) -> Iterator[Any]:
        for document in replay(archive, report, *more):
            try:
                Store(tmp_path, holder="hcgraph ingest").close()
                seen.append("written")
            except StoreBusyError:
                seen.append("busy")
            yield document

    monkeypatch.setattr(rebuilding, "_documents", meanwhile)
    assert rebuild(tmp_path).stories == 1
    assert seen == ["busy"]
    Store(tmp_path).close()  # and let go once it is done
