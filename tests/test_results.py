"""Output formats and the `hcgraph query` command."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pyoxigraph as ox
import pytest

from hcgraph.errors import QueryError
from hcgraph.queries import QueryResult
from hcgraph.results import FORMATS, display, write_result
from tests.conftest import SEED_URL
from tests.hostile import NASTY, nul_headline_story

XSD_INT = ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")


def _result() -> QueryResult:
    iri, seven = ox.NamedNode("https://example.org/a?x=1&y=2"), ox.Literal("7", datatype=XSD_INT)
    rows: list[tuple[Any, ...]] = [(iri, ox.Literal(text), seven) for text in NASTY]
    rows.append((ox.BlankNode("b0"), ox.Literal("chat", language="fr"), None))
    return QueryResult(("thing", "text", "n"), rows)


def _render(fmt: str, result: QueryResult | None = None) -> str:
    out = io.StringIO()
    write_result(result if result is not None else _result(), fmt, out)
    return out.getvalue()


def test_csv_parses_back() -> None:
    rows = list(csv.reader(io.StringIO(_render("csv"), newline="")))
    assert rows[0] == ["thing", "text", "n"]
    assert [r[1] for r in rows[1:-1]] == NASTY
    assert rows[-1] == ["_:b0", "chat", ""]


def _xml_safe_result() -> QueryResult:
    """:func:`_result` without the row holding characters XML 1.0 cannot carry (NUL...)."""
    full = _result()
    return QueryResult(full.variables, [r for r in full.terms if "\x00" not in display(r[1])])


@pytest.mark.parametrize("fmt", ["json", "tsv", "xml"])
def test_w3c_formats_parse_with_an_independent_parser(fmt: str) -> None:
    """Oxigraph's own SPARQL results parsers read what we write, term for term."""
    expected = _xml_safe_result() if fmt == "xml" else _result()
    text = _render(fmt, expected)
    parsed = ox.parse_query_results(
        text.encode(), format=getattr(ox.QueryResultsFormat, fmt.upper())
    )
    assert [v.value for v in parsed.variables] == ["thing", "text", "n"]
    rows = [tuple(sol[i] for i in range(3)) for sol in parsed]
    assert rows == expected.terms
    if fmt == "xml":  # and a strict XML 1.0 parser (expat) reads it too
        ElementTree.fromstring(text.encode("utf-8"))


def test_xml_refuses_characters_xml_cannot_carry() -> None:
    """XML 1.0 cannot hold NUL or most C0 controls, not even as &#0;: the result is refused
    with the row, column and character named, nothing is written, and the data is not
    silently altered."""
    out = io.StringIO()
    with pytest.raises(QueryError) as err:
        write_result(_result(), "xml", out)
    row = NASTY.index("control \x01\x08\x0b\x0c\x1f\x7f chars and NUL \x00 end") + 1
    assert str(err.value) == (
        f"row {row}, column ?text: the value holds U+0001, which XML 1.0 cannot carry; "
        "use --format json, tsv or csv"
    )
    assert out.getvalue() == ""
    odd = QueryResult(("x",), [(ox.Literal("fine\ttab\n"),), (ox.Literal("a\uffffb"),)])
    with pytest.raises(QueryError, match=r"row 2, column \?x: the value holds U\+FFFF"):
        write_result(odd, "xml", io.StringIO())


def test_cli_xml_refuses_a_nul_in_a_headline(run_cli: Any, tmp_path: Path, seed_path: Path) -> None:
    """A headline "a\\u0000b" (ingest accepts it): --format xml is one error line, the --out
    file keeps its old content (atomic), stdout gets nothing; json carries the NUL."""
    doc = nul_headline_story(seed_path, tmp_path)
    store = tmp_path / "store"
    assert run_cli("ingest", doc, "--store", store).returncode == 0
    rq = tmp_path / "headlines.rq"
    rq.write_text("SELECT ?h WHERE { ?s a hc:Story ; schema:headline ?h }\n")
    out = tmp_path / "out.xml"
    out.write_text("old\n")
    proc = run_cli("query", rq, "--format", "xml", "--out", out, "--store", store)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.splitlines() == [
        "error: row 1, column ?h: the value holds U+0000, which XML 1.0 cannot carry; "
        "use --format json, tsv or csv"
    ]
    assert out.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == [
        "headlines.rq",
        "nul.json",
        "out.xml",
        "store",
    ]
    proc = run_cli("query", rq, "--format", "xml", "--store", store)
    assert proc.returncode == 1 and proc.stdout == ""
    proc = run_cli("query", rq, "--format", "json", "--store", store)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["results"]["bindings"][0]["h"]["value"] == "a\x00b"


def test_json_shape() -> None:
    doc = json.loads(_render("json"))
    assert doc["head"]["vars"] == ["thing", "text", "n"]
    first = doc["results"]["bindings"][0]
    assert first["thing"] == {"type": "uri", "value": "https://example.org/a?x=1&y=2"}
    assert first["n"]["datatype"].endswith("#integer")
    last = doc["results"]["bindings"][-1]
    assert last["text"] == {"type": "literal", "value": "chat", "xml:lang": "fr"}
    assert "n" not in last  # unbound: left out, as the format says
    assert json.loads(_render("json", QueryResult((), [], True))) == {"head": {}, "boolean": True}


