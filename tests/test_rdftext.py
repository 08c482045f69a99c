"""hcgraph's N-Triples term writers: every string comes back unchanged through a real parser."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from hcgraph.rdftext import _ESCAPES, literal, nfc, typed

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
JSON_DT = "http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON"

TEXTS = [
    "plain text",
    "",
    'a "quoted" word',
    "back\\slash",
    "two\nlines\r\n",
    "tab\tand bell\x07 and nul\x00",
    "del\x7f and non-characters \ufffe\uffff",
    '{"html":"<script>alert(1)</script>","n":[1,2]}',
    "ünïcödé and emoji 🦜",
]


def _parsed_object(term: str) -> ox.Literal:
    line = f"<https://example.org/s> <https://example.org/p> {term} .\n"
    (triple,) = ox.parse(line.encode(), format=ox.RdfFormat.N_TRIPLES)
    assert isinstance(triple.object, ox.Literal)
    return triple.object


@pytest.mark.parametrize("text", TEXTS)
def test_literal_round_trips(text: str) -> None:
    parsed = _parsed_object(literal(text))
    assert parsed.value == text
    assert parsed.datatype.value == XSD_STRING


@pytest.mark.parametrize("text", TEXTS)
def test_typed_round_trips(text: str) -> None:
    parsed = _parsed_object(typed(text, JSON_DT))
    assert parsed.value == text
    assert parsed.datatype.value == JSON_DT


def test_typed_needs_no_escape_is_unchanged() -> None:
    assert typed("2026-11-01T10:00:00Z", "urn:dt") == '"2026-11-01T10:00:00Z"^^<urn:dt>'


@pytest.mark.parametrize("text", [*TEXTS, "".join(map(chr, range(0x80))) + '\ufffe\uffff\\"'])
def test_literal_escapes_as_the_whole_table_does(text: str) -> None:
    """The replace-based escaping writes what one ``str.translate`` over the table wrote."""
    assert literal(text) == '"' + nfc(text).translate(_ESCAPES) + '"'
