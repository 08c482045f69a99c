"""The workbench of `hcgraph serve` in real headless Chromium: saved queries run from the page.

`hcgraph serve` (the CLI, as users start it) over a store with the seed story; the page at /
is opened with every request recorded: those to the server's own origin go through, any
other is counted and aborted, and the page's Content-Security-Policy violations are
collected too (a request the policy blocks never reaches the network). Checked: the page
makes no request beyond the server, the saved query `publisher-reach` chosen from the page
shows the rows `run_query` gives, and a SERVICE query typed into the page gets the guard's
400 while the probe server it names gets no request.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pyoxigraph as ox
import pytest

from hcgraph import Store, ingest_bytes, run_query, saved_queries
from hcgraph.workbench import workbench_files
from hcsample.corpus import generate_corpus
from tests.conftest import ROOT, SEED
from tests.support.chromium import CHROMIUM
from tests.support.probe import Probe
from tests.support.serving import start_cli_serve

pytestmark = [
    pytest.mark.slow,  # a real browser and a server process
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]

ARTIFACTS = ROOT / "tests" / "artifacts"
XSD_STRING = ox.NamedNode("http://www.w3.org/2001/XMLSchema#string")


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("workbench") / "store"
    corpus = generate_corpus(10, seed=7, include_seed=json.loads(SEED.read_text()))
    with Store(directory) as st:
        report = ingest_bytes(st, ((json.dumps(s).encode(), str(s["url"])) for s in corpus.stories))
        assert not report.failures
    return directory


@pytest.fixture(scope="module")
def server(store_dir: Path) -> Iterator[str]:
    """`hcgraph serve` on a free port; its base URL (http://127.0.0.1:PORT)."""
    proc, port, banner = start_cli_serve(store_dir)
    try:
        base = f"http://127.0.0.1:{port}"
        assert f"{base}/query" in banner and f"workbench: {base}/." in banner, banner
        yield base
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


class Workbench:
    """The page at / plus every request it made and every policy violation it hit."""

    def __init__(self, browser: Any, base: str) -> None:
        self.base = base
        self.origin = "{0.scheme}://{0.netloc}".format(urlsplit(base))
        self.own: list[tuple[str, str]] = []
        self.foreign: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.page = self.context.new_page()
        self.page.add_init_script(
            "window.__csp = []; document.addEventListener('securitypolicyviolation',"
            " e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
        )
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        self.context.route("**/*", self._route)
        self.page.goto(f"{base}/")
        self.page.wait_for_function("() => window.hcWorkbench !== undefined", timeout=60_000)

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def _route(self, route: Any) -> None:
        request = route.request
        parts = urlsplit(request.url)
        if f"{parts.scheme}://{parts.netloc}" == self.origin:
            self.own.append((request.method, parts.path))
            route.continue_()
        else:
            self.foreign.append(request.url)
            route.abort()

    def run(self, expect_path: str = "/query") -> Any:
        """Press YASGUI's run button; the server's answer to the query it sent."""
        with self.page.expect_response(lambda r: urlsplit(r.url).path == expect_path) as answer:
            self.page.click(".yasqe_queryButton")
        return answer.value

    def violations(self) -> list[str]:
        return list(self.page.evaluate("() => window.__csp"))

    def close(self) -> None:
        self.context.close()


def _shown(term: Any) -> str:
    """A term as YASGUI's table shows it: a plain string as it is, anything else in
    N-Triples form (``<iri>``, ``"10"^^<…#integer>``, ``"x"@en``)."""
    if isinstance(term, ox.Literal) and term.datatype == XSD_STRING and not term.language:
        return str(term.value)
    return str(term)


def _truth(store_dir: Path) -> tuple[list[str], list[tuple[str, ...]]]:
    with Store(store_dir, read_only=True) as st:
        result = run_query(st, saved_queries()["publisher-reach"])
    rows = [tuple(_shown(t) for t in row) for row in result.terms]
    return list(result.variables), rows


def test_saved_query_runs_from_the_page(browser: Any, server: str, store_dir: Path) -> None:
    variables, truth = _truth(store_dir)
    assert len(truth) >= 2
    bench = Workbench(browser, server)
    try:
        names = bench.page.eval_on_selector_all("#hc-example option", "os => os.map(o => o.value)")
        assert set(names) - {""} == set(saved_queries())
        bench.page.select_option("#hc-example", "publisher-reach")
        query = saved_queries()["publisher-reach"]
        assert bench.page.text_content("#hc-question") == query.question
        editor = bench.page.evaluate("() => hcWorkbench.yasgui.getTab().getYasqe().getValue()")
        assert editor == query.text
        answer = bench.run()
        assert answer.status == 200 and answer.request.method == "POST"
        bench.page.wait_for_selector(".yasr table tbody tr td", timeout=60_000)
        headers = bench.page.eval_on_selector_all(
            ".yasr table thead th", "hs => hs.map(h => h.textContent.trim())"
        )
        assert [h for h in headers if h in variables] == variables
        cells = bench.page.eval_on_selector_all(
            ".yasr table tbody tr",
            "rs => rs.map(r => Array.from(r.querySelectorAll('td')).map(td => td.textContent))",
        )
        assert len(cells) == len(truth)
        # The table's last columns are the query's (YASGUI puts a row number first).
        shown = sorted(tuple(c.strip() for c in row[-len(variables) :]) for row in cells)
        assert shown == sorted(truth)
        ARTIFACTS.mkdir(exist_ok=True)
        bench.page.screenshot(path=str(ARTIFACTS / "workbench-publisher-reach.png"))
        assert bench.foreign == []
        assert bench.violations() == []
        assert bench.errors == []
        paths = {p for _m, p in bench.own}
        assert paths <= {"/query"} | set(workbench_files()), paths
        assert ("POST", "/query") in bench.own
    finally:
        bench.close()


def test_service_query_from_the_page_is_refused(browser: Any, server: str) -> None:
    probe = Probe()
    bench = Workbench(browser, server)
    try:
        sparql = f"SELECT * WHERE {{ SERVICE <{probe.url}> {{ ?s ?p ?o }} }}"
        bench.page.evaluate("q => { hcWorkbench.yasgui.getTab().setQuery(q); }", sparql)
        answer = bench.run()
        assert answer.status == 400
        assert "SERVICE" in answer.text()
        bench.page.wait_for_function(
            "() => document.querySelector('.yasr').textContent.includes('uses SERVICE')",
            timeout=60_000,
        )
        assert probe.hits == 0
        assert bench.foreign == [] and bench.violations() == []
        # The same query straight to the endpoint: the same refusal (the page adds nothing).
        direct = httpx.post(f"{server}/query", data={"query": sparql}, trust_env=False)
        assert direct.status_code == 400 and probe.hits == 0
    finally:
        bench.close()
        probe.close()


def test_braces_in_a_literal_show_as_they_are(browser: Any, server: str) -> None:
    """Yasr's table turned ``{{b}}`` into the row's ``?b`` and ``{{nobody}}`` into ``nobody``."""
    text = "{{b}} and {{ nobody }} <b>x</b>"
    bench = Workbench(browser, server)
    try:
        literal = json.dumps(text)  # a SPARQL string literal too (no backslash, no newline)
        sparql = "SELECT ?a ?b WHERE { VALUES (?a ?b) { (" + literal + ' "other") } }'
        bench.page.evaluate("q => { hcWorkbench.yasgui.getTab().setQuery(q); }", sparql)
        assert bench.run().status == 200
        bench.page.wait_for_selector(".yasr table tbody tr td", timeout=60_000)
        cells = bench.page.eval_on_selector_all(
            ".yasr table tbody tr td", "tds => tds.map(td => td.textContent.trim())"
        )
        assert text in cells and "other" in cells, cells
        assert bench.page.query_selector(".yasr table tbody b") is None  # text, not markup
        assert bench.errors == [] and bench.violations() == []
    finally:
        bench.close()


@pytest.mark.parametrize(
    "accept", ["application/sparql-results+json", "application/sparql-results+xml"]
)
def test_every_term_kind_shows_in_the_table(browser: Any, server: str, accept: str) -> None:
    """IRIs, typed, language and plain literals (braces kept) and blank nodes fill the table,
    for the JSON answer and the XML one YASGUI's settings offer. Yasr's XML parser calls the
    binding hook unconditionally: left out (not replaced), every XML answer failed."""
    bench = Workbench(browser, server)
    try:
        sparql = (
            "SELECT ?iri ?typed ?lang ?plain ?blank WHERE { VALUES (?iri ?typed ?lang ?plain)"
            ' { (<http://example.org/a> 42 "chat"@fr "{{iri}} x") } BIND(BNODE() AS ?blank) }'
        )
        bench.page.evaluate(
            "([q, a]) => { const t = hcWorkbench.yasgui.getTab();"
            " t.setRequestConfig({acceptHeaderSelect: a}); t.setQuery(q); }",
            [sparql, accept],
        )
        answer = bench.run()
        assert answer.status == 200 and accept in answer.headers["content-type"]
        bench.page.wait_for_selector(".yasr table tbody tr td", timeout=60_000)
        cells = bench.page.eval_on_selector_all(
            ".yasr table tbody tr td", "tds => tds.map(td => td.textContent.trim())"
        )
        # A row number, then the columns; Yasr's XML parser reads no xml:lang (as shipped).
        lang = '"chat"@fr' if "json" in accept else "chat"
        xsd_integer = "<http://www.w3.org/2001/XMLSchema#integer>"
        assert cells[1:5] == ["<http://example.org/a>", f'"42"^^{xsd_integer}', lang, "{{iri}} x"]
        assert len(cells) == 6 and cells[5], cells  # the blank node's label
        assert bench.errors == [] and bench.violations() == []
    finally:
        bench.close()


def test_update_from_the_page_is_refused(browser: Any, server: str) -> None:
    bench = Workbench(browser, server)
    try:
        bench.page.evaluate(
            "q => { hcWorkbench.yasgui.getTab().setQuery(q); }",
            "INSERT DATA { <urn:x> <urn:y> <urn:z> }",
        )
        answer = bench.run()
        assert answer.status in {400, 403}
        count = httpx.post(
            f"{server}/query", data={"query": "ASK { <urn:x> <urn:y> <urn:z> }"},
            headers={"Accept": "application/sparql-results+json"}, trust_env=False,
        )  # fmt: skip
        assert count.json()["boolean"] is False
        assert bench.foreign == [] and bench.violations() == []
    finally:
        bench.close()


def test_autocompletion_and_outside_fetches_stay_on_the_server(browser: Any, server: str) -> None:
    """Typing where YASGUI would ask Linked Open Vocabularies for properties and classes
    sends nothing anywhere; a fetch to another host is refused by the page's policy (and
    seen by the violation recorder, so the recorder works)."""
    bench = Workbench(browser, server)
    try:
        bench.page.evaluate(
            "q => { const e = hcWorkbench.yasgui.getTab().getYasqe(); e.setValue(q);"
            " e.focus(); e.setCursor(e.lineCount() - 1, 1e6); }",
            "PREFIX foaf: <http://xmlns.com/foaf/0.1/>\nSELECT * { ?s a foaf:Pers",
        )
        bench.page.keyboard.press("Control+Space")
        bench.page.keyboard.type("o")
        bench.page.evaluate(
            "() => { const e = hcWorkbench.yasgui.getTab().getYasqe();"
            " e.replaceRange(' foaf:na', e.getCursor()); e.autocomplete(); }"
        )
        bench.page.keyboard.press("Control+Space")
        # With YASGUI's defaults each of these asked lov.linkeddata.es (seen: connect-src).
        assert bench.violations() == [] and bench.foreign == []
        completers = bench.page.evaluate(
            "() => Object.keys(hcWorkbench.yasgui.getTab().getYasqe().autocompleters)"
        )
        assert set(completers) <= {"prefixes", "variables"}, completers
        blocked = bench.page.evaluate(
            "() => fetch('https://lov.linkeddata.es/dataset/lov/api/v2/autocomplete/terms?q=x')"
            ".then(() => 'fetched', () => 'blocked')"
        )
        assert blocked == "blocked"
        assert bench.foreign == []
        # The violation event is a task queued on its own: it may follow the rejection.
        bench.page.wait_for_function("() => window.__csp.length > 0", timeout=30_000)
        assert [v.split()[0] for v in bench.violations()] == ["connect-src"]
    finally:
        bench.close()
