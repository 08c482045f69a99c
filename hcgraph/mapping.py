"""Map one validated :class:`~hcgraph.model.Story` to RDF: its own graph plus shared descriptions.

PROV-O is the backbone, CiTO records each cite as a ``cito:Citation``. What belongs to one
story goes into its named graph; what many stories share is a :class:`Description` of one
subject, routed to its kind's shared graph (docs/graph.md). Unknown fields are kept as
``hc:unmappedJson``. The output is N-Triples text, a pure function of the story and its
:class:`IngestInfo`.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ._version import __version__
from .iris import CACHE_SIZE, checked_iri, minted
from .model import Cite, Reuse, Sponsor, Story
from .rdftext import XSD_DATE, XSD_DATETIME, boolean, integer, iri, literal, typed
from .urls import canonicalize
from .vocab import CITO, DCTERMS, HC, PROV, RDF, RDFS, SDO, SHARED_GRAPHS

__all__ = [
    "Description",
    "IngestInfo",
    "MappedStory",
    "Revision",
    "body_of",
    "map_story",
    "withdrawal_nquads",
]


class _Terms(dict[str, str]):
    """Namespace terms as N-Triples text, built once: ``HCT("Story")`` → ``<…ns#Story>``."""

    def __init__(self, namespace: Any) -> None:
        super().__init__()
        self.base = str(namespace)

    def __missing__(self, name: str) -> str:
        term = self[name] = iri(self.base + name)
        return term

    __call__ = dict.__getitem__


SCHEMA, DC, PROVO, CITE, HCT = _Terms(SDO), _Terms(DCTERMS), _Terms(PROV), _Terms(CITO), _Terms(HC)
A = iri(str(RDF.type))
LABEL = iri(str(RDFS.label))
COMMENT = iri(str(RDFS.comment))
JSON_DT = str(RDF.JSON)
_SOURCES = SHARED_GRAPHS["sources"]
_PUBLISHERS = SHARED_GRAPHS["publishers"]
_AGENTS = SHARED_GRAPHS["agents"]
_LINKS = SHARED_GRAPHS["links"]
_HAS_PART = SCHEMA("hasPart")


@dataclass(frozen=True)
class Revision:
    """An earlier version of a story's raw document: when it was withdrawn and what it said
    (:mod:`hcgraph.version_content` JSON), if known."""

    sha256: str
    retrieved_at: dt.datetime
    withdrawn_at: dt.datetime | None = None
    content: str | None = None


@dataclass(frozen=True)
class IngestInfo:
    """Where and when the raw bytes (``sha256``, ``byte_size``) behind a story graph came
    from, and the earlier versions of the story, newest first."""

    sha256: str
    source: str
    retrieved_at: dt.datetime
    byte_size: int
    revisions: tuple[Revision, ...] = field(default_factory=tuple)


def body_of(triples: Iterable[str]) -> str:
    """A description's triples as sorted N-Triples lines: the content the ledger hashes."""
    return "".join(sorted(t + " .\n" for t in triples))


@dataclass
class Description:
    """What one story says about one shared subject: its triples, in its kind's graph."""

    graph: str
    subject: str  # N-Triples term, ``<iri>``
    triples: dict[str, None] = field(default_factory=dict)  # "s p o" lines, insertion-ordered

    def add(self, p: str, o: str) -> None:
        """Add ``subject p o`` (a repeat collapses)."""
        self.triples[f"{self.subject} {p} {o}"] = None

    def text(self, p: str, value: str | None) -> None:
        if value is not None and value != "":
            self.add(p, literal(value))

    def typed(self, *classes: str) -> None:
        for cls in classes:
            self.add(A, cls)

    def extra(self, extra: dict[str, Any] | None) -> None:
        if extra:
            self.add(HCT("unmappedJson"), _canonical_json(extra))


