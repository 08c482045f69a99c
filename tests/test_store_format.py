"""The store format marker (``STORE/format.json``): written by every command that creates a
store, and a store of another format refused in one line that says to rebuild it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from hcgraph.errors import StoreError, StoreFormatError
from hcgraph.store import STORE_FORMAT, Store
from tests.conftest import SEED_URL

REBUILD = "run hcgraph rebuild"


def _marker(store_dir: Path) -> object:
    return json.loads((store_dir / "format.json").read_text(encoding="utf-8"))


def _refused(result: object, store_dir: Path, advice: str = "") -> str:
    """The one error line of a refused command (exit 1, no traceback), ending in ``advice``
    (default: run hcgraph rebuild)."""
    assert result.exit_code == 1  # type: ignore[attr-defined]
    lines = result.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and "Traceback" not in result.output  # type: ignore[attr-defined]
    line: str = lines[0]
    assert line.startswith(f"error: {store_dir}: ") and line.endswith(advice or REBUILD), line
    return line


def test_a_new_store_carries_the_format_marker(invoke, seed_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert invoke("ingest", seed_path, "--store", tmp_path / "st").exit_code == 0
    assert _marker(tmp_path / "st") == {"format": STORE_FORMAT} == {"format": 1}
    with Store(tmp_path / "mem-like"):
        pass  # the library writes it too (an empty store is a store)
    assert _marker(tmp_path / "mem-like") == {"format": 1}


UPGRADE = "upgrade hcgraph (pip install -U hcgraph) to use this store"


@pytest.mark.parametrize(
    ("text", "why", "advice"),
    [
        # a newer hcgraph's store: a rebuild would downgrade it, so the advice is to upgrade
        ('{"format": 2}', "store format 2, written by a newer hcgraph", UPGRADE),
        ('{"format": 0}', "store format 0 (an older one)", REBUILD),
        ('{"format": "1"}', "unknown store format", REBUILD),
        ("not json", "unknown store format", REBUILD),
        ("[]", "unknown store format", REBUILD),
    ],
)
def test_a_store_of_another_format_is_refused(  # type: ignore[no-untyped-def]
    invoke, seed_path: Path, tmp_path: Path, text: str, why: str, advice: str
) -> None:
    store_dir = tmp_path / "st"
    assert invoke("ingest", seed_path, "--store", store_dir).exit_code == 0
    (store_dir / "format.json").write_text(text, encoding="utf-8")
    for command in (["stats"], ["audit"], ["serve", "--port", "0"], ["ingest", seed_path]):
        line = _refused(invoke(*command, "--store", store_dir), store_dir, advice)
        assert why in line
        assert (REBUILD in line) == (advice == REBUILD)
    assert (store_dir / "format.json").read_text(encoding="utf-8") == text  # left alone
    with pytest.raises(StoreFormatError):
        Store(store_dir, read_only=True)
    assert issubclass(StoreFormatError, StoreError)


def test_an_unmarked_current_store_is_format_1(invoke, seed_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Stores made before the marker carry none: in the current layout they are format 1,
    read as they are, and marked by the next command that writes to them."""
    store_dir = tmp_path / "st"
    assert invoke("ingest", seed_path, "--store", store_dir).exit_code == 0
    (store_dir / "format.json").unlink()
    assert invoke("stats", "--store", store_dir).exit_code == 0
    assert not (store_dir / "format.json").exists()  # a reader writes nothing
    assert invoke("ingest", seed_path, "--store", store_dir).exit_code == 0
    assert _marker(store_dir) == {"format": 1}


def test_an_unmarked_store_in_the_old_layout_is_refused(invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A store whose story graphs repeat the shared descriptions (no shared graphs: the
    layout before each thing was stated once) has no reader any more."""
    store_dir = tmp_path / "st"
    with Store(store_dir) as store:
        store.load_nquads(
            f"<{SEED_URL}> <https://w3id.org/hcgraph/ns#listsManifest> "
            f"<https://w3id.org/hcgraph/id/manifest/m1> <{SEED_URL}> .\n"
            f"<https://w3id.org/hcgraph/id/manifest/m1> <http://purl.org/dc/terms/title> "
            f'"M" <{SEED_URL}> .\n'.encode()
        )
    (store_dir / "format.json").unlink()
    for command in ("stats", "audit"):
        assert "old layout" in _refused(invoke(command, "--store", store_dir), store_dir)


def test_an_old_ledger_is_refused(invoke, seed_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A ledger from before one ``stated`` row per story (a ``uses`` row per story and
    description) is no longer converted: the writer refuses the store."""
    store_dir = tmp_path / "st"
    assert invoke("ingest", seed_path, "--store", store_dir).exit_code == 0
    db = sqlite3.connect(store_dir / "ledger.sqlite", isolation_level=None)
    db.executescript(
        "DROP TABLE stated; CREATE TABLE uses (story TEXT NOT NULL, hash BLOB NOT NULL,"
        " PRIMARY KEY (story, hash)) WITHOUT ROWID;"
    )
    db.close()
    line = _refused(invoke("ingest", seed_path, "--store", store_dir), store_dir / "ledger.sqlite")
    assert "old ledger" in line


@pytest.mark.slow  # the demo crawls a loopback site
def test_rebuild_replaces_a_refused_store(invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The advice works: ``hcgraph rebuild`` reads the refused store's story list, builds
    a store of this format from the archive and swaps the marker in with it."""
    assert invoke("demo", "--stories", "3", "--out", tmp_path / "out").exit_code == 0
    store_dir = tmp_path / "out" / "store"
    (store_dir / "format.json").write_text('{"format": 9}', encoding="utf-8")
    _refused(invoke("stats", "--store", store_dir), store_dir, UPGRADE)  # a newer hcgraph's
    (store_dir / "format.json").write_text('{"format": 0}', encoding="utf-8")
    _refused(invoke("stats", "--store", store_dir), store_dir)  # an older one: rebuild it
    result = invoke("rebuild", "--store", store_dir)
    assert result.exit_code == 0, result.output
    assert _marker(store_dir) == {"format": 1}
    assert invoke("stats", "--store", store_dir).exit_code == 0
