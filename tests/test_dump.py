"""Bulk dumps: ``hcgraph export --format nquads --gzip [--split N]`` and the recipe in
docs/pushing.md that loads the shards with the real ``oxigraph load``."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from hcgraph import Store, ingest_bytes
from hcsample.corpus import generate_corpus
from tests.conftest import ROOT, cli_env


@pytest.fixture(scope="module")
def corpus_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("dump") / "store"
    corpus = generate_corpus(60, seed=66)
    with Store(directory) as store:
        report = ingest_bytes(
            store, ((json.dumps(d).encode(), str(d["url"])) for d in corpus.stories)
        )
        assert not report.failures
    return directory


def store_quads(directory: Path) -> set[ox.Quad]:
    with Store(directory, read_only=True) as store:
        return set(store.ox)


def shard_quads(path: Path) -> list[ox.Quad]:
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return list(ox.parse(data, format=ox.RdfFormat.N_QUADS))


def test_split_gzip_shards_hold_whole_graphs(corpus_store: Path, tmp_path: Path, invoke: Any):
    out = tmp_path / "dump"
    result = invoke("export", "--format", "nquads", "--gzip", "--split", 3000, "--out", out,
                    "--store", corpus_store)  # fmt: skip
    assert result.exit_code == 0, result.output
    shards = sorted(out.iterdir())
    assert len(shards) > 3
    assert [p.name for p in shards] == [f"graph-{i:05d}.nq.gz" for i in range(len(shards))]
    assert f"wrote {len(shards)} shards to {out} (nquads)" in result.output

    union: set[ox.Quad] = set()
    home: dict[ox.NamedNode, str] = {}
    for shard in shards:
        quads = shard_quads(shard)
        graphs = Counter(q.graph_name for q in quads)
        assert len(quads) <= 3000 or len(graphs) == 1, shard.name
        for graph in graphs:
            assert graph not in home, f"{graph} split across {home.get(graph)} and {shard.name}"
            home[graph] = shard.name
        union.update(quads)
    expected = store_quads(corpus_store)
    assert union == expected
    assert sum(len(shard_quads(s)) for s in shards) == len(expected)  # no duplicates
    with Store(corpus_store, read_only=True) as store:
        assert sorted(g.value for g in home) == store.graph_names()  # type: ignore[union-attr]

    # Deterministic: the same store gives byte-identical shards; stale shards are removed.
    before = {p.name: p.read_bytes() for p in shards}
    (out / "graph-99999.nq.gz").write_bytes(b"stale")
    again = invoke("export", "--format", "nquads", "--gzip", "--split", 3000, "--out", out,
                   "--store", corpus_store)  # fmt: skip
    assert again.exit_code == 0
    assert {p.name: p.read_bytes() for p in sorted(out.iterdir())} == before


def test_split_without_gzip_and_one_big_shard(corpus_store: Path, tmp_path: Path, invoke: Any):
    out = tmp_path / "plain"
    assert invoke("export", "--format", "nquads", "--split", 10**9, "--out", out,
                  "--store", corpus_store).exit_code == 0  # fmt: skip
    [shard] = sorted(out.iterdir())
    assert shard.name == "graph-00000.nq"
    assert set(shard_quads(shard)) == store_quads(corpus_store)


def test_gzip_single_file_and_stdout(corpus_store: Path, tmp_path: Path, invoke: Any, run_cli: Any):
    plain = tmp_path / "all.nq"
    packed = tmp_path / "all.nq.gz"
    assert (
        invoke("export", "--format", "nquads", "--out", plain, "--store", corpus_store).exit_code
        == 0
    )
    assert invoke("export", "--format", "nquads", "--gzip", "--out", packed,
                  "--store", corpus_store).exit_code == 0  # fmt: skip
    assert gzip.decompress(packed.read_bytes()) == plain.read_bytes()
    piped = subprocess.run(
        [sys.executable, "-m", "hcgraph", "export", "--format", "turtle", "--gzip",
         "--store", str(corpus_store)],
        capture_output=True, env=cli_env(), timeout=120, check=True,
    )  # fmt: skip
    turtle = gzip.decompress(piped.stdout)
    parsed = {t for t in ox.parse(turtle, format=ox.RdfFormat.TURTLE)}
    assert {q.triple for q in store_quads(corpus_store)} == {q.triple for q in parsed}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "turtle", "--split", "5", "--out", "d"], "--split needs --format nquads"),
        (["--format", "nquads", "--split", "5"], "--split needs --format nquads and --out DIR"),
    ],
)
def test_split_errors(corpus_store: Path, run_cli: Any, args: list[str], message: str):
    done = run_cli("export", *args, "--store", corpus_store)
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: {message}" or message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def readme_recipe(name: str) -> list[str]:
    """The shell lines of the docs/pushing.md block marked ``<!-- recipe: NAME -->``."""
    text = (ROOT / "docs" / "pushing.md").read_text(encoding="utf-8")
    match = re.search(rf"<!-- recipe: {name} .*?-->\s*```sh\n(.*?)```", text, re.S)
    assert match, f"docs/pushing.md has no recipe {name!r}"
    return [line for line in match.group(1).splitlines() if line and not line.startswith("#")]


@pytest.mark.slow  # a shell and the oxigraph binary
@pytest.mark.skipif(shutil.which("oxigraph") is None, reason="needs the oxigraph binary")
def test_readme_oxigraph_load_recipe(corpus_store: Path, tmp_path: Path):
    """Run the bulk-load recipe of docs/pushing.md verbatim (hcgraph = this checkout)."""
    lines = readme_recipe("oxigraph-load")
    steps = [line for line in lines if not line.startswith("oxigraph serve")]
    assert any(s.startswith("hcgraph export") for s in steps)
    assert any(s.startswith("oxigraph load") for s in steps)
    shutil.copytree(corpus_store, tmp_path / "output" / "store")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "hcgraph"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hcgraph "$@"\n')
    shim.chmod(0o755)
    env = cli_env()
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    script = "set -eu\n" + "\n".join(steps) + "\n"
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=240)  # fmt: skip
    assert done.returncode == 0, done.stderr
    location = re.search(r"--location (\S+)", next(s for s in steps if "oxigraph load" in s))
    assert location
    loaded = ox.Store.read_only(str(tmp_path / location.group(1)))
    expected = store_quads(corpus_store)
    assert len(loaded) == len(expected)
    assert set(loaded) == expected
    # The serve line of the recipe points at the same location.
    serve = next(line for line in lines if line.startswith("oxigraph serve"))
    assert f"--location {location.group(1)}" in serve and "--union-default-graph" in serve
