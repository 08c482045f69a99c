"""The vocabulary hcgraph writes, defined once.

Standard vocabularies (PROV-O, CiTO, schema.org, Dublin Core) do nearly all the work; the
``hc:`` terms below exist only where none of them has one, each declared in ``ontology.ttl``
(docs/graph.md, "Vocabulary"; ``tests/test_ontology.py`` checks that both list the same
terms). IRIs hcgraph mints for things without a URL of their own live under ``ID``.
"""

from __future__ import annotations

from rdflib import Namespace, URIRef
from rdflib.namespace import DCTERMS, PROV, RDF, RDFS, SDO, XSD, DefinedNamespace

__all__ = [
    "CITO",
    "DCTERMS",
    "GRAPH",
    "HC",
    "ID",
    "PREFIXES",
    "PROV",
    "RDF",
    "RDFS",
    "REPLY_GRAPHS",
    "SDO",
    "SHARED_GRAPHS",
    "SUPPORT_GRAPHS",
    "TURTLE_PREFIXES",
    "XSD",
]

CITO = Namespace("http://purl.org/spar/cito/")
ID = Namespace("https://w3id.org/hcgraph/id/")

#: Named graphs holding what many stories share, each thing described once (see
#: hcgraph.mapping): every triple lives in the graph of its subject's kind, so the union of all
#: graphs is a set. Story graphs are named by their story IRI and never start with this.
GRAPH = Namespace("https://w3id.org/hcgraph/graph/")
#: The shared graphs by name (``sources``, ``publishers``, …; docs/graph.md says what each
#: holds) → graph IRI.
SHARED_GRAPHS = {name: str(GRAPH[name]) for name in ("sources", "publishers", "agents", "links")}
#: One graph per manifest reply (``{REPLY_GRAPHS}{manifest_id}``) and one graph of support
#: verdicts per story (``{SUPPORT_GRAPHS}{story IRI, percent-encoded}``): replaced whole when
#: a reply or a check changes. Both are under GRAPH, so neither is ever taken for a story.
REPLY_GRAPHS = f"{GRAPH}manifest/"
SUPPORT_GRAPHS = f"{GRAPH}support/"


