"""The story document model (pydantic v2) and the one function that parses raw bytes into it.

The model covers the whole ``hangingcontext.desk/1`` story document. Three rules shape it:

* **Ids are strings.** Story, manifest and claim ids are 19-digit strings, above 2**53, so a
  float would lose them. A JSON integer id becomes its exact decimal string (Python ints are
  exact); a JSON float or boolean id is rejected with the JSON path.
* **Unknown fields are kept.** Every model allows extra fields; they stay on the model
  (``model_extra``) and the mapper records them as JSON, so nothing the publisher adds is lost.
* **Errors name source and path.** A document that is not a story raises
  :class:`~hcgraph.errors.NotAStoryError`; one that breaks the schema raises
  :class:`~hcgraph.errors.StoryError` with every problem as ``(json_path, message)``.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from typing import Annotated, Any, NamedTuple, NoReturn
from urllib.parse import urlsplit

import pydantic
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    field_validator,
    model_validator,
)

from .errors import NotAStoryError, StoryError

__all__ = [
    "MAX_DEPTH",
    "MAX_LITERAL",
    "SCHEMA_ID",
    "Cite",
    "Correction",
    "DecisionCard",
    "KeyFact",
    "Labels",
    "Links",
    "Manifest",
    "Paragraph",
    "Related",
    "Reuse",
    "RunTheseManifests",
    "Section",
    "Sponsor",
    "Story",
    "Writer",
    "json_path",
    "parse_story",
]

SCHEMA_ID = "hangingcontext.desk/1"
#: Deepest nesting of arrays/objects accepted (a real story nests 6 levels).
MAX_DEPTH = 64
#: Longest string (JSON-encoded bytes) accepted in a story: a 1 MiB paragraph is no news.
MAX_LITERAL = 1024 * 1024


def _as_id(value: Any) -> str:
    """Normalise an id to its exact decimal string; refuse types that may have lost digits."""
    if isinstance(value, bool):
        raise ValueError("id must be a string, not a boolean")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        raise ValueError(
            "id must be a string: a JSON number with a fraction or exponent loses digits"
        )
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise ValueError("id must not be empty")
        return text
    raise ValueError(f"id must be a string, not {type(value).__name__}")


Id = Annotated[str, BeforeValidator(_as_id)]


def _iso_text(value: Any) -> Any:
    """Times and dates are ISO 8601 strings, never epoch seconds."""
    if isinstance(value, str | dt.date):
        return value
    kind = _JSON_TYPES.get(type(value), type(value).__name__)
    raise ValueError(f"must be an ISO 8601 string, not {kind}")


_JSON_TYPES = {
    bool: "a boolean",
    int: "a number",
    float: "a number",
    list: "an array",
    dict: "an object",
    type(None): "null",
}


def _not_own(value: Any) -> Any:
    """Refuse a URL in hcgraph's own namespace (:func:`hcgraph.iris.in_own_namespace`)."""
    from .iris import OWN_BASE, in_own_namespace  # lazy: the model loads without the RDF engine

    if isinstance(value, str) and in_own_namespace(value):
        raise ValueError(
            f"must not be in hcgraph's own namespace {OWN_BASE}/ (its shared graphs, ids "
            "and vocabulary live there)"
        )
    return value


#: A URL that becomes an IRI hcgraph describes: never one in hcgraph's own namespace.
ForeignUrl = Annotated[str, BeforeValidator(_not_own)]

Timestamp = Annotated[dt.datetime, BeforeValidator(_iso_text)]
Date = Annotated[dt.date, BeforeValidator(_iso_text)]


class _Open(BaseModel):
    """Base for every part of a story: extra fields are kept, never fatal."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=False)

    @property
    def extra(self) -> dict[str, Any]:
        """Fields the schema does not know (kept verbatim)."""
        return dict(self.model_extra or {})


class Cite(_Open):
    """One citation: claims inside one manifest."""

    manifest_id: Id
    claim_ids: list[Id] = Field(default_factory=list)


class Paragraph(_Open):
    """A paragraph of markdown text and the claims it cites."""

    markdown: str = ""
    cites: list[Cite] = Field(default_factory=list)


class Section(_Open):
    """A headed section of paragraphs."""

    heading: str = ""
    paragraphs: list[Paragraph] = Field(default_factory=list)


class KeyFact(_Open):
    """A key fact at the top of the story, with its own citations."""

    text: str = ""
    self_reported: StrictBool | None = None
    cites: list[Cite] = Field(default_factory=list)


class Manifest(_Open):
    """A manifest: the summary of one source document from one publisher."""

    manifest_id: Id
    title: str | None = None
    source_name: str | None = None
    source_url: ForeignUrl | None = None
    published_date: Date | None = None


class Related(_Open):
    """A link to a related story (page URL only)."""

    url: ForeignUrl
    headline: str | None = None
    slug: str | None = None


class Labels(_Open):
    """Trust labels shown with the story."""

    trust: str | None = None
    trust_text: str | None = None
    newsroom: str | None = None


class Writer(_Open):
    """The agent that wrote the story and its run id."""

    agent: str | None = None
    run_id: Id | None = None


class DecisionCard(_Open):
    """Who the story is useful for, what it is not for, what to compare it against."""

    useful_for: list[str] = Field(default_factory=list)
    not_for: list[str] = Field(default_factory=list)
    compare_against: list[str] = Field(default_factory=list)


class Correction(_Open):
    """A correction; the publisher's shape is not fixed yet, so a bare string is accepted."""

    text: str | None = None
    date: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        return {"text": value} if isinstance(value, str) else value


