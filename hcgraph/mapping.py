"""Map one validated :class:`~hcgraph.model.Story` to RDF quads in its own named graph.

PROV-O is the backbone (every story part is a ``prov:Entity``, publishers are
``prov:Organization``, the writer a ``prov:SoftwareAgent``, its run and hcgraph's ingest are
``prov:Activity``); CiTO records each cite object as a ``cito:Citation`` and each cited claim
with ``cito:citesAsEvidence``; schema.org carries article metadata; Dublin Core carries ids,
titles, dates and parts. IRIs follow :mod:`hcgraph.iris`. The output is a pure function of
the story and its :class:`IngestInfo`: same input, same quads.

Nothing is dropped: a manifest that is cited but not listed still becomes a manifest node,
linked from the story by ``hc:citesUnlistedManifest``; a claim cited under some manifest is
``dcterms:isPartOf`` that manifest, so a claim cited under two manifests shows up as such;
fields the model does not know are kept as ``hc:unmappedJson`` (``rdf:JSON``) literals.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox

from ._version import __version__
from .iris import as_iri, mint
from .model import Cite, Story
from .vocab import CITO, DCTERMS, HC, PROV, RDF, RDFS, SDO, XSD

__all__ = ["IngestInfo", "Revision", "map_story", "story_graph"]


def _n(term: Any) -> ox.NamedNode:
    return ox.NamedNode(str(term))


# Predicates and classes, built once: pyoxigraph validates every IRI it is given.
A = _n(RDF.type)
JSON_DT = _n(RDF.JSON)
XSD_DATE, XSD_DATETIME, XSD_INT = _n(XSD.date), _n(XSD.dateTime), _n(XSD.integer)
LABEL = _n(RDFS.label)
COMMENT = _n(RDFS.comment)
S = {name: _n(SDO[name]) for name in (
    "NewsArticle", "CreativeWork", "Organization", "headline", "description", "datePublished",
    "url", "text", "name", "position", "hasPart", "isPartOf", "image", "license", "creditText",
    "abstract", "version", "usageInfo", "correction", "softwareVersion",
)}  # fmt: skip
D = {name: _n(DCTERMS[name]) for name in (
    "identifier", "title", "isPartOf", "publisher", "issued", "date", "relation", "hasFormat",
    "source", "created",
)}  # fmt: skip
P = {name: _n(PROV[name]) for name in (
    "Entity", "Organization", "SoftwareAgent", "Activity", "wasDerivedFrom", "hadPrimarySource",
    "wasAttributedTo", "wasGeneratedBy", "generatedAtTime", "wasAssociatedWith", "used",
    "endedAtTime", "wasRevisionOf",
)}  # fmt: skip
C = {name: _n(CITO[name]) for name in (
    "Citation", "hasCitingEntity", "hasCitedEntity", "citesAsEvidence",
)}  # fmt: skip
H = {name: _n(HC[name]) for name in HC.__annotations__}


_INTS = [ox.Literal(str(i), datatype=XSD_INT) for i in range(256)]


def _int(value: int) -> ox.Literal:
    """An xsd:integer literal (positions and counts; small ones are pre-built)."""
    return _INTS[value] if 0 <= value < len(_INTS) else ox.Literal(str(value), datatype=XSD_INT)


@dataclass(frozen=True)
class Revision:
    """An earlier version of a story's raw document."""

    sha256: str
    retrieved_at: dt.datetime


@dataclass(frozen=True)
class IngestInfo:
    """Where and when the raw bytes behind a story graph came from.

    Attributes:
        sha256: SHA-256 of the raw bytes (lower-case hex).
        source: the file path or URL the bytes were read from.
        retrieved_at: when hcgraph read them (UTC).
        byte_size: number of raw bytes.
        revisions: earlier versions of the same story, newest first.
    """

    sha256: str
    source: str
    retrieved_at: dt.datetime
    byte_size: int
    revisions: tuple[Revision, ...] = field(default_factory=tuple)


