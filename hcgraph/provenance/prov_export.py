"""A :class:`~hcgraph.provenance.tracing.Trace` as a W3C PROV document (the ``prov`` package).

Entities, agents and activities with the PROV-O relations the graph states; every IRI is kept
whole (one namespace per distinct prefix up to the last ``/``). :data:`PROV_FORMATS` adds
``dot`` and ``svg``, the trace's picture (:mod:`hcgraph.provenance.trace_picture`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from .._version import __version__
from ..iris import minted
from ..vocab import CITO, HC
from ._graph import literal_time
from .trace_picture import to_dot, to_svg
from .tracing import IngestRecord, Part, StoryTrace, Trace

__all__ = ["PROV_FORMATS", "to_prov_document"]


def to_prov_document(tr: Trace) -> Any:
    """Build a ``prov.model.ProvDocument`` for ``tr`` (see the module docstring)."""
    from prov.model import ProvDocument

    build = _Builder(ProvDocument(), tr)
    for s in tr.stories:
        build.story(s)
    if tr.kind == "manifest":
        build.manifest(tr.target)
    return build.doc


class _Builder:
    """Adds a trace's records to a PROV document, each entity, agent and activity once."""

    def __init__(self, doc: Any, tr: Trace) -> None:
        from prov.constants import PROV_LABEL, PROV_TYPE

        self.doc, self.tr = doc, tr
        self.type, self.label = PROV_TYPE, PROV_LABEL
        self.seen: set[str] = set()  # IRIs already recorded
        self.done: set[str] = set()  # manifests whose sources are recorded
        self.prefixes: dict[str, str] = {}  # namespace → its prefix
        doc.add_namespace("hc", str(HC))
        doc.add_namespace("cito", str(CITO))

    def q(self, iri: str) -> Any:
        """The qualified name of ``iri``: one namespace per distinct prefix up to the last ``/``."""
        head, sep, tail = iri.rpartition("/")
        prefix = self.prefixes.get(head + sep)
        if prefix is None:
            prefix = self.prefixes[head + sep] = f"n{len(self.prefixes) + 1}"
            self.doc.add_namespace(prefix, head + sep)
        return self.doc.valid_qualified_name(f"{prefix}:{tail}")

    def _first(self, iri: str) -> bool:
        new = iri not in self.seen
        self.seen.add(iri)
        return new

    def attrs(self, kind: str, label: str | None = None, **hc: str | None) -> dict[Any, Any]:
        """PROV attributes: type ``kind``, the label if given, each ``hc:`` one that is set."""
        out: dict[Any, Any] = {self.type: self.doc.valid_qualified_name(kind)}
        if label is not None:
            out[self.label] = label
        return out | {f"hc:{k}": v for k, v in hc.items() if v}

    def entity(self, iri: str, attrs: dict[Any, Any] | None = None) -> Any:
        if self._first(iri):
            self.doc.entity(self.q(iri), attrs or {})
        return self.q(iri)

    def agent(self, iri: str, kind: str, label: str) -> Any:
        if self._first(iri):
            self.doc.agent(self.q(iri), self.attrs(kind, label))
        return self.q(iri)

    def story(self, s: StoryTrace) -> None:
        """The story entity, its writer and run, its ingest, and its parts' citations."""
        story = self.entity(s.url, self.attrs("hc:Story", s.headline or s.url))
        if s.writer_agent:
            self._writer(story, s)
        if s.ingest is not None and s.ingest.sha256:
            self._ingest(s.ingest, s.ingest.sha256)
        for p in s.parts:
            self._part(story, p)

    def _writer(self, story: Any, s: StoryTrace) -> None:
        assert s.writer_agent is not None
        doc, q = self.doc, self.q
        writer = self.agent(minted("agent", s.writer_agent), "prov:SoftwareAgent", s.writer_agent)
        doc.wasAttributedTo(story, writer)
        if s.writer_run:
            run_iri = minted("run", s.writer_agent, s.writer_run)
            if self._first(run_iri):
                doc.activity(q(run_iri), other_attributes=self.attrs("hc:WriterRun", s.writer_run))
                doc.wasAssociatedWith(q(run_iri), writer)
            doc.wasGeneratedBy(story, q(run_iri), literal_time(s.published_at))

    def _ingest(self, ing: IngestRecord, sha256: str) -> None:
        doc, q = self.doc, self.q
        raw = self.entity(minted("raw", sha256), self.attrs("hc:RawDocument", sha256=sha256))
        ingest_iri = minted("ingest", sha256)
        if not self._first(ingest_iri):
            return
        attrs = self.attrs("hc:Ingest", sourceLocation=ing.source)
        doc.activity(q(ingest_iri), endTime=literal_time(ing.retrieved_at), other_attributes=attrs)
        doc.used(q(ingest_iri), raw)
        software = minted("software", "hcgraph", __version__)
        doc.wasAssociatedWith(
            q(ingest_iri), self.agent(software, "prov:SoftwareAgent", f"hcgraph {__version__}")
        )

    def _part(self, story: Any, p: Part) -> None:
        doc = self.doc
        kind = "hc:KeyFact" if p.kind == "key fact" else "hc:Paragraph"
        part = self.entity(p.iri, self.attrs(kind, p.text))
        doc.hadMember(story, part)
        for c in p.citations:
            manifest = self.manifest(c.manifest_id)
            doc.wasDerivedFrom(part, manifest)
            for claim_id in c.claim_ids:
                claim = self.entity(minted("claim", claim_id), self.attrs("hc:Claim"))
                evidence = self.attrs("cito:citesAsEvidence")
                doc.wasDerivedFrom(part, claim, other_attributes=evidence)
                doc.hadMember(manifest, claim)

    def manifest(self, mid: str) -> Any:
        """The manifest entity; the first time, its source documents and their publishers."""
        iri = minted("manifest", mid)
        info = self.tr.manifests.get(mid)
        node = self.entity(
            iri, self.attrs("hc:Manifest", info.title if info and info.title else None)
        )
        if iri in self.done or info is None:
            return node
        self.done.add(iri)
        for d in sorted(info.documents):
            day = info.published_date.isoformat() if info.published_date else None
            source = self.entity(d, self.attrs("hc:SourceDocument", published=day))
            self.doc.hadPrimarySource(node, source)
            for pub in sorted(info.publishers):
                self.doc.wasAttributedTo(
                    source, self.agent(minted("publisher", pub), "prov:Organization", pub)
                )
        return node


def _prov_text(tr: Trace, format: str, **options: Any) -> str:
    """The trace's PROV document serialized by ``prov`` (PROV-N or PROV-JSON)."""
    return str(to_prov_document(tr).serialize(format=format, **options)) + "\n"


#: Format name (``provn``, ``provjson``, ``dot``, ``svg``) → renderer of a trace.
PROV_FORMATS: dict[str, Callable[[Trace], str]] = {
    "provn": partial(_prov_text, format="provn"),
    "provjson": partial(_prov_text, format="json", indent=2),
    "dot": to_dot,  # the trace's picture (trace_picture)
    "svg": to_svg,  # drawn by Graphviz's dot (ProvenanceError when it is missing or fails)
}
