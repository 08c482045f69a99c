"""Manifest replies and support verdicts as RDF (N-Triples text, like :mod:`hcgraph.mapping`).

One named graph per manifest reply and one per story's support verdicts (terms tabled in
``docs/claims.md``; same input, same triples), and what the views and ``trace`` read back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import quote

from .._version import __version__
from ..iris import minted, named_node, segment
from ..provenance._graph import batches, claim_id, rows, values
from ..rdftext import XSD_DATETIME, integer, iri, literal, typed
from ..store import Store
from ..vocab import CITO, DCTERMS, GRAPH, HC, PROV, RDF, RDFS, REPLY_GRAPHS, SDO, SUPPORT_GRAPHS
from .reply import ManifestReply
from .support import METHOD, METHOD_VERSION, Mismatch

if TYPE_CHECKING:  # not imported: the views and exports read these graphs without httpx
    from .fetching import ArchivedReply

__all__ = [
    "RATINGS_GRAPH",
    "STATUSES",
    "PairVerdict",
    "Recorded",
    "claim_texts",
    "rating_iri",
    "ratings_ntriples",
    "reply_graph",
    "reply_iri",
    "reply_ntriples",
    "story_verdicts",
    "support_graph",
    "verdicts_ntriples",
]

#: The three verdicts, and the rating value each gets (not-checkable has none).
STATUSES: dict[str, int | None] = {"supported": 1, "unsupported": 0, "not-checkable": None}

_A = iri(str(RDF.type))
_Add = Callable[[str], None]  # appends one triple


def _t(namespace: object, name: str) -> str:
    return iri(f"{namespace}{name}")


@dataclass(frozen=True)
class PairVerdict:
    """The verdict on one (passage, claim) pair, as stored."""

    passage: str  # the paragraph's or key fact's IRI
    manifest_id: str
    claim_id: str
    status: str  # supported, unsupported or not-checkable
    # "" when supported; the first mismatch's kind; or why not checkable
    # (claim-text-missing, manifest-not-fetched, manifest-not-found, reply-not-understood)
    reason: str = ""
    sentence: str = ""  # the passage's sentence that best states the claim ("" if none)
    overlap: float | None = None  # lexical overlap with that sentence (None: not checked)
    mismatches: tuple[Mismatch, ...] = field(default_factory=tuple)


def reply_graph(manifest_id: str) -> str:
    """The named graph of one manifest's reply.

    >>> reply_graph("17")
    'https://w3id.org/hcgraph/graph/manifest/17'
    """
    return REPLY_GRAPHS + segment(manifest_id)


def support_graph(story: str) -> str:
    """The named graph of one story's support verdicts (the story IRI, percent-encoded).

    >>> support_graph("https://ex.org/s/a/")
    'https://w3id.org/hcgraph/graph/support/https%3A%2F%2Fex.org%2Fs%2Fa%2F'
    """
    return SUPPORT_GRAPHS + quote(story, safe="")


def reply_iri(sha256: str) -> str:
    """The IRI of a reply, by the SHA-256 of its bytes."""
    return minted("reply", sha256)


def reply_ntriples(
    answer: ArchivedReply, reply: ManifestReply | None, problem: tuple[str, str] | None
) -> str:
    """The triples of one manifest's reply graph: the archived ``answer``, the ``reply`` read
    from it (if it was), or the ``problem`` that stopped it (JSON path, reason)."""
    status = "not-found" if answer.sha256 is None else "bad-shape" if problem else "fetched"
    out: list[str] = []
    add = out.append
    fetched_at = typed(answer.record.fetched_at, XSD_DATETIME)
    manifest = iri(minted("manifest", answer.manifest_id))
    key = answer.sha256 or f"{status}-{answer.record.fetched_at}"
    fetch = iri(minted("manifest-fetch", answer.manifest_id, key))
    add(f"{manifest} {_t(HC, 'replyStatus')} {literal(status)}")
    add(f"{fetch} {_A} {_t(HC, 'ManifestFetch')}")
    add(f"{fetch} {_A} {_t(PROV, 'Activity')}")
    add(f"{fetch} {_t(PROV, 'endedAtTime')} {fetched_at}")
    add(f"{fetch} {_t(HC, 'sourceLocation')} {literal(answer.record.fetch_url)}")
    add(f"{fetch} {_t(PROV, 'wasAssociatedWith')} {_software()}")
    if problem is not None:
        path, why = problem
        comment = f"{path or '$'}: {why}"
        add(f"{manifest} {_t(RDFS, 'comment')} {literal(comment)}")
    if answer.sha256 is not None:
        node = iri(reply_iri(answer.sha256))
        add(f"{node} {_A} {_t(HC, 'ManifestReply')}")
        add(f"{node} {_A} {_t(PROV, 'Entity')}")
        add(f"{node} {_t(HC, 'sha256')} {literal(answer.sha256)}")
        add(f"{node} {_t(HC, 'byteSize')} {integer(answer.record.size)}")
        add(f"{node} {_t(PROV, 'wasGeneratedBy')} {fetch}")
        add(f"{node} {_t(PROV, 'generatedAtTime')} {fetched_at}")
        add(f"{node} {_t(SDO, 'about')} {manifest}")
        if reply is not None:
            _stated(add, reply, node, manifest)
    return _lines(out)


def _stated(add: _Add, reply: ManifestReply, node: str, manifest: str) -> None:
    """What a reply read says: its source, its Brief, each claim's text."""
    stated = reply.source
    for prop, value in (
        (_t(DCTERMS, "title"), stated.title),
        (_t(HC, "statedSourceName"), stated.name),
        (_t(HC, "statedSourceUrl"), stated.url),
        (_t(HC, "statedPublishedDate"), stated.published_date),
    ):
        if value is not None:
            add(f"{node} {prop} {literal(value)}")
    if reply.brief is not None:
        add(f"{manifest} {_t(DCTERMS, 'abstract')} {literal(reply.brief)}")
    for cid, text in reply.claims.items():
        claim = iri(minted("claim", cid))
        add(f"{claim} {_t(PROV, 'wasQuotedFrom')} {node}")
        if text is not None:
            add(f"{claim} {_t(PROV, 'value')} {literal(text)}")


