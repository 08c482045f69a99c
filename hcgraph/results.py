"""Output formats for query results: a registry of writers (name → function).

What: ``write_result(result, "csv", stream)`` writes a :class:`~hcgraph.queries.QueryResult`
as ``table`` (rich, for people), ``csv`` / ``tsv`` / ``json`` (the W3C SPARQL 1.1 Query Results
CSV, TSV and JSON formats, for tools), or ``md`` (a GitHub-flavoured Markdown table).

Why a registry: the CLI's ``--format`` choices, the help text and the tests all read
:data:`FORMATS`, so a new format is one function and one line.

Untrusted text stays text: the table is built from ``rich.text.Text`` (no markup is
interpreted) with control characters shown as escapes, Markdown escapes ``|``, ``\\``,
backticks, link brackets and HTML, and CSV/TSV/JSON are escaped by their own rules.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable
from typing import Any, TextIO

import pyoxigraph as ox
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .errors import QueryError
from .queries import QueryResult

__all__ = ["FORMATS", "display", "write_result"]

Writer = Callable[[QueryResult, TextIO], None]

_XSD = "http://www.w3.org/2001/XMLSchema#"
_BARE_TSV = {_XSD + "integer", _XSD + "decimal", _XSD + "double", _XSD + "boolean"}
# C0/C1 controls (but tab and newline), DEL, and bidi overrides that could disguise text.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def display(term: Any) -> str:
    """The plain text of a term: an IRI, a literal's lexical form, ``_:id``, or ``""``."""
    if term is None:
        return ""
    if isinstance(term, ox.BlankNode):
        return f"_:{term.value}"
    return str(term.value)


def _visible(text: str) -> str:
    """Control and bidi-override characters as ``\\xNN``/``\\uNNNN`` escapes (terminal safety)."""

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _UNSAFE.sub(escape, text)


def _ask_rows(result: QueryResult) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    if result.boolean is not None:
        return ("boolean",), [("true" if result.boolean else "false",)]
    return result.variables, [tuple(display(t) for t in row) for row in result.terms]


def write_table(result: QueryResult, out: TextIO) -> None:
    """A rich table with a row count; wraps to the terminal, or stays wide for files."""
    header, rows = _ask_rows(result)
    table = Table(show_lines=False, caption=f"{len(rows)} row{'s' * (len(rows) != 1)}")
    for name in header:
        table.add_column(Text(name), overflow="fold")
    for row in rows:
        table.add_row(*(Text(_visible(cell)) for cell in row))
    is_tty = getattr(out, "isatty", lambda: False)()
    console = Console(
        file=out,
        width=None if is_tty else 100_000,
        highlight=False,
        emoji=False,
        markup=False,
        color_system="auto" if is_tty else None,
        legacy_windows=False,
    )
    if not is_tty:
        console.width = max(80, table.__rich_measure__(console, console.options).maximum)
    console.print(table)


def write_csv(result: QueryResult, out: TextIO) -> None:
    """SPARQL 1.1 Query Results CSV: a header of names, plain values, CRLF line ends."""
    header, rows = _ask_rows(result)
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows(rows)


def _tsv_term(term: Any) -> str:
    if term is None:
        return ""
    if isinstance(term, ox.Literal) and term.datatype.value in _BARE_TSV and not term.language:
        return str(term.value)  # the format allows bare numbers and booleans
    return str(term)  # N-Triples syntax: <iri>, "text" with \t \n \" escapes, _:b


def write_tsv(result: QueryResult, out: TextIO) -> None:
    """SPARQL 1.1 Query Results TSV: ``?var`` header, terms in N-Triples/Turtle syntax."""
    if result.boolean is not None:
        out.write("?boolean\n" + ("true" if result.boolean else "false") + "\n")
        return
    out.write("\t".join("?" + v for v in result.variables) + "\n")
    for row in result.terms:
        out.write("\t".join(_tsv_term(t) for t in row) + "\n")


def _json_term(term: Any) -> dict[str, str]:
    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, ox.Triple):
        return {"type": "triple", "value": str(term)}
    out = {"type": "literal", "value": term.value}
    if term.language:
        out["xml:lang"] = term.language
    elif term.datatype.value != _XSD + "string":
        out["datatype"] = term.datatype.value
    return out


def write_json(result: QueryResult, out: TextIO) -> None:
    """SPARQL 1.1 Query Results JSON: ``{"head": {"vars": …}, "results": {"bindings": …}}``."""
    if result.boolean is not None:
        json.dump({"head": {}, "boolean": result.boolean}, out)
        out.write("\n")
        return
    bindings = [
        {var: _json_term(term) for var, term in zip(result.variables, row, strict=True) if term}
        for row in result.terms
    ]
    doc = {"head": {"vars": list(result.variables)}, "results": {"bindings": bindings}}
    json.dump(doc, out, ensure_ascii=False, indent=1)
    out.write("\n")


_MD_SPECIAL = str.maketrans(
    {
        "\\": "\\\\",
        "|": "\\|",
        "`": "\\`",
        "[": "\\[",
        "]": "\\]",
        "<": "&lt;",
        ">": "&gt;",
        "&": "&amp;",
    }
)


def _md_cell(text: str) -> str:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "<br>".join(_visible(line).translate(_MD_SPECIAL) for line in lines)


def write_md(result: QueryResult, out: TextIO) -> None:
    """A GitHub Markdown table; ``|``, newlines, Markdown and HTML in values are escaped."""
    header, rows = _ask_rows(result)
    out.write("| " + " | ".join(_md_cell(h) for h in header) + " |\n")
    out.write("|" + "---|" * len(header) + "\n")
    for row in rows:
        out.write("| " + " | ".join(_md_cell(c) for c in row) + " |\n")


#: Output format name → writer. ``table`` is for people; the others are for tools.
FORMATS: dict[str, Writer] = {
    "table": write_table,
    "csv": write_csv,
    "tsv": write_tsv,
    "json": write_json,
    "md": write_md,
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
