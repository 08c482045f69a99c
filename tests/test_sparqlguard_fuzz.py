"""Differential fuzz of the SERVICE guard against Oxigraph itself.

The oracle is what Oxigraph 0.5 really does: it fetches the URL of every ``SERVICE`` it
parses, so a loopback probe that counts requests tells whether a query would have left the
machine. Three kinds of generated queries (hypothesis, fixed seed):

* **keyword**: ``SERVICE`` (any case, ``SILENT`` or not, an IRI, ``:name`` or a variable)
  after every kind of terminal (numbers, booleans, strings, language tags, datatypes, IRIs,
  prefixed names, variables, ``}``, ``)``, ``]``, ``.``, ``;``, comments), with or without a
  space, at the top or inside OPTIONAL, GRAPH, MINUS, UNION, EXISTS and sub-queries: the
  guard must refuse every one;
* **benign**: ``service`` only where it is no keyword (``?service``, ``$service``,
  ``PREFIX service:``, ``ex:service``, ``_:service``, IRIs, strings, comments): Oxigraph
  must parse it, the guard must let it through, and the probe sees nothing;
* **soup**: a ``SERVICE`` call amid random tokens (quotes, ``<``, ``#``, escapes, dots,
  names glued together): whatever Oxigraph fetches, the guard must have refused.

Most examples run in-process (the guard, then raw pyoxigraph ``Store.query`` without it); a
bounded sample goes through the real ``hcgraph query`` and ``hcgraph serve`` (GET, POST
form, POST body; also with every byte %-escaped), where the probe must see no request at
all. More examples: ``HCGRAPH_FUZZ_EXAMPLES=20000 python -m pytest
tests/test_sparqlguard_fuzz.py`` (and
``HCGRAPH_FUZZ_SEED`` for another seed); see docs/development.md.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from hcgraph.sparqlguard import uses_service
from hcgraph.vocab import PREFIXES
from tests.conftest import cli_env, free_port
from tests.support.probe import Probe

EXAMPLES = int(os.environ.get("HCGRAPH_FUZZ_EXAMPLES", "700"))
SEED = int(os.environ.get("HCGRAPH_FUZZ_SEED", "20261201"))
CLI_EXAMPLES = max(6, EXAMPLES // 100)
SERVE_EXAMPLES = max(40, EXAMPLES // 10)

# A longer run needs longer than pytest-timeout's default for one test.
_TIMEOUT = pytest.mark.timeout(max(300, EXAMPLES // 5))
_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# Placeholders, replaced once the probe's port is known.
URL, BASE = "@URL@", "@BASE@"

# --- what the data holds: every object a generated triple names -------------------------------
OBJECTS = [
    "1", "+1", "-1", "1.5", ".5", "1e5", "1.E-2", "true", "false", '"x"', "'x'", '"""x"""',
    "'''x'''", '"x"@en', '"x"^^<urn:x:t>', "<urn:x:o>", "ex:o", "ex:a.b", "()",
]  # fmt: skip
DECLS = "PREFIX ex: <urn:x:> "
_DATA = (
    DECLS
    + "INSERT DATA { GRAPH <urn:x:g> { "
    + " ".join(f"<urn:x:s> <urn:x:p> {o} ." for o in OBJECTS if o != "()")
    + " <urn:x:s> <urn:x:p> <http://www.w3.org/1999/02/22-rdf-syntax-ns#nil> ."
    + ' <urn:x:s> <urn:x:q> "y" .'
    " @REIFIED@"
    ' <urn:x:s> a <urn:x:C> . <urn:x:s> <urn:x:p> [ <urn:x:q> "r" ] . } }'
)

# The in-process store also holds a reified triple (``~``, ``{| |}``); the on-disk one for the
# commands does not (``hcgraph query`` prints no triple terms).
DATA = _DATA.replace("@REIFIED@", '<urn:x:s> <urn:x:q> "y" ~ <urn:x:r> {| <urn:x:q> "z" |} .')
PLAIN_DATA = _DATA.replace("@REIFIED@", "")

# A complete item that ends in a terminal; SERVICE is glued right after it.
BEFORE = [f"?s <urn:x:p> {o}" for o in OBJECTS] + [
    "?s <urn:x:p>? 1", "?s <urn:x:p>* <urn:x:o>", "?s ^<urn:x:p> ?o", "?s a ?o", "?s ?p ?o .",
    "?s ?p ?o ;", "?s ?p ?o , ?o2", "?s ?p []", "?s ?p [ ?q ?r ]", "{}", "{ ?s ?p ?o }",
    "FILTER(true)", "FILTER regex(?o, 'x')", "BIND(1 AS ?bound)", "VALUES ?v { 1 }",
    "OPTIONAL { ?s ?p ?o }", "MINUS { ?s <urn:x:none> ?o }", "{} UNION { ?s ?p ?o }",
    "GRAPH ?g { ?s ?p ?o }", "?s ?p ?o #c\n", "?s <urn:x:q> ?o ~ ?r", "?s <urn:x:q> ?o {| ?q ?r |}",
    "", "?s ?p ?service", "?s ?p $SERVICE",
]  # fmt: skip
GLUE = ["", " ", "\n", "\t", "#c\n", " # SERVICE <x> {}\n"]
# Wrappers: {} is where the SERVICE goes.
WRAP = [
    "SELECT * WHERE {{ {} }}",
    "SELECT * {{ ?a ?b ?c . {} }}",
    "SELECT * {{ OPTIONAL {{ {} }} }}",
    "SELECT * {{ GRAPH ?g {{ {} }} }}",
    "SELECT * {{ {{ SELECT * {{ {} }} }} }}",
    "SELECT * {{ ?a ?b ?c FILTER EXISTS {{ {} }} }}",
    "SELECT * {{ ?a ?b ?c FILTER(NOT EXISTS {{ {} }}) }}",
    "SELECT * {{ ?a ?b ?c MINUS {{ {} }} }}",
    "SELECT * {{ {{ ?a ?b ?c }} UNION {{ {} }} }}",
    "ASK {{ {} }}",
    "CONSTRUCT {{ ?a ?b ?c }} WHERE {{ {} }}",
    "SELECT (COUNT(*) AS ?n) {{ {} }} GROUP BY ?a",
]


_ENDS_IN_NAME = re.compile(r"([?$]|@|ex:)[\w.]*$")


def _cased(word: str) -> st.SearchStrategy[str]:
    return st.lists(st.booleans(), min_size=len(word), max_size=len(word)).map(
        lambda ups: "".join(c.upper() if up else c.lower() for c, up in zip(word, ups, strict=True))
    )


@st.composite
def keyword_queries(draw: st.DrawFn) -> str:
    """A query whose ``SERVICE`` Oxigraph reads as the keyword (or could)."""
    target = draw(st.sampled_from([f"<{URL}>", ":probe", "?ep"]))
    prologue = DECLS + (f"PREFIX : <{BASE}> " if target == ":probe" else "")
    if draw(st.booleans()):
        prologue = prologue.replace("PREFIX : ", "PREFIX: ")  # glued, as Oxigraph allows
    call = draw(_cased("service"))
    if draw(st.booleans()):
        call += draw(st.sampled_from(GLUE)) + draw(_cased("silent"))
    call += draw(st.sampled_from(GLUE)) + target + draw(st.sampled_from(GLUE))
    call += draw(st.sampled_from(["{}", "{ ?a ?b ?c }", "{?x ?y ?z}"]))
    if target == "?ep":
        call = f"VALUES ?ep {{ <{URL}> }} " + call
    before = draw(st.sampled_from(BEFORE))
    glue = draw(st.sampled_from(GLUE))
    if not glue and _ENDS_IN_NAME.search(before):
        glue = " "  # ``?oSERVICE`` is one variable
    body = before + glue + call
    return prologue + draw(st.sampled_from(WRAP)).format(body)


BENIGN = [
    "?s ?p ?service", "?service ?p ?o", "$service ?p ?o", "?s ?p ?SERVICE_2", "?xservice ?p ?o",
    "?s service:p ?o", "?s ?p service:SERVICE", "?s ex:service ?o", "?s ?p ex:SERVICE",
    "?s ?p ex:a.service", "?s ?p ex:service.x", "?s ?p ex:a\\#service", "?s ?p _:service",
    "?s ?p <urn:x:SERVICE>", f"?s ?p <{URL}>", "?s sd:endpoint ?o", "?s ?p sd:service",
    f"?s ?p 'SERVICE <{URL}> {{}}'", f'?s ?p "SERVICE <{URL}> {{}}"',
    f"?s ?p '''\nSERVICE <{URL}> {{}}\n'''", f'?s ?p """SERVICE <{URL}> {{}}"""',
    f"?s ?p 'it\\'s' # SERVICE <{URL}> {{}}\n", f'?s ?p "a\\"SERVICE <{URL}> {{}}"',
    '?s ?p "x"@service', '?s ?p "service"^^<urn:x:service>', "BIND('service' AS ?aservice)",
    "FILTER(?service != <urn:x:service>)", "FILTER(?o IN (<urn:x:service>, ex:service))",
    "FILTER(STRSTARTS(STR(?s), 'service'))", f"# SERVICE <{URL}> {{}}\n?s ?p ?o",
    "OPTIONAL { ?service ?p ?o }", "GRAPH ?service { ?s ?p ?o }", "VALUES ?service { 1 }",
    "?s ?p ?o FILTER(?o < 2)", "?s ?p ?o FILTER(?o > <urn:x:service>)",
]  # fmt: skip
BENIGN_DECLS = (
    "PREFIX ex: <urn:x:> PREFIX service: <urn:service:> "
    "PREFIX sd: <http://www.w3.org/ns/sparql-service-description#> "
)


@st.composite
def benign_queries(draw: st.DrawFn) -> str:
    """A query that uses ``service`` only where it is no keyword."""
    items = draw(st.lists(st.sampled_from(BENIGN), min_size=1, max_size=4, unique=True))
    glue = draw(st.sampled_from([" . ", " .\n", "\n. "]))
    body = glue.join(items)
    return BENIGN_DECLS + draw(st.sampled_from(WRAP)).format(body)


SOUP = [
    "SERVICE", "service", "SILENT", f"<{URL}>", ":probe", "{", "}", "(", ")", "[", "]", '"',
    "'", "'''", '"""', "<", ">", "<=", "#", "\n", " ", "\\", "\\u0022", "\\u0027", "\\u003E",
    "\\u0053", "\\#", "\\'", "?", "$", ".", ",", ";", "1", "e5", "true", "false", "ex:", "ex:a",
    ":", "a", "_:b", "@en", "^^", "FILTER", "EXISTS", "NOT", "OPTIONAL", "GRAPH", "?o", "$o",
    "x", "%41", "-", "+", "*", "/", "|", "^", "!", "=", "&&", "~", "{|", "|}", "<<", ">>",
    "PREFIX", "SELECT", "WHERE",
]  # fmt: skip


