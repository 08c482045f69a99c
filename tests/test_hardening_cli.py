"""Issue 14, items 7 and 8: every command fails in one line when it cannot write, and
outputs get the usual file mode (0666 & ~umask)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from hcgraph._io import write_atomic
from tests.conftest import SEED, SEED_URL, cli_env

pytestmark = pytest.mark.slow

BAD = "/proc/nope"


@pytest.fixture(scope="module")
def good_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("good") / "store"
    subprocess.run(
        [sys.executable, "-m", "hcgraph", "ingest", str(SEED), "--store", str(store)],
        check=True, capture_output=True, env=cli_env(),
    )  # fmt: skip
    return store


CASES: list[tuple[str, list[str]]] = [
    ("ingest", ["ingest", str(SEED), "--store", f"{BAD}/store"]),
    ("export-out", ["export", "--out", f"{BAD}/x.ttl", "--store", "{good}"]),
    ("export-split", ["export", "--format", "nquads", "--split", "10", "--out", f"{BAD}/d",
                      "--store", "{good}"]),
    ("export-store", ["export", "--store", f"{BAD}/store"]),
    ("query-out", ["query", "source-reuse", "--out", f"{BAD}/x.csv", "--store", "{good}"]),
    ("query-store", ["query", "source-reuse", "--store", f"{BAD}/store"]),
    ("viz-out", ["viz", "--out", f"{BAD}/map.html", "--store", "{good}"]),
    ("viz-store", ["viz", "--store", f"{BAD}/store"]),
    ("stats", ["stats", "--store", f"{BAD}/store"]),
    ("check", ["check", "--store", f"{BAD}/store"]),
    ("rebuild", ["rebuild", "--store", f"{BAD}/store"]),
    ("archive-export", ["archive", "export", "--wacz", "x.wacz", "--store", f"{BAD}/store"]),
    ("demo", ["demo", "--out", f"{BAD}/out"]),
    ("crawl", ["crawl", "https://site.example/stories/a/", "--store", f"{BAD}/store"]),
    ("push", ["push", "--endpoint", "http://127.0.0.1:9", "--store", f"{BAD}/store"]),
    ("serve", ["serve", "--store", f"{BAD}/store"]),
    *[(f"trace-{fmt}", ["trace", SEED_URL, "--format", fmt, "-o", f"{BAD}/t.{fmt}",
                        "--store", "{good}"]) for fmt in ("tree", "json", "md", "provn")],
]  # fmt: skip


@pytest.mark.parametrize(("name", "args"), CASES, ids=[c[0] for c in CASES])
def test_unwritable_output_is_one_line(
    good_store: Path, name: str, args: list[str], run_cli: Any
) -> None:
    argv = [a.replace("{good}", str(good_store)) for a in args]
    proc = run_cli(*argv)
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert BAD in lines[0]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_outputs_get_the_usual_mode(good_store: Path, tmp_path: Path, run_cli: Any) -> None:
    old = os.umask(0o022)
    os.umask(old)
    out = tmp_path / "out"
    assert run_cli("export", "--out", out / "g.ttl", "--store", good_store).returncode == 0
    assert run_cli("query", "source-reuse", "--out", out / "q.csv", "--store", good_store)
    assert run_cli("viz", "--out", out / "map.html", "--store", good_store).returncode == 0
    assert run_cli("demo", "--out", out / "demo").returncode == 0
    expected = 0o666 & ~0o022  # the subprocess inherits this process's umask (022 in CI)
    expected = 0o666 & ~old
    for path in [out / "g.ttl", out / "q.csv", out / "map.html", out / "demo" / "graph.ttl"]:
        assert _mode(path) == expected, path


# A story named by text that is no IRI: a slug, a space, a non-UTF-8 byte (Python sees the
# lone surrogate "\udcff"; subprocess passes it back as the byte 0xff). Each command gives
# its own "no such story" line, as for a URL it does not hold.
NOT_IRIS = ["agentic-rl-production", "https://hangingcontext.com/ #s1", "\udcff"]
UNKNOWN_STORY = {
    "audit": "no such story in the store",
    "history": "no version of this story in the store or archive",
    "trace": "in the store",  # "no such story in the store" or "not a story URL, … in the store"
}


@pytest.mark.parametrize("command", sorted(UNKNOWN_STORY))
@pytest.mark.parametrize("target", NOT_IRIS, ids=["slug", "space", "non-utf8"])
def test_story_that_is_no_iri_is_one_line(
    good_store: Path, run_cli: Any, command: str, target: str
) -> None:
    proc = run_cli(command, target, "--store", good_store)
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert lines[0].endswith(UNKNOWN_STORY[command]), lines[0]


def test_query_string_parameter_not_utf8_is_one_line(
    good_store: Path, run_cli: Any, tmp_path: Path
) -> None:
    query = tmp_path / "t.rq"
    query.write_text("# title: t\n# param: t string\nSELECT ?t WHERE { }\n")
    proc = run_cli("query", query, "-p", "t=\udcff", "--store", good_store)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip() == "error: parameter t: not valid UTF-8 text: '\\udcff'"


def test_trace_creates_the_output_directory(good_store: Path, tmp_path: Path, run_cli: Any) -> None:
    """``trace -o new/dir/t.md`` makes the missing directories, like every other output."""
    out = tmp_path / "new" / "dir" / "t.md"
    proc = run_cli("trace", SEED_URL, "--format", "md", "-o", out, "--store", good_store)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert out.read_text(encoding="utf-8").startswith("#")
    assert _mode(out) == 0o666 & ~_umask()


def test_demo_query_output_blocked_by_a_directory(tmp_path: Path, run_cli: Any) -> None:
    """A directory where the demo writes a query result: one error line, no traceback."""
    blocked = tmp_path / "out" / "queries" / "source-reuse.csv"
    blocked.mkdir(parents=True)
    proc = run_cli("demo", "--out", tmp_path / "out", "--stories", "3")
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1
    assert lines[-1].startswith("error: ") and str(blocked) in lines[-1], proc.stderr


def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old


def test_export_writes_through_a_symlink(good_store: Path, tmp_path: Path, run_cli: Any) -> None:
    """``--out link`` replaces the link's target (atomically) and keeps the link."""
    real = tmp_path / "real" / "graph.ttl"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "dev" / "link.ttl"
    link.parent.mkdir()
    link.symlink_to(real)
    proc = run_cli("export", "--out", link, "--store", good_store)
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert "hangingcontext.com" in real.read_text(encoding="utf-8")
    assert list(link.parent.iterdir()) == [link]  # no temporary file left beside the link
    dangling = tmp_path / "dev" / "dangling.ttl"
    dangling.symlink_to(tmp_path / "real" / "new.ttl")
    assert run_cli("export", "--out", dangling, "--store", good_store).returncode == 0
    assert dangling.is_symlink() and (tmp_path / "real" / "new.ttl").stat().st_size > 0


