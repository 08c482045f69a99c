"""``hcgraph trace``: the provenance chain equals the ground truth, PROV round-trips."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hcgraph import Store, ingest_bytes
from hcgraph.errors import ProvenanceError
from hcgraph.provenance.prov_export import PROV_FORMATS, to_prov_document
from hcgraph.provenance.tracing import trace
from hcsample.corpus import generate_corpus
from tests.conftest import SEED, SEED_URL


def _stories() -> list[dict[str, Any]]:
    seed = json.loads(SEED.read_text())
    return [seed, *generate_corpus(30, seed=5, include_seed=None).stories]


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, Any]]:
    return _stories()


@pytest.fixture(scope="module")
def tstore(corpus: list[dict[str, Any]]) -> Iterator[Store]:
    with Store(None) as st:
        docs = [(json.dumps(s).encode(), f"s{i}.json") for i, s in enumerate(corpus)]
        assert not ingest_bytes(st, docs).failures
        yield st


def _expected_parts(story: dict[str, Any]) -> dict[str, tuple[str, set[tuple[str, str]]]]:
    """Part key -> (text, {(manifest_id, claim_id)}) straight from the JSON."""
    out = {}
    for i, section in enumerate(story.get("sections") or [], 1):
        for j, para in enumerate(section.get("paragraphs") or [], 1):
            pairs = {(str(c["manifest_id"]), str(x)) for c in para.get("cites") or []
                     for x in c.get("claim_ids") or []}  # fmt: skip
            out[f"s{i}-p{j}"] = (para["markdown"], pairs)
    for k, fact in enumerate(story.get("key_facts") or [], 1):
        pairs = {(str(c["manifest_id"]), str(x)) for c in fact.get("cites") or []
                 for x in c.get("claim_ids") or []}  # fmt: skip
        out[f"kf{k}"] = (fact["text"], pairs)
    return out


def test_story_chain_equals_ground_truth(tstore: Store, corpus: list[dict[str, Any]]) -> None:
    for story in corpus[:12]:
        tr = trace(tstore, story["url"])
        assert tr.kind == "story" and len(tr.stories) == 1
        st = tr.stories[0]
        assert st.writer_agent == story["writer"]["agent"]
        assert st.writer_run == str(story["writer"]["run_id"])
        assert st.ingest is not None and st.ingest.sha256 and st.ingest.source
        got = {p.key: (p.text, {(c.manifest_id, x) for c in p.citations for x in c.claim_ids})
               for p in st.parts}  # fmt: skip
        assert got == _expected_parts(story)
        listed = {str(m["manifest_id"]): m for m in story["manifests"]}
        for mid, info in tr.manifests.items():
            if mid in listed:
                assert info.title == listed[mid]["title"]
                assert info.publishers == {listed[mid]["source_name"]}
                assert info.source_url == listed[mid]["source_url"]
                assert info.published_date is not None
                assert info.published_date.isoformat() == listed[mid]["published_date"]


def test_part_manifest_and_claim_targets(tstore: Store, corpus: list[dict[str, Any]]) -> None:
    seed = corpus[0]
    tr = trace(tstore, SEED_URL + "#s2-p1")
    assert tr.kind == "part" and [p.key for p in tr.stories[0].parts] == ["s2-p1"]
    assert tr.stories[0].parts[0].text == seed["sections"][1]["paragraphs"][0]["markdown"]
    mid = str(seed["manifests"][0]["manifest_id"])
    expected: set[tuple[str, str]] = set()
    for story in corpus:
        for key, (_, pairs) in _expected_parts(story).items():
            if any(m == mid for m, _ in pairs):
                expected.add((story["url"], key))
    tr = trace(tstore, mid)
    assert tr.kind == "manifest"
    assert {(s.url, p.key) for s in tr.stories for p in s.parts} == expected
    claim = "1792440033556282600"
    tr = trace(tstore, claim)
    assert tr.kind == "claim"
    want = {(s["url"], k) for s in corpus for k, (_, pairs) in _expected_parts(s).items()
            if any(c == claim for _, c in pairs)}  # fmt: skip
    assert {(s.url, p.key) for s in tr.stories for p in s.parts} == want


def test_unknown_targets_are_one_line_errors(tstore: Store) -> None:
    for bad in ("https://nowhere.example/x/", SEED_URL + "#s99-p1", "123", "not a thing"):
        with pytest.raises(ProvenanceError):
            trace(tstore, bad)


def test_prov_json_round_trips_through_prov(tstore: Store) -> None:
    from prov.model import ProvDocument

    tr = trace(tstore, SEED_URL)
    text = PROV_FORMATS["provjson"](tr)
    back = ProvDocument.deserialize(content=text, format="json")
    assert back == to_prov_document(tr)
    uris = {str(r.identifier.uri) for r in back.get_records() if r.identifier is not None}
    assert SEED_URL in uris and SEED_URL + "#s2-p1" in uris
    assert "https://w3id.org/hcgraph/id/claim/1792440033556282600" in uris
    assert "https://huggingface.co/papers/2610.22448" in uris


def test_provn_matches_the_document_and_round_trips(tstore: Store) -> None:
    # prov has no PROV-N reader: check the text is the document's own PROV-N, then that the
    # same document survives prov's PROV-JSON reader.
    from prov.model import ProvDocument

    tr = trace(tstore, SEED_URL + "#s1-p1")
    text = PROV_FORMATS["provn"](tr)
    doc = to_prov_document(tr)
    assert text.strip() == doc.get_provn().strip()
    assert text.startswith("document") and text.strip().endswith("endDocument")
    assert "wasDerivedFrom(" in text and "prov:PrimarySource" in text
    back = ProvDocument.deserialize(content=PROV_FORMATS["provjson"](tr), format="json")
    assert back == doc


# The dot/svg picture: tests/test_trace_picture.py.


def test_cli_formats(tstore: Store, tmp_path: Path, invoke: Any, seed_path: Path) -> None:
    store_dir = tmp_path / "store"
    assert invoke("ingest", seed_path, "--store", store_dir).exit_code == 0
    res = invoke("trace", SEED_URL + "#s1-p1", "--store", store_dir)
    assert res.exit_code == 0 and "1792440033556282600" in res.output
    res = invoke("trace", SEED_URL, "--format", "json", "--store", store_dir)
    assert json.loads(res.output)["kind"] == "story"
    res = invoke("trace", "1792440033556282600", "--format", "md", "--store", store_dir)
    assert "s1-p1" in res.output
    out = tmp_path / "t.provn"
    res = invoke("trace", SEED_URL, "--format", "provn", "-o", out, "--store", store_dir)
    assert res.exit_code == 0 and out.read_text().startswith("document")
    res = invoke("trace", "999", "--store", store_dir)
    assert res.exit_code == 1


def test_limit_caps_the_stories_detailed(tstore: Store, corpus: list[dict[str, Any]]) -> None:
    from tests.support.groundtruth import ground_truth

    citing = ground_truth(corpus).manifest_citing_stories
    mid = max(citing, key=lambda m: len(citing[m]))
    full = trace(tstore, mid)
    assert {s.url for s in full.stories} == citing[mid]
    assert full.total_stories == len(full.stories) > 1
    short = trace(tstore, mid, limit=1)
    assert short.total_stories == full.total_stories and len(short.stories) == 1
    assert short.stories[0].url in {s.url for s in full.stories}


def _html(markdown: str) -> str | None:
    """The CommonMark HTML of ``markdown`` (markdown-it-py), or None without it."""
    try:
        from markdown_it import MarkdownIt
    except ImportError:
        return None
    return str(MarkdownIt("commonmark").render(markdown))


HOSTILE_URL = "https://a.example/<img src=x onerror=alert(1)>"


def test_markdown_keeps_urls_and_code_inert(tmp_path: Path, invoke: Any) -> None:
    """A manifest's source_url, a publisher and the writer agent from a story are shown,
    never parsed as HTML: the URL is percent-encoded inside its autolink, code spans get a
    fence longer than any backtick run in them (story and manifest traces alike)."""
    story = json.loads(SEED.read_text())
    manifest = story["manifests"][0]
    manifest["source_url"] = HOSTILE_URL
    manifest["source_name"] = "pub`<img src=x onerror=alert(2)>`"
    story["writer"]["agent"] = "m``<img src=x onerror=alert(3)>`"
    doc = tmp_path / "hostile.json"
    doc.write_text(json.dumps(story))
    store_dir = tmp_path / "store"
    assert invoke("ingest", doc, "--store", store_dir).exit_code == 0
    for target in (SEED_URL, manifest["manifest_id"]):
        res = invoke("trace", target, "--format", "md", "--store", store_dir)
        assert res.exit_code == 0
        md = res.output
        assert "<https://a.example/%3Cimg%20src=x%20onerror=alert(1)%3E>" in md
        assert "``` m``<img src=x onerror=alert(3)>` ```" in md
        html = _html(md)
        if html is not None:
            assert "<img" not in html, html
            assert 'href="https://a.example/%3Cimg%20src=x%20onerror=alert(1)%3E"' in html
            assert "m``&lt;img src=x onerror=alert(3)&gt;`" in html


@pytest.mark.parametrize(
    ("url", "link"),
    [(HOSTILE_URL, True), ("img src=x onerror=alert(1)", False),
     ("javascript:alert(1)", False), ('https://a"b c\\d\n<x>', True)],
)  # fmt: skip
def test_md_url_never_lets_html_through(url: str, link: bool) -> None:
    """Only http(s) URLs become autolinks; anything else is a code span (a ``<...>`` that is
    not an autolink would be raw HTML)."""
    from hcgraph.provenance.tracing import md_url

    rendered = md_url(url)
    assert "\n" not in rendered and rendered.startswith("<" if link else "`")
    html = _html(f"- source {rendered}")
    if html is not None:
        assert "<img" not in html and "<x>" not in html, html
        assert ("<a href=" in html) is link, html
