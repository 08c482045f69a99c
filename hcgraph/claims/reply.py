"""The manifest API's reply, read into plain data: the one place that knows its shape.

The shape hcgraph reads (``shared/fixtures/manifest-reply.json``)::

    {"manifest_id": "1792…933",                       a string (ids are above 2**53)
     "source": {"name", "url", "title", "published_date"},    each a string or absent
     "signal": {"claims": [{"claim_id": "1792…600", "text": "…"}, …]},
     "brief": "…"}                                    a string or absent

Anything else in a reply is ignored (and kept in the raw archive); a reply not of this shape
raises :class:`~hcgraph.errors.ReplyShapeError` naming the JSON path. Nothing is guessed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any
from urllib.parse import quote

from ..errors import ManifestError, ReplyShapeError

__all__ = [
    "DEFAULT_API",
    "DEFAULT_KEY_ENV",
    "ManifestReply",
    "ReplySource",
    "parse_reply",
    "reply_url",
]

#: Where the stories say their manifests can be read (``run_these_manifests.request``).
DEFAULT_API = "https://api.synorb.com"
#: The environment variable the stories' own commands read the key from (``$SYNORB_KEY``).
DEFAULT_KEY_ENV = "SYNORB_KEY"
_PATH = "manifests/by-id/{manifest_id}"


@dataclass(frozen=True)
class ReplySource:
    """The source document as the reply states it (each field ``None`` when absent)."""

    name: str | None = None
    url: str | None = None
    title: str | None = None
    published_date: str | None = None


@dataclass(frozen=True)
class ManifestReply:
    """One manifest as the API gave it."""

    manifest_id: str  # a string of digits
    source: ReplySource = field(default_factory=ReplySource)
    claims: dict[str, str | None] = field(default_factory=dict)  # id → text, None: no text
    brief: str | None = None


def reply_url(api: str, manifest_id: str) -> str:
    """The URL of one manifest: ``api`` is a base URL (``…/manifests/by-id/ID`` is added)
    or a template holding ``{manifest_id}``.

    >>> reply_url("https://api.example/", "17")
    'https://api.example/manifests/by-id/17'
    >>> reply_url("http://127.0.0.1:8/m/{manifest_id}.json", "17")
    'http://127.0.0.1:8/m/17.json'
    """
    if not api.startswith(("http://", "https://")):
        raise ManifestError(f"--api {api!r}: not an http(s) URL")
    ident = quote(manifest_id, safe="")
    if "{manifest_id}" in api:
        return api.replace("{manifest_id}", ident)
    return f"{api.rstrip('/')}/{_PATH.format(manifest_id=ident)}"


def parse_reply(data: bytes, source: str, expected_id: str | None = None) -> ManifestReply:
    """Read one reply's bytes (``source``: its URL or file, for messages).

    Raises:
        ReplyShapeError: not JSON, or not the shape above; names the JSON path. Also when
            ``expected_id`` is given and the reply is about another manifest.

    >>> r = parse_reply(b'{"manifest_id": "7", "signal": {"claims": '
    ...                 b'[{"claim_id": "9", "text": "It works."}]}}', "x.json")
    >>> r.claims
    {'9': 'It works.'}
    >>> parse_reply(b'{"manifest_id": 7}', "x.json")
    Traceback (most recent call last):
    hcgraph.errors.ReplyShapeError: x.json: manifest_id: a number, not a string (ids are strings)
    """
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ReplyShapeError(source, "", f"not JSON ({exc})") from None
    except RecursionError:  # json.loads raises it, not a ValueError, for [[[[… deep enough
        raise ReplyShapeError(source, "", "JSON nested too deep to read") from None
    if not isinstance(doc, dict):
        raise ReplyShapeError(source, "", f"a JSON {_kind(doc)}, not an object")
    manifest_id = _ident(source, doc, "manifest_id", "manifest_id")
    if expected_id is not None and manifest_id != expected_id:
        raise ReplyShapeError(
            source, "manifest_id", f"{manifest_id!r}, but manifest {expected_id!r} was asked for"
        )
    claims = _claims(source, doc.get("signal"))
    raw_source = {} if doc.get("source") is None else doc["source"]
    if not isinstance(raw_source, dict):
        raise ReplyShapeError(source, "source", _expected("an object", raw_source))
    keys = [f.name for f in fields(ReplySource)]
    stated = ReplySource(*(_text(source, raw_source, key, f"source.{key}") for key in keys))
    return ManifestReply(manifest_id, stated, claims, _text(source, doc, "brief", "brief"))


def _claims(source: str, signal: object) -> dict[str, str | None]:
    """Claim id → text of the reply's ``signal.claims``."""
    if not isinstance(signal, dict):
        raise ReplyShapeError(source, "signal", _expected("an object", signal))
    raw_claims = signal.get("claims")
    if not isinstance(raw_claims, list):
        raise ReplyShapeError(source, "signal.claims", _expected("a list", raw_claims))
    claims: dict[str, str | None] = {}
    first: dict[str, int] = {}  # claim id → the index it was first given at
    for index, claim in enumerate(raw_claims):
        path = f"signal.claims[{index}]"
        if not isinstance(claim, dict):
            raise ReplyShapeError(source, path, _expected("an object", claim))
        claim_id = _ident(source, claim, "claim_id", f"{path}.claim_id")
        text = _text(source, claim, "text", f"{path}.text")
        if claim_id in claims and claims[claim_id] != text:  # which text? not guessed
            earlier = f"signal.claims[{first[claim_id]}]"
            raise ReplyShapeError(
                source, f"{path}.claim_id", f"the id of {earlier}, with another text"
            )
        first.setdefault(claim_id, index)
        claims[claim_id] = text
    return claims


def _ident(source: str, obj: dict[str, Any], key: str, path: str) -> str:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ReplyShapeError(source, path, _expected("a string id", value))
    if not isinstance(value, str):
        raise ReplyShapeError(source, path, "a number, not a string (ids are strings)")
    if not value.strip():
        raise ReplyShapeError(source, path, "an empty id")
    return value


def _text(source: str, obj: dict[str, Any], key: str, path: str) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise ReplyShapeError(source, path, _expected("a string", value))


def _expected(what: str, value: object) -> str:
    return f"expected {what}, found {'nothing' if value is None else _kind(value)}"


def _kind(value: object) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "boolean", int: "number"}
    return names.get(type(value), "number" if isinstance(value, float) else "null")
