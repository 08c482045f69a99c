"""Local paths do not leak: ``hc:sourceLocation`` is relative to the ingest root by default.

The same corpus copied to two different places exports identical bytes; the absolute path is
recorded only when asked for (``ingest_paths(absolute_paths=True)``, ``--absolute-paths``).
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from hcgraph.exporting import export
from hcgraph.ingest import discover, ingest_paths
from hcgraph.store import Store
from hcgraph.vocab import HC
from hcsample.corpus import generate_corpus

SEED = Path(__file__).resolve().parent / "fixtures" / "agentic-rl-production.json"
RELATIVE = {"seed.json", "sub/g0.json", "sub/g1.json", "sub/g2.json"}


def _corpus(root: Path) -> Path:
    corpus = root / "deep" / "corpus"
    (corpus / "sub").mkdir(parents=True)
    shutil.copy(SEED, corpus / "seed.json")
    for i, story in enumerate(generate_corpus(3, seed=4).stories):
        (corpus / "sub" / f"g{i}.json").write_text(json.dumps(story))
    return corpus


def _export(paths: list[Path], fmt: str = "nquads", **kwargs: bool) -> bytes:
    with Store(None) as store:
        report = ingest_paths(store, paths, **kwargs)
        assert report.ok and len(report.results) == 4, report.failures
        out = io.BytesIO()
        export(store, fmt, out)
    return out.getvalue()


def _locations(data: bytes) -> set[str]:
    pred = f"<{HC.sourceLocation}>"
    return {
        line.split(pred, 1)[1].split('"')[1] for line in data.decode().splitlines() if pred in line
    }


@pytest.mark.parametrize("fmt", ["nquads", "turtle"])
def test_same_corpus_at_two_paths_exports_identical_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")
    a = _corpus(tmp_path / "home" / "alice")
    b = _corpus(tmp_path / "srv" / "bob" / "elsewhere")
    assert _export([a], fmt) == _export([b], fmt)
    assert _export([a / "seed.json", a / "sub"], fmt) == _export([b / "seed.json", b / "sub"], fmt)


def test_locations_are_relative_unless_absolute_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")
    corpus = _corpus(tmp_path)
    relative = _locations(_export([corpus]))
    assert relative == RELATIVE
    assert str(tmp_path) not in _export([corpus]).decode()
    assert _locations(_export([corpus / "seed.json", corpus / "sub"])) == {
        "seed.json", "g0.json", "g1.json", "g2.json"
    }  # fmt: skip
    absolute = _locations(_export([corpus], absolute_paths=True))
    assert absolute == {str((corpus / r).resolve()) for r in relative}


def test_local_files_are_still_not_crawled(tmp_path: Path) -> None:
    with Store(None) as store:
        ingest_paths(store, [_corpus(tmp_path)])
        urls = store.story_graphs()
        assert len(urls) == 4
        for url in urls:
            assert store.raw_sha256(url) is not None
            assert store.crawled_from(url) is None


def test_cli_absolute_paths_flag(tmp_path: Path, invoke: object) -> None:
    corpus = _corpus(tmp_path)
    for flag, expect_abs in (([], False), (["--absolute-paths"], True)):
        store_dir = tmp_path / f"store{len(flag)}"
        result = invoke("ingest", corpus, "--store", store_dir, *flag)  # type: ignore[operator]
        assert result.exit_code == 0, result.output
        with Store(store_dir) as store:
            out = io.BytesIO()
            export(store, "nquads", out)
        locs = _locations(out.getvalue())
        if expect_abs:
            assert locs == {str((corpus / r).resolve()) for r in RELATIVE}
        else:  # relative to the directory given, as ingest_paths records them
            assert locs == RELATIVE


def test_discovery_order_is_path_order(tmp_path: Path) -> None:
    """Files are found in the order of their paths part by part (not as plain strings, where
    ``a-c.json`` would sort before ``a/b.json``): the order stories are ingested in."""
    for rel in ("a/b.json", "a-c.json", "a.json", "b/a.json", "a/a/z.json", "a.json.d/x.json"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}")
    (tmp_path / "dir.json").mkdir()  # a directory named like a story file is not one
    found = list(discover([tmp_path]))
    assert found == sorted(p for p in tmp_path.rglob("*.json") if p.is_file())
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "a/a/z.json", "a/b.json", "a-c.json", "a.json", "a.json.d/x.json", "b/a.json"
    ]  # fmt: skip