# Fragments that hide text from a careless reader (escapes, quotes in strings, ``<`` as an
# operator, local names with dots, ``#`` inside IRIs and strings).
TRICKS = [
    r'?s ?p "a\u0022"', r"?s ?p 'a\u0027'", r"?s ex:a\# ?o", r"?s ex:a\' ?o", "FILTER(?o<?o2)",
    "FILTER(?o < 2 && ?o > 1)", "?s ?p ex:a.b.c", "?s ?p <urn:x:a#b>", '# comment "\n',
    '?s ?p """a"b"""', "?s ?p '''a''b'''", r'?s ?p "\\"', 'FILTER("#" != "<")', "?s ?p ?o #<\n",
    "BIND(<urn:x:o> AS ?z)", "FILTER(?o IN (1, <urn:x:o>))", "?s ?p ex:", "?s ?p :x", "?s ?p 1.",
]  # fmt: skip
CALLS = [f"SERVICE <{URL}> {{}}", "SERVICE:probe{}", f"service<{URL}>{{}}"]


@st.composite
def soup_queries(draw: st.DrawFn) -> str:
    """A ``SERVICE`` call amid random tokens, or amid random (mostly valid) fragments."""
    call = draw(st.sampled_from(CALLS))
    if draw(st.booleans()):
        sep = draw(st.sampled_from(["", " "]))
        left = sep.join(draw(st.lists(st.sampled_from(SOUP), max_size=8)))
        right = sep.join(draw(st.lists(st.sampled_from(SOUP), max_size=8)))
        body = left + sep + call + sep + right
    else:
        items = draw(st.lists(st.sampled_from(BEFORE + BENIGN + TRICKS + SOUP), max_size=6))
        items.insert(draw(st.integers(0, len(items))), call)
        glue = st.sampled_from(["", " ", " . ", "\n", "."])
        body = "".join(item + draw(glue) for item in items)
    prologue = draw(st.sampled_from(["", f"PREFIX : <{BASE}> ", f"PREFIX ex: <{BASE}> "]))
    decls = "PREFIX service: <urn:service:> PREFIX sd: <urn:sd:> "
    if "ex:" not in prologue:
        decls += DECLS
    return prologue + decls + draw(st.sampled_from(WRAP)).format(body)