@dataclass
class MappedStory:
    """One story's mapping: the triples of its own graph and its shared descriptions."""

    url: str
    triples: list[str] = field(default_factory=list)  # "s p o" (no dot), story graph
    shared: dict[str, Description] = field(default_factory=dict)  # by subject term

    def nquads(self) -> str:
        """The story graph as N-Quads text."""
        g = " <" + self.url + "> .\n"
        return g.join(self.triples) + g if self.triples else ""

    def nquads_utf8(self) -> bytes:
        """The story graph as UTF-8 N-Quads, its ASCII lines encoded apart from the others
        (one non-ASCII character would make the whole text a wide string, slower to encode)."""
        plain = [t for t in self.triples if t.isascii()]
        if len(plain) == len(self.triples):
            return self.nquads().encode()
        wide = [t for t in self.triples if not t.isascii()]
        g = " <" + self.url + "> .\n"
        head = (g.join(plain) + g).encode() if plain else b""
        return head + (g.join(wide) + g).encode()

    def ntriples(self) -> str:
        """The story graph as N-Triples text."""
        return " .\n".join(self.triples) + " .\n" if self.triples else ""

    def __len__(self) -> int:
        return len(self.triples)


def _dt(value: dt.datetime) -> str:
    text = value.isoformat()
    if text.endswith("+00:00"):
        text = text[:-6] + "Z"
    return typed(text, XSD_DATETIME)


