"""``trace``: where did this sentence come from?

:func:`trace` follows a story URL, part IRI (``URL#s2-p1``, ``URL#kf1``), manifest id or claim
id to a :class:`Trace`: each story's writer, run and ingest, and each part's citations (claim
ids → manifest → source document → publisher, with the claims' texts and support verdicts).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import pyoxigraph as ox

from ..errors import ProvenanceError, visible
from ..iris import minted, named_node, unminted
from ..mdtext import md_code, md_text, md_url
from ..store import Store
from ..vocab import ID
from ._graph import (
    ManifestInfo,
    claim_id,
    count,
    describe_manifests,
    manifest_id,
    rows,
)

__all__ = [
    "Citation",
    "IngestRecord",
    "Part",
    "StoryTrace",
    "Trace",
    "part_sort_key",
    "render_markdown",
    "render_tree",
    "trace",
]

_META = """
SELECT ?story ?headline ?published ?agent ?run WHERE { GRAPH ?story {
  ?story a hc:Story .
  OPTIONAL { ?story schema:headline ?headline }
  OPTIONAL { ?story schema:datePublished ?published }
  OPTIONAL { ?story prov:wasAttributedTo ?agent }
  OPTIONAL { ?story prov:wasGeneratedBy ?run }
} } LIMIT 1
"""
_INGEST = """
SELECT ?story ?sha ?size ?ended ?loc WHERE { GRAPH ?story {
  ?story hc:rawDocument ?raw .
  OPTIONAL { ?raw hc:sha256 ?sha }
  OPTIONAL { ?raw hc:byteSize ?size }
  OPTIONAL { ?ingest prov:used ?raw ; prov:endedAtTime ?ended .
             OPTIONAL { ?ingest hc:sourceLocation ?loc } }
} } LIMIT 1
"""
_PARTS = """
SELECT ?story ?part ?type ?text WHERE { GRAPH ?story {
  VALUES ?type { hc:Paragraph hc:KeyFact }
  ?part a ?type .
  OPTIONAL { ?part schema:text ?text }
} }
"""
_CITES = """
SELECT ?story ?part ?c ?pos ?m ?claim WHERE { GRAPH ?story {
  ?c cito:hasCitingEntity ?part ; cito:hasCitedEntity ?m .
  OPTIONAL { ?c schema:position ?pos }
  OPTIONAL { ?c hc:citesClaim ?claim }
} }
"""
# Citing a manifest or a claim: ?x is bound to it. Stories are counted in the engine and
# listed up to the limit, then each story's citing parts are looked up in its own graph.
_CITING = {"manifest": "?c cito:hasCitedEntity ?x .", "claim": "?c hc:citesClaim ?x ."}
_CITING_COUNT = (
    "SELECT ?x (COUNT(DISTINCT ?story) AS ?n) WHERE {{ GRAPH ?story {{ {} }} }} GROUP BY ?x"
)
_CITING_STORIES = "SELECT DISTINCT ?x ?story WHERE {{ GRAPH ?story {{ {} }} }}"
_CITING_PARTS = (
    "SELECT DISTINCT ?x ?story ?part WHERE {{ GRAPH ?story {{ {} "
    "?c cito:hasCitingEntity ?part . }} }}"
)
_IS = {"manifest": "ASK { ?x a hc:Manifest }", "claim": "ASK { ?x a hc:Claim }"}
_IS_STORY = "ASK { GRAPH ?story { ?story a hc:Story } }"
_PART_RE = re.compile(r"^(?:s(\d+)-p(\d+)|kf(\d+))$")
_RUN = f"{ID}run/"


@dataclass(frozen=True)
class Citation:
    """One cite object: the claims of one manifest a part cites."""

    manifest_id: str
    claim_ids: tuple[str, ...]


@dataclass
class Part:
    """A paragraph (``s2-p1``) or key fact (``kf1``) with its text and citations."""

    iri: str
    kind: str
    text: str
    citations: list[Citation] = field(default_factory=list)

    @property
    def key(self) -> str:
        """The fragment: ``s2-p1`` or ``kf1``."""
        return self.iri.rsplit("#", 1)[-1]

    @property
    def claim_ids(self) -> set[str]:
        """Every claim id the part cites."""
        return {c for cite in self.citations for c in cite.claim_ids}


@dataclass(frozen=True)
class IngestRecord:
    """hcgraph's ingest of the story's raw bytes."""

    sha256: str | None
    byte_size: int | None
    retrieved_at: str | None
    source: str | None


@dataclass
class StoryTrace:
    """One story's provenance: who wrote it, how hcgraph got it, and its traced parts."""

    url: str
    headline: str | None
    published_at: str | None
    writer_agent: str | None
    writer_run: str | None
    ingest: IngestRecord | None
    parts: list[Part] = field(default_factory=list)


