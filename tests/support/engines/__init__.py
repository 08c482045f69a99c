"""Independent SPARQL engines for the saved queries: Apache Jena (TDB2) and Comunica.

The saved queries promise the same rows on any SPARQL 1.1 engine. Besides Oxigraph (embedded
and ``oxigraph serve``) and Virtuoso (``tests/virtuoso.py``), two engines share no code with
either:

- **Apache Jena 4.5** from Debian (``libapache-jena-java``): the graph is loaded with TDB2's
  bulk loader (``tdb2.tdbloader``) and every query runs in one JVM through
  ``JenaQueries.java`` (compiled here with ``javac``), with ``tdb:unionDefaultGraph`` on.
  Debian's class path needs two mends, both made here: only the jars of Jena and of the
  packages it depends on (the whole ``/usr/share/java`` binds SLF4J twice), with SLF4J bound
  once (``slf4j-nop``); and Debian's ``jena-core`` relocates its copy of Xerces to the package
  ``xerces`` but leaves the message files under ``org/apache/jena/ext/xerces``, so the first
  XSD datatype fails with "internal error" in ``JenaSystem.init``. A directory with those
  files copied to ``xerces/…`` (read from the installed jar) on the class path fixes it.
- **Comunica 5** (npm ``@comunica/query-sparql-rdfjs`` over an N3.js store), installed by
  ``scripts/install-test-deps`` into this folder's ``node_modules`` from the lock file; the
  N-Quads are loaded once and every query runs in one Node process
  (``comunica-queries.mjs``), with ``unionDefaultGraph``.

Both print, per query, ``### FILE``, the SPARQL 1.1 JSON results and ``### seconds S``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import httpx

from hcgraph.results import display

HERE = Path(__file__).resolve().parent
JENA_PACKAGE = "libapache-jena-java"
NODE_MODULES = HERE / "node_modules"

Rows = set[tuple[str, ...]]


@dataclass(frozen=True)
class Answer:
    """One engine's answer to one query: its rows as text and the seconds it took."""

    rows: Rows
    seconds: float


