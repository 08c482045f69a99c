"""``python -m hcgraph`` in a real child process, without an interpreter start per call.

A CLI test that runs ``python -m hcgraph …`` spends most of its CPU starting Python and
importing hcgraph's dependencies (~0.45 of the ~0.5 CPU s of a small ``ingest``), once per
call, some hundred times a suite. A :class:`ForkServer` is a fresh interpreter (started
once, with the same environment a subprocess gets) that imports those modules and then,
per call, forks a child that *is* the command: its own process, ``hcgraph/__main__.py`` run
as ``__main__`` (as ``-m`` runs it), the call's arguments, environment and working
directory, the caller's stdin, stdout and stderr in files, its real exit status (a signal
shows as a negative code, as :mod:`subprocess` reports it), a kill at the timeout. Two
servers with different hash seeds take turns, so two calls in a row hash strings
differently, as two interpreter starts would (a determinism test still meets a new seed).

What a fork cannot give is kept out: a test about the interpreter start itself (what
``--help`` imports, start-up time) runs ``sys.executable`` with :mod:`subprocess`, not
this. ``HCGRAPH_TEST_FORKSERVER=0`` makes ``run_cli`` start an interpreter per call again.

hcgraph's CLI makes its rich consoles when ``hcgraph.cli`` is imported, and a console
decides then whether it may colour (is stdout a terminal, ``TERM``, ``NO_COLOR``): a server
that preloaded ``hcgraph.cli`` hands its children consoles made for its own pipe. Tests
whose point is a terminal (or an environment of their own) use servers that preload
:data:`PRELOAD_NO_CLI` instead: the libraries, and ``hcgraph.cli`` imported fresh in each
child, with its own streams and environment. :meth:`ForkServer.spawn` starts a command on
given file descriptors (a pseudo-terminal, a pipe) and returns at once with its pid;
:data:`CLIENT` is a small program that runs one command through a server with its own
stdin, stdout and stderr (a stand-in for ``hcgraph`` on a shell's ``PATH``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

#: Imported once in each server: what most commands import anyway (hcgraph's CLI, store,
#: ingest and queries, and through them rdflib, pyoxigraph, click, httpx), and the crawl's
#: store worker module (tests/support/storeworker.py replaces its ``subprocess``).
PRELOAD = (
    "hcgraph.cli",
    "hcgraph.store",
    "hcgraph.ingest",
    "hcgraph.queries",
    "hcgraph.exporting",
    "hcgraph.crawling.worker",
    "httpx",
)

#: The same without ``hcgraph.cli`` (nothing in it imports the CLI): see the module's text.
PRELOAD_NO_CLI = tuple(name for name in PRELOAD if name != "hcgraph.cli")

# The server's own code, run as ``python -c``: it imports nothing from tests/ but, in a command
# whose environment names the session's store-worker server, tests/support/storeworker.py.
_SERVER = r"""
import importlib, json, os, signal, socket, sys

def _child(conn, request, fds):
    # This process is the command. Its streams are the caller's; nothing of the server's
    # loop survives into it but the imported modules.
    conn.close()
    listener.close()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for fd, target in zip(fds[:3], (0, 1, 2)):
        os.dup2(fd, target)
        os.close(fd)
    if request.get("setsid"):
        os.setsid()
    workers = request["env"].get("HCGRAPH_TEST_STORE_WORKER")
    if workers and not request.get("entry"):  # a crawl forks its store worker (the only
        # import from tests/, made before the chdir: tests/support/storeworker.py)
        importlib.import_module("tests.support.storeworker").attach(workers.split())
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    args = [a.replace("{fd3}", str(fds[3])) if len(fds) > 3 else a for a in request["args"]]
    entry = request.get("entry")
    if entry:  # ``python -P -c "from MODULE import FUNC; FUNC(sys.argv)" ARGS``
        sys.argv = ["-c", *args]
        del sys.path[0]  # -P: not the working directory first
    else:  # ``python -m hcgraph ARGS``
        sys.argv = ["-m", *args]
        sys.path[0] = os.getcwd()  # as ``python -m`` starts: the working directory first
    import atexit, runpy, threading, traceback
    code = 0
    try:
        if entry:
            module, _, func = entry.partition(":")
            getattr(importlib.import_module(module), func)(sys.argv)
        else:
            runpy.run_module("hcgraph", run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        c = stop.code
        code = c if isinstance(c, int) else (0 if c is None else 1)
        if c is not None and not isinstance(c, int):
            print(c, file=sys.stderr)
    except KeyboardInterrupt:
        traceback.print_exc()
        code = 128 + signal.SIGINT
    except BaseException:
        traceback.print_exc()
        code = 1
    # What the interpreter does on its way out: wait for threads, run atexit, flush.
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)

