"""Markdown for untrusted text: the one escaper every Markdown output of hcgraph uses.

What: :func:`md_text` (inline text), :func:`md_cell` (a table cell), :func:`md_code` (a code
span) and :func:`md_url` (a link) turn text someone else wrote (a story, a query result)
into Markdown that a CommonMark or GitHub renderer shows as that very text: no emphasis,
link, image, raw HTML, entity, table cell break or heading marker comes alive, and the
control, bidi and hiding characters :func:`~hcgraph.errors.visible` escapes for terminals
are escaped here too (Markdown is read in terminals, and a browser honours an RLO).

Why one module: ``query --format md`` and the trace, audit and history reports used to
escape differently (one left ``**bold**`` live, the other ``&amp;`` decoded); now they share
these functions, tested by rendering hostile text with a CommonMark renderer.

How: every ASCII punctuation character CommonMark or GitHub give a meaning to inline is
backslash-escaped (CommonMark lets any ASCII punctuation be escaped, and the escape shows the
character itself). Text is put on one line (a line break in the text could start a block:
a heading, a list, a table row); a table cell keeps its line breaks as ``<br>``.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from .errors import visible

__all__ = ["md_cell", "md_code", "md_text", "md_url"]

# Inline meaning: \ escapes, ` code, * _ emphasis, ~ strikethrough (GFM), [ ] ! links and
# images, < > autolinks and raw HTML, & entities, | table cells (GFM), # heading closers,
# $ maths (GitHub). The rest of ASCII punctuation means nothing inside a line.
_SPECIAL = re.compile(r"([\\`*_~\[\]!<>&|#$])")
_BREAKS = re.compile(r"\r\n|[\r\n]")


def _line(text: str) -> str:
    """One line: every run of whitespace (line breaks too) one space, the rest visible."""
    return visible(" ".join(str(text).split()), one_line=True)


def md_text(text: str) -> str:
    r"""Text as one line of inline Markdown that renders as the text itself.

    >>> md_text("**b** _i_ <img src=x> &amp; [x](javascript:y) a|b\nnext")
    '\\*\\*b\\*\\* \\_i\\_ \\<img src=x\\> \\&amp; \\[x\\](javascript:y) a\\|b next'
    """
    return _SPECIAL.sub(r"\\\1", _line(text))


def md_cell(text: str) -> str:
    r"""Text as one GitHub Markdown table cell: as :func:`md_text`, but each line break in
    the text is a ``<br>`` (the only HTML hcgraph writes into Markdown).

    >>> md_cell("a | b\nc `d`")
    'a \\| b<br>c \\`d\\`'
    """
    lines = _BREAKS.split(str(text))
    return "<br>".join(_SPECIAL.sub(r"\\\1", visible(line, one_line=True)) for line in lines)


def md_code(text: str) -> str:
    """Text as a Markdown code span: shown literally, never parsed (not for table cells,
    where a ``|`` would still end the cell).

    The fence is one backtick longer than the longest run of backticks in the text, so a
    backtick in the text cannot close the span early (and let the rest be read as HTML).

    >>> md_code("a`b"), md_code("`x")
    ('``a`b``', '`` `x ``')
    """
    text = _line(text) or " "
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


#: What :func:`md_url` leaves as it is: the URL punctuation a CommonMark autolink allows.
#: Everything else (space, ``<``, ``>``, ``"``, ``\\``, controls, non-ASCII) is
#: percent-encoded, so the autolink cannot end early and let the rest be read as HTML.
_URL_SAFE = "!#$%&'()*+,-./:;=?@[]^_`{|}~"
_AUTOLINK = re.compile(r"https?://[\x21-\x7e]+", re.IGNORECASE)


def md_url(url: str) -> str:
    """A URL as a Markdown autolink ``<…>``, percent-encoding what an autolink cannot hold.

    Only ``http``/``https`` URLs become links; anything else (``javascript:``) is shown as a
    code span (a ``<…>`` that is not a valid autolink would be read as raw HTML).

    >>> md_url("https://example.org/a b"), md_url("javascript:alert(1)")
    ('<https://example.org/a%20b>', '`javascript:alert(1)`')
    """
    quoted = quote(str(url), safe=_URL_SAFE, errors="backslashreplace")
    return f"<{quoted}>" if _AUTOLINK.fullmatch(quoted) else md_code(url)
