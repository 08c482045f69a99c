"""A throw-away OpenLink Virtuoso on loopback for tests (Debian ``virtuoso-opensource``).

Its own database directory and ports: a copy of the packaged ``virtuoso.ini`` whose database,
log and lock files point into a temporary directory and whose SQL and HTTP ``ServerPort``
lines are ``127.0.0.1:PORT``; ``virtuoso-t +foreground`` is up in a few seconds. The SPARQL
endpoint is ``/sparql``; the Graph Store Protocol is ``/sparql-graph-crud`` (anonymous,
after ``GRANT SPARQL_UPDATE TO "SPARQL"``) and ``/sparql-graph-crud-auth`` (digest, dba).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

import httpx

INI = Path("/etc/virtuoso-opensource-7/virtuoso.ini")
BINARY = shutil.which("virtuoso-t")
ISQL = shutil.which("isql-vt")


def available() -> bool:
    """True where the Debian package is installed."""
    return BINARY is not None and ISQL is not None and INI.is_file()


def _ini(
    template: str,
    directory: Path,
    sql_port: int,
    http_port: int,
    settings: Mapping[tuple[str, str], str] | None = None,
) -> str:
    db = directory / "db"
    files: dict[tuple[str, str], object] = {
        ("database", "databasefile"): db / "virtuoso.db",
        ("database", "errorlogfile"): db / "virtuoso.log",
        ("database", "lockfile"): db / "virtuoso.lck",
        ("database", "transactionfile"): db / "virtuoso.trx",
        ("database", "xa_persistent_file"): db / "virtuoso.pxa",
        ("tempdatabase", "databasefile"): db / "virtuoso-temp.db",
        ("tempdatabase", "transactionfile"): db / "virtuoso-temp.trx",
        ("parameters", "serverport"): f"127.0.0.1:{sql_port}",
        ("httpserver", "serverport"): f"127.0.0.1:{http_port}",
        ("parameters", "dirsallowed"): f"., /usr/share/virtuoso-opensource-7/vad, {directory}",
        ("parameters", "numberofbuffers"): "10000",
        ("parameters", "maxdirtybuffers"): "6000",
        ("parameters", "maxquerymem"): "256M",
        **(settings or {}),
    }
    out, section = [], ""
    for line in template.splitlines():
        head = re.match(r"\s*\[(\w+)\]", line)
        if head:
            section = head.group(1).lower()
        match = re.match(r"\s*(\w+)\s*=", line)
        if match and (section, match.group(1).lower()) in files:
            line = f"{match.group(1)} = {files[(section, match.group(1).lower())]}"
        out.append(line)
    return "\n".join(out) + "\n"


class VirtuosoServer:
    """Start with :meth:`start`, stop with :meth:`stop`; ``url`` is the HTTP root.

    ``settings`` override ``virtuoso.ini`` lines, keyed by lower-case (section, key), e.g.
    ``{("parameters", "numberofbuffers"): "170000"}`` (the bench gives Virtuoso more memory).
    """

    def __init__(
        self,
        directory: Path,
        sql_port: int,
        http_port: int,
        settings: Mapping[tuple[str, str], str] | None = None,
    ) -> None:
        self.directory = directory
        self.settings = dict(settings or {})
        self.sql_port, self.http_port = sql_port, http_port
        self.url = f"http://127.0.0.1:{http_port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> VirtuosoServer:
        assert BINARY is not None
        (self.directory / "db").mkdir(parents=True, exist_ok=True)
        ini = self.directory / "virtuoso.ini"
        template = INI.read_text()
        ini.write_text(_ini(template, self.directory, self.sql_port, self.http_port, self.settings))
        self._log = (self.directory / "stdout.log").open("wb")
        self.process = subprocess.Popen(
            [BINARY, "+foreground", "+configfile", str(ini)],
            cwd=self.directory, stdin=subprocess.DEVNULL, stdout=self._log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"virtuoso exited: {(self.directory / 'stdout.log').read_text()[-2000:]}"
                )
            try:
                answer = httpx.get(f"{self.url}/sparql", params={"query": "ASK {}"}, timeout=2,
                                   trust_env=False)  # fmt: skip
                if answer.status_code == 200:
                    self.sql('GRANT SPARQL_UPDATE TO "SPARQL";')
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError("virtuoso did not start in time")

    def sql(self, statement: str) -> str:
        """Run SQL as dba through isql (the bulk loader and grants need it)."""
        assert ISQL is not None
        done = subprocess.run(
            [ISQL, f"127.0.0.1:{self.sql_port}", "dba", "dba", f"exec={statement}"],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        if done.returncode != 0 or "*** Error" in done.stdout + done.stderr:
            raise RuntimeError(f"isql failed: {done.stdout}{done.stderr}")
        return done.stdout

    def select(self, sparql: str) -> list[dict[str, dict[str, str]]]:
        answer = httpx.post(f"{self.url}/sparql", data={"query": sparql},
                            headers={"Accept": "application/sparql-results+json"},
                            timeout=120, trust_env=False)  # fmt: skip
        answer.raise_for_status()
        return list(answer.json()["results"]["bindings"])

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if self.process is not None:
            self._log.close()
        self.process = None
