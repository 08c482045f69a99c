"""What one version of a story says, for comparing versions: read from its body or its graph.

A story ingested from a file has no archived body, so the version being replaced is read from
its graph and kept on the revision (``hc:versionContent``) for ``hcgraph history``. Body or
graph, one version gives the same :class:`Content`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass

import pyoxigraph as ox

from .iris import unminted
from .model import Story
from .store import Store
from .vocab import DCTERMS, HC, SDO

__all__ = ["Content", "from_graph", "from_story", "revision_contents"]

_PARAGRAPH = re.compile(r"#s(\d+)-p(\d+)\Z")
_CORRECTION = re.compile(r"#correction(\d+)\Z")
_HEADLINE, _DEK, _TEXT = (ox.NamedNode(str(SDO[n])) for n in ("headline", "description", "text"))
_CORRECTS, _LISTS = ox.NamedNode(str(SDO.correction)), ox.NamedNode(str(HC.listsManifest))
_USES, _CLAIM = ox.NamedNode(str(HC.citesClaimUnder)), ox.NamedNode(str(HC.claim))
_MANIFEST, _TITLE = ox.NamedNode(str(HC.manifest)), ox.NamedNode(str(DCTERMS.title))
_DATE, _KEPT = ox.NamedNode(str(DCTERMS.date)), ox.NamedNode(str(HC.versionContent))


@dataclass(frozen=True)
class Content:
    """The comparable parts of one story version: ``paragraphs`` as ``(s{i}-p{j}, markdown)``
    in reading order, ``citations`` as ``(manifest id, claim id)`` (paragraphs and key facts),
    ``sources`` as ``(manifest id, title)`` sorted, ``corrections`` as ``(date, text)`` in
    order; ``""`` for anything absent."""

    headline: str
    dek: str
    paragraphs: tuple[tuple[str, str], ...]
    citations: frozenset[tuple[str, str]]
    sources: tuple[tuple[str, str], ...]
    corrections: tuple[tuple[str, str], ...]

    def to_json(self) -> str:
        """Compact, key-sorted JSON (deterministic: the same version, the same text)."""
        doc = {**asdict(self), "citations": sorted(self.citations)}
        return json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Content | None:
        """The content kept on a revision; None if the text is not that JSON."""
        try:
            doc = json.loads(text)
            return cls(
                str(doc["headline"]),
                str(doc["dek"]),
                tuple((str(k), str(t)) for k, t in doc["paragraphs"]),
                frozenset((str(m), str(c)) for m, c in doc["citations"]),
                tuple((str(m), str(t)) for m, t in doc["sources"]),
                tuple((str(d), str(t)) for d, t in doc["corrections"]),
            )
        except (ValueError, KeyError, TypeError):
            return None


def from_story(story: Story) -> Content:
    """The content of a parsed body."""
    paragraphs = [
        (f"s{i}-p{j}", p.markdown)
        for i, s in enumerate(story.sections, 1)
        for j, p in enumerate(s.paragraphs, 1)
    ]
    titles = {m.manifest_id: m.title or "" for m in reversed(story.manifests)}  # the first's
    return Content(
        story.headline or "",
        story.dek or "",
        tuple(paragraphs),
        frozenset(_cited(story)),
        tuple(sorted(titles.items())),
        tuple((c.date or "", c.text or "") for c in story.corrections),
    )


def _cited(story: Story) -> Iterator[tuple[str, str]]:
    """``(manifest id, claim id)`` of each claim cited by a paragraph or a key fact."""
    cites = [c for s in story.sections for p in s.paragraphs for c in p.cites]
    for cite in [*cites, *(c for k in story.key_facts for c in k.cites)]:
        for claim in cite.claim_ids:
            yield cite.manifest_id, claim


def from_graph(store: Store, story_url: str, sha256: str | None = None) -> Content | None:
    """The content of the story graph in ``store`` (None if there is none, or if it was
    built from other bytes than ``sha256``)."""
    story = ox.NamedNode(story_url)
    raw = store.raw_sha256(story_url)
    if raw is None or (sha256 is not None and raw != sha256):
        return None
    sources = {
        (unminted("manifest", _lexical(q.object)), _value(store, q.object, _TITLE) or "")
        for q in store.quads(story, _LISTS, None, story)
    }
    return Content(
        _value(store, story, _HEADLINE, story) or "",
        _value(store, story, _DEK, story) or "",
        _graph_paragraphs(store, story),
        frozenset(_graph_citations(store, story)),
        tuple(sorted(sources)),
        _graph_corrections(store, story),
    )


def _graph_paragraphs(store: Store, story: ox.NamedNode) -> tuple[tuple[str, str], ...]:
    """``(key, markdown)`` of the story graph's paragraphs, in reading order."""
    paragraphs: list[tuple[int, int, str, str]] = []
    for quad in store.quads(None, _TEXT, None, story):
        node = _lexical(quad.subject)
        if node.startswith(story.value) and (where := _PARAGRAPH.search(node)) is not None:
            i, j = int(where[1]), int(where[2])
            paragraphs.append((i, j, f"s{i}-p{j}", _lexical(quad.object)))
    return tuple((key, text) for _i, _j, key, text in sorted(paragraphs))


def _graph_citations(store: Store, story: ox.NamedNode) -> Iterator[tuple[str, str]]:
    """``(manifest id, claim id)`` of the story graph's claim uses."""
    for quad in store.quads(story, _USES, None, story):
        claim, manifest = _value(store, quad.object, _CLAIM), _value(store, quad.object, _MANIFEST)
        if claim and manifest:
            yield unminted("manifest", manifest), unminted("claim", claim)


def _graph_corrections(store: Store, story: ox.NamedNode) -> tuple[tuple[str, str], ...]:
    """``(date, text)`` of the story graph's corrections, in the story's order."""
    corrections: list[tuple[int, str, str]] = []
    for quad in store.quads(story, _CORRECTS, None, story):
        where = _CORRECTION.search(_lexical(quad.object))
        date = _value(store, quad.object, _DATE, story) or ""
        text = _value(store, quad.object, _TEXT, story) or ""
        corrections.append((int(where[1]) if where else 0, date, text))
    return tuple((date, text) for _n, date, text in sorted(corrections))


def revision_contents(store: Store, story_url: str) -> dict[str, str]:
    """The content JSON kept on each revision of the stored story: SHA-256 → JSON text."""
    story = ox.NamedNode(story_url)
    return {
        store.raw_node_sha256(quad.subject, story): _lexical(quad.object)
        for quad in store.quads(None, _KEPT, None, story)
        if isinstance(quad.subject, ox.NamedNode)
    }


def _value(
    store: Store, subject: object, predicate: ox.NamedNode, graph: ox.NamedNode | None = None
) -> str | None:
    """The smallest value of ``subject predicate ?`` (in ``graph``, or in any), or None."""
    if not isinstance(subject, ox.NamedNode | ox.BlankNode):
        return None
    found = [_lexical(q.object) for q in store.quads(subject, predicate, None, graph)]
    return min(found) if found else None


def _lexical(term: object) -> str:
    """An IRI, a literal's lexical form or a blank node id; "" for a triple term."""
    return term.value if isinstance(term, ox.NamedNode | ox.BlankNode | ox.Literal) else ""
