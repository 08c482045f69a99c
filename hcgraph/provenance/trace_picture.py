"""A trace as a picture people can read: Graphviz DOT, drawn top-down, of bounded width.

``hcgraph trace --format dot|svg`` draws story → part → (claim) → manifest → source document
→ publisher, each node's label wrapped and cut (its full text and IRI are its SVG ``<title>``),
at most :data:`ROW` nodes a rank and :data:`MAX_STORIES` citing stories (the rest one summary
node). Untrusted text is cleaned (:func:`clean_text`) and escaped for HTML-like labels.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import shutil
import subprocess
import textwrap
from dataclasses import dataclass, field
from xml.sax.saxutils import escape as xml_escape

from .._version import __version__
from ..errors import ProvenanceError
from ..htmltext import visible_bidi
from ..iris import minted
from ._graph import ManifestInfo
from .tracing import Part, StoryTrace, Trace

__all__ = [
    "MAX_PARTS",
    "MAX_STORIES",
    "ROW",
    "WRAP",
    "clean_text",
    "label_lines",
    "to_dot",
    "to_svg",
]

#: Nodes per row: a rank with more wraps onto further rows (bounds the picture's width).
ROW = 5
#: Characters per label line.
WRAP = 30
#: Citing stories drawn in a manifest or claim trace; the rest are one summary node.
MAX_STORIES = 4
#: Citing parts drawn per story in a manifest or claim trace (the story node counts the rest).
MAX_PARTS = 2
#: How strongly the rows of a wrapped level are stacked into columns.
COLUMN_WEIGHT = 8
#: Graphviz gets this long to draw (a trace picture takes well under a second).
TIMEOUT = 60.0

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NOT_XML = re.compile("[\ufffe\uffff\ud800-\udfff]")
_TOOLTIP = 600
#: The start of a node's or edge's group in Graphviz's SVG, through its <title>.
_GROUP_TITLE = re.compile(r'<g id="([te]\d+)" class="(?:node|edge)[^"]*">\s*<title>[^<]*</title>')

_LEVEL = {"story": 0, "more": 0, "part": 1, "claim": 2, "manifest": 3, "source": 4,
          "publisher": 5}  # fmt: skip
_FILL = {"story": "#dbe9f6", "more": "#f2f2f2", "part": "#ffffff", "claim": "#fdf0d5",
         "manifest": "#fde2c8", "source": "#dcefe3", "publisher": "#ece2f4"}  # fmt: skip


def clean_text(text: object) -> str:
    """Untrusted text as one line a picture can show literally: controls and line breaks as
    spaces, what XML 1.0 cannot carry as U+FFFD, bidi controls shown as ``[U+202E]``.

    >>> clean_text('a\\n"b"\\x00 <c>\\u202e')
    'a "b" <c>[U+202E]'
    """
    text = _CONTROL.sub(" ", "" if text is None else str(text))
    return " ".join(visible_bidi(_NOT_XML.sub("\ufffd", text)).split())


def label_lines(text: object, lines: int = 2, width: int = WRAP) -> list[str]:
    """``text`` (cleaned) wrapped at ``width`` characters, at most ``lines`` lines; the last
    shown line ends with an ellipsis when text was cut.

    >>> label_lines("one two three four five six", lines=2, width=9)
    ['one two', 'three…']
    """
    wrapped = textwrap.wrap(clean_text(text), width=width, break_on_hyphens=False) or [""]
    if len(wrapped) <= lines:
        return wrapped
    kept = wrapped[:lines]
    last = kept[-1]
    if len(last) >= width:
        last = last[: width - 1].rstrip()
    kept[-1] = last + "\u2026"
    return kept


def _html(text: str) -> str:
    """Text for a Graphviz HTML-like label: the XML specials as entities (Graphviz decodes
    them once, so ``&amp;amp;`` reaches the SVG as ``&amp;amp;``) and backslashes doubled
    (labels still expand ``\\N``, ``\\G``… escapes, even HTML-like ones)."""
    return xml_escape(text.replace("\\", "\\\\"), {'"': "&quot;"})


#: Longest node name (UTF-8 bytes) written whole: Graphviz reads no quoted string past
#: 16,384 bytes, so one story's very long URL would stop every picture it is drawn in.
_NAME_BYTES = 4096


def _name(iri: str) -> str:
    """A DOT node name from an IRI, kept as it is (IRIs hold no ``"`` or ``\\``, DOT's only
    specials in a quoted name; any are percent-encoded); past :data:`_NAME_BYTES`, its first
    1,000 characters, ``…`` and a hash of the whole (still one name per IRI)."""
    name = clean_text(iri).replace("\\", "%5C").replace('"', "%22")
    if len(name.encode("utf-8")) > _NAME_BYTES:
        name = name[:1000] + "\u2026" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:16]
    return '"' + name + '"'


@dataclass
class _Node:
    name: str
    kind: str
    head: list[str]  # bold lines
    body: list[str] = field(default_factory=list)  # plain lines
    foot: list[str] = field(default_factory=list)  # small grey lines
    tooltip: str = ""
    focus: bool = False
    ident: str = ""  # the SVG id of its group, set by _Picture.add

    def dot(self) -> str:
        rows = [f"<B>{_html(line)}</B>" for line in self.head]
        rows += [_html(line) for line in self.body]
        rows += [f'<FONT POINT-SIZE="9" COLOR="#444444">{_html(line)}</FONT>'
                 for line in self.foot]  # fmt: skip
        style = "rounded,filled,dashed" if self.kind == "more" else "rounded,filled"
        attrs = [
            f"label=<{'<BR/>'.join(rows)}>",
            f'class="{self.kind}"',
            f'fillcolor="{_FILL[self.kind]}"',
            f'style="{style}"',
            f'id="{self.ident}"',
        ]
        if self.focus:
            attrs.append("penwidth=2.5")
        return f"{self.name} [{', '.join(attrs)}];"


class _Picture:
    """Nodes by name (insertion order), edges, and the rows they are laid out in.

    Tooltips are written by :meth:`titled` into each SVG group's ``<title>``, escaped by
    Python: Graphviz's ``tooltip`` attribute expands ``\\N``-style escapes, so hostile text
    could not come out exact there.
    """

    def __init__(self) -> None:
        self.nodes: dict[str, _Node] = {}
        self.edges: dict[tuple[str, str], tuple[str, bool]] = {}

    def add(self, node: _Node) -> str:
        if node.name not in self.nodes:
            node.ident = f"t{len(self.nodes)}"
            self.nodes[node.name] = node
        elif node.focus:
            self.nodes[node.name].focus = True
        return node.name

    def edge(self, tail: str, head: str, tooltip: str, *, dashed: bool = False) -> None:
        self.edges.setdefault((tail, head), (clean_text(tooltip)[:_TOOLTIP], dashed))

    def titled(self, svg: str) -> str:
        """``svg`` (Graphviz's drawing of :meth:`dot`) with each group's ``<title>`` holding
        its text: a node's full text then its IRI (on two lines), an edge's relation."""
        texts = {n.ident: f"{n.tooltip[:_TOOLTIP]}\n{n.name.strip(chr(34))}"
                 for n in self.nodes.values()}  # fmt: skip
        texts.update({f"e{i}": text for i, (text, _) in enumerate(self.edges.values())})

        def title(match: re.Match[str]) -> str:
            text = texts.get(match.group(1))
            if text is None:
                return match.group(0)
            return f"{match.group(0).split('<title>')[0]}<title>{xml_escape(text)}</title>"

        return _GROUP_TITLE.sub(title, svg)

    def rows(self) -> list[tuple[int, list[str]]]:
        """The nodes level by level (story → publisher), each level cut into rows of ROW."""
        levels: dict[int, list[str]] = {}
        for name, node in self.nodes.items():
            levels.setdefault(_LEVEL[node.kind], []).append(name)
        return [(level, names[i : i + ROW]) for level, names in sorted(levels.items())
                for i in range(0, len(names), ROW)]  # fmt: skip

    def dot(self, title: str) -> str:
        lines = [
            "digraph trace {",
            "  graph [rankdir=TB, newrank=true, nodesep=0.18, ranksep=0.45, "
            f'fontname="Helvetica", fontsize=13, labelloc=t, '
            f"label=<<B>{_html(title)}</B>>];",
            '  node [shape=box, fontname="Helvetica", fontsize=11, margin="0.12,0.06", '
            'color="#555555"];',
            '  edge [color="#777777", arrowsize=0.7];',
        ]
        lines += [f"  {node.dot()}" for node in self.nodes.values()]
        rows = self.rows()
        for _level, row in rows:
            if len(row) > 1:
                lines.append(f"  {{ rank=same; {'; '.join(row)}; }}")
        # Invisible edges keep the rows in order: between the rows of one wrapped level, one
        # per column, weighted to stack the rows into columns (else each row drifts sideways
        # and the picture is as wide as all of them); between levels one with weight 0.
        for (upper_level, upper), (lower_level, lower) in itertools.pairwise(rows):
            if upper_level == lower_level:
                lines += [f"  {a} -> {b} [style=invis, weight={COLUMN_WEIGHT}];"
                          for a, b in zip(upper, lower, strict=False)]  # fmt: skip
            elif (upper[0], lower[0]) not in self.edges:  # a drawn edge orders them already
                lines.append(f"  {upper[0]} -> {lower[0]} [style=invis, weight=0];")
        for i, ((tail, head), (_text, dashed)) in enumerate(self.edges.items()):
            style = ", style=dashed" if dashed else ""
            lines.append(f'  {tail} -> {head} [id="e{i}"{style}];')
        lines.append("}")
        return "\n".join(lines) + "\n"


def _date(value: str | None) -> str:
    return clean_text(value)[:10] if value else "-"


def url_lines(url: object, lines: int = 2, width: int = WRAP) -> list[str]:
    """A URL (cleaned) cut into lines of at most ``width`` characters, after a ``/`` where
    one is near, at most ``lines`` lines (the last ends with an ellipsis when cut).

    >>> url_lines("https://example.org/stories/2026-10-20/slug/", width=24)
    ['https://example.org/', 'stories/2026-10-20/slug/']
    """
    text = clean_text(url)
    out: list[str] = []
    while len(text) > width and len(out) < lines:
        cut = text.rfind("/", width // 2, width)
        cut = width if cut < 0 else cut + 1
        out.append(text[:cut])
        text = text[cut:]
    if text and len(out) < lines:  # the rest fits on a line
        out.append(text)
    elif text:
        out[-1] = out[-1][: width - 1] + "\u2026"
    return out or [""]


def _story_node(s: StoryTrace, extra: str | None, focus: bool) -> _Node:
    foot = [f"published {_date(s.published_at)}"]
    if s.writer_agent:
        foot[0] += f" · by {clean_text(s.writer_agent)[:16]}"
        if s.writer_run:
            foot.append(f"run {clean_text(s.writer_run)[: WRAP - 4]}")
    if s.ingest is not None:
        foot.append(f"fetched by hcgraph {_date(s.ingest.retrieved_at)}")
    foot += url_lines(s.url, lines=2, width=WRAP + 4)
    if extra:
        foot.append(extra)
    tooltip = clean_text(s.headline or s.url)
    if s.ingest is not None and s.ingest.sha256:
        tooltip += f" (raw document sha256 {clean_text(s.ingest.sha256)})"
    return _Node(_name(s.url), "story", label_lines(s.headline or s.url, lines=3), foot=foot,
                 tooltip=tooltip, focus=focus)  # fmt: skip


def _part_node(p: Part, focus: bool) -> _Node:
    claims = len(p.claim_ids)
    manifests = len({c.manifest_id for c in p.citations})
    foot = [f"cites {claims} claim{'s' * (claims != 1)} in {manifests} "
            f"manifest{'s' * (manifests != 1)}" if p.citations else "cites nothing"]  # fmt: skip
    return _Node(_name(p.iri), "part", [f"{p.kind} {clean_text(p.key)}"],
                 body=label_lines(p.text, lines=3), foot=foot,
                 tooltip=f"{p.kind} {clean_text(p.key)}: {clean_text(p.text)}",
                 focus=focus)  # fmt: skip


def _manifest_nodes(pic: _Picture, mid: str, info: ManifestInfo | None, focus: bool) -> str:
    """The manifest → source document → publisher chain; returns the manifest's name."""
    iri = minted("manifest", mid)
    short = clean_text(mid)
    if info is None or not (info.titles or info.documents):
        return pic.add(_Node(_name(iri), "manifest", [f"manifest {short[:WRAP]}"],
                             body=["not listed by any story", "(dangling)"],
                             tooltip=f"manifest {short}: not listed by any story (dangling)",
                             focus=focus))  # fmt: skip
    date = info.published_date.isoformat() if info.published_date else "-"
    title = info.title or "(untitled)"
    node = pic.add(_Node(_name(iri), "manifest", label_lines(title, lines=2),
                         foot=[f"manifest {short[:WRAP]}", f"published {date}"],
                         tooltip=f"manifest {short}: {clean_text(title)} ({date})",
                         focus=focus))  # fmt: skip
    for doc in sorted(info.documents):
        url = info.source_url if len(info.documents) == 1 and info.source_url else doc
        source = pic.add(_Node(_name(doc), "source", ["source document"],
                               body=url_lines(url, lines=2, width=WRAP + 4),
                               foot=[f"published {date}"],
                               tooltip=f"source {clean_text(url)} published {date}"))  # fmt: skip
        pic.edge(node, source, "hadPrimarySource")
        for pub in sorted(info.publishers):
            publisher = pic.add(_Node(_name(minted("publisher", pub)), "publisher",
                                      label_lines(pub, lines=2), foot=["publisher"],
                                      tooltip=f"publisher {clean_text(pub)}"))  # fmt: skip
            pic.edge(source, publisher, "wasAttributedTo")
    return node


def _draw(tr: Trace) -> _Picture:
    pic = _Picture()
    many = tr.kind in ("manifest", "claim")
    shown = tr.stories[:MAX_STORIES] if many else tr.stories
    claim_node: str | None = None
    if tr.kind == "claim":
        claim = clean_text(tr.target)
        claim_node = pic.add(_Node(_name(minted("claim", tr.target)), "claim",
                                   [f"claim {claim[:WRAP]}"],
                                   foot=[f"cited by {tr.total_stories} stories"],
                                   tooltip=f"claim {claim}", focus=True))  # fmt: skip
    if tr.kind == "manifest":
        _manifest_nodes(pic, tr.target, tr.manifests.get(tr.target), True)
    for s in shown:
        parts = s.parts
        extra = None
        if many and len(parts) > MAX_PARTS:
            extra = f"+ {len(parts) - MAX_PARTS} more citing parts not drawn"
            parts = parts[:MAX_PARTS]
        story = pic.add(_story_node(s, extra, tr.kind == "story"))
        for p in parts:
            _draw_part(pic, tr, story, p, claim_node)
    hidden = max(tr.total_stories, len(tr.stories)) - len(shown)
    if many and hidden > 0:
        _draw_more(pic, tr, hidden, claim_node)
    return pic


def _focus_cites(tr: Trace, p: Part) -> list[tuple[str, tuple[str, ...]]]:
    """The part's (manifest id, claim ids) citations the trace is about."""
    cites = [(c.manifest_id, c.claim_ids) for c in p.citations]
    if tr.kind == "manifest":
        return [c for c in cites if c[0] == tr.target]
    if tr.kind == "claim":
        return [c for c in cites if tr.target in c[1]]
    return cites


def _draw_part(pic: _Picture, tr: Trace, story: str, p: Part, claim_node: str | None) -> None:
    """One part, its edge from the story, and its citations (through the claim, if focused)."""
    part = pic.add(_part_node(p, tr.kind == "part"))
    pic.edge(story, part, "hadMember")
    for mid, claims in _focus_cites(tr, p):
        tooltip = "cites claims " + (", ".join(claims) or "(none)")
        if claim_node is not None:
            pic.edge(part, claim_node, tooltip)
        manifest = _manifest_nodes(pic, mid, tr.manifests.get(mid), False)
        pic.edge(claim_node or part, manifest, tooltip if claim_node is None else "isPartOf")


def _draw_more(pic: _Picture, tr: Trace, hidden: int, claim_node: str | None) -> None:
    """The "… and N more" node for citing stories not drawn, linked to the focus."""
    more = pic.add(_Node('"more-citing-stories"', "more",
                         [f"\u2026 and {hidden} more"],
                         body=[f"citing stor{'ies' if hidden != 1 else 'y'} not drawn"],
                         foot=["trace --all --format md", "lists every one"],
                         tooltip=f"{hidden} more citing stories"))  # fmt: skip
    target = claim_node or (_name(minted("manifest", tr.target)) if tr.kind == "manifest" else None)
    if target is not None:
        pic.edge(more, target, f"{hidden} more citing stories", dashed=True)


def _title(tr: Trace) -> str:
    title = f"trace of {clean_text(tr.target)}"
    if len(title) > 90:
        title = title[:89] + "\u2026"
    title += f" ({tr.kind})"
    if tr.kind in ("manifest", "claim"):
        title += f": cited by {tr.total_stories} stor{'ies' if tr.total_stories != 1 else 'y'}"
    return title + f" · hcgraph {__version__}"


def to_dot(tr: Trace) -> str:
    """The trace's picture as Graphviz DOT text (see the module docstring)."""
    return _draw(tr).dot(_title(tr))


def to_svg(tr: Trace) -> str:
    """The trace's picture as SVG, drawn by Graphviz's ``dot``.

    Raises:
        ProvenanceError: Graphviz is missing or fails.
    """
    exe = shutil.which("dot")
    if exe is None:
        raise ProvenanceError("svg output needs Graphviz ('dot' on the PATH; apt install graphviz)")
    pic = _draw(tr)
    try:
        done = subprocess.run(
            [exe, "-Tsvg"],
            input=pic.dot(_title(tr)).encode("utf-8"),
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ProvenanceError(f"Graphviz could not draw the trace: {exc}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ProvenanceError(
            "Graphviz could not draw the trace: " + (message[0] if message else "dot failed")
        )
    return pic.titled(done.stdout.decode("utf-8"))
