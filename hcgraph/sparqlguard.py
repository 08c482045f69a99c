"""No outbound requests from a query: find SPARQL 1.1 federation (``SERVICE``) before running.

Oxigraph evaluates ``SERVICE <url> { … }`` by fetching ``url`` over HTTP, and neither
pyoxigraph's ``Store.query`` nor ``oxigraph serve`` (0.5) has a switch to turn that off. So
hcgraph refuses a query that uses ``SERVICE`` unless the caller opts in (``hcgraph query
--allow-service``, ``hcgraph serve --allow-service``): otherwise a query file or a request to
the endpoint could make the machine fetch any URL it can reach (SSRF: cloud metadata,
services on loopback) and hand back the answer.

**How.** :func:`uses_service` lexes the query with the terminals of Oxigraph 0.5's SPARQL
grammar (``spargebra``: a PEG parser that needs no space between tokens, so ``1SERVICE``,
``trueSERVICE``, ``}SERVICE``, ``"x"SERVICE`` and ``SERVICE:x`` are all the keyword) and says
yes when any ``service`` (ASCII, any case) could be read as the keyword. Text is passed over
only where every reading Oxigraph could make of it is a string, an IRI, a comment, a
variable's name, a blank node label, a language tag or the local part of a prefixed name:

* strings are matched as Oxigraph does (long forms first, then the short ones, escapes and
  ``\\u`` codepoints checked), so an unterminated or broken string hides nothing;
* ``<…>`` inside parentheses right after an operand may be the ``<`` operator: both readings
  are followed (an IRI, and code after ``<``);
* a local name (``ex:service``) is passed over only if ``prefix IRI + local name`` is a valid
  IRI for every IRI the prefix may have (else Oxigraph reads just ``ex:`` and the rest as
  code); Oxigraph's local names hold one run of dots at most (``ex:a.b.service`` is
  ``ex:a.b`` ``.`` ``service``);
* ``service`` inside a prefix's name (``service:x``, ``trueservice:x``, ``serviceX:y``) is the
  keyword when what follows it names a prefix the query may declare (``PREFIX : <…>`` makes
  ``service:x`` read ``SERVICE :x``); ``PREFIX service: <…>`` alone and ``?service`` are fine;
* ``\\uXXXX`` escapes: Oxigraph 0.5 reads them only inside strings and IRIs, the SPARQL
  standard decodes them first; both readings are checked.

In doubt it says yes: a refused query is a clear error, a missed one an outbound request.
``tests/test_sparqlguard_fuzz.py`` checks it against Oxigraph itself (a loopback probe
counts the requests Oxigraph makes).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pyoxigraph as ox

from .errors import QueryError
from .vocab import PREFIXES

__all__ = ["SERVICE_REFUSED", "check_no_service", "uses_service"]

SERVICE_REFUSED = (
    "the query uses SERVICE (federation), which would make this machine fetch a remote URL; "
    "refused (opt in with --allow-service)"
)

# --- Oxigraph 0.5's terminals (lib/spargebra/src/parser.rs) ----------------------------------
_BASE = (
    "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d"
    "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd"
)
_U = _BASE + "_"
_CHARS = _U + "\\-0-9\u00b7\u0300-\u036f\u203f-\u2040"
_VARCHARS = _U + "0-9\u00b7\u0300-\u036f\u203f-\u2040"
_PLX = r"(?:%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%])"
_PN_PREFIX = re.compile(f"[{_BASE}][{_CHARS}]*(?:\\.+[{_CHARS}]+)*:")
_PN_LOCAL = re.compile(
    f"(?:[{_U}:0-9]|{_PLX})(?:[{_CHARS}:]|{_PLX})*(?:\\.+(?:[{_CHARS}:]|{_PLX})+)?"
)
_VAR = re.compile(f"[?$][{_U}0-9][{_VARCHARS}]*")
_BLANK = re.compile(f"_:[{_U}0-9][{_CHARS}]*(?:\\.+[{_CHARS}]+)*")
_LANG = re.compile(r"@[A-Za-z]+(?:-[A-Za-z0-9]+)*(?:--[A-Za-z]+)?")
_NUMBER = re.compile(r"[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?")
_WORD = re.compile(f"[{_CHARS}.]+")
_SPACE = re.compile(r"[ \t\r\n]+")
_COMMENT = re.compile(r"#[^\r\n]*")
_IRI = re.compile(r"<([^<>]*)>")
_UCHAR = r"\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}"
_ECHAR = r"""\\[tbnrf"'\\]"""
# PEG-faithful strings: Oxigraph tries ''' """ ' " in this order at a quote.
_STRINGS = (
    re.compile(f"'''(?:(?:''|')?(?:[^'\\\\]|{_ECHAR}|{_UCHAR}))*'''"),
    re.compile(f'"""(?:(?:""|")?(?:[^"\\\\]|{_ECHAR}|{_UCHAR}))*"""'),
    re.compile(f"'(?:[^'\\\\\\n\\r]|{_ECHAR}|{_UCHAR})*'"),
    re.compile(f'"(?:[^"\\\\\\n\\r]|{_ECHAR}|{_UCHAR})*"'),
)
_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_KEYWORD = re.compile("service", re.IGNORECASE | re.ASCII)
# A declaration's shape, wherever it is: NAME: (space|comment)* <IRI>.
_DECL = re.compile(f"([{_CHARS}.]*):(?:[ \\t\\r\\n]|#[^\\r\\n]*)*<([^<>]*)>")
# After these an operand must follow, so a ``<`` there starts an IRI, never the operator.
# What a character starts when it starts one of these (each a single token to Oxigraph).
_ATOMS = {"?": _VAR, "$": _VAR, "_": _BLANK, "@": _LANG, **dict.fromkeys("0123456789.", _NUMBER)}
_OPERAND_NEXT = frozenset("(,=!&|+-*/^{[")
_MAX_FORKS = 256


def _decode(match: re.Match[str]) -> str:
    code = int(match.group(1) or match.group(2), 16)
    return chr(code) if code <= 0x10FFFF else "\ufffd"


def _codepoints_ok(text: str) -> bool:
    """Oxigraph rejects a ``\\u`` escape that is a surrogate or beyond U+10FFFF."""
    for match in _ESCAPE.finditer(text):
        code = int(match.group(1) or match.group(2), 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            return False
    return True


def _iri_or_none(text: str) -> str | None:
    """The IRI an ``IRIREF``'s content denotes if it is a valid absolute IRI, else None."""
    if "\\" in _ESCAPE.sub("", text) or not _codepoints_ok(text):
        return None
    value = _ESCAPE.sub(_decode, text)
    try:
        ox.NamedNode(value)  # the same IRI parser (oxiri) as Oxigraph's SPARQL parser
    except (ValueError, UnicodeError):
        return None
    return value


def _valid_iri(value: str) -> bool:
    try:
        ox.NamedNode(value)
    except (ValueError, UnicodeError):
        return False
    return True


class _Scan:
    """One reading of a query text; :meth:`finds` is True if a ``SERVICE`` may be in it."""

    def __init__(self, text: str, prefixes: Mapping[str, str]) -> None:
        self.text = text
        self.decls: dict[str, set[str | None]] = {k: {v} for k, v in prefixes.items()}
        for match in _DECL.finditer(text):
            name, iri = match.group(1), _iri_or_none(match.group(2))
            names = {name, name[6:]} if name.lower().startswith("prefix") else {name}
            for declared in names:  # ``PREFIXex: <…>`` declares ``ex``
                self.decls.setdefault(declared, set()).add(iri)
        self.seen: set[tuple[int, tuple[str, ...], bool]] = set()
        self.forks = 0

    def finds(self, pos: int = 0, stack: tuple[str, ...] = (), expect: bool = True) -> bool:
        """Scan from ``pos``. ``stack``: open brackets; ``expect``: an operand must follow."""
        text, end = self.text, len(self.text)
        while pos < end:
            state = (pos, stack, expect)
            if state in self.seen:
                return False  # another reading was here in the same state and found nothing
            self.seen.add(state)
            char = text[pos]
            if (match := _SPACE.match(text, pos)) or (match := _COMMENT.match(text, pos)):
                pos = match.end()
                continue
            if char in "'\"":
                pos, expect = self._string(pos), False
            elif char == "<":
                match = _IRI.match(text, pos)
                if match is None or text.startswith("<<", pos) or text[pos - 1 : pos] == "<":
                    pos, expect = pos + 1, True
                    continue
                if stack[-1:] == ("(",) and not expect:  # the ``<`` operator, maybe
                    self.forks += 1
                    if self.forks > _MAX_FORKS or self.finds(pos + 1, stack, True):
                        return True
                pos, expect = match.end(), False
            elif (pattern := _ATOMS.get(char)) and (match := pattern.match(text, pos)):
                pos, expect = match.end(), False  # a variable, blank node, language tag, number
            elif (after := self._after_colon(pos)) is not None:
                prefix = text[pos : after - 1]
                local = _PN_LOCAL.match(text, after)
                stop = local.end() if local else after
                if self._prefixed_name(prefix, text[after:stop]):
                    return True
                pos, expect = stop, False
            elif match := _WORD.match(text, pos):
                if _KEYWORD.search(match.group()):
                    return True
                pos, expect = match.end(), False
            else:
                if char in "({[":
                    stack = (*stack, char)
                elif char in ")}]":
                    stack = stack[:-1]
                pos, expect = pos + 1, char in _OPERAND_NEXT
        return False

    def _after_colon(self, pos: int) -> int | None:
        """Where the local part starts if a prefixed name (``PNAME_NS``) starts at ``pos``."""
        if self.text.startswith(":", pos):
            return pos + 1
        match = _PN_PREFIX.match(self.text, pos)
        return match.end() if match else None

    def _string(self, pos: int) -> int:
        """End of the string Oxigraph reads at ``pos`` (a lone quote if it reads none)."""
        for pattern in _STRINGS:
            match = pattern.match(self.text, pos)
            if match and _codepoints_ok(match.group()):
                return match.end()
        return pos + 1

    def _prefixed_name(self, prefix: str, local: str) -> bool:
        """True if ``prefix:local`` may hold the ``SERVICE`` keyword."""
        for match in _KEYWORD.finditer(prefix):
            before = prefix[: match.start()].rstrip(".")
            rest = prefix[match.end() :]
            rests = {rest, rest[6:]} if rest.lower().startswith("silent") else {rest}
            if (not before or before.endswith(("true", "false"))) and rests & self.decls.keys():
                return True  # ``SERVICE`` (``SILENT``) then the prefixed name ``rest:local``
        if not _KEYWORD.search(local):
            return False
        name = local.replace("\\", "")
        for start in range(len(prefix) + 1):  # ``trueex:x`` may be ``true`` ``ex:x``
            for iri in self.decls.get(prefix[start:], ()):
                if iri is None or not _valid_iri(iri + name):
                    # Oxigraph falls back to ``prefix:`` alone and reads the local name as code
                    # up to its first escape (where that reading stops).
                    return bool(_KEYWORD.search(re.split(r"[\\%]", local, maxsplit=1)[0]))
        return False


def uses_service(query: str, prefixes: Mapping[str, str] | None = None) -> bool:
    """True if ``query`` may contain a ``SERVICE`` clause (see the module docstring).

    ``prefixes`` are the prefixes predeclared for the query (hcgraph's by default).
    """
    declared = PREFIXES if prefixes is None else prefixes
    readings = [query]
    if _ESCAPE.search(query):
        readings.append(_ESCAPE.sub(_decode, query))
    return any(_Scan(text, declared).finds() for text in readings)


def check_no_service(query: str, prefixes: Mapping[str, str] | None = None) -> None:
    """Raise :class:`~hcgraph.errors.QueryError` if ``query`` uses ``SERVICE``."""
    if uses_service(query, prefixes):
        raise QueryError(SERVICE_REFUSED)
