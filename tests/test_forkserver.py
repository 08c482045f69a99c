"""The fork server behind ``run_cli`` answers as ``subprocess.run`` of a fresh interpreter
does: the same stdout, stderr and exit codes, a kill at the timeout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SEED, cli_env
from tests.support.forkserver import ForkServer


def _fresh(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hcgraph", *args],
        capture_output=True, text=True, env=cli_env(), cwd=cwd, timeout=120,
    )  # fmt: skip


@pytest.mark.slow
def test_a_forked_command_answers_as_a_fresh_interpreter_does(
    cli_forkserver: ForkServer | None, tmp_path: Path
) -> None:
    if cli_forkserver is None:
        pytest.skip("HCGRAPH_TEST_FORKSERVER=0: run_cli starts an interpreter per call")
    store = tmp_path / "store"
    cases = [
        ["--version"],
        ["no-such-command"],  # a usage error: exit 2
        ["stats", "--store", str(tmp_path / "missing")],  # a user error: exit 1, one line
        ["ingest", str(SEED), "--store", str(store)],
        ["stats", "--format", "json", "--store", "store"],  # relative: the cwd is honoured
    ]
    for args in cases:
        ours = cli_forkserver.run(args, env=cli_env(), cwd=tmp_path, timeout=120)
        if args[0] == "ingest":  # the same store written twice would differ; compare codes
            assert ours.returncode == 0, ours.stderr
            continue
        theirs = _fresh(*args, cwd=tmp_path)
        assert (ours.returncode, ours.stdout, ours.stderr) == (
            theirs.returncode,
            theirs.stdout,
            theirs.stderr,
        ), args
    assert {0, 1, 2} <= {cli_forkserver.run(a, env=cli_env(), cwd=tmp_path, timeout=60).returncode
                         for a in cases if a[0] != "ingest"}  # fmt: skip


@pytest.mark.slow
def test_a_forked_command_is_killed_at_its_timeout(
    cli_forkserver: ForkServer | None, tmp_path: Path
) -> None:
    if cli_forkserver is None:
        pytest.skip("HCGRAPH_TEST_FORKSERVER=0: run_cli starts an interpreter per call")
    store = tmp_path / "store"
    assert cli_forkserver.run(
        ["ingest", str(SEED), "--store", str(store)], env=cli_env(), cwd=None, timeout=120
    ).returncode == 0  # fmt: skip
    with pytest.raises(subprocess.TimeoutExpired):
        cli_forkserver.run(  # serve runs until Ctrl-C
            ["serve", "--port", "0", "--store", str(store)], env=cli_env(), cwd=None, timeout=3
        )
