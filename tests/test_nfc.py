"""Literals are NFC-normalised on the way in; the raw bytes stay as they came (issue 39).

Stores that do not normalise Unicode (Amazon Neptune's bulk loader) match a literal only in
the form it was written: ``Café`` as ``e`` + U+0301 (NFD) and as ``é`` (NFC) are two strings
there. hcgraph writes every literal NFC; the raw archive and the recorded SHA-256 keep the
bytes as fetched, so a rebuild maps the same bytes to the same graph.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from pathlib import Path

import pyoxigraph as ox
import pytest

from hcgraph.archive import Archive
from hcgraph.ingest import ingest_bytes
from hcgraph.queries import run_query
from hcgraph.rdftext import literal, nfc, typed
from hcgraph.store import Store
from tests.crawlserver import CrawlServer, Site, page, story

NFD = "Cafe\u0301 cre\u0300me"  # "Café crème", decomposed
NFC = unicodedata.normalize("NFC", NFD)
URL = "https://hangingcontext.com/stories/cafe/"


def _nfd_story(url: str = URL) -> bytes:
    """A small story whose headline, paragraph and manifest title are NFD text."""
    doc = json.loads(story("cafe"))
    doc.update(url=url, headline=f"{NFD} headline", slug="cafe")
    doc["sections"][0]["paragraphs"][0]["markdown"] = f"A paragraph on {NFD}."
    doc["manifests"][0]["title"] = f"{NFD} source"
    raw = json.dumps(doc, ensure_ascii=False).encode()
    assert NFD.encode() in raw and NFC.encode() not in raw
    return raw


def test_nfd_and_nfc_differ_and_nfc_is_the_identity_on_normal_text() -> None:
    assert NFD != NFC and len(NFD) == len(NFC) + 2
    assert nfc(NFD) == NFC
    for text in ("plain ascii", NFC, "emoji 🦜 and ünïcödé"):
        assert nfc(text) is text  # the fast path: no copy
    assert literal(NFD) == literal(NFC) == f'"{NFC}"'
    assert typed(json.dumps({"t": NFD}, ensure_ascii=False), "urn:dt") == (
        '"{\\"t\\": \\"' + NFC + '\\"}"^^<urn:dt>'
    )


def test_ingest_stores_nfc_and_records_the_raw_bytes(store: Store) -> None:
    raw = _nfd_story()
    assert ingest_bytes(store, [(raw, "cafe.json")]).ok
    texts = [row["t"].value for row in store.query(
        "SELECT ?t WHERE { { ?x schema:headline ?t } UNION { ?x schema:text ?t }"
        " UNION { ?x dcterms:title ?t } }"
    )]  # fmt: skip
    assert sorted(texts) == sorted([f"{NFC} headline", f"A paragraph on {NFC}.", f"{NFC} source"])
    assert not any(unicodedata.combining(c) for t in texts for c in t)
    # What the graph says it was built from is the bytes as given, not a normalised copy.
    assert store.raw_sha256(URL) == hashlib.sha256(raw).hexdigest()
    # SPARQL matching the NFC literal finds the story; a query parameter given as NFD too.
    hits = store.query(f'SELECT ?s WHERE {{ ?s schema:headline "{NFC} headline" }}')
    assert [row["s"].value for row in hits] == [URL]
    q = "SELECT ?s ?h WHERE { ?s schema:headline ?h }"
    bound = store.query(q, bindings={"h": ox.Literal(f"{NFD} headline")})
    assert list(bound) == []  # the store holds one form only: the NFD literal is not in it
    # The same bytes again: the same story, unchanged (identity is by raw bytes).
    assert ingest_bytes(store, [(raw, "cafe.json")]).count("unchanged") == 1


def test_query_parameters_are_normalised_like_the_literals(store: Store, tmp_path: Path) -> None:
    assert ingest_bytes(store, [(_nfd_story(), "cafe.json")]).ok
    rq = tmp_path / "by-headline.rq"
    rq.write_text(
        "# title: A story by its headline\n# param: headline literal -- the headline\n"
        "SELECT ?s ?headline WHERE { ?s schema:headline ?headline }\n"
    )
    result = run_query(store, rq, params={"headline": f"{NFD} headline"})
    assert [row["s"] for row in result.records()] == [URL]


@pytest.mark.slow
def test_a_crawled_nfd_story_keeps_its_bytes_in_the_archive(
    crawl_server: CrawlServer, tmp_path: Path
) -> None:
    site = Site(crawl_server)
    raw = _nfd_story(page("a"))
    site.add("a", raw)
    report = site.crawl(tmp_path / "st")
    assert report.exit_code == 0
    with Store(tmp_path / "st", read_only=True) as st:
        sha = st.raw_sha256(page("a"))
        [row] = st.query("SELECT ?h WHERE { ?s schema:headline ?h }")
        assert row["h"].value == f"{NFC} headline"
    assert sha == hashlib.sha256(raw).hexdigest()
    with Archive(tmp_path / "st" / "archive") as archive:
        assert archive.get_body(sha) == raw  # byte for byte: NFD as served