def verdicts_ntriples(
    story: str,
    raw_sha256: str | None,
    replies: Iterable[str],
    verdicts: Iterable[PairVerdict],
    informed: Iterable[str] = (),
) -> str:
    """The triples of one story's support graph: the check and every verdict.

    ``replies``: the SHA-256 of each reply the check read (``prov:used``); ``informed``: the
    fetches whose answer had no reply to read, a 404 (``prov:wasInformedBy``). Both are
    recorded so that a later check knows whether anything it depended on has changed.
    """
    out: list[str] = []
    add = out.append
    check = iri(f"{story}#support-check")
    add(f"{check} {_A} {_t(HC, 'SupportCheck')}")
    add(f"{check} {_A} {_t(PROV, 'Activity')}")
    add(f"{check} {_t(HC, 'checkMethod')} {literal(METHOD)}")
    add(f"{check} {_OWL_VERSION} {literal(METHOD_VERSION)}")
    add(f"{check} {_t(PROV, 'wasAssociatedWith')} {_software()}")
    if raw_sha256:
        add(f"{check} {_t(PROV, 'used')} {iri(minted('raw', raw_sha256))}")
    for sha in sorted(set(replies)):
        add(f"{check} {_t(PROV, 'used')} {iri(reply_iri(sha))}")
    for fetch in sorted(set(informed)):
        add(f"{check} {_t(PROV, 'wasInformedBy')} {iri(fetch)}")
    for verdict in verdicts:
        _verdict(add, check, verdict)
    return _lines(out)


def _verdict(add: _Add, check: str, v: PairVerdict) -> None:
    node_iri = f"{v.passage}-support-{segment(v.manifest_id)}-{segment(v.claim_id)}"
    node, passage = iri(node_iri), iri(v.passage)
    claim = iri(minted("claim", v.claim_id))
    for cls in (_t(HC, "SupportVerdict"), _t(SDO, "ClaimReview"), _t(CITO, "Citation")):
        add(f"{node} {_A} {cls}")
    add(f"{node} {_t(PROV, 'wasGeneratedBy')} {check}")
    add(f"{node} {_t(CITO, 'hasCitingEntity')} {passage}")
    add(f"{node} {_t(CITO, 'hasCitedEntity')} {claim}")
    add(f"{node} {_t(SDO, 'itemReviewed')} {passage}")
    add(f"{node} {_t(SDO, 'reviewRating')} {iri(rating_iri(v.status))}")
    add(f"{node} {_t(HC, 'supportStatus')} {literal(v.status)}")
    if v.status == "supported":
        support = _t(CITO, "obtainsSupportFrom")
        add(f"{node} {_t(CITO, 'hasCitationCharacterization')} {support}")
        add(f"{passage} {support} {claim}")
    if v.reason:
        add(f"{node} {_t(HC, 'reason')} {literal(v.reason)}")
    if v.sentence:
        add(f"{node} {_t(SDO, 'claimReviewed')} {literal(v.sentence)}")
    if v.overlap is not None:
        add(f"{node} {_t(HC, 'overlap')} {typed(f'{v.overlap:.3f}', _DECIMAL)}")
    for i, m in enumerate(v.mismatches, 1):
        mnode = iri(f"{node_iri}-m{i}")
        add(f"{node} {_t(HC, 'mismatch')} {mnode}")
        add(f"{mnode} {_A} {_t(HC, 'Mismatch')}")
        add(f"{mnode} {_t(HC, 'mismatchKind')} {literal(m.kind)}")
        add(f"{mnode} {_t(HC, 'span')} {literal(m.span)}")
        add(f"{mnode} {_t(HC, 'claimSpan')} {literal(m.claim_span)}")
        add(f"{mnode} {_t(RDFS, 'comment')} {literal(m.detail)}")
        if m.start >= 0:
            add(f"{mnode} {_t(HC, 'spanStart')} {integer(m.start)}")
            add(f"{mnode} {_t(HC, 'spanEnd')} {integer(m.end)}")


