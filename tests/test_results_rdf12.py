"""RDF 1.2 terms in answers: triple terms and directional language tags, in every output
format `hcgraph query` and `hcgraph serve` offer (issue 41, item 9)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import httpx
import pyoxigraph as ox
import pytest

from hcgraph import Endpoint
from hcgraph.errors import QueryError
from hcgraph.mdtext import md_cell
from hcgraph.queries import QueryResult, parse_query_text, run_query
from hcgraph.results import write_result
from hcgraph.results_csv import csv_lines
from hcgraph.store import Store

A, P, Q, S, KNOWS = (ox.NamedNode(f"http://example.org/{n}") for n in ("a", "p", "q", "s", "k"))
SAYS = ox.Literal('Hello, my name is "Alice".')
TRIPLE = ox.Triple(S, KNOWS, SAYS)
NESTED = ox.Triple(A, KNOWS, TRIPLE)
RTL = ox.Literal("שלום", language="he", direction=ox.BaseDirection.RTL)
TRIPLES = {ox.Triple(A, P, TRIPLE), ox.Triple(A, Q, RTL), ox.Triple(S, P, NESTED)}

SRES = "{http://www.w3.org/2005/sparql-results#}"
ITS_DIR = "{http://www.w3.org/2005/11/its}dir"
SELECT = "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p"
CONSTRUCT = "CONSTRUCT WHERE { ?s ?p ?o }"


@pytest.fixture(scope="module")
def rdf12_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("rdf12") / "store"
    graph = "<http://example.org/graph>"
    lines = "".join(f"{t.subject} {t.predicate} {_nt(t.object)} {graph} .\n" for t in TRIPLES)
    with Store(directory) as store:
        store.load_nquads(lines.encode())
    return directory


def _nt(term: Any) -> str:
    return f"<<( {term} )>>" if isinstance(term, ox.Triple) else str(term)


def _query(invoke: Any, store: Path, tmp_path: Path, sparql: str, fmt: str) -> str:
    rq = tmp_path / "q.rq"
    rq.write_text(sparql + "\n", encoding="utf-8")
    result = invoke("query", rq, "--store", store, "--format", fmt)
    assert result.exit_code == 0, result.output
    return str(result.output)


def _parsed(data: bytes, fmt: ox.RdfFormat) -> set[ox.Triple]:
    return {quad.triple for quad in ox.parse(data, format=fmt)}


def _json_term(term: dict[str, Any]) -> Any:
    """A term from SPARQL 1.2 results JSON, read by hand (no library round trip)."""
    kind = term["type"]
    if kind == "uri":
        return ox.NamedNode(term["value"])
    if kind == "triple":
        parts = term["value"]
        return ox.Triple(*(_json_term(parts[k]) for k in ("subject", "predicate", "object")))
    assert kind == "literal", term
    if "its:dir" in term:
        return ox.Literal(
            term["value"], language=term["xml:lang"], direction=ox.BaseDirection(term["its:dir"])
        )
    return ox.Literal(term["value"], language=term.get("xml:lang"))


def _xml_term(element: ElementTree.Element) -> Any:
    tag = element.tag.removeprefix(SRES)
    if tag == "uri":
        return ox.NamedNode(element.text or "")
    if tag == "triple":
        parts = (element.find(SRES + k) for k in ("subject", "predicate", "object"))
        return ox.Triple(*(_xml_term(next(iter(p))) for p in parts if p is not None))
    assert tag == "literal", tag
    lang = element.get("{http://www.w3.org/XML/1998/namespace}lang")
    direction = element.get(ITS_DIR)
    if direction:
        return ox.Literal(element.text or "", language=lang, direction=ox.BaseDirection(direction))
    return ox.Literal(element.text or "", language=lang)


@pytest.mark.parametrize("sparql", [SELECT, CONSTRUCT])
def test_query_json_writes_sparql_12_terms(
    invoke: Any, rdf12_store: Path, tmp_path: Path, sparql: str
) -> None:
    """``"type": "triple"`` with subject/predicate/object, ``xml:lang`` with ``its:dir``."""
    doc = json.loads(_query(invoke, rdf12_store, tmp_path, sparql, "json"))
    names = doc["head"]["vars"]
    rows = {tuple(_json_term(b[v]) for v in names) for b in doc["results"]["bindings"]}
    assert {ox.Triple(*row) for row in rows} == TRIPLES
    rtl = next(b for b in doc["results"]["bindings"] if "its:dir" in b[names[2]])[names[2]]
    assert rtl == {"type": "literal", "value": "שלום", "xml:lang": "he", "its:dir": "rtl"}


@pytest.mark.parametrize("sparql", [SELECT, CONSTRUCT])
def test_query_xml_writes_sparql_12_terms(
    invoke: Any, rdf12_store: Path, tmp_path: Path, sparql: str
) -> None:
    """``<triple><subject>…`` and ``its:dir``, read back by a strict XML parser (expat)."""
    root = ElementTree.fromstring(_query(invoke, rdf12_store, tmp_path, sparql, "xml").encode())
    rows = set()
    for result in root.iter(SRES + "result"):
        rows.add(tuple(_xml_term(next(iter(binding))) for binding in result))
    assert {ox.Triple(*row) for row in rows} == TRIPLES


@pytest.mark.parametrize("sparql", [SELECT, CONSTRUCT])
def test_query_tsv_writes_ntriples_12_terms(
    invoke: Any, rdf12_store: Path, tmp_path: Path, sparql: str
) -> None:
    """Each cell is a term in N-Triples 1.2: the triple statement made of a row parses."""
    lines = _query(invoke, rdf12_store, tmp_path, sparql, "tsv").splitlines()
    assert '"שלום"@he--rtl' in lines[1] + lines[2] + lines[3]
    statements = "".join(" ".join(line.split("\t")) + " .\n" for line in lines[1:])
    assert _parsed(statements.encode(), ox.RdfFormat.N_TRIPLES) == TRIPLES


def test_query_csv_writes_triple_terms_as_the_sparql_12_draft_does(
    invoke: Any, rdf12_store: Path, tmp_path: Path
) -> None:
    """``<<( s p "o" )>>``, the literal object quoted and quoted again for the field."""
    text = _query(invoke, rdf12_store, tmp_path, SELECT, "csv")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == ["s", "p", "o"]
    cells = {row[2] for row in rows[1:]}
    said = '"Hello, my name is ""Alice""."'
    inner = f"<<( http://example.org/s http://example.org/k {said} )>>"
    assert cells == {inner, "שלום", f"<<( http://example.org/a http://example.org/k {inner} )>>"}
    assert '"<<( http://example.org/s http://example.org/k ""Hello, my name is' in text


def test_csv_is_written_as_pyoxigraph_writes_it_but_for_triple_terms() -> None:
    """The CSV writer of both paths: plain values byte for byte as pyoxigraph writes them,
    and an IRI holding a comma quoted (pyoxigraph leaves it bare and splits the row)."""
    store = ox.Store()
    for i, text in enumerate(["plain", "", "a,b", 'say "hi"', "line\nbreak", "cr\rx", " pad "]):
        node = ox.NamedNode(f"http://example.org/{i}")
        store.add(ox.Quad(node, P, ox.Literal(text)))
        store.add(ox.Quad(ox.BlankNode(f"b{i}"), P, ox.Literal(text, language="en")))
    sparql = "SELECT ?s ?o ?unbound WHERE { ?s ?p ?o } ORDER BY ?s ?o"
    expected = store.query(sparql).serialize(format=ox.QueryResultsFormat.CSV)
    assert expected is not None
    mine = "".join(csv_lines(["s", "o", "unbound"], store.query(sparql)))
    assert mine.encode() == expected
    comma = "".join(csv_lines(["s"], [(ox.NamedNode("http://example.org/x,y"),)]))
    assert list(csv.reader(io.StringIO(comma, newline=""))) == [["s"], ["http://example.org/x,y"]]


@pytest.mark.parametrize("fmt", ["table", "md"])
def test_query_formats_for_people_show_triple_terms(
    invoke: Any, rdf12_store: Path, tmp_path: Path, fmt: str
) -> None:
    """A triple term shows in its N-Triples 1.2 form, a directional literal as its text."""
    text = _query(invoke, rdf12_store, tmp_path, CONSTRUCT, fmt)
    said = '"Hello, my name is \\"Alice\\"."'
    inner = f"<<( <http://example.org/s> <http://example.org/k> {said} )>>"
    if fmt == "md":  # Markdown escapes <, > and \ (no HTML can slip in)
        inner = md_cell(inner)
        assert "\\<\\<( \\<http://example.org/s\\>" in inner
    assert inner in text
    assert "שלום" in text
    assert "3 rows" in text if fmt == "table" else text.count("\n") == 2 + 3


def test_order_by_puts_triple_terms_after_literals() -> None:
    """ORDER BY over a column holding triple terms sorts (SPARQL 1.2: after literals)."""
    with Store(None) as store:
        graph = "<http://example.org/graph>"
        store.load_nquads(
            "".join(
                f"{t.subject} {t.predicate} {_nt(t.object)} {graph} .\n" for t in TRIPLES
            ).encode()
        )
        # the final ORDER BY on its own line: rows are sorted in Python (hcgraph.queries)
        text = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }\nORDER BY ?o"
        result = run_query(store, parse_query_text(text, "q"))
    assert [type(row[2]) for row in result.terms] == [ox.Literal, ox.Triple, ox.Triple]
    assert result.records()[1]["o"].startswith("<<( <http://example.org/")


def test_xml_refuses_a_forbidden_character_inside_a_triple_term() -> None:
    bad = ox.Triple(S, KNOWS, ox.Literal("nul \x00 here"))
    with pytest.raises(QueryError, match=r"row 1, column \?o: the value holds U\+0000"):
        write_result(QueryResult(("o",), [(bad,)]), "xml", io.StringIO())


# --- serve: the same terms over HTTP, in every format it offers ---------------------------


@pytest.fixture(scope="module")
def rdf12_endpoint(rdf12_store: Path) -> Iterator[Endpoint]:
    with Endpoint(rdf12_store, port=0) as endpoint:
        yield endpoint


def _http(endpoint: Endpoint, sparql: str, accept: str) -> httpx.Response:
    answer = httpx.post(
        endpoint.query_url, data={"query": sparql}, headers={"Accept": accept}, timeout=60,
        trust_env=False,
    )  # fmt: skip
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith(accept)
    return answer


@pytest.mark.slow
@pytest.mark.parametrize(
    "accept",
    ["application/sparql-results+json", "application/sparql-results+xml",
     "text/tab-separated-values", "text/csv"],
)  # fmt: skip
def test_serve_select_answers_rdf12_terms(rdf12_endpoint: Endpoint, accept: str) -> None:
    text = _http(rdf12_endpoint, SELECT, accept).text
    if accept.endswith("json"):
        doc = json.loads(text)
        rows = {tuple(_json_term(b[v]) for v in "spo") for b in doc["results"]["bindings"]}
    elif accept.endswith("xml"):
        root = ElementTree.fromstring(text.encode())
        rows = {
            tuple(_xml_term(next(iter(b))) for b in result) for result in root.iter(SRES + "result")
        }
    elif accept == "text/csv":  # the same text `query --format csv` writes
        assert text == _local_csv()
        return
    else:
        statements = "".join(" ".join(line.split("\t")) + " .\n" for line in text.splitlines()[1:])
        assert _parsed(statements.encode(), ox.RdfFormat.N_TRIPLES) == TRIPLES
        return
    assert {ox.Triple(*row) for row in rows} == TRIPLES


@pytest.mark.slow
def test_serve_csv_of_an_ask_is_its_answer(rdf12_endpoint: Endpoint) -> None:
    """An ASK in CSV stays pyoxigraph's one word (only solutions take hcgraph's writer)."""
    assert _http(rdf12_endpoint, "ASK { ?s ?p ?o }", "text/csv").text == "true"


def _local_csv() -> str:
    rows = sorted(((t.subject, t.predicate, t.object) for t in TRIPLES), key=str)
    out = io.StringIO()
    write_result(QueryResult(("s", "p", "o"), list(rows)), "csv", out)
    return out.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("accept", "fmt"),
    [("application/n-triples", ox.RdfFormat.N_TRIPLES), ("text/turtle", ox.RdfFormat.TURTLE),
     ("application/n-quads", ox.RdfFormat.N_QUADS), ("application/trig", ox.RdfFormat.TRIG),
     ("application/rdf+xml", ox.RdfFormat.RDF_XML)],
)  # fmt: skip
def test_serve_construct_answers_rdf12_graphs(
    rdf12_endpoint: Endpoint, accept: str, fmt: ox.RdfFormat
) -> None:
    """N-Triples/Turtle 1.2 (``<<( … )>>``, ``@he--rtl``), and RDF/XML 1.2, parse back whole."""
    body = _http(rdf12_endpoint, CONSTRUCT, accept).content
    assert _parsed(body, fmt) == TRIPLES
    if fmt in (ox.RdfFormat.N_TRIPLES, ox.RdfFormat.TURTLE):
        assert b"<<(" in body
        assert '"שלום"@he--rtl'.encode() in body
