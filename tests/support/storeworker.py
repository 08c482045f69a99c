"""The crawl's store worker, forked from a server that imported it already (tests only).

Every crawl with the default ``store_worker="process"`` starts a worker with
``python -P -c "from hcgraph.crawling.worker import main; main(sys.argv)" FD ROOT``: an
interpreter start and the imports of the pipeline and the store, ~0.45 CPU s, about a
hundred and fifty times a suite. :func:`forked_store_workers` hands
:mod:`hcgraph.crawling.worker` a ``subprocess`` whose ``Popen`` starts exactly that command
as a child forked from a :class:`~tests.support.forkserver.ForkServer` that imported the
worker module once: its own process (its own pid, session, signals, exit status, killed as a
process is), the socket pair's end at the same place in its argv, ``sys.path`` without the
working directory (as ``-P``), stdin ``/dev/null``, the crawl's stdout and stderr. Any other
command goes to the real ``subprocess.Popen``.

The CLI's crawls (``hcgraph crawl``, ``hcgraph demo``) run in processes the session's CLI
fork servers forked: :data:`ENV` in a command's environment (``cli_env()`` puts it there
while the session's server runs) names that server's sockets, and the fork server's child
calls :func:`attach` before the command starts, so its worker is forked from the same
server. A CLI started as a fresh interpreter (``sys.executable -m hcgraph``: the tests about
SIGKILL, a full disk, the interpreter's start) never reads :data:`ENV` and starts its worker
as the package does. ``HCGRAPH_TEST_FORKSERVER=0`` turns all of this off.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.forkserver import ForkServer

ENTRY = "hcgraph.crawling.worker:main"
#: The environment variable naming the session's store-worker server (its socket paths).
ENV = "HCGRAPH_TEST_STORE_WORKER"
#: The checkout whose hcgraph the servers import.
ROOT = Path(__file__).resolve().parents[2]


class WorkerSubprocess:
    """:mod:`subprocess` with a ``Popen`` that forks the store worker (see the module): from
    a server it starts on the first worker (with ``env``), or from one another process
    started (``sockets``: a client's, :func:`attach`)."""

    def __init__(self, env: dict[str, str], root: Path, sockets: list[str] | None = None) -> None:
        self._env = env
        self._root = str(root.resolve())
        self._lock = threading.Lock()
        self._attached = sockets is not None
        self._server = ForkServer.attached(sockets) if sockets is not None else None

    def server(self) -> ForkServer:
        """The server the workers are forked from, started now if it is not running."""
        with self._lock:
            if self._server is None:
                self._server = ForkServer(self._env, preload=(ENTRY.split(":")[0],))
            return self._server

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)

    def Popen(self, args: Any, **kwargs: Any) -> Any:  # subprocess.Popen, for the worker
        from hcgraph.crawling import worker

        fds = kwargs.get("pass_fds") or ()
        ours = (
            isinstance(args, list)
            and args[:4] == [sys.executable, "-P", "-c", worker._START]
            and len(args) == 6
            and len(fds) == 1
            and args[4] == str(fds[0])
            and os.path.realpath(args[5]) == self._root  # the hcgraph the server imported
            and kwargs.get("stdin") == subprocess.DEVNULL
            and set(kwargs) <= {"pass_fds", "stdin", "start_new_session"}
        )
        if not ours:
            return subprocess.Popen(args, **kwargs)
        for attempt in (1, 2):
            server = self.server()
            try:
                with open(os.devnull, "rb") as null:
                    return server.spawn(
                        ["{fd3}", args[5]], env=dict(os.environ), cwd=None,
                        fds=(null.fileno(), 1, 2, fds[0]), entry=ENTRY,
                        setsid=bool(kwargs.get("start_new_session")),
                    )  # fmt: skip
            except (ConnectionRefusedError, FileNotFoundError):
                if self._attached:  # the session's server is gone: start it as the package does
                    return subprocess.Popen(args, **kwargs)
                if attempt == 2:
                    raise
                with self._lock:  # the server is gone (a test killed it): start another
                    if self._server is server:
                        server.close()
                        self._server = None
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None


@contextlib.contextmanager
def forked_store_workers(env: dict[str, str], root: Path) -> Iterator[WorkerSubprocess]:
    """While open, in-process crawls fork their store workers (a server started on the
    first one, with ``env``; ``root``: the checkout whose hcgraph it imports); yields the
    shim, whose ``server()`` a CLI fork server's commands are pointed at (:data:`ENV`)."""
    from hcgraph.crawling import worker

    shim = WorkerSubprocess(env, root)
    real = worker.subprocess
    worker.subprocess = shim  # type: ignore[assignment]
    try:
        yield shim
    finally:
        worker.subprocess = real
        shim.close()


def attach(sockets: list[str]) -> None:
    """In a command a CLI fork server forked (its environment holds :data:`ENV`): its
    crawls fork their store workers from the session's server at ``sockets``."""
    from hcgraph.crawling import worker

    worker.subprocess = WorkerSubprocess({}, ROOT, sockets)  # type: ignore[assignment]