def _serve(conn):
    # A process per call that forks the command and reports its pid, then its status.
    msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 4)
    request = json.loads(msg)
    pid = os.fork()
    if pid == 0:
        _child(conn, request, fds)
    for fd in fds:
        os.close(fd)
    conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    _, status = os.waitpid(pid, 0)
    conn.sendall(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
    conn.close()
    os._exit(0)

# The modules to import come in the environment, not the command line: a test that looks for
# a process by its command line (the crawl's store worker) must not take a server for it.
for name in os.environ.pop("HCGRAPH_FORKSERVER_PRELOAD").split():
    importlib.import_module(name)
listener = socket.socket(socket.AF_UNIX)
listener.bind(sys.argv[1])
listener.listen(16)
listener.settimeout(0.5)
print("ready", flush=True)
parent = os.getppid()
while True:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
    try:
        conn, _ = listener.accept()
    except socket.timeout:
        if os.getppid() != parent:
            break  # the test session is gone
        continue
    conn.settimeout(None)
    if conn.recv(4, socket.MSG_PEEK) == b"":
        conn.close()
        break  # an empty connection: stop
    if os.fork() == 0:
        _serve(conn)
    conn.close()
listener.close()
try:
    while True:
        os.wait()  # every helper, so their CPU and their commands' is counted in ours
except ChildProcessError:
    pass
"""


class ForkServer:
    """Forks ``python -m hcgraph`` children from interpreters that imported it already."""

    def __init__(
        self, env: dict[str, str], servers: int = 2, preload: tuple[str, ...] = PRELOAD
    ) -> None:
        self._dir: str | None = tempfile.mkdtemp(prefix="hcgraph-forkserver-")
        self._lock = threading.Lock()
        self._turn = 0
        self._procs: list[tuple[subprocess.Popen[str] | None, str]] = []
        for i in range(servers):
            path = os.path.join(self._dir, f"s{i}")
            server_env = dict(env, PYTHONHASHSEED=str(secrets.randbelow(2**32)),
                              HCGRAPH_FORKSERVER_PRELOAD=" ".join(preload))  # fmt: skip
            proc = subprocess.Popen(
                [sys.executable, "-c", _SERVER, path],
                env=server_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the fork server did not start (exit {proc.wait()})")
            self._procs.append((proc, path))

    @classmethod
    def attached(cls, sockets: list[str]) -> ForkServer:
        """A client of servers another process started (their :attr:`sockets`): ``spawn``
        and ``run`` work as on the servers' own object; ``close`` leaves them running."""
        client = cls.__new__(cls)
        client._dir, client._lock, client._turn = None, threading.Lock(), 0
        client._procs = [(None, path) for path in sockets]
        return client

    @property
    def pids(self) -> list[int]:
        """The servers' process ids (none for a client, :meth:`attached`)."""
        return [proc.pid for proc, _ in self._procs if proc is not None]

    @property
    def sockets(self) -> list[str]:
        """The servers' socket paths (what :data:`CLIENT` connects to)."""
        return [path for _, path in self._procs]

    def spawn(
        self,
        args: list[str],
        *,
        env: dict[str, str],
        cwd: Path | None,
        fds: tuple[int, ...],
        entry: str | None = None,
        setsid: bool = False,
    ) -> Forked:
        """Start ``python -m hcgraph ARGS`` with ``fds`` as its stdin, stdout and stderr (the
        caller may close its copies once this returns); do not wait for it. ``entry``
        (``"module:function"``) runs ``function(sys.argv)`` instead, as ``python -P -c``
        would; a fourth fd stays open in the child, its number in place of ``{fd3}`` in
        ``args``; ``setsid`` starts a new session (``start_new_session``)."""
        with self._lock:
            _, path = self._procs[self._turn % len(self._procs)]
            self._turn += 1
        request = {"args": args, "env": env, "cwd": str(cwd or os.getcwd()), "entry": entry,
                   "setsid": setsid}  # fmt: skip
        sock = socket.socket(socket.AF_UNIX)
        try:
            sock.connect(path)
            socket.send_fds(sock, [json.dumps(request).encode()], list(fds))
            child = Forked([sys.executable, "-m", "hcgraph", *args], sock)
        except BaseException:
            sock.close()
            raise
        return child

    def run(
        self, args: list[str], *, env: dict[str, str], cwd: Path | None, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        """Like ``subprocess.run([python, -m, hcgraph, *args], capture_output=True,
        text=True, env=env, cwd=cwd, timeout=timeout)``."""
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            child = self.spawn(args, env=env, cwd=cwd, fds=(0, out.fileno(), err.fileno()))
            try:
                status = child.wait(timeout)
            except subprocess.TimeoutExpired as expired:  # as subprocess.run: kill, then raise
                child.kill()
                child.wait()
                expired.output, expired.stderr = _text(out), _text(err)
                raise
            return subprocess.CompletedProcess(child.args, status, _text(out), _text(err))

    def close(self) -> None:
        """Stop the servers and reap them (their CPU, and their children's, is counted);
        nothing for a client (:meth:`attached`)."""
        if self._dir is None:
            return
        for proc, path in self._procs:
            assert proc is not None
            try:
                with socket.socket(socket.AF_UNIX) as sock:
                    sock.connect(path)
            except OSError:
                proc.kill()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        for name in os.listdir(self._dir):
            os.unlink(os.path.join(self._dir, name))
        os.rmdir(self._dir)


class Forked:
    """A command a :class:`ForkServer` started, used as a :class:`subprocess.Popen` is:
    ``pid``, ``poll``, ``wait`` (a signal's end as a negative number), ``send_signal``,
    ``kill``, ``terminate``, ``returncode``."""

    def __init__(self, args: list[str], sock: socket.socket) -> None:
        self.args = args
        self.returncode: int | None = None
        self._sock = sock
        self._buffer = b""
        line = self._line(None)
        if not line:
            raise RuntimeError("the fork server did not start the command")
        self.pid = int(json.loads(line)["pid"])

    def _line(self, timeout: float | None) -> bytes | None:
        """The helper's next line (b"" if it closed first), or None at the timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self._sock], [], [], left)[0]:
                return None
            chunk = self._sock.recv(4096)
            if not chunk:
                return b""
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def poll(self) -> int | None:
        return self.returncode if self.returncode is not None else self._status(0)

    def wait(self, timeout: float | None = None) -> int:
        """The exit status; :class:`subprocess.TimeoutExpired` at the timeout (the command
        runs on, as with ``Popen.wait``)."""
        if self.returncode is not None:
            return self.returncode
        status = self._status(timeout)
        if status is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return status

    def _status(self, timeout: float | None) -> int | None:
        line = self._line(timeout)
        if line is None:
            return None
        self._sock.close()
        if not line:
            raise RuntimeError("the fork server's helper ended without a status")
        self.returncode = int(json.loads(line)["status"])
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


#: ``python -S CLIENT SOCKET... -- ARGS``: run ``hcgraph ARGS`` through one of the servers
#: (chosen by the client's pid) with the client's own stdin, stdout, stderr, working
#: directory and environment; exit as the command did (a signal it died of, the client dies
#: of too). SIGTERM, SIGINT and SIGHUP sent to the client are passed on to the command, so
#: a shell's ``kill`` or the end of its process group stops the command too.
CLIENT = r"""
import json, os, signal, socket, sys

pid, pending = 0, []

def forward(signum, frame):
    if not pid:
        pending.append(signum)  # the command has not started yet: pass it on when it has
        return
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, forward)
split = sys.argv.index("--")
paths, args = sys.argv[1:split], sys.argv[split + 1:]
request = {"args": args, "env": dict(os.environ), "cwd": os.getcwd()}
sock = socket.socket(socket.AF_UNIX)
sock.connect(paths[os.getpid() % len(paths)])
socket.send_fds(sock, [json.dumps(request).encode()], [0, 1, 2])
reader = sock.makefile("r")
pid = int(json.loads(reader.readline())["pid"])
for signum in pending:
    forward(signum, None)
line = reader.readline()
status = int(json.loads(line)["status"]) if line else 1
if status < 0:
    signal.signal(-status, signal.SIG_DFL)
    os.kill(os.getpid(), -status)
sys.exit(status)
"""


def _text(fh: object) -> str:
    """A captured stream as text, decoded as ``subprocess.run(text=True)`` does."""
    assert isinstance(fh, io.BufferedRandom)
    fh.seek(0)
    wrapper = io.TextIOWrapper(fh, encoding=None, newline=None)
    try:
        return wrapper.read()
    finally:
        wrapper.detach()


def drain_terminal(master: int) -> bytes:
    """All a pseudo-terminal's master end reads until its child closes the terminal; the
    master closed after."""
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return b"".join(chunks)
