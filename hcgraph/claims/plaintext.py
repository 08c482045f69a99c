"""The support check's reading of a citing text: Markdown to plain text, and sentences.

:func:`plain` strips inline Markdown marks (links keep their text) and keeps a map back into
the original, so a span found in the plain text is reported as it stands in the citing text;
:func:`sentences` splits plain text at ``.``/``!``/``?`` before a capital, digit or quote (not
in ``77.3`` or after ``e.g.``) and at blank lines.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

__all__ = ["Plain", "plain", "sentences"]

# One alternation, tried left to right; a match keeps one named group's text, or nothing (a
# mark to drop). Offsets of the kept text are preserved.
_MARKUP = re.compile(
    r"!?\[(?P<link>[^\[\]\n]*)\]\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)"  # [text](url), ![alt](url)
    r"|!?\[(?P<ref>[^\[\]\n]*)\]\[[^\[\]\n]*\]"  # [text][ref]
    r"|<(?P<auto>(?:https?|mailto):[^<>\s]*)>"  # <https://…> autolink: keep the URL
    r"|</?[A-Za-z][^<>\n]{0,200}>"  # raw HTML tag: drop
    r"|\\(?P<esc>[!-/:-@\[-`{-~])"  # backslash escape: keep the character
    r"|`+"  # code marks
    r"|\*+|~~"  # emphasis, strikethrough
    r"|(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])"  # _emphasis_ (not snake_case)
    r"|^[ \t]{0,3}(?:#{1,6}[ \t]+|>[ \t]?|[-+*][ \t]+|\d{1,9}[.)][ \t]+)",  # line markers
    re.MULTILINE,
)
_HAS_MARKUP = re.compile(r"[\[\]<>\\`*_~#]|^\s*(?:[-+>]|\d+[.)])\s", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Plain:
    """Plain text plus the map of its characters back into the original text."""

    text: str
    _starts: tuple[int, ...]  # plain offset where each kept segment starts
    _origins: tuple[int, ...]  # original offset of that segment's first character

    def orig_offset(self, index: int) -> int:
        """The original offset of plain character ``index`` (``len`` maps past the end)."""
        segment = bisect_right(self._starts, index) - 1
        if segment < 0:
            return index
        return self._origins[segment] + index - self._starts[segment]

    def orig_span(self, start: int, end: int) -> tuple[int, int]:
        """The original ``(start, end)`` of the plain span ``[start, end)``."""
        if end <= start:
            origin = self.orig_offset(start)
            return origin, origin
        return self.orig_offset(start), self.orig_offset(end - 1) + 1


def plain(text: str) -> Plain:
    """``text`` with its inline Markdown stripped (see the module docstring).

    >>> p = plain("It **reaches** [77.3%](https://x.test) now")
    >>> p.text
    'It reaches 77.3% now'
    >>> start = p.text.index("77.3%")
    >>> "It **reaches** [77.3%](https://x.test) now"[slice(*p.orig_span(start, start + 5))]
    '77.3%'
    """
    if not _HAS_MARKUP.search(text):
        return Plain(text, (), ())
    parts: list[str] = []
    starts: list[int] = []
    origins: list[int] = []
    size = 0
    last = 0

    def keep(chunk: str, origin: int) -> None:
        nonlocal size
        if chunk:
            starts.append(size)
            origins.append(origin)
            parts.append(chunk)
            size += len(chunk)

    for match in _MARKUP.finditer(text):
        keep(text[last : match.start()], last)
        for group in ("link", "ref", "auto", "esc"):
            kept = match.group(group)
            if kept is not None:
                keep(kept, match.start(group))
                break
        last = match.end()
    keep(text[last:], last)
    return Plain("".join(parts), tuple(starts), tuple(origins))


_ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "etc", "vs", "al", "cf", "fig", "figs", "eq", "approx", "dr", "mr", "ms"}
    | {"mrs", "prof", "st", "jr", "sr", "inc", "ltd", "corp", "u.s"}
)
_BOUNDARY = re.compile(
    r"[.!?]+[\"'\u201d\u2019)\]]*"  # the stop, closing quotes and brackets
    r"(?=\s+[\"'\u201c\u2018(\[]?[A-Z0-9])"  # then space and a capital, digit or quote
    r"|\n[ \t]*\n"  # or a blank line
)


def sentences(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each sentence of plain ``text``, whitespace trimmed.

    >>> t = "LAR-27B reaches 77.3% on X, e.g. Y. My reasoning: fine."
    >>> [t[a:b] for a, b in sentences(t)]
    ['LAR-27B reaches 77.3% on X, e.g. Y.', 'My reasoning: fine.']
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        end = match.end()
        if text[match.start()] == ".":
            word = text[max(0, match.start() - 6) : match.start()].rsplit(None, 1)
            if word and word[-1].lower().lstrip("(") in _ABBREVIATIONS:
                continue
        _add(text, start, end, spans)
        start = end
    _add(text, start, len(text), spans)
    return spans


def _add(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        spans.append((start, end))
