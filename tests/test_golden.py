"""Outputs are byte-identical on the fixture corpus before and after a refactor.

The seed story plus a small seeded generated corpus is ingested through the real CLI with a
fixed ``SOURCE_DATE_EPOCH``; the SHA-256 of every export format and of every saved query's
results in every results format is compared with ``tests/fixtures/golden.sha256``, which was
written by the code *before* the issue-10 refactors. A refactor that changes a single byte
of any output fails here.

Regenerate (only for an intended change of output, and say so in the CHANGELOG)::

    HCGRAPH_WRITE_GOLDEN=1 python -m pytest tests/test_golden.py
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, SEED, SEED_URL

# sha256sum's layout ("<digest>  <output>"), not .json: `hcgraph ingest tests/fixtures/`
# (the README's example) reads every .json file there as a story.
GOLDEN = FIXTURES / "golden.sha256"
EXPORTS = ["nquads", "trig", "turtle", "ntriples", "jsonld", "graphml", "gexf"]
RESULT_FORMATS = ["csv", "tsv", "json", "md", "table", "xml"]
# Saved queries and the parameters they need (the others need none).
QUERIES: dict[str, list[str]] = {
    "claim-reuse": [],
    "claim-stories": ["-p", "claim_id=1792440033556282600"],
    "co-citation": ["-p", f"story={SEED_URL}"],
    "dangling-citations": [],
    "declared-vs-derived": [],
    "duplicate-ids": [],
    "manifest-conflicts": [],
    "newsroom-publisher": [],
    "publisher-reach": [],
    "related-not-ingested": [],
    "source-lag-by-publisher": [],
    "source-lag": [],
    "source-reuse": [],
    "source-stories": ["-p", "manifest_id=1792439777014362933"],
    "story-trail": ["-p", f"story={SEED_URL}"],
    "uncited-paragraphs": [],
    "unsupported-key-facts": [],
}


@pytest.fixture(scope="module")
def golden_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The seed plus 40 generated stories (seed 7), ingested by the CLI at a fixed time."""
    from click.testing import CliRunner

    from hcgraph.cli import cli
    from hcsample.corpus import generate_corpus

    base = tmp_path_factory.mktemp("golden")
    stories = base / "stories"
    stories.mkdir()
    shutil.copy(SEED, stories / "seed.json")
    generate_corpus(40, seed=7, include_seed=None).write(stories / "generated")
    store = base / "store"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", "1790000000")
        result = CliRunner().invoke(cli, ["ingest", str(stories), "--store", str(store)])
    assert result.exit_code in (0, 3), result.output  # the corpus plants a few bad files
    yield store


def _outputs(store: Path) -> Iterator[tuple[str, bytes]]:
    from click.testing import CliRunner

    from hcgraph.cli import cli

    runner = CliRunner()

    def run(*args: str) -> bytes:
        result = runner.invoke(cli, [*args, "--store", str(store)], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.stdout_bytes

    for fmt in EXPORTS:
        yield f"export {fmt}", run("export", "--format", fmt)
    for name, params in QUERIES.items():
        for fmt in RESULT_FORMATS:
            # The first format through the default path (a child process under the memory
            # limit), the others in process: a fork of this large test process per call cost
            # 3 CPU s of the fast loop; test_query_memory shows the two paths print the same.
            limit = [] if fmt == RESULT_FORMATS[0] else ["--query-memory", "0"]
            yield f"query {name} {fmt}", run("query", name, *params, "--format", fmt, *limit)
    yield "stats json", run("stats", "--format", "json")


def test_outputs_are_byte_identical_to_the_golden_digests(golden_store: Path) -> None:
    digests = {key: hashlib.sha256(data).hexdigest() for key, data in _outputs(golden_store)}
    if os.environ.get("HCGRAPH_WRITE_GOLDEN"):
        GOLDEN.write_text("".join(f"{digest}  {key}\n" for key, digest in sorted(digests.items())))
    expected = dict(reversed(line.split("  ", 1)) for line in GOLDEN.read_text().splitlines())
    changed = sorted(
        k for k in expected.keys() | digests.keys() if expected.get(k) != digests.get(k)
    )
    assert not changed, f"outputs changed: {changed}"


def test_the_golden_corpus_is_not_trivial(golden_store: Path) -> None:
    """Guard the guard: the corpus gives every query something to say."""
    from click.testing import CliRunner

    from hcgraph.cli import cli

    result = CliRunner().invoke(
        cli, ["stats", "--format", "json", "--store", str(golden_store)], catch_exceptions=False
    )
    assert json.loads(result.stdout)["stories"] >= 30