# --- the queries, bound for any endpoint ------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """A saved query with one set of parameter values.

    Attributes:
        key: a name for the case (``co-citation k=3``).
        name: the saved query's name.
        params: the values as ``hcgraph query --param`` takes them.
        text: the query with each value bound by a leading ``VALUES`` block, so it runs
            unchanged on any SPARQL 1.1 engine (no engine-specific initial bindings).
    """

    key: str
    name: str
    params: Mapping[str, str]
    text: str


def cases(queries: Mapping[str, Any], examples: Mapping[str, str]) -> list[Case]:
    """Every saved query in every parameter form: defaults, and each optional one given.

    ``examples`` holds a value for every parameter (``story``, ``manifest_id``, ``claim_id``,
    ``k``); required parameters are always bound, and a query with optional ones gets a second
    case with them bound too.
    """
    out: list[Case] = []
    for name, query in queries.items():
        required = {p.name: examples[p.name] for p in query.params if p.required}
        forms = [required]
        optional = {p.name: examples[p.name] for p in query.params if not p.required}
        if optional:
            forms.append({**required, **optional})
        for params in forms:
            key = " ".join([name, *(f"{k}={v}" for k, v in sorted(params.items()))])
            out.append(Case(key, name, params, bind_values(query, params)))
    return out


def bind_values(query: Any, params: Mapping[str, str]) -> str:
    """The query's text with a ``VALUES ?name { term }`` block per parameter, at the top of
    its outermost ``WHERE`` (Virtuoso ignores a trailing one)."""
    text = query.text
    for name, value in params.items():
        kind = query.param(name).type
        term = f"<{value}>" if kind == "iri" else value if kind == "integer" else json.dumps(value)
        head, brace, rest = text.partition("WHERE {")
        assert brace, f"{query.name}: no 'WHERE {{' to bind ?{name} in"
        text = f"{head}{brace}\n  VALUES ?{name} {{ {term} }}{rest}"
    return text


def normalise(rows: Iterable[tuple[str, ...]]) -> Rows:
    """Rows with each list cell's items sorted: ``GROUP_CONCAT``'s order is undefined."""
    return {
        tuple(" ".join(sorted(cell.split(" "))) if " " in cell else cell for cell in row)
        for row in rows
    }


_XSD = "http://www.w3.org/2001/XMLSchema#"
_NUMERIC = {_XSD + name for name in ("decimal", "double", "float")}


def text(value: str, datatype: str | None) -> str:
    """A value's lexical text, decimals and doubles in one form (``-8.0`` and ``-8`` are one
    xsd:decimal, which Jena and Oxigraph write differently)."""
    if datatype in _NUMERIC:
        try:
            return format(Decimal(value).normalize(), "f")
        except InvalidOperation:
            return value
    return value


def term_text(term: Any) -> str:
    """:func:`text` of a pyoxigraph term (hcgraph's own answer); ``""`` for unbound."""
    if term is None:
        return ""
    datatype = getattr(getattr(term, "datatype", None), "value", None)
    return text(display(term), datatype)


def json_rows(doc: Mapping[str, Any]) -> Rows:
    """The rows of a SPARQL 1.1 JSON results document, each value as :func:`text`."""
    names = doc["head"]["vars"]
    return normalise(
        tuple(
            text(binding[v]["value"], binding[v].get("datatype")) if v in binding else ""
            for v in names
        )
        for binding in doc["results"]["bindings"]
    )


def _blocks(stdout: str) -> dict[str, Answer]:
    out: dict[str, Answer] = {}
    for match in re.finditer(
        r"^### (?!error )(?P<file>[^\n]+)\n(?P<json>.*?)^### seconds (?P<s>[\d.eE+-]+)$",
        stdout,
        re.M | re.S,
    ):
        answer = Answer(json_rows(json.loads(match["json"])), float(match["s"]))
        out[Path(match["file"]).stem] = answer
    return out


def _query_files(items: Mapping[str, str], directory: Path) -> list[str]:
    directory.mkdir(parents=True, exist_ok=True)
    files = []
    for i, (_key, text) in enumerate(items.items()):
        path = directory / f"q{i:03d}.rq"
        path.write_text(text, encoding="utf-8")
        files.append(str(path))
    return files


def _by_key(items: Mapping[str, str], answers: dict[str, Answer]) -> dict[str, Answer]:
    return {key: answers[f"q{i:03d}"] for i, key in enumerate(items) if f"q{i:03d}" in answers}


# --- Jena -----------------------------------------------------------------------------------
def _dpkg_depends(package: str) -> list[str]:
    done = subprocess.run(
        ["dpkg-query", "-W", "-f=${Depends}", package], capture_output=True, text=True
    )
    if done.returncode != 0:
        return []
    names = []
    for alternative in done.stdout.split(","):
        first = alternative.split("|")[0].strip()
        if first:
            names.append(first.split()[0].split(":")[0])
    return names


def _package_jars(package: str) -> list[Path]:
    done = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True)
    return [
        Path(line)
        for line in done.stdout.splitlines()
        if line.startswith("/usr/share/java/") and line.endswith(".jar")
    ]


def jena_classpath(work: Path) -> str | None:
    """Jena's class path (module doc), or None where Jena or ``javac`` is not installed."""
    if shutil.which("java") is None or shutil.which("javac") is None:
        return None
    seen: set[str] = set()
    todo = [JENA_PACKAGE]
    jars: list[Path] = []
    while todo:
        package = todo.pop()
        if package in seen:
            continue
        seen.add(package)
        jars += _package_jars(package)
        todo += _dpkg_depends(package)
    if not any(j.name == "jena-core.jar" for j in jars):
        return None
    # the unversioned names (the versioned ones are the same files), SLF4J bound once
    keep = sorted(
        {
            str(j)
            for j in jars
            if not re.search(r"-\d[\d.]*\.jar$", j.name) and not re.search(r"slf4j|log4j", j.name)
        }
    )
    keep += ["/usr/share/java/slf4j-api.jar", "/usr/share/java/slf4j-nop.jar"]
    messages = work / "jena-xerces-messages"
    if not messages.is_dir():
        prefix = "org/apache/jena/ext/xerces/"
        with zipfile.ZipFile("/usr/share/java/jena-core.jar") as jar:
            for name in jar.namelist():
                if name.startswith(prefix) and name.endswith(".properties"):
                    target = messages / "xerces" / name[len(prefix) :]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(jar.read(name))
    classes = work / "jena-classes"
    if not (classes / "JenaQueries.class").is_file():
        classes.mkdir(parents=True, exist_ok=True)
        source = str(HERE / "JenaQueries.java")
        subprocess.run(
            ["javac", "-cp", os.pathsep.join(keep), "-d", str(classes), source],
            check=True,
            capture_output=True,
        )
    return os.pathsep.join([*keep, str(messages), str(classes)])


