"""Review of exports (2026-12-07): a GraphML export that cannot be written says so. networkx
writes GraphML through lxml's ``xmlfile``, which drops the stream's write errors: a full disk
gave a torn file and "wrote …", and ``> /dev/full`` a segfault after the error line."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hcgraph.exporting import FORMATS, export
from hcgraph.ingest import ingest_bytes
from hcgraph.store import Store
from tests.conftest import cli_env

SEED = Path(__file__).resolve().parent / "fixtures" / "agentic-rl-production.json"


class _Full(io.RawIOBase):
    """A stream on a full disk: every write fails."""

    def writable(self) -> bool:
        return True

    def write(self, data: object) -> int:
        raise OSError(28, "No space left on device")


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("exports") / "store"
    with Store(where) as store:
        assert ingest_bytes(store, [(SEED.read_bytes(), "seed.json")]).ok
    return where


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_an_export_to_a_full_disk_raises(store_dir: Path, fmt: str) -> None:
    with Store(store_dir, read_only=True) as store, pytest.raises(OSError, match="No space"):
        export(store, fmt, _Full())


@pytest.mark.parametrize("fmt", ["graphml", "gexf", "vosviewer"])
def test_an_empty_graph_file_to_a_full_disk_raises(tmp_path: Path, fmt: str) -> None:
    """Under lxml's buffer (an empty store's 309 bytes), the error was never seen: exit 0."""
    with Store(tmp_path / "empty") as store, pytest.raises(OSError, match="No space"):
        export(store, fmt, _Full())


def test_graphml_bytes_are_unchanged(store_dir: Path) -> None:
    """Same bytes as networkx's own writer gives (the fix only buffers them)."""
    import networkx as nx

    from hcgraph.exporting import _with_ids

    with Store(store_dir, read_only=True) as store:
        ours = io.BytesIO()
        export(store, "graphml", ours)
        theirs = io.BytesIO()
        graph = _with_ids(store, node_ids=True)
        nx.write_graphml(graph, theirs, named_key_ids=True)
    assert ours.getvalue() == theirs.getvalue() and b"<graphml" in ours.getvalue()


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("where", ["stdout", "--out"])
def test_graphml_to_dev_full_is_one_line(store_dir: Path, where: str) -> None:
    args = [sys.executable, "-m", "hcgraph", "export", "--format", "graphml"]
    args += ["--store", str(store_dir)] + (["--out", "/dev/full"] if where == "--out" else [])
    with open("/dev/full", "wb") as full:
        run = subprocess.run(args, stdout=full, stderr=subprocess.PIPE, env=cli_env(), check=False)
    err = run.stderr.decode()
    assert run.returncode == 1, err
    assert err.startswith("error: ") and "No space left on device" in err
    assert len(err.strip().splitlines()) == 1