def story_graph(story: Story) -> ox.NamedNode:
    """The named graph holding a story's triples: named by the story IRI."""
    return ox.NamedNode(story.url)


def _dt(value: dt.datetime) -> ox.Literal:
    text = value.isoformat()
    if text.endswith("+00:00"):
        text = text[:-6] + "Z"
    return ox.Literal(text, datatype=XSD_DATETIME)


def _canonical_json(value: Any) -> ox.Literal:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return ox.Literal(text, datatype=JSON_DT)


class _Emitter:
    """Collects quads for one graph; small helpers keep the mapping code declarative."""

    def __init__(self, graph: ox.NamedNode) -> None:
        self.graph = graph
        self.quads: list[ox.Quad] = []
        self._described: set[str] = set()

    def first(self, key: str) -> bool:
        """True the first time ``key`` is seen: describe shared nodes only once per graph."""
        if key in self._described:
            return False
        self._described.add(key)
        return True

    def add(self, s: ox.NamedNode, p: ox.NamedNode, o: ox.NamedNode | ox.Literal) -> None:
        self.quads.append(ox.Quad(s, p, o, self.graph))

    def text(self, s: ox.NamedNode, p: ox.NamedNode, value: str | None) -> None:
        if value is not None and value != "":
            self.quads.append(ox.Quad(s, p, ox.Literal(value), self.graph))

    def typed(self, s: ox.NamedNode, *classes: ox.NamedNode) -> None:
        for cls in classes:
            self.quads.append(ox.Quad(s, A, cls, self.graph))

    def extra(self, s: ox.NamedNode, extra: dict[str, Any] | None) -> None:
        if extra:
            self.add(s, H["unmappedJson"], _canonical_json(extra))


def map_story(story: Story, info: IngestInfo) -> list[ox.Quad]:
    """All quads of one story, in its own named graph (see module docstring)."""
    g = story_graph(story)
    out = _Emitter(g)
    st = ox.NamedNode(story.url)
    _map_article(out, st, story)
    _map_provenance(out, st, story, info)
    manifests = _map_manifests(out, st, story)
    _map_body(out, st, story, manifests)
    _map_extras(out, st, story)
    return out.quads


def _map_article(out: _Emitter, st: ox.NamedNode, story: Story) -> None:
    out.typed(st, H["Story"], S["NewsArticle"], P["Entity"])
    out.add(st, D["identifier"], ox.Literal(story.id))
    out.add(st, S["url"], st)
    out.text(st, S["headline"], story.headline)
    out.text(st, S["description"], story.dek)
    out.text(st, H["angle"], story.angle)
    out.text(st, H["slug"], story.slug)
    out.text(st, H["beat"], story.beat)
    out.text(st, H["disclosure"], story.disclosure)
    if story.published_at is not None:
        out.add(st, S["datePublished"], _dt(story.published_at))
        out.add(st, P["generatedAtTime"], _dt(story.published_at))
    if story.labels is not None:
        out.text(st, H["trust"], story.labels.trust)
        out.text(st, H["trustText"], story.labels.trust_text)
        out.extra(st, {"labels": story.labels.extra} if story.labels.extra else None)
    if story.source_count is not None:
        out.add(st, H["declaredSourceCount"], _int(story.source_count))
    for name in story.publishers:
        out.add(st, H["declaredPublisher"], mint("publisher", name))
    for mid in story.cited_manifest_ids:
        out.add(st, H["declaredCitedManifest"], mint("manifest", mid))
    links = story.links
    if story.newsroom or (links and links.newsroom):
        room = as_iri(links.newsroom if links else None) or mint("newsroom", story.newsroom or "")
        out.add(st, H["newsroom"], room)
        out.typed(room, H["Newsroom"], P["Organization"])
        out.text(room, D["identifier"], story.newsroom)
        title = story.newsroom_title or (story.labels.newsroom if story.labels else None)
        out.text(room, S["name"], title)
    if story.edition or (links and links.edition):
        ed = as_iri(links.edition if links else None) or mint("edition", story.edition or "")
        out.add(st, H["edition"], ed)
        out.typed(ed, H["Edition"])
        out.text(ed, D["identifier"], story.edition)
    if links is not None:
        for alt in (links.json_, links.markdown):
            iri = as_iri(alt)
            if iri is not None:
                out.add(st, D["hasFormat"], iri)
        out.extra(st, {"links": links.extra} if links.extra else None)
    for image in story.images:
        url = image.get("url") if isinstance(image, dict) else image
        iri = as_iri(url) if isinstance(url, str) else None
        if iri is not None:
            out.add(st, S["image"], iri)
    unmapped_images = [i for i in story.images if not isinstance(i, str)]
    out.extra(st, {"images": unmapped_images} if unmapped_images else None)


