"""The store a run leaves is ready to query: a run that wrote enough ends with a compaction
(``Store.optimize``), a small write to a compacted store does not pay for one, and a run that
failed or was stopped is not kept waiting by one.

The size floor (``COMPACT_MIN_BYTES``: 64 MiB of tables, ~450 stories) is lowered here so
that small corpora show the rule; the share and the marker are the real ones.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import hcgraph.store as store_module
from hcgraph.errors import InputError
from hcgraph.ingest import ingest_bytes
from hcgraph.pipeline import Document, Pipeline
from hcgraph.store import Store
from hcsample.corpus import generate_corpus
from tests.conftest import cli_env
from tests.crawlserver import CrawlServer, Site, page, story


@pytest.fixture(autouse=True)
def _fixed_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")


@pytest.fixture
def compactions(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every store below the real size floor counts; the list gets each compacted store."""
    monkeypatch.setattr(store_module, "COMPACT_MIN_BYTES", 0)
    done: list[Path] = []
    real = Store.optimize

    def optimize(self: Store) -> None:
        assert self.directory is not None
        done.append(self.directory)
        real(self)

    monkeypatch.setattr(Store, "optimize", optimize)
    return done


def _bodies(n: int, seed: int = 3) -> list[tuple[bytes, str]]:
    files = generate_corpus(n, seed=seed).site_files().values()
    return [(body, f"s{seed}-{k}.json") for k, body in enumerate(files)]


def _tables(directory: Path) -> tuple[int, int]:
    with Store(directory, read_only=True) as st:
        return st.tables()


def _compacted(directory: Path) -> bool:
    """The store's tables are (nearly all) its last compaction's: the engine may still
    rewrite a small one of them before it closes."""
    total, fresh = _tables(directory)
    return total > 0 and fresh < store_module.COMPACT_SHARE * total


def test_an_ingest_leaves_the_store_compacted(tmp_path: Path, compactions: list[Path]) -> None:
    """Before, nothing compacted the store a run left: its tables stayed as the bulk loads
    wrote them (and queries cost 1.1-1.8x the CPU at 10k stories)."""
    directory = tmp_path / "st"
    with Store(directory) as st:
        report = ingest_bytes(st, _bodies(20))
        assert report.stored == 20
    assert compactions == [directory]
    total, fresh = _tables(directory)
    assert total > 0 and fresh == 0  # every table is the compaction's
    marker = json.loads((directory / "compacted.json").read_text())
    assert marker["identity"] == (directory / "oxigraph" / "IDENTITY").read_text().strip()


def test_a_small_write_to_a_compacted_store_does_not_compact_it_again(
    tmp_path: Path, compactions: list[Path]
) -> None:
    directory = tmp_path / "st"
    with Store(directory) as st:
        ingest_bytes(st, _bodies(40))
    assert len(compactions) == 1
    with Store(directory) as st:
        ingest_bytes(st, _bodies(1, seed=9))  # one story: a few KB against the whole
        assert len(st.story_graphs()) == 41
    assert len(compactions) == 1
    total, fresh = _tables(directory)
    assert 0 < fresh < store_module.COMPACT_SHARE * total
    with Store(directory) as st:  # an unchanged re-ingest writes nothing: no compaction
        ingest_bytes(st, _bodies(40))
    assert len(compactions) == 1


def test_a_write_of_a_tenth_of_the_store_compacts_it_again(
    tmp_path: Path, compactions: list[Path]
) -> None:
    directory = tmp_path / "st"
    with Store(directory) as st:
        ingest_bytes(st, _bodies(20))
        ingest_bytes(st, _bodies(20, seed=5))  # as much again: half the tables are new
    assert compactions == [directory, directory]


def test_a_failed_run_is_not_compacted(tmp_path: Path, compactions: list[Path]) -> None:
    """The run's error is the one to report: no compaction after it."""
    directory = tmp_path / "st"

    def documents() -> Any:
        for body, source in _bodies(10):
            yield Document(body, source)
        raise InputError("the source of documents failed")

    with Store(directory) as st, pytest.raises(InputError), Pipeline(st, batch_size=5) as pipe:
        list(pipe.run(documents()))
    assert compactions == []


