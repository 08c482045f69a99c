"""Output formats for query results: a registry of writers (name → function).

What: ``write_result(result, "csv", stream)`` writes a :class:`~hcgraph.queries.QueryResult`
as ``table`` (rich, for people), ``csv`` / ``tsv`` / ``json`` / ``xml`` (the W3C SPARQL Query
Results formats, for tools: CSV by :mod:`hcgraph.results_csv`, the others by pyoxigraph),
or ``md`` (a GitHub-flavoured Markdown table).

RDF 1.2 terms come out in every format: triple terms and directional language tags
(``"o"@en--rtl``) as the SPARQL 1.2 results drafts write them (JSON, XML, TSV); CSV and
the two formats for people carry text (a triple term as ``<<( s p o )>>``, a literal as
its lexical form).

Why a registry: the CLI's ``--format`` choices, the help text and the tests all read
:data:`FORMATS`, so a new format is one function and one line.

Untrusted text stays text: the table is built from ``rich.text.Text`` (no markup is
interpreted) with control characters shown as escapes, Markdown escapes through
:mod:`hcgraph.mdtext` (``|``, ``\\``, emphasis, code, links, HTML, entities), and
CSV quotes by RFC 4180, pyoxigraph escapes TSV/JSON/XML by their own rules (a value XML
1.0 cannot carry at all, such as a NUL, makes ``xml`` refuse, see :func:`write_xml`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TextIO

import pyoxigraph as ox
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .errors import QueryError, visible
from .mdtext import md_cell
from .queries import QueryResult
from .rdftext import XML_FORBIDDEN
from .results_csv import csv_lines

__all__ = ["FORMATS", "display", "write_result"]

Writer = Callable[[QueryResult, TextIO], None]

_JSON = ox.QueryResultsFormat.JSON
# Control characters pyoxigraph's TSV writer leaves raw (it escapes tab, CR, LF itself).
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SHORT_ESCAPES = {"\b": "\\b", "\f": "\\f"}


def display(term: Any) -> str:
    """The plain text of a term: an IRI, a literal's lexical form, ``_:id``, or ``""``.

    A triple term (RDF 1.2) shows in its N-Triples 1.2 form, ``<<( <s> <p> "o" )>>``: its
    parts need their syntax to be told apart (an IRI from a string holding one).
    """
    if term is None:
        return ""
    if isinstance(term, ox.BlankNode):
        return f"_:{term.value}"
    if isinstance(term, ox.Triple):
        return ntriples(term)
    return str(term.value)


def ntriples(term: Any) -> str:
    """A term in N-Triples 1.2 syntax: a triple term as ``<<( s p o )>>``, nested ones too.

    Why not ``str(term)``: pyoxigraph writes a triple term's parts without the enclosing
    ``<<( )>>`` (as in a triple statement), which no results parser reads as one term.
    """
    return f"<<( {term} )>>" if isinstance(term, ox.Triple) else str(term)


def _ask_rows(result: QueryResult) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    header, rows = _ask_terms(result)
    return header, [tuple(display(t) for t in row) for row in rows]


def write_table(result: QueryResult, out: TextIO, *, width: int | None = None) -> None:
    """A rich table with a row count; wraps to the terminal (or to ``width`` columns), or
    stays wide for files and pipes. Cells are shown through :func:`~hcgraph.errors.visible`."""
    header, rows = _ask_rows(result)
    table = Table(show_lines=False, caption=f"{len(rows)} row{'s' * (len(rows) != 1)}")
    for name in header:
        table.add_column(Text(name), overflow="fold")
    for row in rows:
        table.add_row(*(Text(visible(cell)) for cell in row))
    is_tty = getattr(out, "isatty", lambda: False)()
    console = Console(
        file=out,
        width=width if width is not None else None if is_tty else 100_000,
        highlight=False,
        emoji=False,
        markup=False,
        color_system="auto" if is_tty else None,
        legacy_windows=False,
    )
    if not is_tty and width is None:
        console.width = max(80, table.__rich_measure__(console, console.options).maximum)
    console.print(table)


def _solutions(result: QueryResult, *, table: bool = False) -> ox.QuerySolutions | ox.QueryBoolean:
    """The materialised rows as pyoxigraph results again, so pyoxigraph writes the formats.

    Why a bridge: rows are materialised (and sorted in Python, see hcgraph.queries), and
    pyoxigraph results cannot be built from terms. TSV carries each term in its N-Triples
    1.2 syntax (:func:`ntriples`, an empty cell for unbound), so the round trip is lossless.
    ``table`` gives an ASK answer as a one-column table (TSV has no boolean form).
    """
    if result.boolean is not None and not table:
        answer = "true" if result.boolean else "false"
        return ox.parse_query_results(f'{{"head":{{}},"boolean":{answer}}}', _JSON)
    header, rows = _ask_terms(result)
    lines = ["\t".join("?" + name for name in header)]
    lines.extend("\t".join("" if t is None else ntriples(t) for t in row) for row in rows)
    return ox.parse_query_results("\n".join(lines) + "\n", ox.QueryResultsFormat.TSV)


def _ask_terms(result: QueryResult) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
    if result.boolean is not None:
        return ("boolean",), [(ox.Literal(result.boolean),)]
    return result.variables, result.terms


def _serialize(result: QueryResult, fmt: ox.QueryResultsFormat) -> str:
    table = fmt == ox.QueryResultsFormat.TSV
    data = _solutions(result, table=table).serialize(format=fmt)
    assert data is not None
    return data.decode("utf-8")


def _escape_control(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT_ESCAPES.get(char) or f"\\u{ord(char):04X}"


def write_csv(result: QueryResult, out: TextIO) -> None:
    """SPARQL Query Results CSV: names, plain values, CRLF ends (:mod:`hcgraph.results_csv`).

    CSV carries text only: a directional literal gives its lexical form (as any literal
    does), a triple term the text SPARQL 1.2 CSV defines, ``<<( s p "o" )>>``.
    """
    header, rows = _ask_terms(result)
    out.writelines(csv_lines(header, rows))


def write_tsv(result: QueryResult, out: TextIO) -> None:
    """SPARQL Query Results TSV (pyoxigraph's writer): terms in N-Triples 1.2 syntax
    (``"o"@en--rtl``, ``<<( <s> <p> "o" )>>``).

    pyoxigraph leaves control characters raw inside literals (valid Turtle); they are
    escaped here as N-Triples does (``\\u0001``, ``\\b``), so no raw NUL or ESC reaches a
    terminal or a line-based tool. Only literals can hold them (IRIs and blank node labels
    cannot), so the substitution touches nothing else.
    """
    out.write(_CONTROL.sub(_escape_control, _serialize(result, ox.QueryResultsFormat.TSV)))


def write_json(result: QueryResult, out: TextIO) -> None:
    """SPARQL Query Results JSON (pyoxigraph's writer), indented one space per level.

    RDF 1.2 terms as the SPARQL 1.2 draft writes them: a triple term
    ``{"type": "triple", "value": {"subject": …, "predicate": …, "object": …}}``, a
    directional literal with ``"xml:lang"`` and ``"its:dir"``.

    pyoxigraph writes compact JSON; re-indenting keeps the files hcgraph has always written
    (and diffs of them) readable and byte-identical.
    """
    doc = json.loads(_serialize(result, _JSON))
    json.dump(doc, out, ensure_ascii=False, indent=None if result.boolean is not None else 1)
    out.write("\n")


def write_xml(result: QueryResult, out: TextIO) -> None:
    """SPARQL Query Results XML (pyoxigraph's writer); RDF 1.2 terms as the SPARQL 1.2
    draft writes them: ``<triple><subject>…</subject>…</triple>`` and ``its:dir``.

    pyoxigraph writes a literal's characters as they are, so a value holding a NUL or
    another character XML 1.0 forbids would make a file no XML parser reads. Rather than
    alter the data silently, such a result is refused before anything is written.

    Raises:
        QueryError: a value holds a character XML 1.0 cannot carry (names row, column and
            character, and suggests a format that can).
    """
    _check_xml_chars(result)
    out.write(_serialize(result, ox.QueryResultsFormat.XML))


def _check_xml_chars(result: QueryResult) -> None:
    if result.boolean is not None:
        return
    for number, row in enumerate(result.terms, 1):
        for name, term in zip(result.variables, row, strict=False):
            bad = _xml_forbidden(term)
            if bad is not None:
                raise QueryError(
                    f"row {number}, column ?{name}: the value holds U+{ord(bad.group()):04X}, "
                    "which XML 1.0 cannot carry; use --format json, tsv or csv"
                )


def _xml_forbidden(term: Any) -> re.Match[str] | None:
    """The first character XML 1.0 cannot carry in a literal of ``term`` (a triple term's
    literals too); only a literal can hold one (IRIs and blank node ids cannot)."""
    if isinstance(term, ox.Triple):
        return _xml_forbidden(term.subject) or _xml_forbidden(term.object)
    return XML_FORBIDDEN.search(term.value) if isinstance(term, ox.Literal) else None


def write_md(result: QueryResult, out: TextIO) -> None:
    """A GitHub Markdown table; ``|``, newlines, Markdown and HTML in values are escaped
    (:func:`hcgraph.mdtext.md_cell`, the escaper of every Markdown hcgraph writes)."""
    header, rows = _ask_rows(result)
    out.write("| " + " | ".join(md_cell(h) for h in header) + " |\n")
    out.write("|" + "---|" * len(header) + "\n")
    for row in rows:
        out.write("| " + " | ".join(md_cell(c) for c in row) + " |\n")


#: Output format name → writer. ``table`` is for people; the others are for tools.
FORMATS: dict[str, Writer] = {
    "table": write_table,
    "csv": write_csv,
    "tsv": write_tsv,
    "json": write_json,
    "md": write_md,
    "xml": write_xml,
}


def write_result(result: QueryResult, fmt: str, out: TextIO) -> None:
    """Write ``result`` to ``out`` in format ``fmt`` (a key of :data:`FORMATS`).

    Raises:
        QueryError: ``fmt`` is not a known format (the message lists them).
    """
    writer = FORMATS.get(fmt)
    if writer is None:
        raise QueryError(f"unknown output format {fmt!r}; known: {', '.join(FORMATS)}")
    writer(result, out)
