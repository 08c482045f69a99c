"""Free disk space is checked before each batch is written: a batch the disk may not hold
stops the run with one line naming the store, the free bytes and the estimate, and keeps
every story already stored. The disk is not filled: ``shutil.disk_usage`` is patched, or
``HCGRAPH_DISK_RESERVE`` asks for more room than the disk has.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from hcgraph.errors import StoreDiskError
from hcgraph.pipeline import STORE_BYTES_PER_BYTE, Document, Pipeline
from hcgraph.store import Store
from hcsample.corpus import generate_corpus


@pytest.fixture(autouse=True)
def _fixed_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")


def _documents(n: int, seed: int = 3) -> list[Document]:
    bodies = generate_corpus(n, seed=seed).site_files().values()
    return [Document(body, f"s{seed}-{k}.json") for k, body in enumerate(bodies)]


def _disk_fills_after(monkeypatch: pytest.MonkeyPatch, calls: int, free: int) -> None:
    """``shutil.disk_usage`` tells the truth ``calls`` times, then says ``free`` bytes."""
    real = shutil.disk_usage
    seen = [0]

    def usage(path: Any) -> Any:
        seen[0] += 1
        found = real(path)
        return found if seen[0] <= calls else found._replace(free=free)

    monkeypatch.setattr(shutil, "disk_usage", usage)


def test_a_batch_the_disk_cannot_hold_stops_the_run_and_keeps_the_batches_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, nothing looked: the run went on until the engine met the full disk."""
    docs = _documents(15)
    _disk_fills_after(monkeypatch, calls=2, free=(256 << 20) + 1000)  # the reserve + 1000
    directory = tmp_path / "st"
    with Store(directory) as st:
        with pytest.raises(StoreDiskError) as info, Pipeline(st, batch_size=5) as pipeline:
            list(pipeline.run(docs))
        assert len(st.story_graphs()) == 10  # the two batches before it, whole
        assert not st.ledger.dirty
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{directory}: not enough free disk space for the next 5 ")
    assert "268,436,456 bytes free" in message
    need = STORE_BYTES_PER_BYTE * sum(len(d.body) for d in docs[10:])
    assert f"need about {need:,} plus the 268,435,456 bytes kept free" in message


def test_the_reserve_is_set_by_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    free = shutil.disk_usage(tmp_path).free
    monkeypatch.setenv("HCGRAPH_DISK_RESERVE", str(free * 2))
    with Store(tmp_path / "st") as st:
        refused = pytest.raises(StoreDiskError, match=r"HCGRAPH_DISK_RESERVE")
        with refused, Pipeline(st) as pipeline:
            pipeline.process(_documents(2))
        assert st.story_graphs() == []
    monkeypatch.setenv("HCGRAPH_DISK_RESERVE", "0")
    with Store(tmp_path / "st") as st, Pipeline(st) as pipeline:
        assert [o.status for o in pipeline.process(_documents(2))] == ["added", "added"]


def test_an_in_memory_store_is_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    _disk_fills_after(monkeypatch, calls=0, free=0)
    with Store(None) as st, Pipeline(st) as pipeline:
        assert len(pipeline.process(_documents(2))) == 2


@pytest.mark.slow
def test_ingest_stops_with_one_line_before_the_disk_is_full(
    tmp_path: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    generate_corpus(4, seed=3).write(first)
    generate_corpus(4, seed=8).write(second)
    store = tmp_path / "store"
    assert run_cli("ingest", first, "--store", store).returncode == 0
    # More room asked for than the disk has: the next batch does not fit.
    monkeypatch.setenv("HCGRAPH_DISK_RESERVE", str(shutil.disk_usage(tmp_path).total))
    result = run_cli("ingest", second, "--store", store)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert re.fullmatch(
        rf"error: {re.escape(str(store))}: not enough free disk space for the next 4 documents: "
        r"[\d,]+ bytes free, they need about [\d,]+ plus the [\d,]+ bytes kept free "
        r"\(HCGRAPH_DISK_RESERVE\); stopped before writing them, the stories already stored "
        r"are kept",
        lines[0],
    ), lines[0]
    with Store(store, read_only=True) as st:
        assert len(st.story_graphs()) == 4  # the first run's, kept
