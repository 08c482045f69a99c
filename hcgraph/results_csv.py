"""SPARQL Query Results CSV, written line by line: for ``query`` and ``serve`` alike.

:func:`csv_lines` gives the header and one CRLF-ended line per row: each term's plain text,
a triple term as SPARQL 1.2 CSV defines it, ``<<( s p "o" )>>``. Not pyoxigraph's writer:
it drops a triple term's ``<<( )>>`` and leaves an IRI holding a comma unquoted; otherwise
the bytes are the same. Imports nothing heavy (``serve``'s query workers use it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pyoxigraph as ox

__all__ = ["csv_lines", "csv_text"]


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _field(term: Any) -> str:
    """One cell: a term's text, quoted when it holds ``"``, ``,``, CR or LF."""
    kind = type(term)
    text: str
    if kind is ox.Literal or kind is ox.NamedNode:  # the common cells, without a call
        text = term.value
    elif term is None:
        return ""
    else:
        text = csv_text(term)
    if '"' in text or "," in text or "\n" in text or "\r" in text:
        return _quoted(text)
    return text


def csv_text(term: Any) -> str:
    """The text of one term in a CSV cell, before the cell's own quoting."""
    if term is None:
        return ""
    if isinstance(term, ox.BlankNode):
        return f"_:{term.value}"
    if isinstance(term, ox.Triple):
        obj = term.object
        parts = (
            csv_text(term.subject),
            csv_text(term.predicate),
            _quoted(obj.value) if isinstance(obj, ox.Literal) else csv_text(obj),
        )
        return f"<<( {' '.join(parts)} )>>"
    return str(term.value)


def csv_lines(variables: Iterable[str], rows: Iterable[Iterable[Any]]) -> Iterator[str]:
    """The header line (variable names) and one line per row, each ending in CRLF."""
    yield ",".join(variables) + "\r\n"
    for row in rows:
        yield ",".join([_field(term) for term in row]) + "\r\n"