class Links(_Open):
    """Alternate representations of the story."""

    html: str | None = None
    json_: str | None = Field(default=None, alias="json")
    markdown: str | None = None
    newsroom: ForeignUrl | None = None
    edition: ForeignUrl | None = None


class Reuse(_Open):
    """Licence and reuse terms."""

    version: str | None = None
    summary: str | None = None
    attribution: str | None = None
    link_rule: str | None = None
    keep_ids_rule: str | None = None
    no_endorsement: str | None = None
    license_url: str | None = None
    machine_url: str | None = None
    canonical_url: str | None = None


class Sponsor(_Open):
    """A sponsor or house-ad block."""

    label: str | None = None
    title: str | None = None
    text: str | None = None
    note: str | None = None
    cta: dict[str, Any] | None = None


class RunTheseManifests(_Open):
    """The story's invitation to read its manifests first-hand."""

    title: str | None = None
    summary: str | None = None
    manifest_ids: list[Id] = Field(default_factory=list)


class Story(_Open):
    """A whole ``hangingcontext.desk/1`` story document."""

    schema_id: str = Field(alias="schema")
    type: str
    id: Id
    url: ForeignUrl
    headline: str
    slug: str | None = None
    edition: str | None = None
    newsroom: str | None = None
    beat: str | None = None
    newsroom_title: str | None = None
    angle: str | None = None
    dek: str | None = None
    published_at: Timestamp | None = None
    labels: Labels | None = None
    source_count: StrictInt | None = None
    publishers: list[str] = Field(default_factory=list)
    key_facts: list[KeyFact] = Field(default_factory=list)
    images: list[Any] = Field(default_factory=list)
    sections: list[Section] = Field(default_factory=list)
    unresolved: list[str] = Field(default_factory=list)
    decision_card: DecisionCard | None = None
    writer: Writer | None = None
    corrections: list[Correction] = Field(default_factory=list)
    cited_manifest_ids: list[Id] = Field(default_factory=list)
    manifests: list[Manifest] = Field(default_factory=list)
    run_these_manifests: RunTheseManifests | None = None
    links: Links | None = None
    related: list[Related] = Field(default_factory=list)
    sponsor: Sponsor | None = None
    disclosure: str | None = None
    reuse: Reuse | None = None

    @field_validator("url")
    @classmethod
    def _canonical_url(cls, value: str) -> str:
        parts = urlsplit(value.strip())
        if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
            raise ValueError("must be an absolute http(s) URL")
        if any(ch in value for ch in ' <>"{}|\\^`') or any(ord(ch) < 0x21 for ch in value):
            raise ValueError("must be a URL without spaces, quotes or angle brackets")
        url = value.strip().split("#", 1)[0]
        import pyoxigraph  # here, not at the top: the model loads without the RDF engine

        try:  # the story's IRI: what RDF accepts (a bad %-escape, a C1 control, "[" …)
            pyoxigraph.NamedNode(url)
        except ValueError as exc:
            why = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(exc))
            raise ValueError(f"must be a valid IRI: {why}") from None
        return url

    @property
    def json_url(self) -> str:
        """Where the story's JSON lives: ``links.json``, or the page URL + ``index.json``."""
        if self.links is not None and self.links.json_:
            return self.links.json_
        return self.url if self.url.endswith(".json") else self.url.rstrip("/") + "/index.json"


