"""The README is tested: its commands exist, the quick start is the two promised commands,
and its console example runs."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from hcgraph.cli import COMMANDS
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()


def test_quick_start_is_two_commands() -> None:
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", quick, re.S)
    assert blocks[0].strip() == "pip install -e . && hcgraph demo"
    assert "pip install -e '.[test]'" in blocks[1] and "python -m pytest" in blocks[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python3 -m pytest" in ci and "pip install -q -e '.[test]'" in ci


def test_every_command_is_documented() -> None:
    for name in COMMANDS:
        assert f"hcgraph {name}" in README, f"README does not mention `hcgraph {name}`"


def test_readme_mentions_only_real_commands() -> None:
    mentioned = set(re.findall(r"`hcgraph ([a-z]+)", README))
    mentioned |= set(re.findall(r"^\$ hcgraph ([a-z]+)", README, re.M))
    assert mentioned <= set(COMMANDS), mentioned - set(COMMANDS)


def test_console_example_runs(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    shutil.copytree(ROOT / "tests" / "fixtures", tmp_path / "tests" / "fixtures")
    proc = run_cli("ingest", "tests/fixtures/", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (
        "ingested 1 stories (1 added, 0 replaced, 0 unchanged), 0 failed -> output/store"
    )
    proc = run_cli("export", "--format", "turtle", "--out", "output/graph.ttl", cwd=tmp_path)
    assert proc.returncode == 0 and (tmp_path / "output" / "graph.ttl").stat().st_size > 10_000
    proc = run_cli("stats", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0 and '"stories": 1' in proc.stdout


def test_vocabulary_table_names_declared_terms() -> None:
    from hcgraph.vocab import HC

    table = README.split("### Vocabulary", 1)[1].split("\n## ", 1)[0]
    used = set(re.findall(r"hc:([A-Za-z0-9]+)", table))
    assert used <= set(HC.__annotations__), used - set(HC.__annotations__)
    assert len(used) > 30