def _canonical_json(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return typed(text, JSON_DT)


@lru_cache(maxsize=CACHE_SIZE)
def _minted(kind: str, *parts: str) -> str:
    """:func:`hcgraph.iris.minted` as an N-Triples term, cached."""
    return iri(minted(kind, *parts))


class _Emitter:
    """Collects one story's triples."""

    def __init__(self, url: str) -> None:
        self.out = MappedStory(url)
        self.triples = self.out.triples
        self._seen: set[str] = set()

    def first(self, key: str) -> bool:
        """True the first time ``key`` is seen (state a story-graph link only once)."""
        if key in self._seen:
            return False
        self._seen.add(key)
        return True

    def add(self, s: str, p: str, o: str) -> None:
        self.triples.append(f"{s} {p} {o}")

    def text(self, s: str, p: str, value: str | None) -> None:
        if value is not None and value != "":
            self.triples.append(f"{s} {p} {literal(value)}")

    def typed(self, s: str, *classes: str) -> None:
        for cls in classes:
            self.triples.append(f"{s} {A} {cls}")

    def extra(self, s: str, extra: dict[str, Any] | None) -> None:
        if extra:
            self.add(s, HCT("unmappedJson"), _canonical_json(extra))

    def passage(self, node_iri: str, cls: str, markdown: str) -> str:
        """A passage of the story (paragraph, key fact): a typed entity with its text."""
        node = iri(node_iri)
        self.typed(node, cls, PROVO("Entity"))
        self.add(node, SCHEMA("text"), literal(markdown))
        return node

    def link(self, s: str, p: str, url: object) -> str | None:
        """``s p <url>`` when ``url`` is a usable IRI (else nothing); the IRI or None."""
        checked = checked_iri(url) if isinstance(url, str) else None
        if checked is not None:
            self.add(s, p, iri(checked))
        return checked

    def part(self, story: str, node: str, cls: str, link: str) -> str:
        """A typed node of the story (its reuse terms, its sponsor note) linked from it."""
        self.typed(node, cls)
        self.add(story, link, node)
        return node

    def about(self, graph: str, subject: str) -> Description:
        """The shared description of ``subject`` (created on first use)."""
        desc = self.out.shared.get(subject)
        if desc is None:
            desc = self.out.shared[subject] = Description(graph, subject)
        return desc


def map_story(story: Story, info: IngestInfo) -> MappedStory:
    """The triples of one story.

    Raises:
        ValueError: the story's ``url`` is not an IRI RDF syntaxes accept.
    """
    url = checked_iri(story.url)
    if url is None or url != story.url:
        raise ValueError(f"story url is not a usable IRI: {story.url!r}")
    out = _Emitter(url)
    st = iri(url)
    _map_article(out, st, story)
    _map_provenance(out, st, story, info)
    listed = _map_manifests(out, st, story)
    _map_body(out, st, story, listed)
    _map_extras(out, st, story)
    mapped = out.out
    # A repeated triple is held once: recovery checks a landed write by len(mapped).
    if len(set(mapped.triples)) != len(mapped.triples):
        mapped.triples = list(dict.fromkeys(mapped.triples))
    return mapped


def _map_article(out: _Emitter, st: str, story: Story) -> None:
    out.typed(st, HCT("Story"), SCHEMA("NewsArticle"), PROVO("Entity"))
    out.add(st, DC("identifier"), literal(story.id))
    out.add(st, SCHEMA("url"), st)
    out.text(st, SCHEMA("headline"), story.headline)
    out.text(st, SCHEMA("description"), story.dek)
    out.text(st, HCT("angle"), story.angle)
    out.text(st, HCT("slug"), story.slug)
    out.text(st, HCT("beat"), story.beat)
    out.text(st, HCT("disclosure"), story.disclosure)
    if story.published_at is not None:
        out.add(st, SCHEMA("datePublished"), _dt(story.published_at))
        out.add(st, PROVO("generatedAtTime"), _dt(story.published_at))
    if story.labels is not None:
        out.text(st, HCT("trust"), story.labels.trust)
        out.text(st, HCT("trustText"), story.labels.trust_text)
        out.extra(st, {"labels": story.labels.extra} if story.labels.extra else None)
    if story.source_count is not None:
        out.add(st, HCT("declaredSourceCount"), integer(story.source_count))
    for name in story.publishers:
        out.add(st, HCT("declaredPublisher"), _minted("publisher", name))
    for mid in story.cited_manifest_ids:
        out.add(st, HCT("declaredCitedManifest"), _minted("manifest", mid))
    _map_newsroom_edition(out, st, story)
    _map_links(out, st, story)
    _map_images(out, st, story)


def _map_newsroom_edition(out: _Emitter, st: str, story: Story) -> None:
    """The story's newsroom and edition: each its ``links`` IRI, else one minted from its name."""
    links = story.links
    room = _map_shared_link(out, st, "newsroom", story.newsroom, links.newsroom if links else None)
    if room is not None:
        room.typed(HCT("Newsroom"), PROVO("Organization"), PROVO("Agent"), SCHEMA("Organization"))
        room.text(DC("identifier"), story.newsroom)
        labels_room = story.labels.newsroom if story.labels else None
        room.text(SCHEMA("name"), story.newsroom_title or labels_room)
    edition = _map_shared_link(out, st, "edition", story.edition, links.edition if links else None)
    if edition is not None:
        edition.typed(HCT("Edition"))
        edition.text(DC("identifier"), story.edition)


def _map_shared_link(
    out: _Emitter, st: str, kind: str, name: str | None, link: str | None
) -> Description | None:
    """``st hc:KIND node`` and the node's shared description, if the story names one."""
    if not (name or link):
        return None
    checked = checked_iri(link)
    node = iri(checked) if checked else _minted(kind, name or "")
    out.add(st, HCT(kind), node)
    return out.about(_AGENTS, node)


def _map_links(out: _Emitter, st: str, story: Story) -> None:
    """The story's other formats (JSON, Markdown); unknown link keys kept as extras."""
    links = story.links
    if links is not None:
        for alt in (links.json_, links.markdown):
            out.link(st, DC("hasFormat"), alt)
        out.extra(st, {"links": links.extra} if links.extra else None)


def _map_images(out: _Emitter, st: str, story: Story) -> None:
    """The story's image IRIs; images given as objects are kept as extras too."""
    for image in story.images:
        out.link(st, SCHEMA("image"), image.get("url") if isinstance(image, dict) else image)
    unmapped_images = [i for i in story.images if not isinstance(i, str)]
    out.extra(st, {"images": unmapped_images} if unmapped_images else None)


def _map_provenance(out: _Emitter, st: str, story: Story, info: IngestInfo) -> None:
    writer = story.writer
    if writer is not None and writer.agent:
        agent = _minted("agent", writer.agent)
        desc = out.about(_AGENTS, agent)
        desc.typed(PROVO("SoftwareAgent"), PROVO("Agent"), SCHEMA("SoftwareApplication"))
        desc.text(SCHEMA("name"), writer.agent)
        desc.extra(writer.extra)
        out.add(st, PROVO("wasAttributedTo"), agent)
        if writer.run_id:
            run = _minted("run", writer.agent, writer.run_id)
            run_desc = out.about(_AGENTS, run)
            run_desc.typed(HCT("WriterRun"), PROVO("Activity"))
            run_desc.add(DC("identifier"), literal(writer.run_id))
            run_desc.add(PROVO("wasAssociatedWith"), agent)
            out.add(st, PROVO("wasGeneratedBy"), run)
    raw = _minted("raw", info.sha256)
    ingest = _minted("ingest", info.sha256)
    tool = _minted("software", "hcgraph", __version__)
    out.typed(raw, HCT("RawDocument"), PROVO("Entity"))
    out.add(raw, HCT("sha256"), literal(info.sha256))
    out.add(raw, HCT("byteSize"), integer(info.byte_size))
    out.add(st, HCT("rawDocument"), raw)
    out.typed(ingest, HCT("Ingest"), PROVO("Activity"))
    out.add(ingest, PROVO("used"), raw)
    out.add(ingest, PROVO("endedAtTime"), _dt(info.retrieved_at))
    out.add(ingest, PROVO("wasAssociatedWith"), tool)
    out.add(ingest, HCT("sourceLocation"), literal(info.source))
    tool_desc = out.about(_AGENTS, tool)
    tool_desc.typed(PROVO("SoftwareAgent"), PROVO("Agent"), SCHEMA("SoftwareApplication"))
    tool_desc.add(SCHEMA("softwareVersion"), literal(__version__))
    newer, later = raw, {info.sha256}  # SHAs of newer versions: a revert repeats one
    for i, rev in enumerate(info.revisions):
        old = (
            _revision_node(info.revisions, i) if rev.sha256 in later else _minted("raw", rev.sha256)
        )
        later.add(rev.sha256)
        out.add(newer, PROVO("wasRevisionOf"), old)
        out.typed(old, HCT("RawDocument"), PROVO("Entity"))
        out.add(old, HCT("sha256"), literal(rev.sha256))
        out.add(old, DC("created"), _dt(rev.retrieved_at))
        if rev.withdrawn_at is not None:
            out.add(old, PROVO("invalidatedAtTime"), _dt(rev.withdrawn_at))
        if rev.content is not None:
            out.add(old, HCT("versionContent"), typed(rev.content, JSON_DT))
        newer = old


def _revision_node(revisions: tuple[Revision, ...], i: int) -> str:
    """The node of ``revisions[i]`` when a newer version has its SHA (a revert), in place of
    ``raw/<sha>``: ``raw/<sha>/<time>`` (``-k`` for the k-th of that SHA and time, oldest
    first), stable as the chain grows; stores without a revert keep their triples."""
    rev = revisions[i]
    stamp = rev.retrieved_at.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    same = (
        r.sha256 == rev.sha256 and r.retrieved_at == rev.retrieved_at for r in revisions[i + 1 :]
    )
    k = 1 + sum(same)
    return _minted("raw", rev.sha256, stamp if k == 1 else f"{stamp}-{k}")


def withdrawal_nquads(story_url: str, when: dt.datetime) -> str:
    """The withdrawal marker of a stored story, in its own graph (so a story that comes back
    gets a new graph without it): ``<story> prov:invalidatedAtTime when``."""
    st = iri(story_url)
    return f"{st} {PROVO('invalidatedAtTime')} {_dt(when)} {st} .\n"


def _map_manifests(out: _Emitter, st: str, story: Story) -> dict[str, tuple[str, str | None]]:
    """Listed manifests with their source documents and publishers; returns manifest id →
    (manifest term, publisher term or None), as the story lists them."""
    listed: dict[str, tuple[str, str | None]] = {}
    for m in story.manifests:
        node = _minted("manifest", m.manifest_id)
        out.add(st, HCT("listsManifest"), node)
        desc = out.about(_SOURCES, node)
        desc.typed(HCT("Manifest"), PROVO("Entity"))
        desc.add(DC("identifier"), literal(m.manifest_id))
        desc.text(DC("title"), m.title)
        doc_iri = checked_iri(m.source_url)
        doc = iri(doc_iri) if doc_iri else _minted("source", m.manifest_id)
        desc.add(PROVO("hadPrimarySource"), doc)
        doc_desc = out.about(_SOURCES, doc)
        doc_desc.typed(HCT("SourceDocument"), SCHEMA("CreativeWork"))
        if doc_iri:
            doc_desc.add(SCHEMA("url"), doc)  # schema:url's range is URL: an IRI, as on stories
        else:  # not an IRI: kept as written, under a property that takes text
            doc_desc.text(HCT("unusableUrl"), m.source_url)
        if m.published_date is not None:
            doc_desc.add(DC("issued"), typed(m.published_date.isoformat(), XSD_DATE))
        pub: str | None = None
        if m.source_name:
            pub = _minted("publisher", m.source_name)
            pub_desc = out.about(_PUBLISHERS, pub)
            pub_desc.typed(
                HCT("Publisher"), PROVO("Organization"), PROVO("Agent"), SCHEMA("Organization")
            )
            pub_desc.add(SCHEMA("name"), literal(m.source_name))
            desc.add(DC("publisher"), pub)
            doc_desc.add(PROVO("wasAttributedTo"), pub)
            if out.first("listsPublisher " + pub):
                out.add(st, HCT("listsPublisher"), pub)
        desc.extra(m.extra)
        listed.setdefault(m.manifest_id, (node, pub))
    if story.run_these_manifests is not None:
        for mid in story.run_these_manifests.manifest_ids:
            out.add(st, HCT("verifiableManifest"), _minted("manifest", mid))
    return listed


def _map_body(
    out: _Emitter, st: str, story: Story, listed: dict[str, tuple[str, str | None]]
) -> None:
    base = story.url
    for i, section in enumerate(story.sections, 1):
        sec = iri(f"{base}#s{i}")
        out.typed(sec, HCT("Section"), PROVO("Entity"))
        out.text(sec, SCHEMA("name"), section.heading)
        _part(out, sec, st, i)
        out.extra(sec, section.extra)
        for j, para in enumerate(section.paragraphs, 1):
            node_iri = f"{base}#s{i}-p{j}"
            node = out.passage(node_iri, HCT("Paragraph"), para.markdown)
            _part(out, node, sec, j)
            _cites(out, node_iri, para.cites, listed, st)
            out.extra(node, para.extra)
    for i, fact in enumerate(story.key_facts, 1):
        node_iri = f"{base}#kf{i}"
        node = out.passage(node_iri, HCT("KeyFact"), fact.text)
        _part(out, node, st, i, HCT("keyFact"))
        if fact.self_reported is not None:
            out.add(node, HCT("selfReported"), boolean(fact.self_reported))
        _cites(out, node_iri, fact.cites, listed, st)
        out.extra(node, fact.extra)


def _part(out: _Emitter, child: str, parent: str, position: int, link: str = _HAS_PART) -> None:
    out.add(child, SCHEMA("position"), integer(position))
    out.add(child, DC("isPartOf"), parent)
    out.add(parent, link, child)


def _cites(
    out: _Emitter,
    citing_iri: str,
    cites: Iterable[Cite],
    listed: dict[str, tuple[str, str | None]],
    st: str,
) -> None:
    """Each cite of a passage: its citation node, the claims it names and their uses."""
    citing = iri(citing_iri)
    add = out.triples.append
    for k, cite in enumerate(cites, 1):
        known = listed.get(cite.manifest_id)
        manifest = known[0] if known else _minted("manifest", cite.manifest_id)
        if known is None and out.first("unlisted " + manifest):
            desc = out.about(_SOURCES, manifest)
            desc.typed(HCT("Manifest"), PROVO("Entity"))
            desc.add(DC("identifier"), literal(cite.manifest_id))
            out.add(st, HCT("citesUnlistedManifest"), manifest)
        if out.first("cites " + manifest):
            out.add(st, _CITES_MANIFEST, manifest)
        act = f"<{citing_iri}-c{k}>"
        add(f"{act} {A} {_CITATION}")
        add(f"{act} {A} {_CITO_CITATION}")
        add(f"{act} {_HAS_CITING} {citing}")
        add(f"{act} {_HAS_CITED} {manifest}")
        add(f"{act} {_CHARACTERIZATION} {_EVIDENCE}")
        add(f"{act} {_POSITION} {integer(k)}")
        if out.first(f"{citing} from {manifest}"):
            add(f"{citing} {_DERIVED_FROM} {manifest}")
        for claim_id in cite.claim_ids:
            claim, triples = _claim(claim_id, manifest)
            out.about(_SOURCES, claim).triples.update(triples)
            add(f"{act} {_CITES_CLAIM} {claim}")
            if out.first(f"{citing} cites {claim}"):
                add(f"{citing} {_EVIDENCE} {claim}")
            use, use_triples = _claim_use(claim_id, cite.manifest_id)
            if out.first(use):
                out.about(_SOURCES, use).triples.update(use_triples)
                add(f"{st} {_CITES_CLAIM_UNDER} {use}")
        out.extra(act, cite.extra)


_CITES_MANIFEST, _CITATION, _CITES_CLAIM = HCT("citesManifest"), HCT("Citation"), HCT("citesClaim")
_CITES_CLAIM_UNDER = HCT("citesClaimUnder")
_HAS_CITING, _HAS_CITED = CITE("hasCitingEntity"), CITE("hasCitedEntity")
_EVIDENCE, _DERIVED_FROM = CITE("citesAsEvidence"), PROVO("wasDerivedFrom")
_POSITION = SCHEMA("position")
_CITO_CITATION, _CHARACTERIZATION = CITE("Citation"), CITE("hasCitationCharacterization")


@lru_cache(maxsize=CACHE_SIZE)
def _claim(claim_id: str, manifest: str) -> tuple[str, dict[str, None]]:
    """A claim's term and its description as cited under ``manifest`` (claims recur)."""
    claim = _minted("claim", claim_id)
    triples = (
        f"{claim} {A} {HCT('Claim')}",
        f"{claim} {A} {PROVO('Entity')}",
        f"{claim} {DC('identifier')} {literal(claim_id)}",
        f"{claim} {DC('isPartOf')} {manifest}",
    )
    return claim, dict.fromkeys(triples)


@lru_cache(maxsize=CACHE_SIZE)
def _claim_use(claim_id: str, manifest_id: str) -> tuple[str, dict[str, None]]:
    """A claim as cited under one manifest, and its description."""
    use = _minted("claim-use", manifest_id, claim_id)
    triples = (
        f"{use} {HCT('claim')} {_minted('claim', claim_id)}",
        f"{use} {HCT('manifest')} {_minted('manifest', manifest_id)}",
    )
    return use, dict.fromkeys(triples)


def _map_extras(out: _Emitter, st: str, story: Story) -> None:
    base = story.url
    for i, question in enumerate(story.unresolved, 1):
        node = iri(f"{base}#unresolved{i}")
        out.typed(node, HCT("UnresolvedQuestion"), PROVO("Entity"))
        out.add(node, SCHEMA("text"), literal(question))
        out.add(node, SCHEMA("position"), integer(i))
        out.add(st, HCT("unresolved"), node)
    for i, corr in enumerate(story.corrections, 1):
        node = iri(f"{base}#correction{i}")
        out.typed(node, HCT("Correction"), PROVO("Entity"))
        out.text(node, SCHEMA("text"), corr.text)
        out.text(node, DC("date"), corr.date)
        out.add(st, SCHEMA("correction"), node)
        out.extra(node, corr.extra)
    _map_decision_card(out, st, story)
    if story.reuse is not None:
        _map_reuse(out, st, story.url, story.reuse)
    if story.sponsor is not None:
        _map_sponsor(out, st, story.url, story.sponsor)
    _map_related(out, st, story)
    if story.run_these_manifests is not None and story.run_these_manifests.extra:
        out.extra(st, {"run_these_manifests": story.run_these_manifests.extra})
    out.extra(st, story.extra)


def _map_decision_card(out: _Emitter, st: str, story: Story) -> None:
    """The story's decision card (what it is useful for, not for, compared against)."""
    card = story.decision_card
    if card is not None:
        node = iri(f"{story.url}#decision-card")
        out.typed(node, HCT("DecisionCard"), PROVO("Entity"))
        out.add(st, HCT("decisionCard"), node)
        for prop, values in (
            ("usefulFor", card.useful_for),
            ("notFor", card.not_for),
            ("compareAgainst", card.compare_against),
        ):
            for value in values:
                out.add(node, HCT(prop), literal(value))
        out.extra(node, card.extra)


def _map_related(out: _Emitter, st: str, story: Story) -> None:
    """Related-story links (``dc:relation``, once each); unusable URLs kept as extras."""
    for rel in story.related:
        target_iri = _related_iri(rel.url)
        if target_iri is None:
            out.extra(st, {"related_unusable_url": rel.url})
            continue
        target = iri(target_iri)
        if out.first("related " + target):
            out.add(st, DC("relation"), target)
        if rel.headline:
            out.about(_LINKS, target).text(LABEL, rel.headline)


@lru_cache(maxsize=CACHE_SIZE)
def _related_iri(url: str) -> str | None:
    """A related link's target as the crawler would fetch it (a non-http(s) URL as written)."""
    try:
        return checked_iri(canonicalize(url))
    except ValueError:
        return checked_iri(url)


def _map_reuse(out: _Emitter, st: str, base: str, reuse: Reuse) -> None:
    node = out.part(st, iri(f"{base}#reuse"), HCT("ReuseTerms"), HCT("reuseTerms"))
    out.text(node, SCHEMA("version"), reuse.version)
    out.text(node, SCHEMA("abstract"), reuse.summary)
    out.text(node, SCHEMA("creditText"), reuse.attribution)
    for rule in (reuse.link_rule, reuse.keep_ids_rule, reuse.no_endorsement):
        out.text(node, HCT("usageRule"), rule)
    if out.link(st, SCHEMA("license"), reuse.license_url) is not None:
        out.link(node, SCHEMA("license"), reuse.license_url)
    out.link(node, SCHEMA("usageInfo"), reuse.machine_url)
    out.link(node, SCHEMA("url"), reuse.canonical_url)
    out.extra(node, reuse.extra)


def _map_sponsor(out: _Emitter, st: str, base: str, sponsor: Sponsor) -> None:
    node = out.part(st, iri(f"{base}#sponsor"), HCT("SponsorNote"), HCT("sponsorNote"))
    out.text(node, SCHEMA("name"), sponsor.label)
    out.text(node, DC("title"), sponsor.title)
    out.text(node, SCHEMA("text"), sponsor.text)
    out.text(node, COMMENT, sponsor.note)
    cta = sponsor.cta or {}
    out.link(node, SCHEMA("url"), cta.get("url"))
    out.extra(node, {**sponsor.extra, **({"cta": cta} if cta else {})} or None)
