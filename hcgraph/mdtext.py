"""Markdown for untrusted text: the one escaper every Markdown output of hcgraph uses.

:func:`md_text` (inline), :func:`md_cell` (a table cell), :func:`md_code` (a code span) and
:func:`md_url` (a link) make text someone else wrote render as that very text: every ASCII
punctuation CommonMark or GitHub give an inline meaning is backslash-escaped, text is put on
one line (a cell keeps its breaks as ``<br>``), and the characters
:func:`~hcgraph.errors.visible` escapes for terminals are escaped too.
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
    """Text as a Markdown code span, shown literally (not for table cells: ``|`` ends one);
    the fence is longer than any run of backticks in the text.

    >>> md_code("a`b"), md_code("`x")
    ('``a`b``', '`` `x ``')
    """
    text = _line(text) or " "
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


#: The URL punctuation a CommonMark autolink allows; :func:`md_url` percent-encodes the rest.
_URL_SAFE = "!#$%&'()*+,-./:;=?@[]^_`{|}~"
_AUTOLINK = re.compile(r"https?://[\x21-\x7e]+", re.IGNORECASE)


def md_url(url: str) -> str:
    """An http(s) URL as a Markdown autolink ``<…>``, percent-encoding what an autolink
    cannot hold; anything else (``javascript:``) as a code span.

    >>> md_url("https://example.org/a b"), md_url("javascript:alert(1)")
    ('<https://example.org/a%20b>', '`javascript:alert(1)`')
    """
    quoted = quote(str(url), safe=_URL_SAFE, errors="backslashreplace")
    return f"<{quoted}>" if _AUTOLINK.fullmatch(quoted) else md_code(url)
