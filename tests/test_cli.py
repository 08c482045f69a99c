"""The CLI on temporary directories: output, files written, exit codes, one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import rdflib

from hcgraph.cli import COMMANDS
from tests.conftest import SEED_URL


@pytest.fixture
def stories_dir(tmp_path: Path, seed_path: Path) -> Path:
    d = tmp_path / "stories"
    d.mkdir()
    shutil.copy(seed_path, d / "seed.json")
    (d / "broken.json").write_text('{"schema": "hangingcontext.desk/1", "id": ')
    (d / "edition.json").write_text(json.dumps({"schema": "hangingcontext.desk/1", "type": "x"}))
    bad = json.loads(seed_path.read_text())
    bad["url"] = "https://news.example.org/stories/x/"
    del bad["sections"][1]["paragraphs"][0]["cites"][0]["manifest_id"]
    (d / "schema-violation.json").write_text(json.dumps(bad))
    return d


def test_ingest_reports_bad_files_and_ingests_the_rest(run_cli, stories_dir: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    proc = run_cli("ingest", stories_dir, "--store", tmp_path / "st")
    assert proc.returncode == 3
    errors = proc.stderr.strip().splitlines()
    assert len(errors) == 3  # one line per bad file, no traceback
    assert "Traceback" not in proc.stderr
    assert any("broken.json: invalid JSON" in e for e in errors)
    assert any("edition.json: schema: not a story" in e for e in errors)
    assert any(
        "schema-violation.json: sections[1].paragraphs[0].cites[0].manifest_id: field required" in e
        for e in errors
    )
    assert "1 added" in proc.stdout and "3 failed" in proc.stdout
    stats = run_cli("stats", "--format", "json", "--store", tmp_path / "st")
    assert stats.returncode == 0
    data = json.loads(stats.stdout)
    assert data["stories"] == 1
    assert data["nodes"]["Paragraph"] == 9 and data["nodes"]["Claim"] == 24


def test_ingest_good_files_exit_zero(invoke, seed_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = invoke("ingest", seed_path, "--store", tmp_path / "st")
    assert result.exit_code == 0, result.output
    assert "1 added" in result.output
    again = invoke("ingest", seed_path, "--store", tmp_path / "st")
    assert "1 unchanged" in again.output


def test_export_to_stdout_and_file(invoke, seed_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    invoke("ingest", seed_path, "--store", tmp_path / "st")
    to_stdout = invoke("export", "--format", "ntriples", "--store", tmp_path / "st")
    assert to_stdout.exit_code == 0
    # the seed's 692 triples: 562 of its own before issue 9, plus 5 hc:citesManifest and
    # 4 hc:listsPublisher summary links, minus the 4 hc:slug on related links (dropped), plus
    # 51 from issue 11 (stated cito:Citation/prov:Agent/... types, citation characterizations),
    # plus 72 from the claim uses (24 hc:citesClaimUnder links, 24 times hc:claim and hc:manifest),
    # plus 2 from issue 25 (the writer and hcgraph `a schema:SoftwareApplication`)
    assert len(to_stdout.stdout_bytes.splitlines()) == 692
    out = tmp_path / "out" / "graph.ttl"
    result = invoke("export", "--format", "turtle", "--out", out, "--store", tmp_path / "st")
    assert result.exit_code == 0 and out.exists()
    g = rdflib.Graph().parse(out, format="turtle")
    assert (rdflib.URIRef(SEED_URL), None, None) in g
    assert not list(out.parent.glob(".graph.ttl.*"))  # no temp file left behind


def test_stats_table(invoke, seed_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    invoke("ingest", seed_path, "--store", tmp_path / "st")
    result = invoke("stats", "--store", tmp_path / "st")
    assert result.exit_code == 0
    assert "Paragraph" in result.output and "692" in result.output


def test_user_errors_are_one_line(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proc = run_cli("export", "--store", tmp_path / "missing")
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0
    assert proc.stderr.startswith("error: ") and "no store here" in proc.stderr
    proc = run_cli("ingest", tmp_path / "nope.json", "--store", tmp_path / "st")
    assert proc.returncode == 1 and "no such file" in proc.stderr  # a user error (was 3)
    assert not (tmp_path / "st").exists()
    proc = run_cli("export", "--format", "xml", "--store", tmp_path / "st")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def _leaf_commands() -> list[tuple[str, ...]]:
    """Every command as its argv: a group's subcommands one by one."""
    import importlib

    import click

    out: list[tuple[str, ...]] = []
    for name, target in sorted(COMMANDS.items()):
        module, attr = target.split(":")
        command = getattr(importlib.import_module(module), attr)
        if isinstance(command, click.Group):
            out += [(name, sub) for sub in sorted(command.commands)]
        else:
            out.append((name,))
    return out


@pytest.mark.parametrize("argv", _leaf_commands(), ids=" ".join)
def test_every_command_has_help_with_example(invoke, argv: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    result = invoke(*argv, "--help")
    assert result.exit_code == 0
    assert "Example" in result.output
    assert "--store" in result.output


@pytest.mark.slow  # a subprocess
def test_installed_entry_point_smoke(tmp_path: Path) -> None:
    """The console script pip installs (skipped only where the package is not installed)."""
    import subprocess

    exe = shutil.which("hcgraph")
    if exe is None:
        pytest.skip("hcgraph is not installed as a console script here")
    proc = subprocess.run([exe, "--version"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0 and "hcgraph" in proc.stdout


@pytest.mark.slow  # a subprocess
def test_help_lists_every_command_without_importing_it() -> None:
    """``hcgraph --help`` reads the summaries, and each is its command's own first line."""
    import importlib
    import subprocess
    import sys

    from hcgraph.cli import COMMANDS, SUMMARIES

    assert set(SUMMARIES) == set(COMMANDS)
    for name, target in COMMANDS.items():
        module, attr = target.split(":")
        command = getattr(importlib.import_module(module), attr)
        assert (command.help or "").splitlines()[0].strip() == SUMMARIES[name], name
    code = (
        "import sys; from hcgraph.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('hcgraph')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = done.stdout.strip().splitlines()[-1]
    assert "hcgraph.cli.crawl" not in loaded and "hcgraph.store" not in loaded, loaded