def _map_provenance(out: _Emitter, st: ox.NamedNode, story: Story, info: IngestInfo) -> None:
    writer = story.writer
    if writer is not None and writer.agent:
        agent = mint("agent", writer.agent)
        out.typed(agent, P["SoftwareAgent"])
        out.text(agent, S["name"], writer.agent)
        out.add(st, P["wasAttributedTo"], agent)
        if writer.run_id:
            run = mint("run", writer.agent, writer.run_id)
            out.typed(run, H["WriterRun"])
            out.add(run, D["identifier"], ox.Literal(writer.run_id))
            out.add(run, P["wasAssociatedWith"], agent)
            out.add(st, P["wasGeneratedBy"], run)
        out.extra(agent, writer.extra)
    raw = mint("raw", info.sha256)
    ingest = mint("ingest", info.sha256)
    tool = mint("software", "hcgraph", __version__)
    out.typed(raw, H["RawDocument"])
    out.add(raw, H["sha256"], ox.Literal(info.sha256))
    out.add(raw, H["byteSize"], _int(info.byte_size))
    out.add(st, H["rawDocument"], raw)
    out.typed(ingest, H["Ingest"])
    out.add(ingest, P["used"], raw)
    out.add(ingest, P["endedAtTime"], _dt(info.retrieved_at))
    out.add(ingest, P["wasAssociatedWith"], tool)
    out.add(ingest, H["sourceLocation"], ox.Literal(info.source))
    out.typed(tool, P["SoftwareAgent"])
    out.add(tool, S["softwareVersion"], ox.Literal(__version__))
    newer = raw
    for rev in info.revisions:
        old = mint("raw", rev.sha256)
        out.add(newer, P["wasRevisionOf"], old)
        out.typed(old, H["RawDocument"])
        out.add(old, H["sha256"], ox.Literal(rev.sha256))
        out.add(old, D["created"], _dt(rev.retrieved_at))
        newer = old


def _map_manifests(out: _Emitter, st: ox.NamedNode, story: Story) -> dict[str, ox.NamedNode]:
    """Listed manifests with their source documents and publishers; returns id -> IRI."""
    nodes: dict[str, ox.NamedNode] = {}
    for m in story.manifests:
        node = mint("manifest", m.manifest_id)
        nodes[m.manifest_id] = node
        out.add(st, H["listsManifest"], node)
        out.typed(node, H["Manifest"], P["Entity"])
        out.add(node, D["identifier"], ox.Literal(m.manifest_id))
        out.text(node, D["title"], m.title)
        doc = as_iri(m.source_url) or mint("source", m.manifest_id)
        out.typed(doc, H["SourceDocument"], S["CreativeWork"])
        out.add(node, P["hadPrimarySource"], doc)
        out.text(doc, S["url"], m.source_url)
        if m.published_date is not None:
            out.add(doc, D["issued"], ox.Literal(m.published_date.isoformat(), datatype=XSD_DATE))
        if m.source_name:
            pub = mint("publisher", m.source_name)
            if out.first("publisher " + m.source_name):
                out.typed(pub, H["Publisher"], P["Organization"])
                out.add(pub, S["name"], ox.Literal(m.source_name))
            out.add(node, D["publisher"], pub)
            out.add(doc, P["wasAttributedTo"], pub)
        out.extra(node, m.extra)
    if story.run_these_manifests is not None:
        for mid in story.run_these_manifests.manifest_ids:
            out.add(st, H["verifiableManifest"], mint("manifest", mid))
    return nodes