class HC(DefinedNamespace):
    """hcgraph's own terms (``https://w3id.org/hcgraph/ns#``); comments as in ontology.ttl."""

    _NS = Namespace("https://w3id.org/hcgraph/ns#")
    _fail = True

    # --- classes -----------------------------------------------------------------------
    Story: URIRef  # An ingested Hanging Context story (schema:NewsArticle, prov:Entity).
    Section: URIRef  # A headed section of a story.
    Paragraph: URIRef  # One paragraph of a section; the unit that cites claims.
    KeyFact: URIRef  # A key fact stated at the top of a story, with its own citations.
    Claim: URIRef  # One claim inside a manifest, cited by id.
    ClaimUse: URIRef  # Derived: a claim as cited under one manifest.
    Manifest: URIRef  # A manifest: a summary of one source document, holding claims.
    SourceDocument: URIRef  # The document (paper, post) a manifest summarises.
    Publisher: URIRef  # The source a manifest's document comes from (its source_name).
    Newsroom: URIRef  # The Hanging Context newsroom (desk) a story belongs to.
    Edition: URIRef  # The edition (publication run) a story appeared in.
    WriterRun: URIRef  # The writer agent's run that generated a story.
    Citation: URIRef  # One cite object: a paragraph or key fact citing claims of one manifest.
    Correction: URIRef  # A correction published on a story.
    UnresolvedQuestion: URIRef  # A question the story says its evidence leaves open.
    DecisionCard: URIRef  # The story's "useful for / not for / compare against" card.
    ReuseTerms: URIRef  # The story's licence and reuse terms.
    SponsorNote: URIRef  # A sponsor or house-ad block shown with a story.
    RawDocument: URIRef  # The exact bytes a story graph was built from, by SHA-256.
    Ingest: URIRef  # One run of hcgraph turning a raw document into a story graph.
    ManifestReply: URIRef  # A manifest API reply as hcgraph read it (by SHA-256).
    ManifestFetch: URIRef  # One fetch of a manifest reply (or read of a saved reply file).
    SupportCheck: URIRef  # One run of the support check over one story.
    SupportVerdict: URIRef  # Whether a passage says what one claim it cites says.
    Mismatch: URIRef  # One difference found between a passage and a claim it cites.

    # --- properties --------------------------------------------------------------------
    slug: URIRef  # The story's URL slug.
    beat: URIRef  # The story's beat within its newsroom.
    angle: URIRef  # The story's one-sentence angle.
    trust: URIRef  # The trust label (e.g. "confirmed").
    trustText: URIRef  # The human-readable trust label text.
    newsroom: URIRef  # The newsroom a story belongs to.
    edition: URIRef  # The edition a story appeared in.
    keyFact: URIRef  # A key fact of the story.
    unresolved: URIRef  # An unresolved question of the story.
    decisionCard: URIRef  # The story's decision card.
    reuseTerms: URIRef  # The story's reuse terms.
    sponsorNote: URIRef  # A sponsor note shown with the story.
    disclosure: URIRef  # The story's disclosure statement.
    usefulFor: URIRef  # Decision card: who the story is useful for.
    notFor: URIRef  # Decision card: what the story is not for.
    compareAgainst: URIRef  # Decision card: what to compare the story against.
    usageRule: URIRef  # One rule of the reuse terms.
    selfReported: URIRef  # Whether a key fact is self-reported by its source.
    citesClaim: URIRef  # A claim cited by a citation act.
    listsManifest: URIRef  # A manifest listed in the story's manifests[].
    citesUnlistedManifest: URIRef  # A manifest cited by the story but missing from manifests[].
    citesManifest: URIRef  # Derived at ingest: a manifest any citation of the story names.
    listsPublisher: URIRef  # Derived at ingest: publisher of a listed manifest, as the story says.
    citesClaimUnder: URIRef  # Derived at ingest: a claim use (a claim under a manifest) cited.
    claim: URIRef  # Derived: the claim of a claim use.
    manifest: URIRef  # Derived: the manifest of a claim use.
    declaredSourceCount: URIRef  # The story's own source_count field.
    declaredPublisher: URIRef  # A publisher named in the story's own publishers[] field.
    declaredCitedManifest: URIRef  # A manifest named in the story's cited_manifest_ids field.
    verifiableManifest: URIRef  # A manifest the story invites readers to run themselves.
    rawDocument: URIRef  # The raw document a story graph was built from.
    sha256: URIRef  # SHA-256 of a raw document's bytes, lower-case hex.
    byteSize: URIRef  # Size of a raw document in bytes.
    sourceLocation: URIRef  # Where hcgraph read a raw document from (file path or URL).
    versionContent: URIRef  # What an earlier version said (JSON), for history's diffs.
    unusableUrl: URIRef  # A source_url as written that is no usable IRI (so no schema:url).
    unmappedJson: URIRef  # JSON of the fields hcgraph keeps but does not map to triples.
    replyStatus: URIRef  # What the manifest API answered: fetched, not-found or bad-shape.
    statedSourceName: URIRef  # The source's name as a manifest reply states it.
    statedSourceUrl: URIRef  # The source's URL as a manifest reply states it.
    statedPublishedDate: URIRef  # The source's publication date as a manifest reply states it.
    supportStatus: URIRef  # A verdict: supported, unsupported or not-checkable.
    reason: URIRef  # Why a verdict is not "supported": a mismatch kind or why not checkable.
    mismatch: URIRef  # A mismatch behind a verdict.
    mismatchKind: URIRef  # number, entity, negation, quote or unrelated.
    span: URIRef  # The mismatching text as it stands in the passage.
    claimSpan: URIRef  # What the claim says where the passage differs.
    spanStart: URIRef  # Offset of the span in the passage's text (characters).
    spanEnd: URIRef  # End offset of the span in the passage's text (characters).
    overlap: URIRef  # Lexical overlap of the claim with its best sentence, in [0, 1].
    checkMethod: URIRef  # The name of the method a support check ran.


# Prefixes used for readable Turtle/TriG and for the saved queries.
PREFIXES: dict[str, str] = {
    "hc": str(HC._NS),
    "hcid": str(ID),
    "prov": str(PROV),
    "cito": str(CITO),
    "schema": str(SDO),
    "dcterms": str(DCTERMS),
    "rdf": str(RDF),
    "rdfs": str(RDFS),
    "xsd": str(XSD),
}

#: Prefixes for serialised RDF: the id namespaces get short, readable prefixes instead of
#: ``hcid:`` (whose local names would need escaped slashes).
TURTLE_PREFIXES: dict[str, str] = {
    **{k: v for k, v in PREFIXES.items() if k != "hcid"},
    "manifest": f"{ID}manifest/",
    "claim": f"{ID}claim/",
    "publisher": f"{ID}publisher/",
}
