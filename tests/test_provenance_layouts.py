"""trace and audit give the same answers in both store layouts.

Today each story graph repeats the descriptions of the manifests, claims, source documents,
publishers and writer agents it uses; the shared layout (issue 9) states them once, in shared
graphs. This test builds the second layout from the first by moving those descriptions into
one shared graph, and checks that every answer is unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pyoxigraph as ox
import pytest

from hcgraph import Store, ingest_bytes
from hcgraph.provenance import AuditOptions, audit, trace
from hcgraph.sample import generate_corpus
from hcgraph.vocab import ID
from tests.conftest import SEED, SEED_URL

SHARED = ox.NamedNode("https://w3id.org/hcgraph/graph/shared")
SHARED_KINDS = ("manifest/", "claim/", "publisher/", "agent/", "run/", "source/")


def _stores() -> tuple[Store, Store, list[dict[str, Any]]]:
    seed = json.loads(SEED.read_text())
    corpus = generate_corpus(80, seed=21, include_seed=seed).stories
    docs = [(json.dumps(s).encode(), f"s{i}") for i, s in enumerate(corpus)]
    today = Store(None)
    assert not ingest_bytes(today, docs).failures
    docs_iris = {q.object for q in today.ox.quads_for_pattern(
        None, ox.NamedNode("http://www.w3.org/ns/prov#hadPrimarySource"), None, None)}  # fmt: skip
    shared = Store(None)
    moved = set()
    for q in today.ox:
        s = q.subject
        is_shared = isinstance(s, ox.NamedNode) and (
            any(s.value.startswith(f"{ID}{k}") for k in SHARED_KINDS) or s in docs_iris
        )
        if is_shared:
            moved.add(ox.Quad(s, q.predicate, q.object, SHARED))
        else:
            shared.ox.add(q)
    shared.ox.extend(moved)
    assert len(shared) < len(today)
    return today, shared, corpus


@pytest.fixture(scope="module")
def layouts() -> Iterator[tuple[Store, Store, list[dict[str, Any]]]]:
    today, shared, corpus = _stores()
    yield today, shared, corpus
    today.close()
    shared.close()


def _key(report: Any) -> list[tuple[str, str, str, str]]:
    return [(f.story, f.check, f.message, json.dumps(f.evidence, sort_keys=True))
            for f in report.findings]  # fmt: skip


def test_audit_is_the_same_in_both_layouts(layouts: Any) -> None:
    today, shared, _corpus = layouts
    opts = AuditOptions(max_source_age=4, repeat_threshold=0.5)
    a, b = audit(today, options=opts), audit(shared, options=opts)
    assert a.findings and _key(a) == _key(b)
    assert {f.check for f in a.findings} >= {"claim-conflict", "dangling-manifest", "repeat"}
    assert a.source_ages == b.source_ages and a.publisher_citations == b.publisher_citations
    named = [*sorted({f.story for f in a.findings})[:6], SEED_URL]
    for url in named:
        assert _key(audit(today, [url], opts)) == _key(audit(shared, [url], opts)), url


def test_trace_is_the_same_in_both_layouts(layouts: Any) -> None:
    today, shared, corpus = layouts
    manifest = str(corpus[0]["manifests"][0]["manifest_id"])
    claim = str(corpus[0]["key_facts"][0]["cites"][0]["claim_ids"][0])
    for target in (SEED_URL, SEED_URL + "#s2-p1", manifest, claim, corpus[9]["url"]):
        assert trace(today, target).as_dict() == trace(shared, target).as_dict(), target
