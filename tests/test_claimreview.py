"""``hcgraph export --format claimreview``: the support verdicts as schema.org ClaimReview
JSON-LD, read back as RDF by a JSON-LD processor (pyld, with schema.org's context served
locally: the tests stay offline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import rdflib
from pyld import jsonld

from hcgraph.claimreview import claim_reviews, count_verdicts, write_claimreview
from hcgraph.exporting import FORMATS
from hcgraph.store import Store
from tests.test_claims import HOSTILE, TB_CLAIM, _changed_number, _pulled, _reply

SDO = rdflib.Namespace("https://schema.org/")
PROV_SOFTWARE = rdflib.URIRef("http://www.w3.org/ns/prov#SoftwareAgent")


def _loader(url: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """schema.org's context, as far as these documents need it: every term in its vocabulary
    (``@vocab``), with ``url`` and ``@id``-valued properties left as plain IRIs."""
    assert url.rstrip("/") in ("https://schema.org", "http://schema.org"), url
    context = {"@context": {"@vocab": "https://schema.org/", "url": {"@type": "@id"}}}
    return {"contextUrl": None, "documentUrl": url, "document": context}


def _graph(data: bytes) -> rdflib.Graph:
    """The triples a JSON-LD processor reads from the export."""
    doc = json.loads(data)
    nquads = jsonld.to_rdf(doc, {"format": "application/n-quads", "documentLoader": _loader})
    graph = rdflib.Graph()
    graph.parse(data=nquads, format="nquads")
    return graph


def _export(store_dir: Path) -> bytes:
    out = store_dir.parent / "claimreview.jsonld"
    with Store(store_dir, read_only=True) as store, out.open("wb") as handle:
        write_claimreview(store, handle)
    return out.read_bytes()


def test_one_claimreview_per_verdict_read_back_as_triples(tmp_path: Path) -> None:
    store_dir = _pulled(tmp_path, _changed_number())
    data = _export(store_dir)
    with Store(store_dir, read_only=True) as store:
        verdicts = count_verdicts(store)
    graph = _graph(data)
    reviews = set(graph.subjects(rdflib.RDF.type, SDO.ClaimReview))
    assert verdicts == 35 and len(reviews) == verdicts == len(json.loads(data))
    for review in reviews:
        assert graph.value(review, SDO.claimReviewed) is not None
        assert (review, SDO.url, None) in graph
        item = graph.value(review, SDO.itemReviewed)
        assert (item, rdflib.RDF.type, SDO.Claim) in graph
        appearance = graph.value(item, SDO.appearance)
        assert str(graph.value(appearance, SDO.url)).startswith(str(graph.value(review, SDO.url)))
        author = graph.value(review, SDO.author)
        assert (author, rdflib.RDF.type, PROV_SOFTWARE) in graph
        assert (author, rdflib.RDF.type, SDO.Organization) in graph
        assert graph.value(author, SDO.softwareVersion) is not None
        assert graph.value(review, SDO.datePublished) is not None
    ratings = {
        str(graph.value(graph.value(r, SDO.reviewRating), SDO.alternateName)) for r in reviews
    }
    assert ratings == {"TRUE", "FALSE", "OTHER"}


def test_ratings_map_to_claimskg_true_false_other(tmp_path: Path) -> None:
    with Store(_pulled(tmp_path, _changed_number()), read_only=True) as store:
        reviews = claim_reviews(store)
    by_rating: dict[str, list[dict[str, Any]]] = {}
    for review in reviews:
        by_rating.setdefault(review["reviewRating"]["alternateName"], []).append(review)
    assert {k: len(v) for k, v in by_rating.items()} == {"TRUE": 8, "FALSE": 2, "OTHER": 25}
    for review in by_rating["FALSE"]:
        rating = review["reviewRating"]
        assert (rating["name"], rating["ratingValue"], rating["worstRating"]) == (
            "unsupported", 0, 0)  # fmt: skip
        assert review["isBasedOn"]["identifier"] == TB_CLAIM
        assert "79.3%" in review["isBasedOn"]["text"] and "number" in review["reviewBody"]
        assert review["url"].rsplit("#", 1)[-1] in {"s1-p2", "kf1"}
    assert all(r["reviewRating"]["ratingValue"] == 1 for r in by_rating["TRUE"])
    assert all("ratingValue" not in r["reviewRating"] for r in by_rating["OTHER"])
    assert all(r["reviewRating"]["name"] == "not-checkable" for r in by_rating["OTHER"])
    # The claim's first appearance is the source its manifest's reply names.
    source = _reply()["source"]["url"]
    assert by_rating["TRUE"][0]["isBasedOn"]["firstAppearance"]["url"] == source


def test_same_store_same_bytes_sorted_by_id(tmp_path: Path) -> None:
    one = _export(_pulled(tmp_path / "a"))
    two = _export(_pulled(tmp_path / "b"))
    assert one == two
    ids = [r["@id"] for r in json.loads(one)]
    assert ids == sorted(ids)


def test_hostile_text_stays_text(tmp_path: Path) -> None:
    reply = _reply()
    for claim in reply["signal"]["claims"]:
        claim["text"] += HOSTILE
    reply["source"]["title"] = HOSTILE + "</script>"
    data = _export(_pulled(tmp_path, reply))
    assert b"<" not in data and b">" not in data and b"\x1b" not in data
    assert b"\\u003c/script\\u003e" in data
    texts = [r["isBasedOn"].get("text", "") for r in json.loads(data)]
    assert sum(t.endswith(HOSTILE) for t in texts) == 10  # read back exactly, as text
    graph = _graph(data)
    assert sum(str(o).endswith(HOSTILE) for o in graph.objects(None, SDO.text)) >= 1


def test_an_empty_store_gives_an_empty_list_and_a_note(invoke: Any, tmp_path: Path) -> None:
    with Store(tmp_path / "store") as store:
        assert claim_reviews(store) == []
    result = invoke(
        "export", "--format", "claimreview", "--store", tmp_path / "store",
        "--out", tmp_path / "cr.jsonld",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "cr.jsonld").read_text(encoding="utf-8")) == []
    assert "no support verdicts" in result.output and "manifests fetch" in result.output


def test_registered_as_an_export_format(invoke: Any, tmp_path: Path) -> None:
    assert FORMATS["claimreview"].media_type == "application/ld+json"
    store_dir = _pulled(tmp_path)
    result = invoke("export", "--format", "claimreview", "--store", store_dir)
    assert result.exit_code == 0
    reviews = json.loads(result.stdout)
    assert len(reviews) == 35 and all(r["@type"] == "ClaimReview" for r in reviews)
    assert "no support verdicts" not in result.output


@pytest.mark.parametrize("status,rating", [("supported", "TRUE"), ("unsupported", "FALSE"),
                                           ("not-checkable", "OTHER")])  # fmt: skip
def test_the_mapping_table(status: str, rating: str) -> None:
    from hcgraph.claimreview import CLAIMSKG_RATINGS

    assert CLAIMSKG_RATINGS[status] == rating
