"""RDF terms as N-Triples text: the mapper writes text, Oxigraph's Rust parser reads it.

Text is cheaper than a pyoxigraph term object per node, and parsed without the GIL.
Escaping follows the N-Triples grammar (``"``, ``\\``, LF and CR), and every other C0
control, DEL and U+FFFE/U+FFFF are written as ``\\uXXXX`` too. IRIs are never escaped here:
callers pass only IRIs :mod:`hcgraph.iris` validated or minted. Every literal is
NFC-normalised (:func:`nfc`), since some stores match a literal only in the form written.

>>> literal('say "hi"\\n')
'"say \\\\"hi\\\\"\\\\n"'
>>> typed("3", XSD_INTEGER)
'"3"^^<http://www.w3.org/2001/XMLSchema#integer>'
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = [
    "XML_FORBIDDEN",
    "XSD_BOOLEAN",
    "XSD_DATE",
    "XSD_DATETIME",
    "XSD_INTEGER",
    "boolean",
    "in_graph",
    "integer",
    "iri",
    "literal",
    "nfc",
    "typed",
]

XSD_BOOLEAN = "http://www.w3.org/2001/XMLSchema#boolean"
XSD_DATE = "http://www.w3.org/2001/XMLSchema#date"
XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"

#: The characters XML 1.0 cannot hold at all, not even as ``&#N;``: C0 controls but tab, LF
#: and CR, and U+FFFE/U+FFFF. A literal may hold them; an XML output must not.
XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
#: The same characters as UTF-8 bytes, for answers written as bytes (``serve``).
XML_FORBIDDEN_UTF8 = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]|\xef\xbf[\xbe\xbf]")

_ESCAPES: dict[int, str] = {c: f"\\u{c:04X}" for c in (*range(0x20), 0x7F, 0xFFFE, 0xFFFF)}
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\", ord("\n"): "\\n", ord("\r"): "\\r"})
_ESCAPES[ord("\t")] = "\\t"
_NEEDS_ESCAPE = re.compile("[" + "".join(re.escape(chr(c)) for c in _ESCAPES) + "]")
# What is left for ``\\uXXXX`` once the five common escapes are written by ``str.replace``.
_CONTROLS = {c: e for c, e in _ESCAPES.items() if e.startswith("\\u")}
_NEEDS_CONTROL = re.compile("[" + "".join(re.escape(chr(c)) for c in _CONTROLS) + "]")


def iri(value: str) -> str:
    """``<value>``: the IRI as an N-Triples term (``value`` must already be a valid IRI)."""
    return "<" + value + ">"


def nfc(value: str) -> str:
    """``value`` in Unicode Normalization Form C (unchanged, not copied, when it already is)."""
    if value.isascii() or unicodedata.is_normalized("NFC", value):
        return value
    return unicodedata.normalize("NFC", value)


def literal(value: str) -> str:
    """A plain (``xsd:string``) literal, NFC-normalised, with N-Triples escaping."""
    value = nfc(value)
    if _NEEDS_ESCAPE.search(value) is None:  # most text: nothing to escape
        return '"' + value + '"'
    return '"' + _escaped(value) + '"'


def _escaped(value: str) -> str:
    """``value.translate(_ESCAPES)``, 4x cheaper: the backslash first, then the quote, LF, CR
    and tab, each a C scan; the rare other controls by a table of their own."""
    value = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    value = value.replace("\r", "\\r").replace("\t", "\\t")
    if _NEEDS_CONTROL.search(value) is not None:
        value = value.translate(_CONTROLS)
    return value


def typed(value: str, datatype: str) -> str:
    """A typed literal ``"value"^^<datatype>``, NFC-normalised (``rdf:JSON`` holds text too)."""
    return literal(value) + "^^<" + datatype + ">"


def boolean(value: bool) -> str:
    """An ``xsd:boolean`` literal."""
    return '"' + ("true" if value else "false") + '"^^<' + XSD_BOOLEAN + ">"


@lru_cache(maxsize=1024)
def integer(value: int) -> str:
    """An ``xsd:integer`` literal (positions and counts recur: memoised)."""
    return '"' + str(value) + '"^^<' + XSD_INTEGER + ">"


def in_graph(graph: str, ntriples: str) -> str:
    """hcgraph's own N-Triples (one triple per line, each ending with a space, a dot and a
    line feed: a literal never holds a raw line feed) placed in ``graph``, as N-Quads.

    >>> in_graph("http://g", '<http://s> <http://p> "o" .' + chr(10)).split()
    ['<http://s>', '<http://p>', '"o"', '<http://g>', '.']
    """
    tail = f" <{graph}> .\n"
    return tail.join(ntriples[:-3].split(" .\n")) + tail if ntriples else ""