@dataclass
class Trace:
    """The answer of :func:`trace`: the ``target`` as given, its ``kind`` (``story``,
    ``part``, ``manifest`` or ``claim``), the stories involved with the parts traced, every
    manifest cited (id → what the graph says), and ``total_stories`` citing a manifest or
    claim (``stories`` may hold fewer, under a ``limit``)."""

    target: str
    kind: str
    stories: list[StoryTrace]
    manifests: dict[str, ManifestInfo]
    total_stories: int = 0
    #: claim id → its text, as the manifest replies give it (``hcgraph manifests fetch``)
    claim_texts: dict[str, str] = field(default_factory=dict)
    #: (part IRI, claim id) → the support verdict: (status, reason, detail)
    verdicts: dict[tuple[str, str], tuple[str, str, str]] = field(default_factory=dict)

    def claim_entries(self, part: Part, cite: Citation) -> list[dict[str, str | None]]:
        """Each claim of one citation with its text and verdict (``None`` where unknown)."""
        out: list[dict[str, str | None]] = []
        for cid in cite.claim_ids:
            status, reason, detail = self.verdicts.get((part.iri, cid), (None, None, None))
            out.append({"claim_id": cid, "text": self.claim_texts.get(cid), "verdict": status,
                        "reason": reason or None, "detail": detail or None})  # fmt: skip
        return out

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ``--format json`` output)."""
        stories = [
            {
                "url": s.url,
                "headline": s.headline,
                "published_at": s.published_at,
                "writer": {"agent": s.writer_agent, "run_id": s.writer_run},
                "ingest": None if s.ingest is None else vars(s.ingest),
                "parts": [{**vars(p), "citations": self._cites(p)} for p in s.parts],
            }
            for s in self.stories
        ]
        manifests = {k: v.as_dict() for k, v in sorted(self.manifests.items())}
        head = {"target": self.target, "kind": self.kind, "total_stories": self.total_stories}
        return {**head, "stories": stories, "manifests": manifests}

    def _cites(self, p: Part) -> list[dict[str, Any]]:
        """A part's citations, JSON-ready, each claim with its text and verdict."""
        return [
            {**vars(c), "claim_ids": list(c.claim_ids), "claims": self.claim_entries(p, c)}
            for c in p.citations
        ]

    def to_json(self) -> str:
        """The trace as indented JSON."""
        return json.dumps(self.as_dict(), indent=2, ensure_ascii=False)


def part_sort_key(iri: str) -> tuple[int, int, int]:
    """Key facts first, then paragraphs in reading order."""
    match = _PART_RE.match(iri.rsplit("#", 1)[-1])
    if not match:
        return (2, 0, 0)
    if match.group(3):
        return (0, int(match.group(3)), 0)
    return (1, int(match.group(1)), int(match.group(2)))


