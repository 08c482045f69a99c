"""One Markdown escaper (``hcgraph.mdtext``), checked by a CommonMark renderer.

Hostile text goes through each escaper and through every Markdown output (``query --format
md``, trace, audit, history); markdown-it-py renders the result (CommonMark, plus GFM
tables and strikethrough) and the HTML must show the very text: no emphasis, link, image,
raw HTML, entity or extra table cell comes alive.
"""

from __future__ import annotations

import io
import json
from html.parser import HTMLParser
from pathlib import Path

import pyoxigraph as ox
import pytest
from markdown_it import MarkdownIt

from hcgraph import Store, ingest_bytes
from hcgraph.mdtext import md_cell, md_code, md_text, md_url
from hcgraph.queries import QueryResult
from hcgraph.results import write_md

HOSTILE = [
    "**bold** and __strong__",
    "_it_ and *it*",
    "`code` and ``more``",
    "[x](javascript:alert(1)) and ![i](https://evil.example/i.png)",
    "<img src=x onerror=alert(1)> <script>alert(1)</script>",
    "&amp; &lt;b&gt; &#60;b&#62; &copy;",
    "a | b || c",
    "back\\slash \\* \\_ \\",
    "<https://evil.example/> and <mailto:x@evil.example>",
    "~~struck~~ and $x^2$",
    "# not a heading #",
    "[ref]: https://evil.example/",
    "trailing backslash \\",
]

RENDER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
#: What hcgraph's own Markdown may make: structure, code spans, its links, its <br>, the
#: audit's bold check names.
OWN = {"p", "h1", "h2", "ul", "li", "table", "thead", "tbody", "tr", "th", "td", "code", "br", "a"}
OWN.add("strong")


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _rendered(markdown: str) -> _Html:
    parser = _Html()
    parser.feed(RENDER.render(markdown))
    return parser


def _inert(markdown: str, *, links: set[str] | None = None) -> str:
    """The text the rendered HTML shows; fails on any element hcgraph did not mean."""
    html = _rendered(markdown)
    for tag, attrs in html.tags:
        assert tag in OWN, f"live <{tag}> from {markdown!r}"
        if tag == "a":
            assert links is not None and attrs.get("href") in links, (markdown, attrs)
    return " ".join("".join(html.text).split())


@pytest.mark.parametrize("text", HOSTILE)
def test_md_text_renders_as_the_text(text: str) -> None:
    assert _inert(md_text(text)) == " ".join(text.split())
    assert _inert(f"## {md_text(text)}") == " ".join(text.split())  # a heading too
    assert _inert(f"- item: {md_text(text)}") == "item: " + " ".join(text.split())


@pytest.mark.parametrize("text", HOSTILE)
def test_md_cell_keeps_one_cell(text: str) -> None:
    table = f"| a | b |\n|---|---|\n| {md_cell(text)} | {md_cell(text + chr(10) + 'x')} |\n"
    html = _rendered(table)
    assert [t for t, _ in html.tags].count("td") == 2
    assert "".join(html.text).count(text) == 2 and "x" in "".join(html.text)
    assert [t for t, _ in html.tags].count("br") == 1  # the cell's own line break


@pytest.mark.parametrize("text", HOSTILE)
def test_md_code_is_literal(text: str) -> None:
    html = _rendered(f"- {md_code(text)}")
    assert [t for t, _ in html.tags] == ["ul", "li", "code"]
    assert "".join(html.text).strip() == " ".join(text.split())


@pytest.mark.parametrize(
    "url",
    [
        'https://example.org/a b<c>"d\\e',
        "https://example.org/?a=1&amp;b=<2>",
        "javascript:alert(1)",
        "https://example.org/`x`*y*_z_",
    ],
)
def test_md_url_links_only_http(url: str) -> None:
    rendered = md_url(url)
    html = _rendered(rendered)
    hrefs = [a.get("href") for t, a in html.tags if t == "a"]
    assert all(h and h.startswith(("http://", "https://")) for h in hrefs)
    assert bool(hrefs) == url.startswith("https://")
    assert {t for t, _ in html.tags} <= {"p", "a", "code"}


def test_control_and_bidi_characters_are_escaped() -> None:
    text = "a\x1b[31mb\u202ec\x85d"
    for rendered in (md_text(text), md_cell(text), md_code(text)):
        assert "\x1b" not in rendered and "\u202e" not in rendered and "\x85" not in rendered
    assert _inert(md_text(text)) == "a\\x1b[31mb\\u202ec d"  # NEL: a line break, one line


def test_query_markdown_table_is_inert() -> None:
    rows = [(ox.Literal(t), ox.NamedNode("https://example.org/x_y#z")) for t in HOSTILE]
    out = io.StringIO()
    write_md(QueryResult(("text", "iri"), rows), out)
    html = _rendered(out.getvalue())
    cells = [t for t, _ in html.tags if t == "td"]
    assert len(cells) == 2 * len(HOSTILE)
    assert {t for t, _ in html.tags} <= {"table", "thead", "tbody", "tr", "th", "td"}
    shown = "".join(html.text)
    assert all(t in shown for t in HOSTILE) and "https://example.org/x_y#z" in shown


def test_trace_audit_and_history_markdown_are_inert(seed_path: Path, tmp_path: Path) -> None:
    from hcgraph.provenance.auditing import AuditOptions, audit
    from hcgraph.provenance.auditing import render_markdown as audit_md
    from hcgraph.provenance.tracing import render_markdown as trace_md
    from hcgraph.provenance.tracing import trace
    from hcgraph.provenance.versions import history
    from hcgraph.provenance.versions import render_markdown as history_md

    doc = json.loads(seed_path.read_text())
    doc["headline"] = " ".join(HOSTILE)
    for i, m in enumerate(doc["manifests"]):
        m["title"] = HOSTILE[i % len(HOSTILE)]
        m["source_name"] = HOSTILE[(i + 3) % len(HOSTILE)]
    doc["publishers"] = [HOSTILE[5]]  # declared, not derived: an audit finding quoting it
    para = doc["sections"][0]["paragraphs"][0]
    para["markdown"] = " ".join(HOSTILE)
    with Store(tmp_path / "s") as store:
        assert ingest_bytes(store, [(json.dumps(doc).encode(), "x.json")]).ok
        url = doc["url"]
        links = {url, *(m["source_url"] for m in doc["manifests"])}
        shown = _inert(trace_md(trace(store, url)), links=links)
        assert " ".join(HOSTILE) in shown  # headline and paragraph, whole and literal
        assert all(m["title"] in shown for m in doc["manifests"])
        shown = _inert(audit_md(audit(store, None, AuditOptions())), links=links)
        assert " ".join(HOSTILE) in shown and HOSTILE[5] in shown
        _inert(history_md(history(store, url)), links=links)
