"""Review of the outputs (2026-12-07): ``hcgraph serve`` answers in XML (SPARQL results XML,
RDF/XML) only what XML 1.0 can carry.

A story may hold a C0 control (U+0001) in its headline: JSON, N-Triples and Turtle escape it,
XML 1.0 has no way to. ``hcgraph query --format xml`` refuses such an answer in one line; over
HTTP the same answer must not come back as a 200 that no XML parser reads.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from urllib.parse import urlencode

import pytest

from hcgraph import Endpoint, Store, ingest_bytes
from tests.conftest import SEED, SEED_URL

pytestmark = pytest.mark.slow

HEADLINE = "before \x01 after"


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    directory = tmp_path_factory.mktemp("serve") / "store"
    doc = json.loads(SEED.read_text())
    doc["headline"] = HEADLINE
    with Store(directory) as st:
        assert not ingest_bytes(st, [(json.dumps(doc).encode(), "ctrl.json")]).failures
    with Endpoint(directory, port=0) as ep:
        yield ep


def _get(ep: Endpoint, query: str, accept: str) -> tuple[int, bytes]:
    url = ep.query_url + "?" + urlencode({"query": query})
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


PATTERN = f"<{SEED_URL}> <https://schema.org/headline> ?h"
SELECT = f"SELECT ?h {{ {PATTERN} }}"
CONSTRUCT = f"CONSTRUCT {{ {PATTERN} }} WHERE {{ {PATTERN} }}"


@pytest.mark.parametrize(
    ("query", "accept"),
    [(SELECT, "application/sparql-results+xml"), (CONSTRUCT, "application/rdf+xml")],
)
def test_xml_answer_is_xml_or_refused(endpoint: Endpoint, query: str, accept: str) -> None:
    status, body = _get(endpoint, query, accept)
    if status == 200:
        ET.fromstring(body)  # a 200 must be XML a parser reads
    else:
        assert status == 400
        assert b"U+0001" in body and b"XML 1.0" in body


def test_json_carries_the_control(endpoint: Endpoint) -> None:
    status, body = _get(endpoint, SELECT, "application/sparql-results+json")
    assert status == 200
    assert json.loads(body)["results"]["bindings"][0]["h"]["value"] == HEADLINE
