"""Graph reads shared by trace, audit and history, written for both store layouts.

Story-owned facts (parts, citation nodes, ``hc:listsManifest``, declared fields, ingest
provenance) are read inside ``GRAPH ?story { … }``. Descriptions of manifests, source
documents and publishers are read from the union default graph, one property at a time with
``DISTINCT``: today every story graph repeats them (a bag union gives one row per copy), and
after the shared-graph layout they are stated once, possibly in different graphs. Joining two
such patterns in one query would multiply the copies (k² rows for a manifest cited k times),
so the joins happen here, in Python.

Ids are read back from the minted IRIs (:mod:`hcgraph.iris` is documented and deterministic)
instead of joining on ``dcterms:identifier``.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import pyoxigraph as ox

from ..iris import mint
from ..store import Store
from ..vocab import ID

__all__ = [
    "ManifestInfo",
    "claim_id",
    "claim_iri",
    "count",
    "describe_manifests",
    "literal_date",
    "manifest_id",
    "manifest_iri",
    "publisher_name",
    "rows",
]

_MANIFEST = f"{ID}manifest/"
_CLAIM = f"{ID}claim/"
_PUBLISHER = f"{ID}publisher/"
_SOURCE = f"{ID}source/"

Term = ox.NamedNode | ox.Literal


def rows(store: Store, sparql: str, **bindings: Term) -> Iterator[tuple[str | None, ...]]:
    """Solutions as tuples of lexical values (``None`` for unbound), variables in order.

    Bound variables must be projected (Oxigraph substitutes only projected variables); they
    are left out of the tuples.
    """
    result = store.query(sparql, bindings=bindings or None)
    assert isinstance(result, ox.QuerySolutions)
    keep = [i for i, v in enumerate(result.variables) if v.value not in bindings]
    for solution in result:
        yield tuple(None if (t := solution[i]) is None else t.value for i in keep)


def count(store: Store, sparql: str, **bindings: Term) -> int:
    """The single count a ``(COUNT(…) AS ?n)`` query returns, last column (0 if no row)."""
    return int(next(rows(store, sparql, **bindings), ("0",))[-1] or 0)


def manifest_id(iri: str) -> str:
    """The manifest id of a minted manifest IRI (the IRI itself if it is not one)."""
    return unquote(iri[len(_MANIFEST) :]) if iri.startswith(_MANIFEST) else iri


def claim_id(iri: str) -> str:
    """The claim id of a minted claim IRI."""
    return unquote(iri[len(_CLAIM) :]) if iri.startswith(_CLAIM) else iri


def publisher_name(iri: str) -> str:
    """The publisher name (``source_name``) of a minted publisher IRI."""
    return unquote(iri[len(_PUBLISHER) :]) if iri.startswith(_PUBLISHER) else iri


def literal_date(value: str | None) -> dt.date | None:
    """An ``xsd:date`` or the UTC date of an ``xsd:dateTime`` lexical value."""
    if not value:
        return None
    try:
        if "T" in value:
            stamp = dt.datetime.fromisoformat(value)
            if stamp.tzinfo is not None:
                stamp = stamp.astimezone(dt.UTC)
            return stamp.date()
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


@dataclass
class ManifestInfo:
    """What the graph says about one manifest (sets: copies may disagree)."""

    manifest_id: str
    iri: str
    titles: set[str] = field(default_factory=set)
    publishers: set[str] = field(default_factory=set)
    documents: set[str] = field(default_factory=set)
    source_urls: set[str] = field(default_factory=set)
    issued: set[dt.date] = field(default_factory=set)

    @property
    def title(self) -> str | None:
        """One title (the smallest, so the choice is stable)."""
        return min(self.titles) if self.titles else None

    @property
    def published_date(self) -> dt.date | None:
        """The source document's date (the earliest if copies disagree)."""
        return min(self.issued) if self.issued else None

    @property
    def source_url(self) -> str | None:
        """The source document's URL."""
        return min(self.source_urls) if self.source_urls else None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "manifest_id": self.manifest_id,
            "iri": self.iri,
            "title": self.title,
            "publishers": sorted(self.publishers),
            "source_url": self.source_url,
            "source_documents": sorted(self.documents),
            "published_date": self.published_date.isoformat() if self.published_date else None,
        }


_M_TITLE = "SELECT DISTINCT ?m ?v WHERE { ?m dcterms:title ?v }"
_M_PUB = "SELECT DISTINCT ?m ?v WHERE { ?m dcterms:publisher ?v }"
_M_DOC = "SELECT DISTINCT ?m ?v WHERE { ?m prov:hadPrimarySource ?v }"
_D_ISSUED = "SELECT DISTINCT ?m ?v WHERE { ?m dcterms:issued ?v }"
_D_URL = "SELECT DISTINCT ?m ?v WHERE { ?m hc:unusableUrl ?v }"


def describe_manifests(store: Store, iris: Iterable[str] | None = None) -> dict[str, ManifestInfo]:
    """Manifest IRI → :class:`ManifestInfo`, for ``iris`` or (``None``) every manifest.

    With ``iris`` each property is looked up per manifest (index lookups, for one story);
    without, each property is read once for the whole store (for the corpus audit).
    """
    wanted = None if iris is None else sorted(set(iris))
    infos: dict[str, ManifestInfo] = {}

    def info(iri: str) -> ManifestInfo:
        if iri not in infos:
            infos[iri] = ManifestInfo(manifest_id(iri), iri)
        return infos[iri]

    def pairs(sparql: str, subjects: list[str] | None) -> Iterator[tuple[str, str]]:
        if subjects is None:
            for s, v in rows(store, sparql):
                if s is not None and v is not None:
                    yield s, v
            return
        for s in subjects:
            for (v,) in rows(store, sparql, m=ox.NamedNode(s)):
                if v is not None:
                    yield s, v

    for m in wanted or []:
        info(m)
    docs: defaultdict[str, set[str]] = defaultdict(set)
    for m, v in pairs(_M_DOC, wanted):
        if m.startswith(_MANIFEST):
            info(m).documents.add(v)
            docs[v].add(m)
    for m, v in pairs(_M_TITLE, wanted):
        if m.startswith(_MANIFEST):
            info(m).titles.add(v)
    for m, v in pairs(_M_PUB, wanted):
        if m.startswith(_MANIFEST):
            info(m).publishers.add(publisher_name(v))
    doc_list = None if wanted is None else sorted(docs)
    for d, v in pairs(_D_ISSUED, doc_list):
        day = literal_date(v)
        for m in docs.get(d, ()):
            if day is not None:
                info(m).issued.add(day)
    # A source document is named by its own URL unless that was missing or unusable (then
    # a minted .../id/source/{manifest} IRI carries the text as hc:unusableUrl): read only those.
    minted = sorted(d for d in docs if d.startswith(_SOURCE))
    for d in docs:
        if not d.startswith(_SOURCE):
            for m in docs[d]:
                info(m).source_urls.add(d)
    for d, v in pairs(_D_URL, minted):
        for m in docs.get(d, ()):
            info(m).source_urls.add(v)
    return infos


def manifest_iri(manifest: str) -> str:
    """The IRI of a manifest id."""
    return mint("manifest", manifest).value


def claim_iri(claim: str) -> str:
    """The IRI of a claim id."""
    return mint("claim", claim).value