def trace(store: Store, target: str, limit: int | None = None) -> Trace:
    """Trace ``target`` (story URL, ``URL#s2-p1`` part IRI, manifest id or claim id).

    ``limit`` caps how many citing stories a manifest or claim trace details (the first in
    store order, shown sorted by URL); ``total_stories`` still counts them all.

    Raises:
        ProvenanceError: the store holds no such story, part, manifest or claim.
    """
    target = target.strip()
    if target.startswith(("http://", "https://")):
        return _trace_url(store, target)
    for kind in ("manifest", "claim"):
        try:
            node = named_node(minted(kind, target))
        except UnicodeEncodeError:  # a lone surrogate (a non-UTF-8 argument) is in no IRI
            continue
        if node is not None and store.query(_IS[kind], bindings={"x": node}):
            return _finish(store, target, kind, *_citing(store, kind, node.value, limit))
    raise ProvenanceError(
        f"{target}: not a story URL, part IRI, manifest id or claim id in the store"
    )


def _trace_url(store: Store, target: str) -> Trace:
    """The trace of a story URL, or of one part when the URL has a ``#fragment``."""
    url, _, fragment = target.partition("#")
    story_url = _find_story(store, url)
    if story_url is None:
        raise ProvenanceError(f"{target}: no such story in the store")
    only = f"{story_url}#{fragment}" if fragment else None
    st = _story_trace(store, story_url, only=None if only is None else {only})
    if only is not None and not st.parts:
        raise ProvenanceError(f"{target}: the story has no such paragraph or key fact")
    return _finish(store, target, "part" if only else "story", [st], 1)


def _find_story(store: Store, url: str) -> str | None:
    """The story IRI ``url`` names: as given, without ``index.json``, or its slash toggled."""
    toggled = url.rstrip("/") if url.endswith("/") else url + "/"
    for candidate in dict.fromkeys((url, url.removesuffix("index.json"), toggled)):
        node = named_node(candidate)  # None: not an IRI (a space...), so no story
        if node is not None and store.query(_IS_STORY, bindings={"story": node}):
            return candidate
    return None


def _citing(store: Store, kind: str, iri: str, limit: int | None) -> tuple[list[StoryTrace], int]:
    x = ox.NamedNode(iri)
    pattern = _CITING[kind]
    total = count(store, _CITING_COUNT.format(pattern), x=x)
    query = _CITING_STORIES.format(pattern) + ("" if limit is None else f" LIMIT {int(limit)}")
    urls = sorted(u for (u,) in rows(store, query, x=x) if u)
    traces = []
    for url in urls:
        found = rows(store, _CITING_PARTS.format(pattern), x=x, story=ox.NamedNode(url))
        parts = {p for (p,) in found if p}
        traces.append(_story_trace(store, url, only=parts))
    return traces, total


def _story_trace(store: Store, url: str, only: set[str] | None) -> StoryTrace:
    st = ox.NamedNode(url)
    headline, published, agent, run = next(rows(store, _META, story=st), (None,) * 4)
    ingest = None
    for sha, size, ended, loc in rows(store, _INGEST, story=st):
        ingest = IngestRecord(sha, int(size) if size else None, ended, loc)
    parts = _parts(store, st, only)
    _add_citations(store, st, parts)
    ordered = sorted(parts.values(), key=lambda p: part_sort_key(p.iri))
    # The names the agent and run IRIs were minted from (a run's: its last segment).
    run_id = unquote(run.rsplit("/", 1)[-1]) if run and run.startswith(_RUN) else run
    writer = agent and unminted("agent", agent), run_id
    return StoryTrace(url, headline, published, *writer, ingest, ordered)


def _parts(store: Store, st: ox.NamedNode, only: set[str] | None) -> dict[str, Part]:
    """The story's paragraphs and key facts (only those in ``only`` when given)."""
    parts: dict[str, Part] = {}
    for part, kind, text in rows(store, _PARTS, story=st):
        if part is None or (only is not None and part not in only):
            continue
        label = "key fact" if kind and kind.endswith("KeyFact") else "paragraph"
        parts[part] = Part(part, label, text or "")
    return parts


