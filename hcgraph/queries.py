"""The saved-query library: find, load, parameterise and run ``queries/*.rq``.

What: every saved query is a SPARQL file whose leading ``#`` comment block is its header::

    # title: Co-citation: story pairs sharing sources
    # question: Which pairs of stories cite at least k of the same manifests?
    # param: k integer = 2 -- the minimum number of manifests both stories cite
    # definition: ...            (any other key: kept as documentation)

Indented ``#`` lines continue the previous key. ``param`` lines read
``NAME TYPE [= DEFAULT] [-- description]``; a parameter without a default is required.

Parameters are bound as RDF terms, never spliced into the text; withdrawn stories are left
out by the queries' :data:`CURRENT_ONLY` lines. ``hcgraph/data/queries`` links to ``queries/``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from .damage import damage_error, is_damage
from .errors import QueryError, first_line
from .iris import named_node
from .rdftext import nfc
from .store import Store
from .vocab import XSD

__all__ = [
    "CURRENT_ONLY",
    "PARAM_TYPES",
    "QUERY_DIR",
    "Param",
    "QueryResult",
    "SavedQuery",
    "including_withdrawn",
    "load_query",
    "parse_query_text",
    "run_query",
    "saved_queries",
]

QUERY_DIR = Path(__file__).resolve().parent / "data" / "queries"

_HEADER_LINE = re.compile(r"#\s?(?P<key>[A-Za-z_][\w-]*):\s*(?P<value>.*)$")
_PARAM = re.compile(
    r"(?P<name>[A-Za-z_]\w*)\s+(?P<type>\w+)(?:\s*=\s*(?P<default>\S+))?\s*(?:--\s*(?P<doc>.*))?$"
)
_SYNTAX_AT = re.compile(r"error at (\d+):(\d+):?\s*(.*)", re.DOTALL)
# A final ORDER BY made of plain variables (optionally ASC(...)/DESC(...)), nothing after it.
_FINAL_ORDER = re.compile(
    r"\n[ \t]*ORDER\s+BY(?P<keys>(?:\s+(?:\?\w+|(?:ASC|DESC)\s*\(\s*\?\w+\s*\)))+)\s*\Z",
    re.IGNORECASE,
)
_ORDER_KEY = re.compile(r"(?:(ASC|DESC)\s*\(\s*)?\?(\w+)", re.IGNORECASE)
_XSD = str(XSD)


@dataclass(frozen=True)
class Param:
    """One declared parameter of a saved query: its variable ``name`` (without ``?``), its
    ``type`` (one of :data:`PARAM_TYPES`), its ``default`` text (None: required)."""

    name: str
    type: str
    default: str | None = None
    description: str = ""

    @property
    def required(self) -> bool:
        """True when the parameter has no default."""
        return self.default is None


@dataclass(frozen=True)
class SavedQuery:
    """A SPARQL query with its parsed header: ``name`` is the file stem (or the path of an
    ad-hoc file), ``text`` the whole SPARQL text, ``notes`` every other header key → text."""

    name: str
    text: str
    title: str = ""
    question: str = ""
    params: tuple[Param, ...] = ()
    notes: dict[str, str] = field(default_factory=dict)
    path: Path | None = None

    def param(self, name: str) -> Param:
        """The declared parameter ``name`` (else a QueryError naming the declared ones)."""
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise QueryError(f"{self.name}: unknown parameter {name!r} (declared: {known})")


@dataclass(frozen=True)
class QueryResult:
    """The answer to a query, materialised: column names (``subject predicate object`` for
    a graph) and a tuple of terms (None: unbound) per row, or an ASK's ``boolean``.
    Iterating gives :meth:`QueryResult.records`."""

    variables: tuple[str, ...]
    terms: list[tuple[Any, ...]]
    boolean: bool | None = None

    def records(self) -> list[dict[str, Any]]:
        """Rows as dicts of Python values (:func:`to_python`); unbound columns are None."""
        return [
            {var: to_python(term) for var, term in zip(self.variables, row, strict=True)}
            for row in self.terms
        ]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.records())

    def __len__(self) -> int:
        return len(self.terms)


def to_python(term: Any) -> Any:
    """A plain Python value for one RDF term: ``str`` for IRIs and other literals (ids stay
    exact), ``int``/``Decimal``/``float``/``bool``/dates for XSD literals, ``"_:id"`` for
    blank nodes, N-Triples 1.2 text for triple terms."""
    if term is None:
        return None
    if isinstance(term, ox.NamedNode):
        return term.value
    if isinstance(term, ox.BlankNode):
        return f"_:{term.value}"
    if isinstance(term, ox.Literal):  # keyed by XSD local name: no other datatype matches
        converter = _LITERAL_CONVERTERS.get(term.datatype.value.removeprefix(_XSD))
        if converter is not None:
            with contextlib.suppress(ValueError, InvalidOperation):
                return converter(term.value)
        return term.value
    if isinstance(term, ox.Triple):  # RDF 1.2 triple term: its N-Triples 1.2 text
        return f"<<( {term} )>>"
    return str(term)


_INTEGER_TYPES = (
    "integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
    "negativeInteger", "nonPositiveInteger", "unsignedLong", "unsignedInt", "unsignedShort",
    "unsignedByte",
)  # fmt: skip
_INTEGER_LEXICAL = re.compile(r"[+-]?[0-9]+")
_DECIMAL_LEXICAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def _lexical(pattern: re.Pattern[str], convert: Any) -> Any:
    """``convert`` for the XSD lexical form only: ``"NaN"^^xsd:decimal`` or
    ``"1_0"^^xsd:integer`` is ill-typed and stays its text."""

    def checked(value: str) -> Any:
        if pattern.fullmatch(value) is None:
            raise ValueError(value)
        return convert(value)

    return checked


_LITERAL_CONVERTERS: dict[str, Any] = {
    **{name: _lexical(_INTEGER_LEXICAL, int) for name in _INTEGER_TYPES},
    "decimal": _lexical(_DECIMAL_LEXICAL, Decimal),
    "double": float,
    "float": float,
    "boolean": lambda v: v in ("true", "1"),
    "date": dt.date.fromisoformat,
    "dateTime": dt.datetime.fromisoformat,
}


# --- parameters -----------------------------------------------------------------------------
def _iri(name: str, value: str) -> ox.NamedNode:
    node = named_node(value)
    if node is None:
        raise QueryError(f"parameter {name}: not an absolute IRI: {value!r}")
    return node


def _text(name: str, value: str) -> ox.Literal:
    """A string parameter; a lone surrogate (a non-UTF-8 argument) is no RDF string."""
    try:
        return ox.Literal(nfc(value))
    except ValueError:
        raise QueryError(f"parameter {name}: not valid UTF-8 text: {value!r}") from None


def _typed(xsd_name: str, check: Any) -> Any:
    def convert(name: str, value: str) -> ox.Literal:
        try:
            lexical = check(value.strip())
        except (ValueError, InvalidOperation):
            raise QueryError(f"parameter {name}: not a valid {xsd_name}: {value!r}") from None
        return ox.Literal(lexical, datatype=ox.NamedNode(_XSD + xsd_name))

    return convert


def _decimal_lexical(number: Decimal) -> str:
    """An xsd:decimal's lexical form (no exponent), finite, at most 1000 digits a side."""
    if not number.is_finite() or abs(number.adjusted()) > 1000:
        raise ValueError(number)
    return format(number, "f")


