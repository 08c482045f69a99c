"""The runnable code blocks of the README and ``docs/*.md``: find them, run them, compare.

A fenced block right after the HTML comment ``<!-- test -->`` is run by
``tests/test_docs.py``, in the order it appears, in one scratch directory per document that
holds ``tests/fixtures/``, ``queries/`` and the ``output/`` a fresh ``hcgraph demo`` wrote;
``<!-- test: fresh -->`` runs the block in a new scratch directory without ``output/``.

* ``console``: each ``$ `` line is a shell command (a trailing ``\\`` continues it); the
  lines up to the next ``$ `` are its expected output (stdout and stderr together, trailing
  spaces ignored; ``...`` stands for any text, as doctest's ELLIPSIS). A command must exit
  0 unless the next command is ``echo $?``, which then shows its status.
* ``bash`` / ``sh``: every command must exit 0; the output is not compared.
* ``python``: with ``>>>`` prompts, a doctest (ELLIPSIS, NORMALIZE_WHITESPACE); without,
  run as a script. Either way in a fresh interpreter, in the scratch directory.

A command ending in ``&`` runs in the background with its output discarded; if it binds a
port (``--bind HOST:PORT`` or ``--port PORT``), the next command waits until that port
answers; it is stopped when the block ends. Port ``7878`` in a block is replaced by a free port.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

MARKER = re.compile(
    r"<!-- test(?::\s*(?P<mode>[a-z]+))?\s*-->\n```(?P<lang>[a-z]*)\n(?P<body>.*?)^```", re.S | re.M
)
SEPARATOR = "\x1e"  # printed between commands, so each command's output can be told apart
DOC_PORT = "7878"


@dataclass(frozen=True)
class Block:
    """One runnable fenced block of a Markdown file."""

    path: Path
    line: int  # of the opening fence
    lang: str
    mode: str  # "demo" (the document's directory) or "fresh"
    body: str

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"


@dataclass(frozen=True)
class Step:
    """A shell command and, in a console block, the output shown for it."""

    command: str
    expected: str | None


def blocks(path: Path) -> list[Block]:
    """Every block of *path* marked ``<!-- test -->`` (or ``<!-- test: MODE -->``)."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in MARKER.finditer(text):
        line = text.count("\n", 0, match.start("lang")) + 1
        mode = match.group("mode") or "demo"
        if mode not in {"demo", "fresh"}:
            raise ValueError(f"{path.name}:{line}: unknown test mode {mode!r}")
        found.append(Block(path, line, match.group("lang"), mode, match.group("body")))
    return found


def steps(block: Block) -> list[Step]:
    """The commands of a console or shell block, continuation lines joined."""
    console = block.lang == "console"
    result: list[Step] = []
    command: list[str] = []
    output: list[str] = []

    def flush() -> None:
        if command:
            result.append(Step(" ".join(command), "\n".join(output) if console else None))
        command.clear()
        output.clear()

    continuing = False
    for raw in block.body.splitlines():
        line = raw.rstrip()
        if continuing:
            command.append(line.removesuffix("\\").strip())
            continuing = line.endswith("\\")
        elif (console and line.startswith("$ ")) or (
            not console and line and not line.startswith("#")
        ):
            flush()
            line = line[2:] if console else line
            command.append(line.removesuffix("\\").strip())
            continuing = line.endswith("\\")
        elif console:
            output.append(raw)
    flush()
    return result


def matches(expected: str, actual: str) -> bool:
    """Does *actual* read as *expected* (trailing spaces ignored, ``...`` is any text)?"""
    pattern = ".*?".join(re.escape(part) for part in _normal(expected).split("..."))
    return re.fullmatch(pattern, _normal(actual), re.S) is not None


def _normal(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def run_shell(
    block: Block, cwd: Path, env: dict[str, str], port: int
) -> list[tuple[Step, str, int]]:
    """Run a console or shell block in one bash process: each step's output and status."""
    todo = [Step(s.command.replace(DOC_PORT, str(port)),
                 None if s.expected is None else s.expected.replace(DOC_PORT, str(port)))
            for s in steps(block)]  # fmt: skip
    script = ["exec 2>&1"]
    for step in todo:
        if step.command.endswith("&"):
            script.append(f"{step.command[:-1]} >/dev/null 2>&1 &")
            bind = re.search(r"--(?:bind \S*:|port )(\d+)", step.command)
            if bind:  # wait (bounded) until the server listens
                script.append(f"for _ in $(seq 200); do (: </dev/tcp/127.0.0.1/{bind.group(1)})"
                              " 2>/dev/null && break; sleep 0.1; done")  # fmt: skip
            script.append(f"printf '{SEPARATOR}0{SEPARATOR}'")
        else:
            script.append(step.command)
            script.append(f"__rc=$?; printf '{SEPARATOR}%s{SEPARATOR}' $__rc; (exit $__rc)")
    proc = subprocess.Popen(
        ["bash", "-c", "\n".join(script)], cwd=cwd, env=env, start_new_session=True,
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=240)
    finally:
        # the block's background servers share its process group
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()
    pieces = out.split(SEPARATOR)
    results = []
    for i, step in enumerate(todo):
        if 2 * i + 1 >= len(pieces):
            raise AssertionError(f"{block.where}: the block stopped before `{step.command}`")
        results.append((step, pieces[2 * i], int(pieces[2 * i + 1])))
    return results


def check_shell(block: Block, cwd: Path, env: dict[str, str], port: int) -> None:
    """Run a console or shell block and fail on a wrong output or a failed command."""
    results = run_shell(block, cwd, env, port)
    for i, (step, output, status) in enumerate(results):
        shows_status = i + 1 < len(results) and results[i + 1][0].command == "echo $?"
        if status != 0 and not shows_status:
            raise AssertionError(f"{block.where}: `{step.command}` exited {status}:\n{output}")
        if step.expected is not None and not matches(step.expected, output):
            raise AssertionError(
                f"{block.where}: `{step.command}` printed\n{output}\n--- the docs show\n"
                f"{step.expected}"
            )


def check_python(block: Block, cwd: Path, env: dict[str, str]) -> None:
    """Run a python block in a fresh interpreter in *cwd*, as a reader would: a doctest
    when it has ``>>>`` prompts (``python -m doctest``), otherwise a script."""
    with tempfile.TemporaryDirectory() as tmp:
        if ">>>" in block.body:
            source = Path(tmp) / f"{block.path.stem}-{block.line}.txt"
            args = ["-m", "doctest", "-o", "ELLIPSIS", "-o", "NORMALIZE_WHITESPACE"]
        else:
            source = Path(tmp) / f"{block.path.stem}-{block.line}.py"
            args = []
        source.write_text(block.body, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, *args, str(source)], cwd=cwd, env=env,
            capture_output=True, text=True, timeout=240,
        )  # fmt: skip
    assert done.returncode == 0, f"{block.where} failed:\n{done.stdout}{done.stderr}"