def _add_citations(store: Store, st: ox.NamedNode, parts: dict[str, Part]) -> None:
    """Each part's citations, in citation order, with the claim ids each names."""
    cites: dict[tuple[str, str], tuple[int, str, list[str]]] = {}
    for part, c, pos, m, claim in rows(store, _CITES, story=st):
        if part not in parts or c is None or m is None:
            continue
        entry = cites.setdefault((part, c), (int(pos) if pos else 0, manifest_id(m), []))
        if claim is not None:
            entry[2].append(claim_id(claim))
    for (part_iri, _), (_, mid, claims) in sorted(cites.items(), key=lambda kv: kv[1][0]):
        parts[part_iri].citations.append(Citation(mid, tuple(sorted(claims))))


def _finish(store: Store, target: str, kind: str, stories: list[StoryTrace], total: int) -> Trace:
    """The trace of ``stories``: their cited manifests, claims' texts and support verdicts."""
    parts = {p.iri: p for s in stories for p in s.parts}
    cited = {c.manifest_id for p in parts.values() for c in p.citations}
    if kind == "manifest":
        cited.add(target)
    infos = describe_manifests(store, [minted("manifest", m) for m in cited])
    tr = Trace(target, kind, stories, {info.manifest_id: info for info in infos.values()}, total)
    _add_claim_facts(store, tr, parts)
    return tr


def _add_claim_facts(store: Store, tr: Trace, parts: dict[str, Part]) -> None:
    """The claims' texts (from the manifest replies) and the support verdicts of ``parts``."""
    from ..claims.graphing import claim_texts, story_verdicts

    tr.claim_texts.update(claim_texts(store, {c for p in parts.values() for c in p.claim_ids}))
    for s in tr.stories:
        for (part, claim), verdict in story_verdicts(store, s.url).items():
            if part in parts:
                tr.verdicts.setdefault((part, claim), verdict)


# --- renderers -------------------------------------------------------------------------------


def render_markdown(tr: Trace) -> str:
    """The trace as a nested Markdown list (story text escaped)."""
    lines = [f"# Trace of {md_code(tr.target)} ({tr.kind}){_more(tr)}", ""]
    for s in tr.stories:
        lines += [f"## {md_text(s.headline or s.url)}", "", f"- story: {md_url(s.url)}"]
        if s.published_at:
            lines.append(f"- published: {md_text(s.published_at)}")
        if s.writer_agent:
            agent, run = md_code(s.writer_agent), md_code(s.writer_run or "-")
            lines.append(f"- written by agent {agent}, run {run}")
        if s.ingest is not None:
            ing = s.ingest
            lines.append(
                f"- fetched by hcgraph at {md_text(str(ing.retrieved_at))} from "
                f"{md_code(str(ing.source))} (SHA-256 {md_code(str(ing.sha256))}, "
                f"{ing.byte_size} bytes)"
            )
        for p in s.parts:
            lines.append(f"- {p.kind} {md_code(p.key)}: {md_text(p.text)}")
            for c in p.citations:
                cited = _md_citation(c, tr.manifests.get(c.manifest_id))
                lines += cited[:1] + _md_claims(tr.claim_entries(p, c)) + cited[1:]
        lines.append("")
    return "\n".join(lines)


def _md_citation(c: Citation, info: ManifestInfo | None) -> list[str]:
    """One citation's nested Markdown lines: claims, manifest, source, publishers."""
    claims = ", ".join(md_code(x) for x in c.claim_ids) or "(no claim ids)"
    lines = [f"  - claims {claims}", f"    - {_manifest_line(c.manifest_id, info, md_text)}"]
    if info is not None and info.source_url:
        lines.append(f"      - source {md_url(info.source_url)} published {_day(info)}")
        lines.extend(f"        - publisher {md_code(pub)}" for pub in sorted(info.publishers))
    return lines


