"""A :class:`~hcgraph.provenance.tracing.Trace` as a W3C PROV document (the ``prov`` package).

The PROV-DM reading of a trace (the same relations the graph states in PROV-O):

* story, paragraph/key fact, claim, manifest, source document, raw document: ``entity``;
* publisher: ``agent`` of type ``prov:Organization``; the writer agent and hcgraph:
  ``agent`` of type ``prov:SoftwareAgent``;
* the writer's run and hcgraph's ingest: ``activity``;
* story ``hadMember`` part; part ``wasDerivedFrom`` manifest (as in the graph) and
  ``wasDerivedFrom`` claim with ``prov:type = cito:citesAsEvidence``; manifest
  ``hadMember`` claim (the claim ``dcterms:isPartOf`` the manifest); manifest
  ``hadPrimarySource`` source document; source ``wasAttributedTo`` publisher;
* story ``wasAttributedTo`` writer, ``wasGeneratedBy`` run; run ``wasAssociatedWith`` writer;
  ingest ``used`` raw document, ``wasAssociatedWith`` hcgraph.

Every IRI is kept whole: a namespace is declared for each distinct IRI prefix up to the last
``/`` (``st1``, ``st2``…), so a reader gets back exactly the IRIs of the graph.

Formats (:data:`PROV_FORMATS`): ``provn`` and ``provjson`` (text), and ``dot`` and ``svg``, the
trace's picture (hcgraph's own drawing, :mod:`hcgraph.provenance.trace_picture`: top-down,
every node named; svg needs Graphviz's ``dot`` on the PATH).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from .._version import __version__
from ..iris import mint
from ..vocab import CITO, HC
from ._graph import claim_iri, manifest_iri
from .trace_picture import to_dot, to_svg
from .tracing import Trace

__all__ = ["PROV_FORMATS", "to_prov_document"]

_RAW = "https://w3id.org/hcgraph/id/raw/"
_INGEST = "https://w3id.org/hcgraph/id/ingest/"


class _Names:
    """Namespaces for IRIs: one per distinct prefix up to the last ``/``."""

    def __init__(self, doc: Any) -> None:
        self.doc = doc
        self.prefixes: dict[str, str] = {}
        doc.add_namespace("hc", str(HC._NS))
        doc.add_namespace("cito", str(CITO))

    def __call__(self, iri: str) -> Any:
        head, sep, tail = iri.rpartition("/")
        ns_uri = head + sep
        prefix = self.prefixes.get(ns_uri)
        if prefix is None:
            prefix = f"n{len(self.prefixes) + 1}"
            self.prefixes[ns_uri] = prefix
            self.doc.add_namespace(prefix, ns_uri)
        return self.doc.valid_qualified_name(f"{prefix}:{tail}")


def to_prov_document(tr: Trace) -> Any:
    """Build a ``prov.model.ProvDocument`` for ``tr`` (see the module docstring)."""
    from prov.constants import PROV_LABEL, PROV_TYPE
    from prov.model import ProvDocument

    doc = ProvDocument()
    q = _Names(doc)
    seen: set[str] = set()
    done: set[str] = set()

    def entity(iri: str, attrs: dict[Any, Any] | None = None) -> Any:
        if iri not in seen:
            seen.add(iri)
            doc.entity(q(iri), attrs or {})
        return q(iri)

    def agent(iri: str, kind: str, label: str) -> Any:
        if iri not in seen:
            seen.add(iri)
            doc.agent(q(iri), {PROV_TYPE: doc.valid_qualified_name(kind), PROV_LABEL: label})
        return q(iri)

    software = mint("software", "hcgraph", __version__).value
    for s in tr.stories:
        story = entity(s.url, {PROV_TYPE: doc.valid_qualified_name("hc:Story"),
                               PROV_LABEL: s.headline or s.url})  # fmt: skip
        if s.writer_agent:
            writer = agent(mint("agent", s.writer_agent).value, "prov:SoftwareAgent",
                           s.writer_agent)  # fmt: skip
            doc.wasAttributedTo(story, writer)
            if s.writer_run:
                run_iri = mint("run", s.writer_agent, s.writer_run).value
                if run_iri not in seen:
                    seen.add(run_iri)
                    doc.activity(q(run_iri), other_attributes={
                        PROV_TYPE: doc.valid_qualified_name("hc:WriterRun"),
                        PROV_LABEL: s.writer_run})  # fmt: skip
                    doc.wasAssociatedWith(q(run_iri), writer)
                doc.wasGeneratedBy(story, q(run_iri), _time(s.published_at))
        if s.ingest is not None and s.ingest.sha256:
            raw = entity(_RAW + s.ingest.sha256, {
                PROV_TYPE: doc.valid_qualified_name("hc:RawDocument"),
                "hc:sha256": s.ingest.sha256})  # fmt: skip
            ingest_iri = _INGEST + s.ingest.sha256
            if ingest_iri not in seen:
                seen.add(ingest_iri)
                attrs: dict[Any, Any] = {PROV_TYPE: doc.valid_qualified_name("hc:Ingest")}
                if s.ingest.source:
                    attrs["hc:sourceLocation"] = s.ingest.source
                doc.activity(q(ingest_iri), endTime=_time(s.ingest.retrieved_at),
                             other_attributes=attrs)  # fmt: skip
                doc.used(q(ingest_iri), raw)
                doc.wasAssociatedWith(
                    q(ingest_iri), agent(software, "prov:SoftwareAgent", f"hcgraph {__version__}")
                )
        for p in s.parts:
            kind = "hc:KeyFact" if p.kind == "key fact" else "hc:Paragraph"
            part = entity(p.iri, {PROV_TYPE: doc.valid_qualified_name(kind), PROV_LABEL: p.text})
            doc.hadMember(story, part)
            for c in p.citations:
                manifest = _manifest(doc, entity, agent, tr, c.manifest_id, done)
                doc.wasDerivedFrom(part, manifest)
                for claim_id in c.claim_ids:
                    claim = entity(claim_iri(claim_id),
                                   {PROV_TYPE: doc.valid_qualified_name("hc:Claim")})  # fmt: skip
                    doc.wasDerivedFrom(part, claim, other_attributes={
                        PROV_TYPE: doc.valid_qualified_name("cito:citesAsEvidence")})  # fmt: skip
                    doc.hadMember(manifest, claim)
    if tr.kind == "manifest":
        _manifest(doc, entity, agent, tr, tr.target, done)
    return doc


def _manifest(doc: Any, entity: Any, agent: Any, tr: Trace, mid: str, done: set[str]) -> Any:
    from prov.constants import PROV_LABEL, PROV_TYPE

    iri = manifest_iri(mid)
    info = tr.manifests.get(mid)
    attrs: dict[Any, Any] = {PROV_TYPE: doc.valid_qualified_name("hc:Manifest")}
    if info is not None and info.title:
        attrs[PROV_LABEL] = info.title
    node = entity(iri, attrs)
    if iri not in done and info is not None:
        done.add(iri)
        for d in sorted(info.documents):
            src_attrs: dict[Any, Any] = {PROV_TYPE: doc.valid_qualified_name("hc:SourceDocument")}
            if info.published_date:
                src_attrs["hc:published"] = info.published_date.isoformat()
            source = entity(d, src_attrs)
            doc.hadPrimarySource(node, source)
            for pub in sorted(info.publishers):
                doc.wasAttributedTo(source, agent(mint("publisher", pub).value,
                                                  "prov:Organization", pub))  # fmt: skip
    return node


def _time(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(value)
    except ValueError:
        return None


def provn(tr: Trace) -> str:
    """PROV-N text."""
    return str(to_prov_document(tr).get_provn()) + "\n"


def provjson(tr: Trace) -> str:
    """PROV-JSON text."""
    return str(to_prov_document(tr).serialize(format="json", indent=2)) + "\n"


def dot(tr: Trace) -> str:
    """Graphviz DOT text of the trace's picture (:mod:`hcgraph.provenance.trace_picture`)."""
    return to_dot(tr)


def svg(tr: Trace) -> str:
    """SVG of the trace's picture, drawn by Graphviz's ``dot``.

    Raises:
        ProvenanceError: Graphviz is missing or fails.
    """
    return to_svg(tr)


PROV_FORMATS: dict[str, Callable[[Trace], str]] = {
    "provn": provn,
    "provjson": provjson,
    "dot": dot,
    "svg": svg,
}