def rating_iri(status: str) -> str:
    """The one ``schema:Rating`` of a verdict status (``…/id/rating/supported``)."""
    return minted("rating", status)


def ratings_ntriples() -> str:
    """The three ratings every verdict points at, described once (:data:`RATINGS_GRAPH`):
    ``alternateName`` the status, ``ratingValue`` 1 (supported) or 0 (unsupported) on a
    0 to 1 scale; not-checkable has no value."""
    out: list[str] = []
    for status, value in STATUSES.items():
        node = iri(rating_iri(status))
        out.append(f"{node} {_A} {_t(SDO, 'Rating')}")
        out.append(f"{node} {_t(SDO, 'alternateName')} {literal(status)}")
        if value is not None:
            out.append(f"{node} {_t(SDO, 'ratingValue')} {integer(value)}")
            out.append(f"{node} {_t(SDO, 'bestRating')} {integer(1)}")
            out.append(f"{node} {_t(SDO, 'worstRating')} {integer(0)}")
    return _lines(out)


#: Where the three ratings are described (a shared graph: never taken for a story's).
RATINGS_GRAPH = f"{GRAPH}ratings"


_DECIMAL = "http://www.w3.org/2001/XMLSchema#decimal"
_OWL_VERSION = iri("http://www.w3.org/2002/07/owl#versionInfo")


def _software() -> str:
    return iri(minted("software", "hcgraph", __version__))


def _lines(triples: list[str]) -> str:
    return "".join(f"{t} .\n" for t in dict.fromkeys(triples))


# --- read back (``trace``, the maps) ---------------------------------------------------

_TEXTS = "SELECT ?c ?text WHERE { %s ?c prov:wasQuotedFrom ?reply ; prov:value ?text }"
_VERDICTS = """
SELECT ?g ?part ?c ?status ?reason ?detail WHERE { GRAPH ?g {
  ?v cito:hasCitingEntity ?part ; cito:hasCitedEntity ?c ; hc:supportStatus ?status .
  OPTIONAL { ?v hc:reason ?reason }
  OPTIONAL { ?v hc:mismatch ?m . ?m <http://www.w3.org/2000/01/rdf-schema#comment> ?detail }
} }
"""


class Recorded(NamedTuple):
    """One recorded verdict: its status, its reason ("" when supported) and the first
    mismatch's line for people ("" when none)."""

    status: str
    reason: str
    detail: str


def claim_texts(store: Store, claim_ids: Iterable[str]) -> dict[str, str]:
    """Claim id → its text, for the claims a fetched reply gives a text (read back for the
    commands that show claims: ``trace``, the maps)."""
    out: dict[str, str] = {}
    for batch in batches(claim_ids):
        for c, text in rows(store, _TEXTS % values("c", (minted("claim", c) for c in batch))):
            out.setdefault(claim_id(c or ""), text or "")
    return out


def story_verdicts(store: Store, story: str) -> dict[tuple[str, str], Recorded]:
    """(passage IRI, claim id) → the verdict recorded in ``story``'s support graph."""
    graph = named_node(support_graph(story))
    if graph is None:
        return {}
    seen: dict[tuple[str, str], Recorded] = {}
    for part, c, *said in rows(store, _VERDICTS, g=graph):  # said: status, reason, detail
        key = (part or "", claim_id(c or ""))
        found = Recorded(*(value or "" for value in said))
        if key not in seen or (found.detail and not seen[key].detail):
            seen[key] = found
    return dict(sorted(seen.items()))
