"""No outbound requests from a query: find SPARQL 1.1 federation (``SERVICE``) before running.

Oxigraph fetches the URL of ``SERVICE <url> { … }`` and cannot be told not to, so such a
query is refused unless the caller opts in (docs/security.md). :func:`uses_service` lexes it
with the terminals of Oxigraph 0.5's PEG grammar and follows every reading where Oxigraph
could read text two ways (``<`` an IRI or the operator, a local name an IRI or code, ``\\u``
escapes decoded or not); in doubt it says yes (tests/test_sparqlguard_fuzz.py checks it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from .errors import QueryError
from .iris import named_node
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
# A declaration's shape, wherever it is: NAME: (space|comment)* <IRI>; NAME is read backwards.
_DECL = re.compile(r":(?:[ \t\r\n]|#[^\r\n]*+)*+<([^<>]*)>")
_NAME_CHAR = re.compile(f"[{_CHARS}.]")
# What a character starts when it starts one of these (each a single token to Oxigraph).
_ATOMS = {"?": _VAR, "$": _VAR, "_": _BLANK, "@": _LANG, **dict.fromkeys("0123456789.", _NUMBER)}
# After these an operand must follow, so a ``<`` there starts an IRI, never the operator.
_OPERAND_NEXT = frozenset("(,=!&|+-*/^{[")
# Characters that start no token but themselves (``-`` and ``+`` included: no name starts so).
_PUNCT = frozenset("(){}[],;=!&|+-*/^~>")
_BRACKETS = frozenset("(){}[]")
_MAX_FORKS = 4096


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
    # pyoxigraph's NamedNode: the same IRI parser (oxiri) as Oxigraph's SPARQL parser
    return value if named_node(value) is not None else None


class _Frame(NamedTuple):
    """An open bracket, the one around it, and its number (states tell frames by it)."""

    char: str
    outer: _Frame | None
    number: int


_State = tuple[int, "_Frame | None", bool]


class _Scan:
    """The readings of one query text; :meth:`finds` is True if a ``SERVICE`` may be in one.

    A state is (position, innermost open bracket, whether an operand must follow); the other
    reading of a fork is queued, a state met before is not scanned again, and past the bound
    (``_MAX_FORKS`` readings, a few steps per character) "cannot tell" counts as a yes.
    """

    def __init__(self, text: str, prefixes: Mapping[str, str]) -> None:
        self.text = text
        self.decls: dict[str, set[str | None]] = {k: {v} for k, v in prefixes.items()}
        for match in _DECL.finditer(text):
            start = match.start()
            while start > 0 and _NAME_CHAR.match(text, start - 1):
                start -= 1  # the name before ``:`` (read backwards: no regex backtracking)
            name, iri = text[start : match.start()], _iri_or_none(match.group(1))
            names = {name, name[6:]} if name.lower().startswith("prefix") else {name}
            for declared in names:  # ``PREFIXex: <…>`` declares ``ex``
                self.decls.setdefault(declared, set()).add(iri)
        self.lengths = sorted({len(name) for name in self.decls})
        self.seen: set[int] = set()  # states as numbers: a set of tuples would keep the GC busy
        self.frames = 0
        self.queue: list[_State] = [(0, None, True)]
        self.budget = 8 * len(text) + 10_000

    def finds(self) -> bool:
        """True if some reading holds ``SERVICE`` (or the work ran past its bound)."""
        forks = 0
        while self.queue:
            if self._reading(*self.queue.pop()):
                return True
            forks += 1
            if forks > _MAX_FORKS:
                return True
        return False

    def _reading(self, pos: int, frame: _Frame | None, expect: bool) -> bool:
        """Scan one reading from ``pos``; queue the other readings met on the way."""
        text, end = self.text, len(self.text)
        while pos < end:
            state = ((frame.number if frame else 0) * (end + 1) + pos) * 2 + expect
            if state in self.seen:
                return False  # another reading was here in the same state
            self.seen.add(state)
            self.budget -= 1
            if self.budget < 0:
                return True
            char = text[pos]
            if char in _PUNCT:  # the common case first: a character that starts no token
                if char in _BRACKETS:
                    frame = self._bracket(char, frame)
                pos, expect = pos + 1, char in _OPERAND_NEXT
                continue
            if (match := _SPACE.match(text, pos)) or (match := _COMMENT.match(text, pos)):
                pos = match.end()
                continue
            step = self._token(pos, frame, expect)
            if step is None:
                return True
            pos, expect = step
        return False

    def _bracket(self, char: str, frame: _Frame | None) -> _Frame | None:
        """The innermost open bracket after ``char`` (an opening or closing bracket)."""
        if char in "({[":
            self.frames += 1
            return _Frame(char, frame, self.frames)
        return frame.outer if frame is not None else None

    def _token(self, pos: int, frame: _Frame | None, expect: bool) -> tuple[int, bool] | None:
        """Read the token at ``pos``: where the reading goes on and whether an operand must
        follow, or None if the token may be ``SERVICE``."""
        text, char = self.text, self.text[pos]
        if char in "'\"":
            return self._string(pos), False
        if char == "<":
            return self._angle(pos, frame, expect)
        if (pattern := _ATOMS.get(char)) and (match := pattern.match(text, pos)):
            return match.end(), False  # a variable, blank node, language tag, number
        if (after := self._after_colon(pos)) is not None:
            local = _PN_LOCAL.match(text, after)
            stop = local.end() if local else after
            if self._prefixed_name(text[pos : after - 1], text[after:stop]):
                return None
            return stop, False
        if match := _WORD.match(text, pos):
            return None if _KEYWORD.search(match.group()) else (match.end(), False)
        return pos + 1, False  # ``\\``, ``%``, a lone quote …: nothing hides here

    def _angle(self, pos: int, frame: _Frame | None, expect: bool) -> tuple[int, bool]:
        """An IRI at ``pos``, or a ``<`` operator (inside ``(`` both readings are queued)."""
        text = self.text
        match = _IRI.match(text, pos)
        if match is None or text.startswith("<<", pos) or text[pos - 1 : pos] == "<":
            return pos + 1, True
        if frame is not None and frame.char == "(" and not expect:
            self.queue.append((pos + 1, frame, True))  # or the ``<`` operator
        return match.end(), False

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
        return self._service_in_prefix(prefix) or (
            bool(_KEYWORD.search(local)) and self._service_in_local(prefix, local)
        )

    def _service_in_prefix(self, prefix: str) -> bool:
        """``SERVICE`` (``SILENT``) then ``rest:local``, with ``rest`` a declared prefix."""
        size = len(prefix)
        for length in self.lengths:
            rest = prefix[size - length :] if length else ""
            if length > size or rest not in self.decls:
                continue
            if any(
                _service_ends(prefix, cut, length) for cut in (size - length, size - length - 6)
            ):
                return True
        return False

    def _service_in_local(self, prefix: str, local: str) -> bool:
        """A local name holding the keyword, read as code when Oxigraph cannot make an IRI of
        it (``trueex:x`` may be ``true`` ``ex:x``)."""
        size = len(prefix)
        name = local.replace("\\", "")
        for length in self.lengths:
            if length > size:
                break
            for iri in self.decls.get(prefix[size - length :] if length else "", ()):
                if iri is None or named_node(iri + name) is None:
                    # Oxigraph falls back to ``prefix:`` alone and reads the local name as code
                    # up to its first escape (where that reading stops).
                    return bool(_KEYWORD.search(re.split(r"[\\%]", local, maxsplit=1)[0]))
        return False


def _service_ends(prefix: str, cut: int, length: int) -> bool:
    """True if ``prefix[:cut]`` ends in ``SERVICE`` (then ``SILENT``, when ``cut`` leaves six
    characters before the declared ``length``-character prefix), after nothing or a boolean."""
    size = len(prefix)
    if cut < 7 or (cut != size - length and prefix[cut : cut + 6].lower() != "silent"):
        return False
    before = prefix[: cut - 7].rstrip(".")
    return prefix[cut - 7 : cut].lower() == "service" and (
        not before or before.endswith(("true", "false"))
    )


def uses_service(query: str, prefixes: Mapping[str, str] | None = None) -> bool:
    """True if ``query`` may contain a ``SERVICE`` clause (see the module docstring).

    ``prefixes`` are the prefixes predeclared for the query (hcgraph's by default).
    """
    declared = PREFIXES if prefixes is None else prefixes
    readings = [query]
    if _ESCAPE.search(query):
        readings.append(_ESCAPE.sub(_decode, query))
    # Every way to the keyword reads the seven letters in a row in some reading: a text
    # without them (most queries) is let through unscanned.
    return any("service" in text.lower() and _Scan(text, declared).finds() for text in readings)


def check_no_service(query: str, prefixes: Mapping[str, str] | None = None) -> None:
    """Raise :class:`~hcgraph.errors.QueryError` if ``query`` uses ``SERVICE``."""
    if uses_service(query, prefixes):
        raise QueryError(SERVICE_REFUSED)
