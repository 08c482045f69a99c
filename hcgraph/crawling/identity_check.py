"""A fetched story may claim only the page it was fetched from.

A story's IRI is its own ``url``, so without a check any page could take over another
story's graph (docs/security.md#identity). A body is accepted under its declared ``url``
only when that URL, canonicalised, is the page URL of the (logical) JSON URL it was fetched
from, or of an in-scope redirect target; else it is an ``identity-mismatch`` failure. Bodies
that are not stories with a string ``url`` pass through: processing reports them. A
*variant* (the same page in another spelling: ``//stories/x/``, another query order) is no
conflict: :func:`variant_of` finds it, and the crawler fetches the story at its own URL.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

from pydantic_core import from_json

from ..errors import StoryError
from ..model import SCHEMA_ID, check_shape
from ..urls import DEFAULT_JSON_SUFFIX, canonicalize, page_url

__all__ = ["declared_url", "identity_mismatch", "variant_of"]


def declared_url(body: bytes) -> str | None:
    """The ``url`` a story body declares; None for anything that is not a story with one."""
    try:
        doc = from_json(body)  # jiter: faster than json.loads; refuses hostile nesting itself
    except ValueError:
        # What it refuses but processing may accept (UTF-16/32, lone surrogates: the lenient
        # path of hcgraph.model.parse_story) is read as processing reads it: none slips past.
        try:
            check_shape(body, "")  # never hand a hostile nesting depth to json.loads
            doc = json.loads(body)
        except (StoryError, ValueError):
            return None
    if not isinstance(doc, dict) or (doc.get("schema"), doc.get("type")) != (SCHEMA_ID, "story"):
        return None  # not a story at all: processing says so
    value = doc.get("url")
    return value if isinstance(value, str) else None


def identity_mismatch(
    body: bytes, fetched: Iterable[str], json_suffix: str = DEFAULT_JSON_SUFFIX
) -> str | None:
    """``None`` if the story in ``body`` may be stored, else why not; ``fetched``: the
    logical URL requested, then every in-scope redirect target."""
    declared = declared_url(body)
    if declared is None:
        return None
    try:
        claim = canonicalize(declared)
    except ValueError:
        return None  # not an http(s) URL: the schema check reports it with its path
    fetched = list(fetched)
    for url in fetched:
        with contextlib.suppress(ValueError):  # not a page URL: nothing it could match
            if page_url(url, json_suffix) == claim:
                return None
    return (
        f"identity mismatch: the story declares url {declared} but was fetched from "
        f"{fetched[-1]} (page {page_url(fetched[-1], json_suffix)})"
    )


_SLASHES = re.compile(r"/{2,}")


def _loose(url: str) -> tuple[str, str]:
    """A canonical page URL without its query and with runs of slashes as one; and its
    canonical query (parameters sorted, tracking ones dropped)."""
    parts = urlsplit(canonicalize(url))
    path = _SLASHES.sub("/", parts.path)
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")), parts.query


def variant_of(
    body: bytes, fetched: Iterable[str], json_suffix: str = DEFAULT_JSON_SUFFIX
) -> str | None:
    """The story's own canonical page URL when ``body`` declares a *variant* of a URL it was
    fetched from, else None: the same origin, the same path once runs of slashes are one,
    and the same query or none declared. Only for a body :func:`identity_mismatch` refused.
    """
    declared = declared_url(body)
    if declared is None:
        return None
    try:
        claim = canonicalize(declared)
        own, own_query = _loose(claim)
    except ValueError:
        return None
    for url in fetched:
        try:
            page, query = _loose(page_url(url, json_suffix))
        except ValueError:
            continue
        if page == own and (query == own_query or not own_query):
            return claim
    return None