def _md_claims(entries: list[dict[str, str | None]]) -> list[str]:
    """Each claim's text and verdict as Markdown lines (only claims with either)."""
    out = []
    for e in _known(entries):
        verdict = md_text(_verdict_text(e).strip())
        text = md_text(e["text"]) if e["text"] else "(claim text not fetched)"
        out.append(f"    - claim {md_code(e['claim_id'] or '')}: {text} {verdict}".rstrip())
    return out


def _known(entries: list[dict[str, str | None]]) -> list[dict[str, str | None]]:
    """The claim entries with a text or a verdict to show."""
    return [e for e in entries if e["text"] is not None or e["verdict"] is not None]


def _day(info: ManifestInfo) -> str:
    return info.published_date.isoformat() if info.published_date else "-"


def _verdict_text(e: dict[str, str | None]) -> str:
    if e["verdict"] is None:
        return ""
    why = e["detail"] or e["reason"]
    return f" [{e['verdict']}{': ' + why if why else ''}]"


def _more(tr: Trace) -> str:
    if tr.total_stories > len(tr.stories):
        return f": {len(tr.stories)} of {tr.total_stories} citing stories shown"
    return ""


def _manifest_line(mid: str, info: ManifestInfo | None, esc: Callable[[str], str] = str) -> str:
    """The manifest's line, its id and title through ``esc`` (a view's escape)."""
    if info is None or not (info.titles or info.documents):
        return f"manifest {esc(mid)} (not listed by any story: dangling)"
    return f'manifest {esc(mid)} "{esc(info.title or "(untitled)")}" ({_day(info)})'


def _v(text: object) -> str:
    """Story text for a terminal: one line, controls and bidi characters escaped."""
    return visible(" ".join(str(text).split()), one_line=True)


def render_tree(tr: Trace) -> Any:
    """The trace as a :class:`rich.tree.Tree` (text never parsed as markup; every text from
    a story or the graph shown through :func:`~hcgraph.errors.visible`)."""
    from rich.text import Text
    from rich.tree import Tree

    root = Tree(Text(f"trace {_v(tr.target)} ({tr.kind}){_more(tr)}", style="bold"))
    for s in tr.stories:
        node = root.add(Text(f"{_v(s.headline or '')} <{_v(s.url)}>", style="bold cyan"))
        if s.writer_agent:
            node.add(Text(f"written by {_v(s.writer_agent)}, run {_v(s.writer_run or '-')}; "
                          f"published {_v(s.published_at or '-')}"))  # fmt: skip
        if s.ingest is not None:
            ing = s.ingest
            node.add(Text(f"fetched {_v(ing.retrieved_at)} from {_v(ing.source)}; "
                          f"sha256 {_v(ing.sha256)}, {ing.byte_size} bytes"))  # fmt: skip
        for p in s.parts:
            _tree_part(node.add(Text(f"{_v(p.key)} ({p.kind}): {_v(p.text)}")), p, tr)
    return root


def _tree_part(pnode: Any, p: Part, tr: Trace) -> None:
    """A part's branch of the tree: each citation's claims, manifest, source, publishers."""
    from rich.text import Text

    if not p.citations:
        pnode.add(Text("cites nothing", style="red"))
    for c in p.citations:
        cnode = pnode.add(Text("claims " + (_v(", ".join(c.claim_ids)) or "-")))
        for e in _known(tr.claim_entries(p, c)):
            style = "red" if e["verdict"] == "unsupported" else ""
            text = e["text"] if e["text"] is not None else "(claim text not fetched)"
            cnode.add(Text(_v(f"claim {e['claim_id']}: {text}{_verdict_text(e)}"), style=style))
        info = tr.manifests.get(c.manifest_id)
        mnode = cnode.add(Text(_v(_manifest_line(c.manifest_id, info))))
        if info is not None and info.source_url:
            dnode = mnode.add(Text(f"source {_v(info.source_url)} published {_day(info)}"))
            for pub in sorted(info.publishers):
                dnode.add(Text(f"publisher {_v(pub)}"))