def json_path(loc: tuple[int | str, ...]) -> str:
    """Render a pydantic error location as a JSON path: ``sections[2].paragraphs[0].text``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _message(err: Any) -> str:
    msg = str(err.get("msg", "invalid"))
    msg = msg.removeprefix("Value error, ")
    return msg[:1].lower() + msg[1:]


def parse_story(raw: bytes | str, source: str) -> Story:
    """Parse and validate one story document (UTF-8 JSON bytes; ``source`` names it in errors).

    Raises:
        NotAStoryError: valid JSON that is not a ``hangingcontext.desk/1`` story.
        StoryError: invalid JSON or a schema violation, with the JSON path of each problem;
            nesting deeper than :data:`MAX_DEPTH` or a string longer than :data:`MAX_LITERAL`.
    """
    check_shape(raw, source)
    try:
        story = Story.model_validate_json(raw)
    except pydantic.ValidationError as exc:
        return _parse_refused(raw, source, exc.errors(include_url=False))
    _refuse_other_kind(story.schema_id, story.type, source)
    if _suspect(raw if isinstance(raw, bytes) else raw.encode("utf-8", "replace")):
        _refuse_unstorable(json.loads(raw, parse_constant=_Constant), source)
    return story


def _parse_refused(raw: bytes | str, source: str, errors: list[Any]) -> Story:
    """A document the strict parser refused: its schema problems, or the story Python's
    parser reads (UTF-16, a byte order mark)."""
    invalid = next((e for e in errors if e["type"] == "json_invalid"), None)
    if invalid is None:
        try:
            doc = json.loads(raw)
        except ValueError:  # pragma: no cover - the JSON parsed above
            doc = None
        _refuse_invalid(errors, doc, source)
    try:  # Python's parser reads what RFC 8259 allows but the strict one refuses
        doc = json.loads(raw, parse_constant=_Constant)
    except ValueError:
        reason = invalid.get("ctx", {}).get("error", "cannot parse")
        raise StoryError(source, [("", f"invalid JSON: {reason}")]) from None
    _refuse_unstorable(doc, source)
    try:
        story = Story.model_validate(doc)
    except pydantic.ValidationError as exc:
        _refuse_invalid(exc.errors(include_url=False), doc, source)
    _refuse_other_kind(story.schema_id, story.type, source)
    return story


def _refuse_invalid(errors: list[Any], doc: Any, source: str) -> NoReturn:
    """Raise NotAStoryError for a non-object or another kind of document, else StoryError."""
    if any(not e["loc"] for e in errors):
        raise NotAStoryError(source, [("", "not a story: the document is not a JSON object")])
    if isinstance(doc, dict):
        _refuse_other_kind(doc.get("schema"), doc.get("type"), source)
    raise StoryError(source, [(json_path(tuple(e["loc"])), _message(e)) for e in errors])


# A JSON string (escapes included) or one structural character.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]', re.DOTALL)


def check_shape(
    raw: bytes | str, source: str, *, max_depth: int = MAX_DEPTH, max_literal: int = MAX_LITERAL
) -> None:
    """Refuse a document nested deeper than ``max_depth`` or with a string longer than
    ``max_literal`` bytes, *before* any parser recurses into it.

    Raises:
        StoryError: with the JSON path of the first offending place.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else _as_utf8(raw)
    if len(data) <= max_literal and _max_depth(data, max_depth) <= max_depth:
        return  # neither too deep nor too long: the common case, decided in C
    problem = _first_offence(data, max_depth, max_literal)
    if problem is not None:
        raise StoryError(source, [problem])


def _first_offence(data: bytes, max_depth: int, max_literal: int) -> tuple[str, str] | None:
    """Walk the JSON structure to name the first place too deep or too long."""
    stack: list[int | str | None] = []  # each open container: an array's index, an object's key
    last_string: bytes | None = None
    for match in _TOKENS.finditer(data):
        token = match.group()
        first = token[:1]
        if first == b'"':
            size = len(token) - 2
            if size > max_literal:
                limit = f"the {max_literal}-byte limit"
                return _scan_path(stack), f"string of {size} bytes is longer than {limit}"
            last_string = token
        elif first in b"[{":
            if len(stack) >= max_depth:
                return _scan_path(stack), f"nested deeper than {max_depth} levels"
            stack.append(None if first == b"{" else 0)
        else:
            _close_or_step(stack, first, last_string)
    return None


def _close_or_step(stack: list[int | str | None], token: bytes, last: bytes | None) -> None:
    """Track the path through ``]``, ``}``, ``:`` (a key) and ``,`` (an array's next)."""
    top = stack[-1] if stack else None
    if token in b"]}" and stack:
        stack.pop()
    elif isinstance(top, int) and token == b",":
        stack[-1] = top + 1
    elif not isinstance(top, int) and stack and token == b":" and last is not None:
        stack[-1] = last[1:-1].decode("utf-8", "replace")