# --- running ---------------------------------------------------------------------------------
@dataclass
class Rig:
    """The probe and an in-memory store holding DATA."""

    probe: Probe
    store: ox.Store

    def text(self, template: str) -> str:
        return template.replace(URL, self.probe.url).replace(BASE, self.probe.base)

    def raw(self, query: str) -> tuple[bool, bool]:
        """Run ``query`` on Oxigraph without the guard: (it parsed, it fetched)."""
        hits = self.probe.hits
        parsed = True
        try:
            answer = self.store.query(query, prefixes=PREFIXES, use_default_graph_as_union=True)
            if not isinstance(answer, ox.QueryBoolean):
                for _ in answer:
                    pass
        except SyntaxError:
            parsed = False
        except (OSError, RuntimeError, ValueError):
            pass  # evaluation errors (a failed SERVICE call among them)
        return parsed, self.probe.hits > hits


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    probe = Probe()
    store = ox.Store()
    store.update(DATA)
    yield Rig(probe, store)
    probe.close()


def test_data_holds_every_object(rig: Rig) -> None:
    """The triples the generated patterns name are in the store (so a SERVICE after them
    is reached), and Oxigraph does fetch from the probe: the oracle works."""
    for obj in OBJECTS:
        query = f"{DECLS}ASK {{ <urn:x:s> <urn:x:p> {obj} }}"
        assert rig.store.query(query, use_default_graph_as_union=True), obj
    assert rig.raw(f"SELECT * {{ SERVICE <{rig.probe.url}> {{}} }}") == (True, True)