def jena_load(classpath: str, nquads: Path, location: Path) -> float:
    """Load N-Quads into a new TDB2 database with TDB2's bulk loader; the seconds it took."""
    done = subprocess.run(
        ["java", "-cp", classpath, "tdb2.tdbloader", "--loc", str(location), str(nquads)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"tdb2.tdbloader failed: {done.stderr[-2000:]}")
    match = re.search(r"Finished:.*?([\d.]+)s", done.stderr + done.stdout)
    return float(match.group(1)) if match else 0.0


def run_jena(
    classpath: str,
    location: Path,
    items: Mapping[str, str],
    work: Path,
    heap: str | None = None,
    errors: dict[str, str] | None = None,
    timeout: float | None = None,
) -> dict[str, Answer]:
    """key → Jena's answer, every query in one JVM over the TDB2 database.

    ``heap`` is the JVM's ``-Xmx`` (e.g. ``"14g"``; its default is a quarter of the
    memory). A query Jena fails on has no answer; its message goes into ``errors`` (by key)
    and the other queries still run. ``timeout`` (seconds) cancels a query still running
    after that long (Jena's query timeout): it fails like any other.
    """
    files = _query_files(items, work / "jena-queries")
    limit = [f"-Dhc.timeout={max(1, round(timeout))}"] if timeout else []
    jvm = ["java", *([f"-Xmx{heap}"] if heap else []), *limit, "-cp", classpath]
    done = subprocess.run(
        [*jvm, "JenaQueries", str(location), *files], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"Jena failed: {done.stderr[-2000:]}")
    if errors is not None:
        errors.update(_failed(items, done.stdout))
    return _by_key(items, _blocks(done.stdout))


def _failed(items: Mapping[str, str], stdout: str) -> dict[str, str]:
    """key → message of each query a runner printed as failed (``### error FILE``)."""
    failed = dict(re.findall(r"^### error (\S+)\n(.*)$", stdout, re.M))
    stems = {Path(f).stem: message for f, message in failed.items()}
    return {key: stems[f"q{i:03d}"] for i, key in enumerate(items) if f"q{i:03d}" in stems}


# --- Comunica -------------------------------------------------------------------------------
def comunica_available() -> bool:
    """True where ``node`` and the locked Comunica packages are installed here."""
    return shutil.which("node") is not None and (NODE_MODULES / "@comunica").is_dir()


def run_comunica(
    nquads: Path,
    items: Mapping[str, str],
    work: Path,
    errors: dict[str, str] | None = None,
    timeout: float | None = None,
) -> dict[str, Answer]:
    """key → Comunica's answer, every query in one Node process over the N-Quads.

    A query Comunica fails on has no answer; its message goes into ``errors`` (by key) and
    the other queries still run. ``timeout`` (seconds) stops a query still running after
    that long (its worker thread is ended and the data loaded again for the next ones).
    """
    files = _query_files(items, work / "comunica-queries")
    env = {**os.environ, **({"HC_TIMEOUT": str(max(1, round(timeout)))} if timeout else {})}
    done = subprocess.run(
        ["node", str(HERE / "comunica-queries.mjs"), str(nquads), *files],
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode != 0:
        raise RuntimeError(f"Comunica failed: {done.stderr[-2000:]}")
    if errors is not None:
        errors.update(_failed(items, done.stdout))
    return _by_key(items, _blocks(done.stdout))


def wait_for(url: str, timeout: float = 60.0) -> None:
    """Wait until ``url`` answers 200 (a server starting); TimeoutError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(url, timeout=5, trust_env=False).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url}: no answer in {timeout} s")
        time.sleep(0.2)
