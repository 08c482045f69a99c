"""The graph layout: each thing stated once, the union a set, replace and remove exact."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from hcgraph.ingest import ingest_bytes
from hcgraph.pipeline import remove_story
from hcgraph.store import Store
from hcgraph.vocab import SHARED_GRAPHS
from hcsample.corpus import generate_corpus

EPOCH = "1790000000"


def _docs(stories: list[dict[str, Any]]) -> list[tuple[bytes, str]]:
    return [(json.dumps(s).encode(), f"{s['slug']}.json") for s in stories]


def _fresh(stories: list[dict[str, Any]]) -> Store:
    store = Store(None)
    report = ingest_bytes(store, _docs(stories))
    assert report.ok
    return store


def _graphs(store: Store, skip: str | None = None) -> dict[str, list[bytes]]:
    return {g: store.sorted_lines(g) for g in store.graph_names() if g != skip}


@pytest.fixture(autouse=True)
def _fixed_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)


@pytest.fixture(scope="module")
def corpus(seed_story: dict[str, Any]) -> list[dict[str, Any]]:
    return generate_corpus(120, seed=11, include_seed=seed_story).stories


@pytest.fixture(scope="module")
def seed_story() -> dict[str, Any]:
    path = Path(__file__).parent / "fixtures" / "agentic-rl-production.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_union_is_a_set(corpus: list[dict[str, Any]]) -> None:
    store = _fresh(corpus)
    total = store.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
    distinct = store.query(
        "SELECT (COUNT(*) AS ?n) WHERE { SELECT DISTINCT ?s ?p ?o WHERE { ?s ?p ?o } }"
    )
    n, d = int(next(iter(total))["n"].value), int(next(iter(distinct))["n"].value)
    assert n == d == len(store)


def test_shared_things_are_stated_once(corpus: list[dict[str, Any]]) -> None:
    store = _fresh(corpus)
    # No story graph describes a manifest, claim or publisher: that lives in shared graphs.
    rows = store.query(
        "SELECT ?g WHERE { GRAPH ?g { ?x a ?t } VALUES ?t { hc:Manifest hc:Claim hc:Publisher } }"
    )
    assert {r["g"].value for r in rows} <= set(SHARED_GRAPHS.values())
    # and each manifest's title appears once however many stories cite it
    rows = store.query(
        "SELECT ?m (COUNT(*) AS ?n) WHERE { ?m dcterms:title ?t } GROUP BY ?m HAVING (?n > 1)"
    )
    conflicts = {r["m"].value for r in rows}
    titles: dict[str, set[str]] = {}
    for story in corpus:
        for m in story.get("manifests", []):
            if m.get("title"):
                titles.setdefault(str(m["manifest_id"]), set()).add(m["title"])
    assert len(conflicts) == sum(1 for t in titles.values() if len(t) > 1)


def test_remove_story_retracts_exactly_its_contribution(corpus: list[dict[str, Any]]) -> None:
    store = _fresh(corpus)
    for victim in (corpus[0], corpus[5], corpus[17]):  # the real seed and two generated
        assert remove_story(store, victim["url"])
        corpus = [s for s in corpus if s["url"] != victim["url"]]
        assert _graphs(store) == _graphs(_fresh(corpus))
    assert not remove_story(store, "https://news.example.org/no/such/story/")


def test_replace_story_retracts_what_only_the_old_version_said(
    corpus: list[dict[str, Any]],
) -> None:
    store = _fresh(corpus)
    changed = copy.deepcopy(corpus[3])
    changed["headline"] = "Changed"
    changed["sections"] = changed["sections"][:1]  # drop the citations of later sections
    for m in changed["manifests"]:
        m["title"] = "Retitled " + str(m.get("title"))
    report = ingest_bytes(store, _docs([changed]))
    assert report.count("replaced") == 1
    expected = _fresh([*(s for s in corpus if s["url"] != changed["url"]), changed])
    # every graph but the replaced story's own (which also records its revision) is exact
    assert _graphs(store, skip=changed["url"]) == _graphs(expected, skip=changed["url"])
    old = set(store.sorted_lines(changed["url"])) - set(expected.sorted_lines(changed["url"]))
    assert old and all(b"wasRevisionOf" in line or b"/id/raw/" in line for line in old)


def test_conflicting_descriptions_are_kept_until_their_last_story_goes(
    seed_story: dict[str, Any],
) -> None:
    a = copy.deepcopy(seed_story)
    b = copy.deepcopy(seed_story)
    b["url"] = "https://hangingcontext.com/stories/2026-10-21/other/"
    b["id"] = "1999999999999999999"
    b["manifests"][0]["title"] = "A different title for the same manifest"
    mid = str(a["manifests"][0]["manifest_id"])
    store = _fresh([a, b])
    query = "SELECT ?t ?id WHERE { ?m dcterms:identifier ?id ; dcterms:title ?t }"

    def titles() -> set[str]:
        from pyoxigraph import Literal

        return {r["t"].value for r in store.query(query, bindings={"id": Literal(mid)})}

    assert titles() == {a["manifests"][0]["title"], b["manifests"][0]["title"]}
    remove_story(store, b["url"])
    assert titles() == {a["manifests"][0]["title"]}
    remove_story(store, a["url"])
    assert titles() == set() and len(store) == 0


def test_same_corpus_any_order_same_graphs(corpus: list[dict[str, Any]]) -> None:
    assert _graphs(_fresh(corpus)) == _graphs(_fresh(list(reversed(corpus))))


def test_many_bulk_load_segments_give_the_same_graphs(
    corpus: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Long ingests are cut into bulk-load segments that finish while the next is fed."""
    import hcgraph.pipeline as pipeline

    expected = _graphs(_fresh(corpus))
    from hcgraph.ingest import ingest_documents

    monkeypatch.setattr(pipeline, "SEGMENT", 3000)  # a segment ends after every batch
    store = Store(None)
    docs = (pipeline.Document(body, source) for body, source in _docs(corpus))
    report = ingest_documents(store, docs, batch_size=10)
    assert report.ok and report.count("added") == len(corpus)
    assert _graphs(store) == expected
    assert not store.ledger.dirty and store.ledger.pending() == []


def test_user_counts_stay_exact_across_replace_add_and_remove(
    corpus: list[dict[str, Any]],
) -> None:
    """A replacement counts each description's users in memory; the stories added and
    removed after it (same run, same ledger) must keep those counts exact."""
    store = _fresh(corpus[:60])
    changed = copy.deepcopy(corpus[3])
    changed["sections"] = changed["sections"][:1]
    assert ingest_bytes(store, _docs([changed])).count("replaced") == 1
    assert store.ledger._users is not None  # the counts are live from here on
    assert ingest_bytes(store, _docs(corpus[60:])).count("added") == len(corpus) - 60
    for victim in (corpus[7], corpus[70], changed):
        assert remove_story(store, victim["url"])
    gone = {corpus[7]["url"], corpus[70]["url"], changed["url"]}
    expected = _fresh([s for s in corpus if s["url"] not in gone])
    assert _graphs(store) == _graphs(expected)
