"""``hcgraph.errors.visible``: the one function text from elsewhere passes to reach a terminal."""

from __future__ import annotations

import unicodedata

import pytest

from hcgraph.errors import visible

#: Every character that must never reach a terminal raw, by what it does.
UNSAFE = {
    "C0 controls": [chr(c) for c in range(0x20) if chr(c) not in "\t\n"],
    "DEL": ["\x7f"],
    "C1 controls (CSI, OSC, NEL)": [chr(c) for c in range(0x80, 0xA0)],
    "bidi embeddings and overrides": [chr(c) for c in range(0x202A, 0x202F)],
    "bidi isolates": [chr(c) for c in range(0x2066, 0x206A)],
    "bidi marks": ["\u200e", "\u200f", "\u061c"],
    "hiding format characters": list(
        "\xad\u180e\u200b\u2060\u2061\u2064\u206a\u206f\ufeff\ufff9\ufffb"
    ),
    "tag characters": ["\U000e0001", "\U000e0041", "\U000e007f"],
    "line and paragraph separators": ["\u2028", "\u2029"],
    "lone surrogates": ["\udcff"],
}


@pytest.mark.parametrize("kind", sorted(UNSAFE))
def test_every_unsafe_character_is_escaped(kind: str) -> None:
    for char in UNSAFE[kind]:
        shown = visible(f"a{char}b")
        assert char not in shown and shown.startswith("a\\") and shown.endswith("b"), repr(char)
        code = ord(char)
        expected = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
        assert shown == "a" + (expected if code < 0x10000 else f"\\U{code:08x}") + "b"


#: Format characters (Cf) that may stay: the joiners scripts and emoji need, and script
#: signs that neither reorder nor hide text (Arabic and Kaithi number signs, which show;
#: Egyptian, shorthand and musical layout controls).
KEPT = {0x200C, 0x200D, *range(0x600, 0x606), 0x6DD, 0x70F, 0x890, 0x891, 0x8E2}
KEPT |= {0x110BD, 0x110CD, *range(0x13430, 0x13440), *range(0x1BCA0, 0x1BCA4)}
KEPT |= set(range(0x1D173, 0x1D17B))


def test_no_other_format_character_is_left_raw() -> None:
    kept = {
        code
        for code in range(0x110000)
        if unicodedata.category(chr(code)) == "Cf" and visible(chr(code)) == chr(code)
    }
    assert kept <= KEPT, sorted(map(hex, kept - KEPT))
    assert {0x200C, 0x200D} <= kept


def test_text_people_write_is_kept() -> None:
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # with a ZWNJ
    text = f"café 漢字 עברית 😀 👨\u200d👩\u200d👧 {persian} tab\there\nnext"
    assert visible(text) == text


def test_one_line() -> None:
    assert visible("a\tb\nc\r\n", one_line=True) == "a\\tb\\nc\\x0d\\n"
    assert visible("a\tb\nc") == "a\tb\nc"
