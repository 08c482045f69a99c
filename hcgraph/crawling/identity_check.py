"""A fetched story may claim only the page it was fetched from.

A story's IRI is its own ``url``, so without a check any page could take over another
story's graph, or mint story IRIs on hosts outside the crawl. The rule: a fetched body is
accepted under its declared ``url`` only when that URL, canonicalised, is the page URL of
the JSON URL it was fetched from (logical, i.e. after ``--mirror`` mapping, and by the
site's ``index.json`` convention), or of a URL the fetch was redirected to (redirects are
followed only within the crawl scope). Anything else is an ``identity-mismatch`` failure
naming both URLs; the body stays in the archive and nothing is stored.

Bodies that are not stories with a string ``url`` pass through: processing reports
them as invalid or not a story, with their JSON path.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from pydantic_core import from_json

from ..errors import StoryError
from ..model import SCHEMA_ID, check_shape
from ..urls import DEFAULT_JSON_SUFFIX, canonicalize, page_url

__all__ = ["declared_url", "identity_mismatch"]


def declared_url(body: bytes) -> str | None:
    """The ``url`` a story body declares; None for anything that is not a story with one."""
    try:
        # pydantic-core's parser (jiter): ~1.6x json.loads, on the crawler's event loop; it
        # refuses hostile nesting itself (a recursion limit, ValueError).
        doc = from_json(body)
    except ValueError:
        # What it refuses but processing may still accept (UTF-16 or UTF-32 bytes, lone
        # surrogate escapes: the lenient path of hcgraph.model.parse_story) is checked with
        # the parser processing uses, so no body can slip past this check.
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
    """``None`` if the story in ``body`` may be stored, else why not.

    Args:
        body: the fetched bytes.
        fetched: the logical URL requested, then every in-scope redirect target.
        json_suffix: the site's page URL → JSON URL convention.
    """
    declared = declared_url(body)
    if declared is None:
        return None
    fetched = list(fetched)
    pages = set()
    for url in fetched:
        try:
            pages.add(page_url(url, json_suffix))
        except ValueError:
            continue
    try:
        claim = canonicalize(declared)
    except ValueError:
        return None  # not an http(s) URL: the schema check reports it with its path
    if claim in pages:
        return None
    return (
        f"identity mismatch: the story declares url {declared} but was fetched from "
        f"{fetched[-1]} (page {page_url(fetched[-1], json_suffix)})"
    )
