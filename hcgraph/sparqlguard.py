"""No outbound requests from a query: find SPARQL 1.1 federation (``SERVICE``) before running.

Oxigraph evaluates ``SERVICE <url> { … }`` by fetching ``url`` over HTTP, and neither
pyoxigraph's ``Store.query`` nor ``oxigraph serve`` (0.5) has a switch to turn that off. So
hcgraph refuses a query that uses ``SERVICE`` unless the caller opts in (``hcgraph query
--allow-service``, ``hcgraph serve --allow-service``): otherwise a query file or a request to
the endpoint could make the machine fetch any URL it can reach (SSRF: cloud metadata,
services on loopback) and hand back the answer.

:func:`uses_service` reads the query as the SPARQL grammar does: codepoint escapes
(``\\u0053ERVICE``) are decoded first, as the grammar requires, then strings, IRIs and
comments are skipped (an escaped character in a prefixed name, ``ex:a\\#`` or ``ex:a\\'``, is
read as part of the name, not as a comment or a string), and ``SERVICE`` (any case) counts
where it is a keyword, not part of a variable (``?service``) or a prefixed name
(``service:x``, ``ex:service``). In doubt it says yes: a refused query is a clear error, a
missed one an outbound request.
"""

from __future__ import annotations

import re

from .errors import QueryError

__all__ = ["SERVICE_REFUSED", "check_no_service", "uses_service"]

SERVICE_REFUSED = (
    "the query uses SERVICE (federation), which would make this machine fetch a remote URL; "
    "refused (opt in with --allow-service)"
)

_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_SKIP = re.compile(
    r"'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"""(?:[^"\\]|\\.|"(?!""))*"""'
    r"|'(?:[^'\\\n\r]|\\.)*'"
    r'|"(?:[^"\\\n\r]|\\.)*"'
    r"|<[^<>\"{}|^`\\\x00-\x20]*>"
    r"|#[^\n\r]*"
    # PN_LOCAL_ESC: in ``ex:a\#`` and ``ex:a\'`` the escaped character is part of a prefixed
    # name, not a comment or a string; read as one, it would hide what follows (a SERVICE)
    r"|\\[_~.\-!$&'()*+,;=/?#@%]",
    re.DOTALL,
)
_SERVICE = re.compile(r"(?<![\w?$:\-])service(?![\w:\-])", re.IGNORECASE)


def _decode(match: re.Match[str]) -> str:
    code = int(match.group(1) or match.group(2), 16)
    return chr(code) if code <= 0x10FFFF else "\ufffd"


def uses_service(query: str) -> bool:
    """True if ``query`` may contain a ``SERVICE`` clause (see the module docstring)."""
    text = _ESCAPE.sub(_decode, query)
    return _SERVICE.search(_SKIP.sub(_blank, text)) is not None


def _blank(match: re.Match[str]) -> str:
    # An escaped character stays part of its name ("_"); strings, IRIs, comments: a space.
    return "_" if match.group().startswith("\\") else " "


def check_no_service(query: str) -> None:
    """Raise :class:`~hcgraph.errors.QueryError` if ``query`` uses ``SERVICE``."""
    if uses_service(query):
        raise QueryError(SERVICE_REFUSED)
