"""Output formats for query results: a registry of writers (name → function).

:data:`FORMATS` (docs/queries.md says how each carries RDF 1.2 terms). Untrusted text stays
text: ``rich.text.Text`` cells with controls escaped, Markdown through :mod:`hcgraph.mdtext`.
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
from .results_csv import csv_lines, csv_text

__all__ = ["FORMATS", "display", "write_result"]

Writer = Callable[[QueryResult, TextIO], None]

_JSON = ox.QueryResultsFormat.JSON
# Control characters pyoxigraph's TSV writer leaves raw (it escapes tab, CR, LF itself).
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SHORT_ESCAPES = {"\b": "\\b", "\f": "\\f"}


def display(term: Any) -> str:
    """The plain text of a term: an IRI, a literal's lexical form, ``_:id``, ``""``, or a
    triple term in N-Triples 1.2 (its parts need their syntax to be told apart)."""
    return ntriples(term) if isinstance(term, ox.Triple) else csv_text(term)


def ntriples(term: Any) -> str:
    """A term in N-Triples 1.2 syntax: a triple term as ``<<( s p o )>>`` (``str`` leaves
    out the brackets, as in a triple statement)."""
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


def _ask_terms(result: QueryResult) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
    if result.boolean is not None:
        return ("boolean",), [(ox.Literal(result.boolean),)]
    return result.variables, result.terms


def _serialize(result: QueryResult, fmt: ox.QueryResultsFormat) -> str:
    """The rows written by pyoxigraph: they become pyoxigraph results again through TSV
    (lossless; results cannot be built from terms). TSV, having no boolean form, gives an
    ASK answer as a one-column table."""
    if result.boolean is not None and fmt != ox.QueryResultsFormat.TSV:
        answer = "true" if result.boolean else "false"
        solutions = ox.parse_query_results(f'{{"head":{{}},"boolean":{answer}}}', _JSON)
    else:
        header, rows = _ask_terms(result)
        lines = ["\t".join("?" + name for name in header)]
        lines.extend("\t".join("" if t is None else ntriples(t) for t in row) for row in rows)
        solutions = ox.parse_query_results("\n".join(lines) + "\n", ox.QueryResultsFormat.TSV)
    data = solutions.serialize(format=fmt)
    assert data is not None
    return data.decode("utf-8")


def _escape_control(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT_ESCAPES.get(char) or f"\\u{ord(char):04X}"


def write_csv(result: QueryResult, out: TextIO) -> None:
    """SPARQL Query Results CSV: names, plain values, CRLF ends (:mod:`hcgraph.results_csv`)."""
    header, rows = _ask_terms(result)
    out.writelines(csv_lines(header, rows))


def write_tsv(result: QueryResult, out: TextIO) -> None:
    """SPARQL Query Results TSV (pyoxigraph's writer): terms in N-Triples 1.2 syntax, the
    control characters pyoxigraph leaves raw in literals escaped as N-Triples does."""
    out.write(_CONTROL.sub(_escape_control, _serialize(result, ox.QueryResultsFormat.TSV)))


def write_json(result: QueryResult, out: TextIO) -> None:
    """SPARQL Query Results JSON (pyoxigraph's writer), indented one space per level (as
    hcgraph has always written it)."""
    doc = json.loads(_serialize(result, _JSON))
    json.dump(doc, out, ensure_ascii=False, indent=None if result.boolean is not None else 1)
    out.write("\n")


def write_xml(result: QueryResult, out: TextIO) -> None:
    """SPARQL Query Results XML (pyoxigraph's writer). A value holding a character XML 1.0
    forbids (a NUL) is refused before anything is written, rather than altered silently.

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
            if (bad := _xml_forbidden(term)) is not None:
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
    """A GitHub Markdown table, values escaped by :func:`hcgraph.mdtext.md_cell`."""
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
    if (writer := FORMATS.get(fmt)) is None:
        raise QueryError(f"unknown output format {fmt!r}; known: {', '.join(FORMATS)}")
    writer(result, out)
