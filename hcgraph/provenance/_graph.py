"""Graph reads shared by trace, audit and history.

Story-owned facts are read inside ``GRAPH ?story { … }``; manifests, source documents and
publishers are stated once, in the shared graphs (:mod:`hcgraph.mapping`), so they are read
from the union default graph with no ``DISTINCT``. Ids are read back from the minted IRIs
(:mod:`hcgraph.iris`), not joined on ``dcterms:identifier``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pyoxigraph as ox

from ..iris import named_node, unminted
from ..store import Store
from ..vocab import ID

_MANIFEST = f"{ID}manifest/"
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


# The manifest id, claim id or publisher name (``source_name``) a minted IRI was made from
# (the IRI itself if it is not one).
manifest_id = partial(unminted, "manifest")
claim_id = partial(unminted, "claim")
publisher_name = partial(unminted, "publisher")


def literal_time(value: str | None) -> dt.datetime | None:
    """An ``xsd:dateTime`` lexical value as a datetime (``None``: missing or not one)."""
    try:
        return dt.datetime.fromisoformat(value) if value else None
    except ValueError:
        return None


def literal_date(value: str | None) -> dt.date | None:
    """An ``xsd:date`` or the UTC date of an ``xsd:dateTime`` lexical value."""
    if value and "T" in value:
        stamp = literal_time(value)
        if stamp is not None and stamp.tzinfo is not None:
            stamp = stamp.astimezone(dt.UTC)
        return None if stamp is None else stamp.date()
    try:
        return dt.date.fromisoformat(value) if value else None
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

    def add(self, kind: str, value: str, doc: str | None) -> None:
        """One fact read by ``describe_manifests``: ``kind`` says which, ``doc`` is the
        source document a document's date or text URL belongs to."""
        if kind == "title":
            self.titles.add(value)
        elif kind == "publisher":
            self.publishers.add(publisher_name(value))
        elif kind == "document":
            self.documents.add(value)
            # A source document is named by its own URL unless that was missing or unusable
            # (then a minted .../id/source/{manifest} IRI carries the text as hc:unusableUrl).
            if not value.startswith(_SOURCE):
                self.source_urls.add(value)
        elif kind == "issued" and (day := literal_date(value)) is not None:
            self.issued.add(day)
        elif kind == "url" and doc is not None and doc.startswith(_SOURCE):
            self.source_urls.add(value)

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


# Every fact about a manifest, one row each, tagged with what it is (a UNION, not a join of
# OPTIONALs: a manifest with two titles and two publishers gives four rows, not eight).
_DESCRIBE = """
SELECT ?m ?k ?v ?d WHERE { %s
  { ?m dcterms:title ?v BIND ("title" AS ?k) }
  UNION { ?m dcterms:publisher ?v BIND ("publisher" AS ?k) }
  UNION { ?m prov:hadPrimarySource ?v BIND ("document" AS ?k) }
  UNION { ?m prov:hadPrimarySource ?d . ?d dcterms:issued ?v BIND ("issued" AS ?k) }
  UNION { ?m prov:hadPrimarySource ?d . ?d hc:unusableUrl ?v BIND ("url" AS ?k) }
}
"""
BATCH = 500  # VALUES rows per query


def values(var: str, iris: Iterable[str]) -> str:
    """``VALUES ?var { <iri> … }``, each IRI checked and written by pyoxigraph (text that is
    no IRI names nothing in the store and is left out), so no text is spliced raw."""
    terms = (str(node) for i in iris if (node := named_node(i)) is not None)
    return f"VALUES ?{var} {{ {' '.join(terms)} }}"


def batches(items: Iterable[str], size: int = BATCH) -> Iterator[list[str]]:
    """``items`` sorted, in lists of at most ``size`` (for ``VALUES`` blocks)."""
    ordered = sorted(set(items))
    for i in range(0, len(ordered), size):
        yield ordered[i : i + size]


def describe_manifests(store: Store, iris: Iterable[str] | None = None) -> dict[str, ManifestInfo]:
    """Manifest IRI → :class:`ManifestInfo`, for ``iris`` (bound by ``VALUES``, one query
    per :data:`BATCH`) or (``None``) every manifest, in one query."""
    if iris is None:
        return _described(rows(store, _DESCRIBE % ""), {})
    wanted = sorted(set(iris))
    infos = {m: ManifestInfo(manifest_id(m), m) for m in wanted}
    for batch in batches(wanted):
        _described(rows(store, _DESCRIBE % values("m", batch)), infos)
    return infos


def _described(
    found: Iterable[tuple[str | None, ...]], infos: dict[str, ManifestInfo]
) -> dict[str, ManifestInfo]:
    """``infos`` with the facts of :data:`_DESCRIBE` rows added (manifests only)."""
    for m, kind, v, doc in found:
        if m and kind and v and m.startswith(_MANIFEST):
            if m not in infos:
                infos[m] = ManifestInfo(manifest_id(m), m)
            infos[m].add(kind, v, doc)
    return infos