@pytest.mark.parametrize("wrap", WRAP)
@pytest.mark.parametrize("before", BEFORE)
def test_service_after_every_terminal(rig: Rig, before: str, wrap: str) -> None:
    """Every SERVICE glued to the terminal before it is one Oxigraph really fetches
    (positive control: the oracle sees it), and the guard refuses it. A name before it
    (``?o``, ``ex:o``, ``@en``) would swallow the keyword, so there a space separates."""
    glue = " " if _ENDS_IN_NAME.search(before) else ""
    query = DECLS + wrap.format(f"{before}{glue}SERVICE<{rig.probe.url}>{{}}")
    assert rig.raw(query) == (True, True), query
    assert uses_service(query), query
    merged = DECLS + wrap.format(f"{before}SERVICE<{rig.probe.url}>{{}}")
    assert uses_service(merged) or not rig.raw(merged)[1], merged


@_TIMEOUT
@seed(SEED)
@_SETTINGS
@given(template=keyword_queries())
def test_fuzz_keyword_is_refused(rig: Rig, template: str) -> None:
    query = rig.text(template)
    assert uses_service(query), query


@_TIMEOUT
@seed(SEED)
@_SETTINGS
@given(template=benign_queries())
def test_fuzz_benign_is_let_through(rig: Rig, template: str) -> None:
    query = rig.text(template)
    assert not uses_service(query), query
    assert rig.raw(query) == (True, False), query