def test_another_database_is_not_taken_for_the_compacted_one(
    tmp_path: Path, compactions: list[Path]
) -> None:
    """The marker names the database it was written for (RocksDB's IDENTITY): a database
    made anew (a rebuild, a copy put in place) counts as never compacted."""
    directory = tmp_path / "st"
    with Store(directory) as st:
        ingest_bytes(st, _bodies(10))
    marker = (directory / "compacted.json").read_text()
    other = tmp_path / "other"
    with Store(other) as st, Pipeline(st) as pipeline:
        pipeline.process([Document(b, s) for b, s in _bodies(10)])
        (other / "compacted.json").write_text(marker)
        total, fresh = st.tables()
        assert total > 0 and fresh == total
    assert compactions == [directory, other]


def test_no_compaction_without_room_for_the_rewrite(
    tmp_path: Path, compactions: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compaction holds the old and the new tables until it ends: on a disk without room
    for both it is left out (the stories are stored all the same)."""
    monkeypatch.setenv("HCGRAPH_DISK_RESERVE", str(1 << 60))
    monkeypatch.setattr(Store, "check_room", lambda *_: None)  # the batches are let through
    with Store(tmp_path / "st") as st:
        assert ingest_bytes(st, _bodies(10)).stored == 10
    assert compactions == []


def test_the_size_floor_leaves_small_stores_alone(tmp_path: Path) -> None:
    """Below 64 MiB of tables (the real floor) queries take milliseconds either way."""
    with Store(tmp_path / "st") as st:
        ingest_bytes(st, _bodies(5))
    assert not (tmp_path / "st" / "compacted.json").exists()


# --- the commands: ingest, crawl (its store worker process), rebuild ---------------------


def _hook(tmp_path: Path) -> dict[str, str]:
    """The CLI's environment with the size floor at 0 in every process it starts."""
    hook = tmp_path / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(
        "import hcgraph.store\nhcgraph.store.COMPACT_MIN_BYTES = 0\n"
    )
    env = cli_env()
    env["PYTHONPATH"] = f"{hook}{os.pathsep}{env['PYTHONPATH']}"
    return env


def _cli(env: dict[str, str], *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hcgraph", *map(str, args)],
        capture_output=True, text=True, env=env, timeout=180,
    )  # fmt: skip


@pytest.mark.slow
def test_the_commands_leave_their_stores_compacted(
    tmp_path: Path, crawl_server: CrawlServer
) -> None:
    env = _hook(tmp_path)
    corpus = tmp_path / "corpus"
    generate_corpus(15, seed=3).write(corpus)
    ingested = tmp_path / "ingested"
    result = _cli(env, "ingest", corpus, "--store", ingested)
    assert result.returncode == 0, result.stderr
    assert _compacted(ingested)

    site = Site(crawl_server)
    site.add("a", story("a", page("b"), page("c")))
    site.add("b", story("b", id="1900000000000000001"))
    site.add("c", story("c", id="1900000000000000002"))
    crawled = tmp_path / "crawled"
    args = ["--store", crawled, "--mirror", site.mirror, "--ignore-robots", "--depth", "1"]
    result = _cli(env, "crawl", page("a"), *args)  # the store worker is a process
    assert result.returncode == 0, result.stderr
    assert _compacted(crawled)

    (crawled / "compacted.json").unlink()
    result = _cli(env, "rebuild", "--store", crawled)
    assert result.returncode == 0, result.stderr
    # The rebuilt store was compacted: its marker, written only by a compaction, is back. (Its
    # tables are not checked here: on a 73 KB store one table the engine flushes as the
    # rebuild closes can be over half of them; the ingest and crawl checks above cover that.)
    assert (crawled / "compacted.json").is_file()