def _map_body(
    out: _Emitter, st: ox.NamedNode, story: Story, listed: dict[str, ox.NamedNode]
) -> None:
    unlisted: dict[str, ox.NamedNode] = {}
    for i, section in enumerate(story.sections, 1):
        sec = ox.NamedNode(f"{story.url}#s{i}")
        out.typed(sec, H["Section"], P["Entity"])
        out.text(sec, S["name"], section.heading)
        _part(out, sec, st, i)
        out.extra(sec, section.extra)
        for j, para in enumerate(section.paragraphs, 1):
            node = ox.NamedNode(f"{story.url}#s{i}-p{j}")
            out.typed(node, H["Paragraph"], P["Entity"])
            out.add(node, S["text"], ox.Literal(para.markdown))
            _part(out, node, sec, j)
            _cites(out, node, para.cites, listed, unlisted, st)
            out.extra(node, para.extra)
    for i, fact in enumerate(story.key_facts, 1):
        node = ox.NamedNode(f"{story.url}#kf{i}")
        out.typed(node, H["KeyFact"], P["Entity"])
        out.add(node, S["text"], ox.Literal(fact.text))
        out.add(node, S["position"], _int(i))
        out.add(node, D["isPartOf"], st)
        out.add(st, H["keyFact"], node)
        if fact.self_reported is not None:
            out.add(node, H["selfReported"], ox.Literal(fact.self_reported))
        _cites(out, node, fact.cites, listed, unlisted, st)
        out.extra(node, fact.extra)


def _part(out: _Emitter, child: ox.NamedNode, parent: ox.NamedNode, position: int) -> None:
    out.add(child, S["position"], _int(position))
    out.add(child, D["isPartOf"], parent)
    out.add(parent, S["hasPart"], child)


def _cites(
    out: _Emitter,
    citing: ox.NamedNode,
    cites: Iterable[Cite],
    listed: dict[str, ox.NamedNode],
    unlisted: dict[str, ox.NamedNode],
    st: ox.NamedNode,
) -> None:
    for k, cite in enumerate(cites, 1):
        manifest = listed.get(cite.manifest_id) or unlisted.get(cite.manifest_id)
        if manifest is None:
            manifest = mint("manifest", cite.manifest_id)
            unlisted[cite.manifest_id] = manifest
            out.typed(manifest, H["Manifest"], P["Entity"])
            out.add(manifest, D["identifier"], ox.Literal(cite.manifest_id))
            out.add(st, H["citesUnlistedManifest"], manifest)
        act = ox.NamedNode(f"{citing.value}-c{k}")
        out.typed(act, H["Citation"])
        out.add(act, C["hasCitingEntity"], citing)
        out.add(act, C["hasCitedEntity"], manifest)
        out.add(act, S["position"], _int(k))
        if out.first(f"{citing.value} from {manifest.value}"):
            out.add(citing, P["wasDerivedFrom"], manifest)
        for claim_id in cite.claim_ids:
            claim = mint("claim", claim_id)
            if out.first("claim " + claim_id):
                out.typed(claim, H["Claim"], P["Entity"])
                out.add(claim, D["identifier"], ox.Literal(claim_id))
            if out.first(f"claim {claim_id} in {manifest.value}"):
                out.add(claim, D["isPartOf"], manifest)
            out.add(act, H["citesClaim"], claim)
            if out.first(f"{citing.value} cites {claim_id}"):
                out.add(citing, C["citesAsEvidence"], claim)
        out.extra(act, cite.extra)