def _as_utf8(data: bytes) -> bytes:
    """UTF-16 or UTF-32 JSON as UTF-8, so the byte scans see its structure."""
    encoding = json.detect_encoding(data)
    if encoding in ("utf-8", "utf-8-sig"):
        return data
    try:
        return data.decode(encoding, "surrogatepass").encode("utf-8", "surrogatepass")
    except UnicodeError:
        return data  # json.loads cannot decode it either (a ValueError there)


_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_SQUARE = bytes.maketrans(b"{}", b"[]")  # for depth, an object is a bracket like an array
# An escaped backslash or quote, leftmost first (a run of backslashes pairs up).
_ESCAPED_PAIR = re.compile(rb'\\[\\"]')


def _max_depth(data: bytes, limit: int) -> int:
    """The deepest nesting of ``data``'s JSON brackets, or some number above ``limit``
    (unbalanced input too); in C: strings dropped, each pass removes the innermost ``[]``."""
    plain = _ESCAPED_PAIR.sub(b"", data).translate(_SQUARE, _STRUCTURE)
    parts = plain.split(b'"')
    if len(parts) % 2 == 0:  # an unterminated string
        return limit + 1
    rest = b"".join(parts[0::2])
    depth = 0
    while rest and depth <= limit:
        shorter = rest.replace(b"[]", b"")
        if len(shorter) == len(rest):
            return limit + 1
        rest, depth = shorter, depth + 1
    return depth


def _scan_path(stack: list[int | str | None]) -> str:
    return json_path(tuple(part for part in stack if part is not None))


class _Constant(NamedTuple):
    """``NaN``, ``Infinity`` or ``-Infinity`` as Python's parser met them (not JSON)."""

    name: str


#: Problems :func:`_unstorable` collects before it stops looking (the error lists 20).
_MAX_UNSTORABLE = 100
# A number that may pass a double (an exponent of 3 digits, a run of 309 digits) is found with
# digits read as ``0`` and ``E`` as ``e``: a translate and three substring scans in C.
_DIGITS_AND_E = bytes.maketrans(b"0123456789E", b"0000000000e")
_DOUBLE_DIGITS = b"0" * 309  # the digits of the largest double (1.8e308), and one more
_SURROGATE = re.compile(r"[\ud800-\udfff]")  # a lone one: no UTF-8, so no text to store


def _suspect(raw: bytes) -> bool:
    """Whether ``raw`` may hold NaN, Infinity or a number beyond a double (RFC 8259 has none)."""
    if b"NaN" in raw or b"Infinity" in raw:
        return True
    folded = raw.translate(_DIGITS_AND_E)
    return b"e000" in folded or b"e+000" in folded or _DOUBLE_DIGITS in folded


def _refuse_unstorable(doc: Any, source: str) -> None:
    problems: list[tuple[str, str]] = []
    _unstorable(doc, (), problems)
    if problems:
        raise StoryError(source, problems)


def _unstorable(value: Any, loc: tuple[int | str, ...], out: list[tuple[str, str]]) -> None:
    """Add ``(json path, message)`` to ``out`` for each value below ``value`` not storable."""
    if len(out) >= _MAX_UNSTORABLE:
        return
    problem = _unstorable_value(value)
    if problem is not None:
        out.append((json_path(loc), problem))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _unstorable(item, (*loc, i), out)
    elif isinstance(value, dict):
        for key, item in value.items():
            if _SURROGATE.search(key):
                _unstorable(key, (*loc, key.encode("utf-8", "backslashreplace").decode()), out)
            else:
                _unstorable(item, (*loc, key), out)


def _unstorable_value(value: Any) -> str | None:
    """Why a scalar cannot be stored (NaN, beyond a double, a lone surrogate), or None."""
    lone = _SURROGATE.search(value) if isinstance(value, str) else None
    if lone is not None:
        return f"lone UTF-16 surrogate U+{ord(lone.group()):04X}: not Unicode text"
    if isinstance(value, _Constant):
        return f"{value.name} is not JSON (RFC 8259 has no NaN or Infinity)"
    if isinstance(value, float) and not math.isfinite(value):
        return "number out of range: beyond a double (it would be Infinity)"
    return None


def _refuse_other_kind(schema: object, kind: object, source: str) -> None:
    """Raise NotAStoryError when ``schema``/``type`` say this is some other document."""
    if schema != SCHEMA_ID or kind != "story":
        reason = f"not a story: schema={schema!r}, type={kind!r} (want {SCHEMA_ID!r}, 'story')"
        raise NotAStoryError(source, [("schema", reason)])