def test_export_to_a_null_device_keeps_the_device(
    good_store: Path, tmp_path: Path, run_cli: Any
) -> None:
    """A character device is written into, not replaced by a regular file.

    As root the test makes its own null device in tmp_path: a writer that renames over the
    target (the bug) would otherwise replace the machine's /dev/null. As another user
    /dev/null itself is safe to use (its directory is not writable).
    """
    device = Path("/dev/null")
    if os.geteuid() == 0:
        device = tmp_path / "null"
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    proc = run_cli("export", "--out", device, "--store", good_store)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert stat.S_ISCHR(os.lstat(device).st_mode)


@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
def test_export_to_stdout_sent_to_a_file_appends_to_it(
    good_store: Path, tmp_path: Path, name: str
) -> None:
    """``--out /dev/stdout >> log``: the export goes where the shell sent stdout, after what
    the log held (resolving the name would rename over the log; opening it would truncate)."""
    log = tmp_path / "log"
    log.write_text("EARLIER\n")
    inode = log.stat().st_ino
    with log.open("ab") as stdout:
        proc = subprocess.run(
            [sys.executable, "-m", "hcgraph", "export", "--out", name, "--store", str(good_store)],
            stdout=stdout, stderr=subprocess.PIPE, text=True, env=cli_env(), timeout=120,
        )  # fmt: skip
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    text = log.read_text(encoding="utf-8")
    assert text.startswith("EARLIER\n") and "hangingcontext.com" in text
    assert log.stat().st_ino == inode and sorted(tmp_path.iterdir()) == [log]


def test_export_to_a_fifo_writes_into_it(good_store: Path, tmp_path: Path, run_cli: Any) -> None:
    """A FIFO is written straight into (read here by a thread), and stays a FIFO."""
    fifo = tmp_path / "pipe.ttl"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as handle:  # blocks until the writer opens it
            received.append(handle.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        proc = run_cli("export", "--out", fifo, "--store", good_store)
        reader.join(timeout=30)
    finally:
        if reader.is_alive():  # the writer never opened the FIFO: unblock the reader
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            reader.join(timeout=5)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert received and b"hangingcontext.com" in received[0]


@pytest.mark.parametrize(
    ("private", "mask", "mode"), [(False, 0o027, 0o640), (False, 0o002, 0o664), (True, 0, 0o600)]
)
def test_an_output_is_created_with_its_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private: bool, mask: int, mode: int
) -> None:
    """The temporary file is created with the output's mode (the kernel applies the umask):
    no chmod afterwards, and the process-wide umask is neither flipped nor read."""

    def refuse(*_args: object) -> None:
        raise AssertionError("the umask was flipped or the file chmod-ed")

    old = os.umask(mask)
    try:
        monkeypatch.setattr(os, "umask", refuse)
        monkeypatch.setattr(os, "chmod", refuse)
        write_atomic(tmp_path / "out.txt", b"x", private=private)
    finally:
        monkeypatch.undo()
        os.umask(old)
    assert _mode(tmp_path / "out.txt") == mode
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]  # no temporary file left