def _map_extras(out: _Emitter, st: ox.NamedNode, story: Story) -> None:
    base = story.url
    for i, question in enumerate(story.unresolved, 1):
        node = ox.NamedNode(f"{base}#unresolved{i}")
        out.typed(node, H["UnresolvedQuestion"], P["Entity"])
        out.add(node, S["text"], ox.Literal(question))
        out.add(node, S["position"], _int(i))
        out.add(st, H["unresolved"], node)
    for i, corr in enumerate(story.corrections, 1):
        node = ox.NamedNode(f"{base}#correction{i}")
        out.typed(node, H["Correction"], P["Entity"])
        out.text(node, S["text"], corr.text)
        out.text(node, D["date"], corr.date)
        out.add(st, S["correction"], node)
        out.extra(node, corr.extra)
    card = story.decision_card
    if card is not None:
        node = ox.NamedNode(f"{base}#decision-card")
        out.typed(node, H["DecisionCard"], P["Entity"])
        out.add(st, H["decisionCard"], node)
        for prop, values in (
            ("usefulFor", card.useful_for),
            ("notFor", card.not_for),
            ("compareAgainst", card.compare_against),
        ):
            for value in values:
                out.add(node, H[prop], ox.Literal(value))
        out.extra(node, card.extra)
    _map_reuse(out, st, story)
    _map_sponsor(out, st, story)
    for rel in story.related:
        target = as_iri(rel.url)
        if target is None:
            out.extra(st, {"related_unusable_url": rel.url})
            continue
        out.add(st, D["relation"], target)
        out.text(target, LABEL, rel.headline)
        out.text(target, H["slug"], rel.slug)
    if story.run_these_manifests is not None and story.run_these_manifests.extra:
        out.extra(st, {"run_these_manifests": story.run_these_manifests.extra})
    out.extra(st, story.extra)


def _map_reuse(out: _Emitter, st: ox.NamedNode, story: Story) -> None:
    reuse = story.reuse
    if reuse is None:
        return
    node = ox.NamedNode(f"{story.url}#reuse")
    out.typed(node, H["ReuseTerms"])
    out.add(st, H["reuseTerms"], node)
    out.text(node, S["version"], reuse.version)
    out.text(node, S["abstract"], reuse.summary)
    out.text(node, S["creditText"], reuse.attribution)
    for rule in (reuse.link_rule, reuse.keep_ids_rule, reuse.no_endorsement):
        out.text(node, H["usageRule"], rule)
    license_iri = as_iri(reuse.license_url)
    if license_iri is not None:
        out.add(st, S["license"], license_iri)
        out.add(node, S["license"], license_iri)
    machine = as_iri(reuse.machine_url)
    if machine is not None:
        out.add(node, S["usageInfo"], machine)
    canonical = as_iri(reuse.canonical_url)
    if canonical is not None:
        out.add(node, S["url"], canonical)
    out.extra(node, reuse.extra)


def _map_sponsor(out: _Emitter, st: ox.NamedNode, story: Story) -> None:
    sponsor = story.sponsor
    if sponsor is None:
        return
    node = ox.NamedNode(f"{story.url}#sponsor")
    out.typed(node, H["SponsorNote"])
    out.add(st, H["sponsorNote"], node)
    out.text(node, S["name"], sponsor.label)
    out.text(node, D["title"], sponsor.title)
    out.text(node, S["text"], sponsor.text)
    out.text(node, COMMENT, sponsor.note)
    cta = sponsor.cta or {}
    link = as_iri(cta.get("url")) if isinstance(cta.get("url"), str) else None
    if link is not None:
        out.add(node, S["url"], link)
    out.extra(node, {**sponsor.extra, **({"cta": cta} if cta else {})} or None)
