"""The fork server behind ``run_cli`` answers as ``subprocess.run`` of a fresh interpreter
does: the same stdout, stderr and exit codes, a kill at the timeout."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SEED, cli_env
from tests.support.forkserver import ForkServer, drain_terminal


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


def _on_a_terminal(server: ForkServer | None, args: list[str], cwd: Path) -> tuple[int, bytes]:
    """``hcgraph ARGS`` with its three streams on a pseudo-terminal: status and output."""
    import os

    master, slave = os.openpty()
    env = {**cli_env(), "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    proc: Any
    if server is None:
        proc = subprocess.Popen([sys.executable, "-m", "hcgraph", *args], stdin=slave,
                                stdout=slave, stderr=slave, cwd=cwd, env=env)  # fmt: skip
    else:
        proc = server.spawn(args, env=env, cwd=cwd, fds=(slave, slave, slave))
    os.close(slave)
    output = drain_terminal(master)
    return proc.wait(timeout=120), output


@pytest.mark.slow
def test_a_command_forked_onto_a_terminal_styles_as_a_fresh_interpreter_does(
    fresh_cli_forkserver: ForkServer | None, tmp_path: Path
) -> None:
    """The CLI imported in the child (not in the server) makes its consoles for the child's
    terminal: rich's colours, the same bytes as a fresh interpreter on a terminal."""
    if fresh_cli_forkserver is None:
        pytest.skip("HCGRAPH_TEST_FORKSERVER=0: run_cli starts an interpreter per call")
    assert _fresh("ingest", str(SEED), "--store", "s", cwd=tmp_path).returncode == 0
    for args in (["stats", "--store", "s"], ["audit", "--store", "s"]):
        ours = _on_a_terminal(fresh_cli_forkserver, args, tmp_path)
        theirs = _on_a_terminal(None, args, tmp_path)
        assert ours == theirs, args
        assert b"\x1b[" in ours[1]  # styled: the console saw a terminal


@pytest.mark.slow
def test_the_client_runs_a_command_with_its_own_streams_status_and_signals(
    fresh_cli_forkserver: ForkServer | None, tmp_path: Path
) -> None:
    """``forkserver.CLIENT`` as a shell runs ``hcgraph``: output, exit status, and a SIGTERM
    to the client stops the command (a server in the background of a docs block)."""
    from tests.conftest import free_port
    from tests.support.forkserver import CLIENT

    if fresh_cli_forkserver is None:
        pytest.skip("HCGRAPH_TEST_FORKSERVER=0: run_cli starts an interpreter per call")
    client = tmp_path / "client.py"
    client.write_text(CLIENT)
    command = [sys.executable, "-I", "-S", str(client), *fresh_cli_forkserver.sockets, "--"]
    for args in (["--version"], ["no-such-command"]):
        ours = subprocess.run([*command, *args], capture_output=True, text=True,
                              env=cli_env(), cwd=tmp_path, timeout=120)  # fmt: skip
        theirs = _fresh(*args, cwd=tmp_path)
        assert (ours.returncode, ours.stdout, ours.stderr) == (
            theirs.returncode, theirs.stdout, theirs.stderr
        ), args  # fmt: skip
    assert _fresh("ingest", str(SEED), "--store", "s", cwd=tmp_path).returncode == 0
    port = free_port()
    serving = subprocess.Popen([*command, "serve", "--port", str(port), "--store", "s"],
                               env=cli_env(), cwd=tmp_path, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert serving.stderr is not None
    assert f"127.0.0.1:{port}" in serving.stderr.readline()  # the banner: it listens
    serving.send_signal(signal.SIGTERM)
    serving.communicate(timeout=60)  # the client ends (TimeoutExpired if it did not) ...
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) != 0:
                break  # the server behind the client is gone
        time.sleep(0.1)
    else:
        pytest.fail("the command went on serving after its client got SIGTERM")  # ... and so
    # does the command


@pytest.mark.slow
def test_a_crawl_whose_store_worker_is_forked_stores_what_a_thread_does(
    crawl_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process crawls fork their store worker (tests/support/storeworker.py): a separate
    process that stores the same graph as the in-process (thread) runner."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")  # reaches the worker's environment
    from hcgraph.crawling import worker
    from tests.crawlserver import hub_site, quads_of, stories_in
    from tests.support.storeworker import WorkerSubprocess

    if not isinstance(worker.subprocess, WorkerSubprocess):
        pytest.skip("HCGRAPH_TEST_FORKSERVER=0: store workers are spawned")
    site = hub_site(crawl_server, [f"s{n}" for n in range(4)])
    forked = site.crawl(tmp_path / "p")
    assert worker.subprocess._server is not None  # the worker came from the server
    threaded = site.crawl(tmp_path / "t", store_worker="thread")
    assert forked.exit_code == threaded.exit_code == 0
    assert stories_in(tmp_path / "p") == stories_in(tmp_path / "t") and stories_in(tmp_path / "p")
    assert quads_of(tmp_path / "p") == quads_of(tmp_path / "t")


@pytest.mark.slow
def test_a_cli_crawl_forks_its_store_worker_from_the_sessions_server(
    crawl_server: Any,
    tmp_path: Path,
    cli_forkserver: ForkServer | None,
    store_worker_forks: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A crawl a CLI fork server runs (``run_cli``, the docs' ``hcgraph``) forks its store
    worker from the session's store-worker server too: while the crawl waits for a slow
    page, its worker is a process of that server's and not the crawl's child (a fresh
    ``python -P -c`` would be); the crawl stores what the in-process thread runner does."""
    import psutil

    from tests.crawlserver import hub_site, page, quads_of, stories_in

    if cli_forkserver is None:
        pytest.skip("HCGRAPH_TEST_FORKSERVER=0: store workers are spawned")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")  # the CLI's and the thread's
    site = hub_site(crawl_server, ["s0", "s1", "s2"])
    site.add("s2", b"{}", delay=1.5)  # the crawl holds its worker open meanwhile
    servers = [psutil.Process(pid) for pid in store_worker_forks.server().pids]
    before = {p.pid for s in servers for p in s.children(recursive=True)}
    out = tmp_path / "out"
    with open(out, "wb") as fh:
        crawl = cli_forkserver.spawn(
            ["crawl", page("a"), "--mirror", site.mirror, "--store", str(tmp_path / "p"),
             "--depth", "1"],
            env=cli_env(), cwd=tmp_path, fds=(0, fh.fileno(), fh.fileno()),
        )  # fmt: skip
    workers: set[int] = set()
    while crawl.poll() is None:  # the worker lives from the crawl's start to its end
        workers |= {p.pid for s in servers for p in s.children(recursive=True)} - before
        try:
            children = [" ".join(c.cmdline()) for c in psutil.Process(crawl.pid).children()]
        except psutil.NoSuchProcess:  # the crawl or a child of it just ended
            continue
        assert not [c for c in children if "hcgraph.crawling.worker" in c], children
        time.sleep(0.05)
    assert crawl.wait() == 3, out.read_text()  # s2 is no story: one failure
    assert workers, "no store worker was forked from the session's server"
    threaded = site.crawl(tmp_path / "t", store_worker="thread", depth=1)
    assert threaded.exit_code == 3
    assert stories_in(tmp_path / "p") == stories_in(tmp_path / "t") and stories_in(tmp_path / "p")
    assert quads_of(tmp_path / "p") == quads_of(tmp_path / "t")