def _boolean(value: str) -> str:
    lowered = value.lower()
    if lowered in ("true", "1", "yes"):
        return "true"
    if lowered in ("false", "0", "no"):
        return "false"
    raise ValueError(value)


#: Parameter types a header may declare → converter from the text a user gives.
PARAM_TYPES: dict[str, Any] = {
    "iri": _iri,
    "literal": _text,
    "string": _text,
    "integer": _typed("integer", lambda v: str(int(v))),
    "decimal": _typed("decimal", lambda v: _decimal_lexical(Decimal(v))),
    "boolean": _typed("boolean", _boolean),
    "date": _typed("date", lambda v: dt.date.fromisoformat(v).isoformat()),
}


def bind_params(query: SavedQuery, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """RDF terms for every declared parameter: given values (text, Python ints/bools, or
    pyoxigraph terms), else defaults.

    Raises:
        QueryError: an undeclared name, a missing required parameter, or a value that is
            not of the declared type.
    """
    given = dict(values or {})
    bound: dict[str, Any] = {}
    for name in given:
        query.param(name)  # raises for undeclared names
    for param in query.params:
        value = given.get(param.name, param.default)
        if value is None:
            raise QueryError(
                f"{query.name}: parameter {param.name!r} ({param.type}) is required:"
                f" --param {param.name}=VALUE"
            )
        if isinstance(value, ox.NamedNode | ox.Literal | ox.BlankNode):
            bound[param.name] = value
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        bound[param.name] = PARAM_TYPES[param.type](param.name, str(value))
    return bound


# --- loading --------------------------------------------------------------------------------
def parse_query_text(text: str, name: str, path: Path | None = None) -> SavedQuery:
    """A :class:`SavedQuery` from SPARQL text with an optional ``#`` header (module doc)."""
    header = _header(text)
    params = tuple(_parse_param(name, value) for key, value in header if key == "param")
    for p in params:
        if not re.search(rf"\?{re.escape(p.name)}\b", text):
            raise QueryError(f"{name}: parameter {p.name!r} is declared but ?{p.name} is not used")
    single = {"title": "", "question": ""}
    notes: dict[str, str] = {}
    for key, value in header:
        if key in single:
            single[key] = value
        elif key != "param":
            notes[key] = f"{notes[key]}\n{value}" if key in notes else value
    return SavedQuery(name, text, single["title"], single["question"], params, notes, path)


def _header(text: str) -> list[tuple[str, str]]:
    """The ``(key, value)`` lines of the leading ``#`` block, continuations joined."""
    header: list[tuple[str, str]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if not line.startswith("#"):
            break
        match = _HEADER_LINE.match(line)
        if match and not raw.startswith((" ", "\t")) and not line.startswith("#  "):
            header.append((match["key"].lower(), match["value"].strip()))
        elif header:  # continuation of the previous key
            key, value = header[-1]
            header[-1] = (key, f"{value} {line.lstrip('#').strip()}".strip())
    return header


def _parse_param(query_name: str, spec: str) -> Param:
    match = _PARAM.match(spec)
    if match is None:
        raise QueryError(
            f"{query_name}: bad param line {spec!r} (want: NAME TYPE [= DEFAULT] [-- description])"
        )
    kind = match["type"].lower()
    if kind not in PARAM_TYPES:
        raise QueryError(
            f"{query_name}: parameter {match['name']!r} has unknown type {kind!r}"
            f" (known: {', '.join(PARAM_TYPES)})"
        )
    param = Param(match["name"], kind, match["default"], (match["doc"] or "").strip())
    if param.default is not None:
        PARAM_TYPES[kind](param.name, param.default)  # a bad default fails at load time
    return param


def saved_queries(directory: Path | None = None) -> dict[str, SavedQuery]:
    """The saved queries (name → query), sorted by name; by default those shipped with hcgraph."""
    folder = directory or QUERY_DIR
    if not folder.is_dir():
        raise QueryError(f"{folder}: saved-query directory not found")
    return {
        path.stem: parse_query_text(path.read_text(encoding="utf-8"), path.stem, path)
        for path in sorted(folder.glob("*.rq"))
    }


def load_query(name_or_path: str | Path) -> SavedQuery:
    """A saved query by name (``source-reuse``) or a ``.rq`` file by path.

    Raises:
        QueryError: no saved query has that name, or the file cannot be read.
    """
    text = str(name_or_path)
    candidate = Path(text)
    looks_like_file = text.endswith(".rq") or "/" in text or candidate.is_file()
    if looks_like_file:
        try:
            body = candidate.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise QueryError(f"{text}: cannot read query file: {reason}") from None
        return parse_query_text(body, text, candidate)
    library = saved_queries()
    if text in library:
        return library[text]
    raise QueryError(f"unknown query {text!r}; saved queries: {', '.join(library)}")


#: The comment ending each line of a saved query that keeps withdrawn stories out.
CURRENT_ONLY = "# current stories only"


def including_withdrawn(text: str) -> str:
    """``text`` without its :data:`CURRENT_ONLY` lines: withdrawn stories count too."""
    return "".join(
        line for line in text.splitlines(keepends=True) if not line.rstrip().endswith(CURRENT_ONLY)
    )


# --- running --------------------------------------------------------------------------------
def run_query(
    store: Store,
    query: str | Path | SavedQuery,
    params: Mapping[str, Any] | None = None,
    *,
    allow_service: bool = False,
    limit: int | None = None,
    offset: int = 0,
    include_withdrawn: bool = False,
) -> QueryResult:
    """Run a saved query (by name, path or :class:`SavedQuery`) and materialise its rows;
    ``offset`` and ``limit`` page them.

    >>> from hcgraph import Store, ingest_paths, run_query
    >>> with Store(None) as store:
    ...     _ = ingest_paths(store, ["tests/fixtures"])
    ...     rows = run_query(store, "publisher-reach").records()

    Raises:
        QueryError: unknown query, syntax error (with line and column), bad parameters,
            ``SERVICE`` without ``allow_service``, or an evaluation error.
        StoreDamagedError: a table of the store could not be read (named, with what to do).
    """
    saved = query if isinstance(query, SavedQuery) else load_query(query)
    if offset < 0 or (limit is not None and limit < 0):
        raise QueryError(f"{saved.name}: --limit and --offset take whole numbers from 0")
    bindings = bind_params(saved, params)
    whole = including_withdrawn(saved.text) if include_withdrawn else saved.text
    try:
        result = _evaluate(store, whole, bindings, allow_service)
    except QueryError as exc:  # Store.query's SERVICE guard
        raise QueryError(f"{saved.name}: {exc}") from None
    except SyntaxError as exc:
        raise QueryError(f"{saved.name}: {_syntax_message(exc)}") from None
    except (RuntimeError, OSError, ValueError) as exc:
        raise _failure(store, saved.name, bindings, exc) from None
    _page(result, offset, limit)
    return result


def _page(result: QueryResult, offset: int, limit: int | None) -> None:
    """Keep rows ``offset`` to ``offset + limit`` (in the query's own order)."""
    if offset or limit is not None:
        result.terms[:] = result.terms[offset : None if limit is None else offset + limit]


def _evaluate(
    store: Store, whole: str, bindings: dict[str, Any], allow_service: bool
) -> QueryResult:
    """Run ``whole``, sorting by a final ``ORDER BY`` of columns here (:func:`_split_order`)."""
    text, order = _split_order(whole)
    result = _materialise(store.query(text, bindings=bindings, allow_service=allow_service))
    if not order:
        return result
    if all(name in result.variables for name, _desc in order):
        _sort_rows(result, order)
        return result
    # not every sort key is a column: let the engine sort after all
    return _materialise(store.query(whole, bindings=bindings, allow_service=allow_service))


def _failure(store: Store, name: str, bindings: dict[str, Any], exc: Exception) -> Exception:
    """The error to raise for an evaluation error: a damaged table named, else a QueryError."""
    if is_damage(exc) and store.directory is not None:
        return damage_error(store.directory, exc)
    message = first_line(exc)
    if "SELECT projection" in message:
        message = (
            "every parameter must be a projected variable of a SELECT query"
            f" ({', '.join('?' + p for p in bindings)})"
        )
    return QueryError(f"{name}: query failed: {message}")


def _split_order(text: str) -> tuple[str, list[tuple[str, bool]]]:
    """Take a final ``ORDER BY ?a DESC(?b)`` off a query: ``(text without it, keys)``
    (sorting in Python is far faster than Oxigraph's on-disk sort)."""
    match = _FINAL_ORDER.search(text)
    if match is None:
        return text, []
    keys = [(m[2], (m[1] or "").upper() == "DESC") for m in _ORDER_KEY.finditer(match["keys"])]
    return text[: match.start()] + "\n", keys


def _order_key(term: Any) -> tuple[Any, ...]:
    """SPARQL ORDER BY ranks: unbound < blank nodes < IRIs < literals < triple terms;
    numbers by value."""
    kind = type(term)
    if kind is ox.NamedNode:
        return (2, term.value)
    if term is None:
        return (0,)
    if kind is ox.BlankNode:
        return (1, term.value)
    if kind is ox.Triple:  # after every literal (SPARQL 1.2), by their text among themselves
        return (4, str(term))
    value = to_python(term)
    if isinstance(value, bool):
        return (3, 1, int(value), "")
    if isinstance(value, int | float | Decimal):
        return (3, 0, value, "")
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return (3, 2, value.timestamp(), term.value)
    return (3, 3, 0, str(term.value))


def _sort_rows(result: QueryResult, order: list[tuple[str, bool]]) -> None:
    """Sort rows in place by the ORDER BY keys: a stable pass per run of one direction."""
    groups: list[tuple[list[int], bool]] = []
    for name, descending in order:
        column = result.variables.index(name)
        if groups and groups[-1][1] == descending:
            groups[-1][0].append(column)
        else:
            groups.append(([column], descending))
    for columns, descending in reversed(groups):
        ranks: list[dict[Any, tuple[Any, ...]]] = [{} for _ in columns]
        pairs = list(zip(columns, ranks, strict=True))

        def key(row: tuple[Any, ...], pairs: list[Any] = pairs) -> tuple[Any, ...]:
            out = []
            for column, seen in pairs:
                term = row[column]
                rank = seen.get(term)
                if rank is None:
                    rank = seen[term] = _order_key(term)
                out.append(rank)
            return tuple(out)

        result.terms.sort(key=key, reverse=descending)


def _syntax_message(exc: SyntaxError) -> str:
    text = str(exc.msg if exc.msg else exc).strip()
    match = _SYNTAX_AT.match(text)
    if match:
        line, column, rest = match.groups()
        return f"syntax error at line {line}, column {column}: {rest.strip()}"
    return f"syntax error: {text}"


def _materialise(answer: Any) -> QueryResult:
    if isinstance(answer, ox.QueryBoolean):
        return QueryResult((), [], bool(answer))
    if isinstance(answer, ox.QueryTriples):
        rows = [(t.subject, t.predicate, t.object) for t in answer]
        return QueryResult(("subject", "predicate", "object"), rows)
    variables = tuple(v.value for v in answer.variables)
    rows = [tuple(solution[i] for i in range(len(variables))) for solution in answer]
    return QueryResult(variables, rows)
