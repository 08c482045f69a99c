"""Kill -9 a Python process at a chosen point of its work, for the crash-safety tests."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Mapping

from tests.conftest import ROOT, cli_env


def kill_after_lines(script: str, lines: int, env: Mapping[str, str] | None = None) -> None:
    """Run ``python -c script`` and SIGKILL it once it has printed ``lines`` lines (the
    script prints one as each write it wants interrupted begins)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script], env={**cli_env(), **(env or {})}, cwd=ROOT,
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    for seen, _ in enumerate(proc.stdout, 1):
        if seen == lines:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
