"""``hcgraph trace --format dot|svg``: a picture people can read.

Checked on the SVG Graphviz draws (parsed as XML): top-down, bounded width, every node named
(headline, text, title, URL, publisher; no ``n1:`` qualified names), a manifest cited by many
stories summarised, and hostile text shown exactly as written (DOT and SVG escaping).
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hcgraph import Store, ingest_bytes
from hcgraph.provenance.prov_export import PROV_FORMATS
from hcgraph.provenance.trace_picture import MAX_STORIES
from hcgraph.provenance.tracing import trace
from hcsample.corpus import generate_corpus
from tests.conftest import SEED, SEED_URL
from tests.hostile import nul_headline_story
from tests.support.groundtruth import ground_truth

pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz (dot)")

SVG = "{http://www.w3.org/2000/svg}"
#: A paragraph's picture fits a screen's width (points).
SCREEN = 1600


class Drawn:
    """One node of the SVG: its kind (class), IRI and full text (its <title>, what a browser
    shows on hover: text, then IRI), label lines (bold ones apart) and height."""

    def __init__(self, g: ET.Element) -> None:
        self.kind = (g.get("class") or "").replace("node", "").strip()
        self.tooltip, _, self.title = (g.findtext(f"{SVG}title") or "").rpartition("\n")
        self.lines = [t.text or "" for t in g.iter(f"{SVG}text")]
        self.bold = [t.text or "" for t in g.iter(f"{SVG}text") if t.get("font-weight") == "bold"]
        ys = [float(t.get("y") or 0) for t in g.iter(f"{SVG}text")]
        self.y = sum(ys) / len(ys) if ys else 0.0

    @property
    def text(self) -> str:
        return " ".join(self.lines)


def parse(svg: str) -> tuple[float, float, list[Drawn]]:
    """(width pt, height pt, nodes) of a Graphviz SVG; raises if it is not XML."""
    root = ET.fromstring(svg.encode("utf-8"))
    width, height = (float(str(root.get(k)).removesuffix("pt")) for k in ("width", "height"))
    nodes = [Drawn(g) for g in root.iter(f"{SVG}g") if "node" in (g.get("class") or "").split()]
    return width, height, nodes


def _named(nodes: list[Drawn]) -> None:
    """Every node has a meaningful SVG title and text; no prov.dot qualified names."""
    assert nodes
    for n in nodes:
        assert n.title and (n.title.startswith("https://") or n.title == "more-citing-stories")
        assert n.text.strip() and n.tooltip.strip()
        for line in n.lines:
            assert not re.match(r"^n\d+:", line), line


def _one(nodes: list[Drawn], kind: str) -> Drawn:
    found = [n for n in nodes if n.kind == kind]
    assert len(found) == 1, (kind, [n.title for n in found])
    return found[0]


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, Any]]:
    seed = json.loads(SEED.read_text())
    return [seed, *generate_corpus(100, seed=7, include_seed=None).stories]


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory, corpus: list[dict[str, Any]]) -> Path:
    path = tmp_path_factory.mktemp("picture") / "store"
    with Store(path) as st:
        docs = [(json.dumps(s).encode(), f"s{i}.json") for i, s in enumerate(corpus)]
        assert not ingest_bytes(st, docs).failures
    return path


@pytest.fixture(scope="module")
def pstore(store_dir: Path) -> Iterator[Store]:
    with Store(store_dir, read_only=True) as st:
        yield st


def test_a_paragraphs_picture_is_top_down_named_and_fits_a_screen(
    pstore: Store, corpus: list[dict[str, Any]]
) -> None:
    seed = corpus[0]
    svg = PROV_FORMATS["svg"](trace(pstore, SEED_URL + "#s1-p1"))
    width, height, nodes = parse(svg)
    assert width <= SCREEN and height > 0
    _named(nodes)
    story, part = _one(nodes, "story"), _one(nodes, "part")
    # The story is named by its headline (bold, wrapped, maybe cut with an ellipsis).
    head = " ".join(story.bold).removesuffix("\u2026")
    assert head and seed["headline"].startswith(head)
    assert story.title == SEED_URL and story.tooltip.startswith(seed["headline"])
    para = seed["sections"][0]["paragraphs"][0]
    assert part.title == SEED_URL + "#s1-p1" and part.bold == ["paragraph s1-p1"]
    assert part.tooltip == "paragraph s1-p1: " + " ".join(para["markdown"].split())
    # Every manifest the paragraph cites, with its source document and publisher.
    listed = {str(m["manifest_id"]): m for m in seed["manifests"]}
    cited = {str(c["manifest_id"]) for c in para["cites"]}
    manifests = [n for n in nodes if n.kind == "manifest"]
    assert {n.title.rsplit("/", 1)[-1] for n in manifests} == cited
    for n in manifests:
        title = listed[n.title.rsplit("/", 1)[-1]]["title"]
        assert title.startswith(" ".join(n.bold).removesuffix("\u2026"))
    sources = {n.tooltip.split()[1] for n in nodes if n.kind == "source"}
    assert sources == {listed[m]["source_url"] for m in cited}
    publishers = {" ".join(n.bold) for n in nodes if n.kind == "publisher"}
    assert publishers == {listed[m]["source_name"] for m in cited}
    # Top-down: story above paragraph above manifests above sources above publishers.
    levels = ["story", "part", "manifest", "source", "publisher"]
    ys = {k: [n.y for n in nodes if n.kind == k] for k in levels}
    for upper, lower in itertools.pairwise(levels):
        assert max(ys[upper]) < min(ys[lower]), (upper, lower)


def test_a_storys_picture_is_bounded_too(pstore: Store, corpus: list[dict[str, Any]]) -> None:
    width, _, nodes = parse(PROV_FORMATS["svg"](trace(pstore, SEED_URL)))
    _named(nodes)
    seed = corpus[0]
    parts = sum(len(s["paragraphs"]) for s in seed["sections"]) + len(seed["key_facts"])
    assert len([n for n in nodes if n.kind == "part"]) == parts == 14
    assert width <= SCREEN  # 14 parts in rows of five, not one 14-wide rank


def test_a_manifest_cited_by_many_stories_is_summarised(
    store_dir: Path, corpus: list[dict[str, Any]], invoke: Any, tmp_path: Path
) -> None:
    truth = ground_truth(corpus)
    mid, citing = max(truth.manifest_citing_stories.items(), key=lambda kv: len(kv[1]))
    assert len(citing) == 70
    out = tmp_path / "m.svg"
    res = invoke("trace", mid, "--format", "svg", "--all", "-o", out, "--store", store_dir)
    assert res.exit_code == 0, res.output
    width, _, nodes = parse(out.read_text())
    _named(nodes)
    assert width <= SCREEN
    stories = [n for n in nodes if n.kind == "story"]
    assert len(stories) == MAX_STORIES and {n.title for n in stories} <= citing
    more = _one(nodes, "more")
    assert more.bold == [f"\u2026 and {len(citing) - MAX_STORIES} more"]
    manifest = _one(nodes, "manifest")
    assert manifest.title.endswith("/" + mid)
    # The DOT text is the same picture.
    res = invoke("trace", mid, "--format", "dot", "--store", store_dir)
    assert res.exit_code == 0 and res.output.startswith("digraph trace {")
    assert "rankdir=TB" in res.output and f"and {len(citing) - MAX_STORIES} more" in res.output


HOSTILE = 'Q "a" <b>x</b> & &amp; \\ \\N \\G {c|d} [e] </text> ]]>\nnext \\'
SHORT = 'a "b" <c> & &lt; \\N {d|e}'


def test_hostile_text_is_shown_exactly_as_written(tmp_path: Path) -> None:
    """Quotes, ``<``, ``&``, entity look-alikes, backslashes (``\\N`` is Graphviz's node-name
    escape), record characters and a newline: the SVG is XML, and each shows literally."""
    doc = json.loads(SEED.read_text())
    doc["headline"] = HOSTILE
    doc["sections"][0]["paragraphs"][0]["markdown"] = HOSTILE
    doc["manifests"][0]["title"] = SHORT
    doc["manifests"][0]["source_name"] = "pub {x|y} <z> & \\N"
    expected = " ".join(HOSTILE.split())  # the newline shows as a space
    with Store(None) as st:
        assert not ingest_bytes(st, [(json.dumps(doc).encode(), "h.json")]).failures
        tr = trace(st, SEED_URL)
        svg = PROV_FORMATS["svg"](tr)
        dot = PROV_FORMATS["dot"](tr)
    assert "\n" not in "".join(re.findall(r"label=<(.*?)>,", dot))
    _, _, nodes = parse(svg)
    _named(nodes)
    story = _one(nodes, "story")
    assert " ".join(story.bold) == expected
    assert story.tooltip.startswith(f"{expected} (raw document sha256 ")
    part = next(n for n in nodes if n.title.endswith("#s1-p1"))
    assert " ".join(part.lines[1:-1]) == expected
    assert part.tooltip == f"paragraph s1-p1: {expected}"
    mid = str(doc["manifests"][0]["manifest_id"])
    manifest = next(n for n in nodes if n.title.endswith("/" + mid))
    assert " ".join(manifest.bold) == SHORT
    publishers = [n for n in nodes if n.kind == "publisher" and n.text.startswith("pub ")]
    assert [" ".join(p.bold) for p in publishers] == ["pub {x|y} <z> & \\N"]
    assert publishers[0].tooltip == "publisher pub {x|y} <z> & \\N"


def test_a_nul_in_a_headline_is_drawn_as_a_space(tmp_path: Path, invoke: Any) -> None:
    """A headline holding NUL (ingest accepts it; XML 1.0 cannot carry it) made Graphviz
    fail, then was refused: now the picture is drawn, the NUL shown as a space."""
    store_dir = tmp_path / "store"
    assert invoke("ingest", nul_headline_story(SEED, tmp_path), "--store", store_dir).exit_code == 0
    out = tmp_path / "t.svg"
    res = invoke("trace", SEED_URL, "--format", "svg", "-o", out, "--store", store_dir)
    assert res.exit_code == 0, res.output
    _, _, nodes = parse(out.read_text())
    assert _one(nodes, "story").bold == ["a b"]
