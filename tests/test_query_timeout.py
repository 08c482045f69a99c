"""`hcgraph query --timeout-s`: a runaway query is stopped with one line, exit 1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hcgraph.ingest import ingest_bytes
from hcgraph.store import Store
from hcsample.corpus import generate_corpus
from tests.conftest import SEED


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("qtimeout") / "store"
    corpus = generate_corpus(10, seed=3, include_seed=json.loads(SEED.read_text()))
    with Store(directory) as st:
        ingest_bytes(st, ((json.dumps(s).encode(), str(s["url"])) for s in corpus.stories))
    return directory


def test_a_query_past_its_timeout_is_stopped(run_cli: Any, store_dir: Path, tmp_path: Path) -> None:
    rq = tmp_path / "cartesian.rq"
    rq.write_text("SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }\n")
    proc = run_cli("query", rq, "--timeout-s", "1", "--store", store_dir)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "did not finish within 1 s" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_within_its_timeout_a_query_answers_as_without(run_cli: Any, store_dir: Path) -> None:
    plain = run_cli("query", "publisher-reach", "--format", "csv", "--store", store_dir)
    limited = run_cli(
        "query", "publisher-reach", "--format", "csv", "--timeout-s", "60", "--store", store_dir
    )
    assert plain.returncode == limited.returncode == 0
    assert limited.stdout == plain.stdout and plain.stdout.count("\n") > 1
    bad = run_cli(
        "query", "co-citation", "-p", "story=nope", "--timeout-s", "60", "--store", store_dir
    )
    assert bad.returncode == 1 and "not an absolute IRI" in bad.stderr
    assert "Traceback" not in bad.stderr