@_TIMEOUT
@seed(SEED)
@_SETTINGS
@given(template=soup_queries())
def test_fuzz_whatever_oxigraph_fetches_is_refused(rig: Rig, template: str) -> None:
    query = rig.text(template)
    _parsed, fetched = rig.raw(query)
    if fetched:
        assert uses_service(query), query


# --- the real commands -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from hcgraph.store import Store

    directory = tmp_path_factory.mktemp("fuzz") / "store"
    with Store(directory) as store:
        store.ox.update(PLAIN_DATA)
    return directory


def _mixed() -> st.SearchStrategy[tuple[str, bool]]:
    """(query template, uses SERVICE) drawn from the keyword and benign generators."""
    return st.one_of(
        keyword_queries().map(lambda q: (q, True)), benign_queries().map(lambda q: (q, False))
    )


@_TIMEOUT
@pytest.mark.slow  # a child process per example (forked: run_cli)
@seed(SEED)
@settings(_SETTINGS, max_examples=CLI_EXAMPLES)
@given(case=_mixed())
def test_fuzz_hcgraph_query(
    rig: Rig, store_dir: Path, tmp_path: Path, run_cli: Any, case: tuple[str, bool]
) -> None:
    template, keyword = case
    path = tmp_path / "fuzz.rq"
    path.write_text(rig.text(template), encoding="utf-8")
    hits = rig.probe.hits
    proc = run_cli("query", path, "--store", store_dir, timeout=120)
    assert rig.probe.hits == hits, path.read_text()
    if keyword:
        assert proc.returncode == 1 and "SERVICE" in proc.stderr, path.read_text()
    else:
        assert proc.returncode == 0, (path.read_text(), proc.stderr)


@pytest.fixture(scope="module")
def served(store_dir: Path) -> Iterator[str]:
    """``hcgraph serve --store DIR --port P``: the URL of its ``/query``."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hcgraph", "serve", "--port", str(port), "--store", str(store_dir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=cli_env(), text=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/query"
    try:
        for _ in range(600):
            try:
                httpx.get(url, params={"query": "ASK {}"}, trust_env=False, timeout=5)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


@_TIMEOUT
@pytest.mark.slow  # the Oxigraph server in a subprocess
@seed(SEED)
@settings(_SETTINGS, max_examples=SERVE_EXAMPLES)
@given(case=_mixed())
def test_fuzz_hcgraph_serve(rig: Rig, served: str, case: tuple[str, bool]) -> None:
    template, keyword = case
    query = rig.text(template)
    accept = {"Accept": "application/sparql-results+json, application/n-triples"}
    escaped = "".join(f"%{byte:02X}" for byte in query.encode())
    hits = rig.probe.hits
    with httpx.Client(trust_env=False, timeout=60) as client:
        answers = [
            client.get(served, params={"query": query}, headers=accept),
            client.post(served, data={"query": query}, headers=accept),
            client.post(served, content=query.encode(),
                        headers={**accept, "Content-Type": "application/sparql-query"}),
            # every byte %-escaped (``%53ERVICE``): the guard reads what Oxigraph decodes
            client.get(f"{served}?query={escaped}", headers=accept),
            client.post(served, content=f"query={escaped}",
                        headers={**accept, "Content-Type": "application/x-www-form-urlencoded"}),
        ]  # fmt: skip
    assert rig.probe.hits == hits, query
    for answer in answers:
        if keyword:
            assert answer.status_code == 400 and "SERVICE" in answer.text, query
        else:
            assert answer.status_code == 200, (query, answer.text)
