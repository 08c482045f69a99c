"""Deterministic IRIs for every node hcgraph writes.

The same input gives the same IRIs. Story parts hang off the story's canonical ``url``
(``{story}#s{i}-p{j}``, ``#kf{i}``, …); shared things are minted under
``https://w3id.org/hcgraph/id/{kind}/…`` (docs/graph.md lists every rule). Path segments
are percent-encoded (RFC 3986 unreserved characters stay), so hostile text in an id or a
name can never break out of its IRI. Minting is memoised: manifests, claims and publishers
recur across stories.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import quote, unquote, urlsplit

import pyoxigraph as ox

from .vocab import ID

__all__ = [
    "OWN_BASE",
    "checked_iri",
    "in_own_namespace",
    "minted",
    "named_node",
    "segment",
    "unminted",
]

_BASE = str(ID)

#: Where every IRI hcgraph mints lives: its ids (``…/id/``), its shared graphs
#: (``…/graph/``) and its vocabulary (``…/ns``). No story may name anything there.
OWN_BASE = "https://w3id.org/hcgraph"
_OWN_HOST = "w3id.org"
_URL_DROPPED = dict.fromkeys(map(ord, "\t\r\n"))  # what urlsplit removes before splitting
_OWN_PATH = "/hcgraph"


def segment(value: str) -> str:
    """Percent-encode one path segment (everything but RFC 3986 unreserved characters)."""
    return quote(value, safe="")


#: Entries in each memo of minted IRIs and mapped shared descriptions (here, in
#: :mod:`hcgraph.mapping` and :mod:`hcgraph.urls`): ~50 MB of heap at 10k stories.
CACHE_SIZE = 1 << 16


@lru_cache(maxsize=CACHE_SIZE)
def minted(kind: str, *parts: str) -> str:
    """An hcgraph-minted IRI as text: ``https://w3id.org/hcgraph/id/{kind}/{part}/…``."""
    return _BASE + kind + "/" + "/".join(segment(p) for p in parts)


def unminted(kind: str, iri: str) -> str:
    """The id :func:`minted` made ``iri`` from (``…/id/{kind}/{id}``, decoded); ``iri``
    itself when it is not one."""
    prefix = _BASE + kind + "/"
    return unquote(iri[len(prefix) :]) if iri.startswith(prefix) else iri


@lru_cache(maxsize=1 << 14)
def checked_iri(value: str | None) -> str | None:
    """``value`` if it is an absolute http(s) IRI that RDF syntaxes accept, else ``None``
    (the caller then mints an IRI or keeps the text as a literal).

    >>> checked_iri("https://example.org/ok")
    'https://example.org/ok'
    >>> checked_iri("https://example.org/a b") is None, checked_iri("javascript:alert(1)") is None
    (True, True)
    """
    if not value:
        return None
    text = value.strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    node = named_node(text)
    return None if node is None else node.value


def named_node(text: str) -> ox.NamedNode | None:
    """``text`` as a NamedNode, or ``None`` when pyoxigraph refuses it as an IRI (a slug, a
    space, a lone surrogate): for text a user typed, which then names nothing in the store.

    >>> named_node("https://example.org/s/").value, named_node("a-slug"), named_node("\\udcff")
    ('https://example.org/s/', None, None)
    """
    try:
        return ox.NamedNode(text)
    except ValueError:
        return None


def in_own_namespace(url: str) -> bool:
    """True when ``url``, or any IRI hcgraph would mint from it (``{url}#s1-p1``, its
    canonical form), lies in hcgraph's own namespace :data:`OWN_BASE`.

    Such a story would write into hcgraph's shared graphs or vocabulary, so the model
    refuses it. Scheme and host compare case-insensitively (default port and trailing dot
    ignored), the path after percent-decoding, as the crawler canonicalises URLs.

    >>> in_own_namespace("https://w3id.org/hcgraph/graph/sources")
    True
    >>> in_own_namespace("HTTPS://W3ID.org:443/hcgraph/ns"), in_own_namespace("https://w3id.org/hcgraph")
    (True, True)
    >>> in_own_namespace("https://w3id.org/hcgraphs/"), in_own_namespace("https://example.org/hcgraph/")
    (False, False)
    """
    # The host must spell it (urlsplit drops tabs and line breaks): most URLs end here, unsplit.
    if _OWN_HOST not in url.lower().translate(_URL_DROPPED):
        return False
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").rstrip(".")
        port = parts.port
    except ValueError:
        return False  # no URL at all: refused (or kept as text) for that reason instead
    if parts.scheme.lower() not in ("http", "https") or host != _OWN_HOST:
        return False
    if port is not None and port != (443 if parts.scheme.lower() == "https" else 80):
        return False
    path = unquote(parts.path)
    return path == _OWN_PATH or path.startswith(_OWN_PATH + "/")
