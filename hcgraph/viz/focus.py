"""``--focus``: which story, manifest or publisher a user's text names.

Text is only ever bound as a SPARQL literal or a validated IRI, never pasted into a query.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyoxigraph as ox

from ..errors import VizError
from ..iris import named_node
from ..rdftext import nfc
from ..store import Store
from .data import HC

__all__ = ["Focus", "MapOptions", "resolve_focus"]

_Q_FIND_STORY = """
SELECT DISTINCT ?s ?v WHERE { GRAPH ?s { ?s a hc:Story .
  { ?s dcterms:identifier ?v } UNION { ?s hc:slug ?v } } } ORDER BY ?s
"""
_Q_IS_STORY = "ASK { GRAPH ?s { ?s a hc:Story } }"
_Q_FIND_MANIFEST = "SELECT DISTINCT ?m ?v WHERE { ?m a hc:Manifest ; dcterms:identifier ?v }"
_Q_IS_A = "ASK { ?x a ?t }"
_Q_FIND_PUBLISHER = "SELECT DISTINCT ?p ?v WHERE { ?p a hc:Publisher ; schema:name ?v }"


@dataclass(frozen=True)
class Focus:
    """A resolved ``--focus``: what kind of node it names and its IRI."""

    kind: str  # "Story", "Manifest" or "Publisher"
    iri: str


@dataclass(frozen=True)
class MapOptions:
    """A view builder's options beside its focus (see ``citation_graph``)."""

    top: int | None = None
    group_stories: str | None = None
    overview: bool | None = None
    include_withdrawn: bool = False


def _named(text: str) -> ox.NamedNode | None:
    return named_node(text) if text.startswith(("http://", "https://", "urn:")) else None


def resolve_focus(store: Store, focus: str) -> Focus:
    """Find the story (URL, id, slug), manifest (id, IRI) or publisher (name, IRI) ``focus``
    names, in that order.

    Raises:
        VizError: nothing matches, or an id/slug matches several stories.
    """
    text = focus.strip()
    found = _find_story(store, text) or _find_source(store, text)
    if found is None:
        raise VizError(
            f"--focus {text!r}: no story (URL, id or slug), manifest (id) or publisher (name) "
            "by that name in the store"
        )
    return found


def _find_story(store: Store, text: str) -> Focus | None:
    """The story whose URL (with or without the trailing slash), id or slug is ``text``."""
    for candidate in (text, text + "/"):
        node = _named(candidate)
        if node is not None and store.query(_Q_IS_STORY, bindings={"s": node}):
            return Focus("Story", node.value)
    bindings = {"v": ox.Literal(nfc(text))}  # literals are stored NFC
    found = [sol["s"].value for sol in store.query(_Q_FIND_STORY, bindings=bindings)]
    if len(found) > 1:
        raise VizError(f"--focus {text!r} matches {len(found)} stories; give the story URL")
    return Focus("Story", found[0]) if found else None


def _find_source(store: Store, text: str) -> Focus | None:
    """The manifest or publisher whose IRI is ``text``, else the manifest whose id, else the
    publisher whose name is ``text`` (first by IRI)."""
    node = _named(text)
    for kind in ("Manifest", "Publisher"):
        if node is not None and store.query(
            _Q_IS_A, bindings={"x": node, "t": ox.NamedNode(HC + kind)}
        ):
            return Focus(kind, node.value)
    lit = {"v": ox.Literal(nfc(text))}
    for kind, query, var in (
        ("Manifest", _Q_FIND_MANIFEST, "m"),
        ("Publisher", _Q_FIND_PUBLISHER, "p"),
    ):
        hits = sorted(sol[var].value for sol in store.query(query, bindings=lit))
        if hits:
            return Focus(kind, hits[0])
    return None