def test_table_renders_unicode_and_no_markup() -> None:
    text = _render("table")
    assert "漢字" in text and "😀" in text and "7 rows" not in text and "11 rows" in text
    assert "\x1b" not in text and "\x00" not in text  # control characters shown escaped
    assert "\\x01" in text and "\\u202e" in text
    result = QueryResult(("x",), [(ox.Literal("[bold red]not markup[/]"),)])
    assert "[bold red]not markup[/]" in _render("table", result)


def test_markdown_escapes_pipes_newlines_and_html() -> None:
    md = _render("md")
    lines = md.splitlines()
    assert lines[0] == "| thing | text | n |" and lines[1] == "|---|---|---|"
    assert len(lines) == 2 + len(NASTY) + 1  # one line per row: newlines became <br>
    assert all(line.count(" | ") - line.count("\\|") >= 2 for line in lines[2:])
    assert "<script>" not in md and "\\<script\\>" in md  # hcgraph.mdtext: backslashes
    assert "real<br>newline<br>and" in md


def test_unknown_format() -> None:
    from hcgraph import QueryError

    with pytest.raises(QueryError, match="known: table, csv, tsv, json, md, xml"):
        _render("rdf")
    assert list(FORMATS) == ["table", "csv", "tsv", "json", "md", "xml"]


def test_tsv_escapes_control_characters_the_way_ntriples_does() -> None:
    """No raw control character reaches a terminal or a line-based tool."""
    text = _render("tsv")
    assert "\x00" not in text and "\x1b" not in text
    assert "\\u0001\\b\\u000B\\f\\u001F\\u007F" in text


def test_tsv_keeps_a_decimal_with_an_integral_value_a_decimal() -> None:
    """A bare ``6`` reads back as xsd:integer, so a decimal 6 keeps its datatype."""
    six = ox.Literal("6", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#decimal"))
    text = _render("tsv", QueryResult(("x",), [(six,)]))
    assert text == '?x\n"6"^^<http://www.w3.org/2001/XMLSchema#decimal>\n'
    assert next(iter(ox.parse_query_results(text, ox.QueryResultsFormat.TSV)))["x"] == six


def test_ask_answers_in_every_format() -> None:
    yes = QueryResult((), [], True)
    assert _render("csv", yes) == "boolean\r\ntrue\r\n"
    assert _render("tsv", yes) == "?boolean\ntrue\n"
    assert "<boolean>true</boolean>" in _render("xml", yes)
    assert bool(ox.parse_query_results(_render("xml", yes), ox.QueryResultsFormat.XML))


def test_cli_xml_format(invoke: Any, seeded: Path) -> None:
    result = invoke("query", "publisher-reach", "--format", "xml", "--store", seeded)
    assert result.exit_code == 0
    parsed = ox.parse_query_results(result.stdout_bytes, ox.QueryResultsFormat.XML)
    assert isinstance(parsed, ox.QuerySolutions)
    assert sum(int(sol["claims"].value) for sol in parsed) == 24


# --- the CLI --------------------------------------------------------------------------------
@pytest.fixture
def seeded(invoke: Any, tmp_path: Path, seed_path: Path) -> Path:
    store = tmp_path / "store"
    assert invoke("ingest", seed_path, "--store", store).exit_code == 0
    return store


def test_cli_list(invoke: Any) -> None:
    result = invoke("query", "--list")
    assert result.exit_code == 0
    for name in ("source-reuse", "story-trail", "co-citation"):
        assert name in result.output
    assert "k (integer, default 2)" in result.output


def test_cli_formats_and_out(invoke: Any, seeded: Path, tmp_path: Path) -> None:
    result = invoke("query", "publisher-reach", "--format", "csv", "--store", seeded)
    assert result.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert sum(int(r["claims"]) for r in rows) == 24
    out = tmp_path / "out" / "trail.json"
    result = invoke("query", "story-trail", "-p", f"story={SEED_URL}", "--format", "json",
                    "--out", out, "--store", seeded)  # fmt: skip
    assert result.exit_code == 0 and "25 rows" in result.output
    assert len(json.loads(out.read_text())["results"]["bindings"]) == 25
    table = invoke("query", "publisher-reach", "--store", seeded)
    assert "huggingface-daily-papers" in table.output and "4 rows" in table.output


def test_cli_user_file(invoke: Any, seeded: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine.rq"
    mine.write_text("# title: headlines\nSELECT ?h WHERE { ?s a hc:Story ; schema:headline ?h }\n")
    result = invoke("query", mine, "--format", "tsv", "--store", seeded)
    assert result.exit_code == 0 and result.output.startswith("?h\n")


def test_cli_errors_are_one_line(run_cli: Any, tmp_path: Path, seed_path: Path) -> None:
    store = tmp_path / "store"
    assert run_cli("ingest", seed_path, "--store", store).returncode == 0
    proc = run_cli("query", "nope", "--store", store)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: unknown query 'nope'; saved queries: claim-reuse")
    bad = tmp_path / "bad.rq"
    bad.write_text("SELECT ?s WHERE {\n  BIND (1 AS ?s ?s) }\n")
    proc = run_cli("query", bad, "--store", store)
    assert proc.returncode == 1 and "syntax error at line 2, column 17" in proc.stderr
    proc = run_cli("query", "story-trail", "--param", 'story="} ; DROP ALL ; {"', "--store", store)
    assert proc.returncode == 1 and "not an absolute IRI" in proc.stderr
    proc = run_cli("query", "co-citation", "--param", "k", "--store", store)
    assert proc.returncode == 1 and "want NAME=VALUE" in proc.stderr
    proc = run_cli("stats", "--format", "json", "--store", store)
    assert '"stories": 1' in proc.stdout  # the store is untouched
