"""Deterministic IRIs for every node hcgraph writes.

The same input always gives the same IRIs, so the same triples. The rules (also in
the vocabulary table in docs/graph.md):

================================  ======================================================
node                              IRI
================================  ======================================================
story                             its canonical ``url`` (fragment dropped)
story's named graph               the story IRI
section *i* (1-based)             ``{story}#s{i}``
paragraph *j* of section *i*      ``{story}#s{i}-p{j}``
citation *k* of a paragraph       ``{story}#s{i}-p{j}-c{k}``
key fact *i*                      ``{story}#kf{i}``; its citation *k*: ``{story}#kf{i}-c{k}``
unresolved question *i*           ``{story}#unresolved{i}``
correction *i*                    ``{story}#correction{i}``
decision card / reuse / sponsor   ``{story}#decision-card`` / ``#reuse`` / ``#sponsor``
manifest                          ``https://w3id.org/hcgraph/id/manifest/{manifest_id}``
claim                             ``https://w3id.org/hcgraph/id/claim/{claim_id}``
publisher                         ``https://w3id.org/hcgraph/id/publisher/{source_name}``
source document                   its ``source_url``; if missing or not an IRI,
                                  ``https://w3id.org/hcgraph/id/source/{manifest_id}``
newsroom / edition                ``links.newsroom`` / ``links.edition`` when given, else
                                  ``…/id/newsroom/{newsroom}`` / ``…/id/edition/{edition}``
writer agent / run                ``…/id/agent/{agent}`` / ``…/id/run/{agent}/{run_id}``
raw document / ingest             ``…/id/raw/{sha256}`` / ``…/id/ingest/{sha256}``
hcgraph itself                    ``…/id/software/hcgraph/{version}``
================================  ======================================================

Both functions are memoised: the same manifests, claims and publishers recur across stories,
and percent-encoding plus IRI validation were a third of the mapping's time.

Path segments are percent-encoded (RFC 3986 unreserved characters stay), so hostile text in
an id or a publisher name can never break out of its IRI.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import quote, unquote, urlsplit

import pyoxigraph as ox

from .vocab import ID

__all__ = [
    "OWN_BASE",
    "as_iri",
    "checked_iri",
    "in_own_namespace",
    "mint",
    "minted",
    "named_node",
    "segment",
]

_BASE = str(ID)

#: Where every IRI hcgraph mints lives: its ids (``…/id/``), its shared graphs
#: (``…/graph/``) and its vocabulary (``…/ns``). No story may name anything there.
OWN_BASE = "https://w3id.org/hcgraph"
_OWN_HOST = "w3id.org"
_OWN_PATH = "/hcgraph"


def segment(value: str) -> str:
    """Percent-encode one path segment (everything but RFC 3986 unreserved characters)."""
    return quote(value, safe="")


#: Entries in each memo of minted IRIs and mapped shared descriptions (here, in
#: :mod:`hcgraph.mapping` and :mod:`hcgraph.urls`). At 10k stories they hold ~50 MB of
#: Python heap; 4,096 entries were tried and not kept: in two A/B runs of `hcgraph ingest` at
#: 10k (with the report change that was kept) CPU went up ~8% and the peak RSS, which the
#: segment loads set, did not drop (bench/RESULTS.md, "Ingest's peak memory").
CACHE_SIZE = 1 << 16


@lru_cache(maxsize=CACHE_SIZE)
def minted(kind: str, *parts: str) -> str:
    """An hcgraph-minted IRI as text: ``https://w3id.org/hcgraph/id/{kind}/{part}/…``."""
    return _BASE + kind + "/" + "/".join(segment(p) for p in parts)


@lru_cache(maxsize=CACHE_SIZE)
def mint(kind: str, *parts: str) -> ox.NamedNode:
    """:func:`minted` as a pyoxigraph ``NamedNode``."""
    return ox.NamedNode(minted(kind, *parts))


def checked_iri(value: str | None) -> str | None:
    """:func:`as_iri` as text: the IRI if RDF syntaxes accept it, else ``None``.

    >>> checked_iri("https://example.org/ok")
    'https://example.org/ok'
    >>> checked_iri("https://example.org/a b") is None, checked_iri("javascript:alert(1)") is None
    (True, True)
    """
    node = as_iri(value)
    return None if node is None else node.value


def named_node(text: str) -> ox.NamedNode | None:
    """``text`` as a NamedNode, or ``None`` when pyoxigraph refuses it as an IRI.

    For text a user typed to name something in the store (a story URL given to ``audit``,
    ``history``, ``trace``): a slug (no scheme), a space, or a lone surrogate (a non-UTF-8
    argument) is no IRI, so it names nothing there, and the caller says "no such story"
    instead of raising ValueError or UnicodeEncodeError (a ValueError too).

    >>> named_node("https://example.org/s/").value, named_node("a-slug"), named_node("\\udcff")
    ('https://example.org/s/', None, None)
    """
    try:
        return ox.NamedNode(text)
    except ValueError:
        return None


@lru_cache(maxsize=1 << 14)
def as_iri(value: str | None) -> ox.NamedNode | None:
    """``value`` as a NamedNode if it is an absolute http(s) IRI that RDF syntaxes accept.

    Anything else (relative paths, ``javascript:``, ``file:``, text with spaces or angle
    brackets) gives ``None``; the caller then mints an IRI or keeps the text as a literal.
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
    return named_node(text)


def in_own_namespace(url: str) -> bool:
    """True when ``url``, or any IRI hcgraph would mint from it (``{url}#s1-p1``, its
    canonical form), lies in hcgraph's own namespace :data:`OWN_BASE`.

    A story there would write its triples into hcgraph's shared graphs, turn a manifest
    into a story or mint paragraphs in the vocabulary: such a URL is refused as a schema
    error (:mod:`hcgraph.model`). Scheme and host compare case-insensitively (``http`` as
    well as ``https``, a default port or a trailing dot changing nothing), and the path after
    percent-decoding, as the crawler canonicalises URLs.

    >>> in_own_namespace("https://w3id.org/hcgraph/graph/sources")
    True
    >>> in_own_namespace("HTTPS://W3ID.org:443/hcgraph/ns"), in_own_namespace("https://w3id.org/hcgraph")
    (True, True)
    >>> in_own_namespace("https://w3id.org/hcgraphs/"), in_own_namespace("https://example.org/hcgraph/")
    (False, False)
    """
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
