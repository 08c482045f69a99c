"""Issue 38: a query's memory is limited (``query`` and ``serve --query-memory``); a query
past its limit is answered with one clear line, never an OOM kill."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from hcgraph.ingest import ingest_bytes
from hcgraph.limits import (
    MIN_QUERY_MEMORY,
    default_query_memory,
    died_of_memory,
    parse_memory,
    physical_memory,
)
from hcgraph.serve import Endpoint
from hcgraph.store import Store
from hcsample.corpus import generate_corpus

SEED = Path(__file__).resolve().parent / "fixtures" / "agentic-rl-production.json"

# Every pair of triples, sorted: ~25 million rows for this store, gigabytes to sort.
_HEAVY = "SELECT ?a ?c ?d WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?c ?d LIMIT 1"


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("qmemory") / "store"
    corpus = generate_corpus(10, seed=3, include_seed=json.loads(SEED.read_text()))
    with Store(directory) as st:
        ingest_bytes(st, ((json.dumps(s).encode(), str(s["url"])) for s in corpus.stories))
    return directory


def test_a_query_past_its_memory_limit_is_one_line(
    run_cli: Any, store_dir: Path, tmp_path: Path
) -> None:
    rq = tmp_path / "heavy.rq"
    rq.write_text(_HEAVY + "\n")
    proc = run_cli("query", rq, "--query-memory", "300M", "--store", store_dir)
    assert proc.returncode == 1
    (line,) = proc.stderr.strip().splitlines()  # Oxigraph's abort message is kept out
    assert line.startswith(f"error: {rq}: the query needed more than 300 MiB of memory")
    assert "(--query-memory); stopped" in line


def test_under_its_limit_a_query_answers_as_without(run_cli: Any, store_dir: Path) -> None:
    answers = [
        run_cli("query", "publisher-reach", "--format", "csv", "--query-memory", memory,
                "--store", store_dir)
        for memory in ("0", "1G")
    ]  # fmt: skip
    assert [a.returncode for a in answers] == [0, 0]
    assert answers[0].stdout == answers[1].stdout and answers[0].stdout.count("\n") > 1
    assert answers[1].stderr == ""


def test_a_limit_too_small_to_start_is_a_usage_error(invoke: Any, store_dir: Path) -> None:
    for bad, why in (("10M", "less than the 256 MiB"), ("lots", "is not a size")):
        result = invoke("query", "publisher-reach", "--query-memory", bad, "--store", store_dir)
        assert result.exit_code == 2 and why in result.output


@pytest.mark.slow
def test_serve_answers_a_query_past_its_memory_limit_with_503(store_dir: Path) -> None:
    with Endpoint(store_dir, port=0, workers=1, query_memory=300 << 20) as ep:
        heavy = httpx.get(ep.query_url, params={"query": _HEAVY}, timeout=120)
        assert heavy.status_code == 503
        assert heavy.text.startswith("the query needed more than 300 MiB of memory")
        assert "(hcgraph serve --query-memory)" in heavy.text
        light = httpx.get(ep.query_url, params={"query": "ASK { ?s ?p ?o }"}, timeout=60)
        assert light.status_code == 200  # a fresh worker took the dead one's place


def test_sizes_and_the_default() -> None:
    assert parse_memory("2G") == 2 << 30 and parse_memory("1.5GiB") == 3 << 29
    assert parse_memory("512mb") == 512 << 20 and parse_memory("none") == 0
    with pytest.raises(ValueError, match="less than"):
        parse_memory("100M")
    total = physical_memory()
    assert total is not None and total > MIN_QUERY_MEMORY
    one, four = default_query_memory(), default_query_memory(4)
    assert one <= total // 2 and four == max(MIN_QUERY_MEMORY, int(total * 0.5) // 4)
    assert died_of_memory(-6) and died_of_memory(1, b"Traceback ...\nMemoryError\n")
    assert not died_of_memory(1, b"Traceback ...\nValueError: no\n") and not died_of_memory(-9)
