"""`hcgraph history` of stories ingested from local files: no archived bodies, yet every
version the store holds is compared (issue 41 item 5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from hcgraph import Store, ingest_bytes
from hcgraph.model import parse_story
from hcgraph.provenance.versions import history
from hcgraph.version_content import Content, from_graph, from_story
from hcgraph.vocab import HC
from hcsample.corpus import generate_corpus


def _write(path: Path, doc: dict[str, Any]) -> None:
    path.write_text(json.dumps(doc), encoding="utf-8")


def test_two_ingests_of_a_changed_file_show_the_changed_headline(
    invoke: Any, tmp_path: Path, seed_bytes: bytes
) -> None:
    doc = json.loads(seed_bytes)
    story, store = tmp_path / "in" / "story.json", tmp_path / "store"
    story.parent.mkdir()
    _write(story, doc)
    assert invoke("ingest", story.parent, "--store", store).exit_code == 0
    old_headline = doc["headline"]
    doc["headline"] = "A changed headline"
    _write(story, doc)
    assert invoke("ingest", story.parent, "--store", store).exit_code == 0

    shown = invoke("history", doc["url"], "--store", store)
    assert shown.exit_code == 0, shown.output
    assert "not compared" not in shown.output
    assert "1 headline changed" in shown.output
    assert "{+A changed headline+}" in " ".join(shown.output.split())

    data = json.loads(invoke("history", doc["url"], "--format", "json", "--store", store).output)
    assert [v["in_graph"] for v in data["versions"]] == ["revision", "current"]
    assert [v["archived"] for v in data["versions"]] == [False, False]
    assert data["versions"][1]["changes"] == [{
        "kind": "headline changed", "what": "headline", "old": old_headline,
        "new": "A changed headline",
        "diff": f"[-{old_headline}-] {{+A changed headline+}}",
    }]  # fmt: skip


def test_every_version_is_compared_across_three_ingests(seed_bytes: bytes) -> None:
    """The text of each replaced version is carried along the revision chain."""
    doc = json.loads(seed_bytes)
    first = doc["sections"][0]["paragraphs"][0]["markdown"]
    with Store(None) as store:
        ingest_bytes(store, [(json.dumps(doc).encode(), "v1.json")])
        doc["dek"] = "A new dek."
        doc["sections"][0]["paragraphs"][0]["markdown"] = first + " One more sentence."
        ingest_bytes(store, [(json.dumps(doc).encode(), "v2.json")])
        doc["corrections"] = [{"date": "2026-12-01", "text": "Fixed a figure."}]
        del doc["sections"][0]["paragraphs"][1]
        ingest_bytes(store, [(json.dumps(doc).encode(), "v3.json")])
        h = history(store, doc["url"])
    assert [v.in_graph for v in h.versions] == ["revision", "revision", "current"]
    assert h.versions[0].changes == []
    assert [(c.kind, c.what) for c in h.versions[1].changes] == [
        ("dek changed", "dek"),
        ("paragraph edited", "s1-p1"),
    ]
    assert h.versions[1].changes[1].diff is not None
    assert h.versions[1].changes[1].diff.endswith("{+One more sentence.+}")
    kinds = {c.kind for c in h.versions[2].changes}
    assert kinds >= {"paragraph removed", "correction added"}
    assert "not compared" not in kinds


def test_a_revision_without_its_text_says_what_the_store_holds(seed_bytes: bytes) -> None:
    """A store written before hcgraph kept a version's text: that pair is not compared, and
    the history says precisely what is known of the old version."""
    doc = json.loads(seed_bytes)
    with Store(None) as store:
        ingest_bytes(store, [(json.dumps(doc).encode(), "v1.json")])
        doc["headline"] = "Changed"
        ingest_bytes(store, [(json.dumps(doc).encode(), "v2.json")])
        kept = ox.NamedNode(str(HC.versionContent))
        for quad in list(store.quads(None, kept, None, None)):
            store.ox.remove(quad)
        h = history(store, doc["url"])
    change = h.versions[1].changes[0]
    assert change.kind == "not compared"
    old = h.versions[0].sha256[:12]
    assert change.what == (
        f"the store holds only the SHA-256 and time of version {old}: its body is not in the"
        " archive and its text was not kept when it was replaced"
    )


def test_a_version_read_from_its_graph_equals_one_read_from_its_body() -> None:
    """The same version gives the same content from its body (the archive) and from its
    graph, so versions from both sources compare without false changes."""
    corpus = generate_corpus(40, seed=5)
    with Store(None) as store:
        ingest_bytes(store, ((json.dumps(s).encode(), str(s["url"])) for s in corpus.stories))
        for raw in corpus.stories:
            story = parse_story(json.dumps(raw).encode(), "x")
            content = from_story(story)
            assert from_graph(store, story.url) == content, story.url
            assert Content.from_json(content.to_json()) == content
    assert any(
        from_story(parse_story(json.dumps(s).encode(), "x")).citations for s in corpus.stories
    )


class _CountedUpdates:
    """The store's engine, keeping the text of each SPARQL update it runs."""

    def __init__(self, engine: ox.Store) -> None:
        self.engine = engine
        self.updates: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def update(self, text: str, *args: Any, **kwargs: Any) -> None:
        self.updates.append(text)
        self.engine.update(text, *args, **kwargs)


def test_a_new_version_writes_only_what_is_new_not_every_earlier_versions_text(
    seed_bytes: bytes,
) -> None:
    """The N-th version of a story writes (and deletes) as many triples as the 3rd: the
    earlier versions' kept text is in the store already (it was rewritten on every ingest,
    which made ingesting a story's N-th version cost N versions' worth)."""
    doc = json.loads(seed_bytes)
    kept = str(HC.versionContent)
    written: list[tuple[int, int]] = []  # per ingest: (triple lines, kept texts) written
    with Store(None) as st:
        engine = st.ox = _CountedUpdates(st.ox)  # type: ignore[assignment]
        for n in range(12):
            doc["headline"] = f"Version {n}"
            doc["sections"][0]["paragraphs"][0]["markdown"] = f"Revision {n} of the text."
            engine.updates.clear()
            assert ingest_bytes(st, [(json.dumps(doc).encode(), "story.json")]).ok
            lines = [x for u in engine.updates for x in u.splitlines() if x.endswith(" .")]
            written.append((len(lines), sum(kept in x for x in lines)))
        assert st.graph_size(doc["url"]) > 12 * 6  # every version is kept
    assert written[0] == (0, 0)  # the first version: a bulk load, not an update
    assert all(k == 1 for _, k in written[1:])  # one kept text: the version just replaced
    assert len({n for n, _ in written[2:]}) == 1, written  # no more at the 12th than the 3rd
