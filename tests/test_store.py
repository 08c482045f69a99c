"""The store: idempotent re-ingest, atomic replacement with revisions, crash safety."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pytest

from hcgraph.errors import StoreError
from hcgraph.exporting import export
from hcgraph.ingest import ingest_bytes, ingest_paths
from hcgraph.mapping import map_story
from hcgraph.model import parse_story
from hcgraph.pipeline import recover, remove_story
from hcgraph.store import Store
from hcgraph.version_content import Content, from_story, revision_contents
from hcsample.corpus import generate_corpus
from tests.conftest import SEED_URL
from tests.support.killing import kill_after_lines


def _nt(store: Store) -> bytes:
    out = io.BytesIO()
    export(store, "ntriples", out)
    return out.getvalue()


def test_reingest_identical_bytes_is_a_noop(store: Store, seed_path: Path) -> None:
    assert ingest_paths(store, [seed_path]).count("added") == 1
    before = _nt(store)
    size = len(store)
    report = ingest_paths(store, [seed_path])
    assert report.count("unchanged") == 1 and report.count("added") == 0
    assert len(store) == size
    assert _nt(store) == before


def test_query_reads_the_union_unless_told_not_to(store: Store, seed_path: Path) -> None:
    """``union=False``: the default graph alone (empty here: every triple is in a named
    graph), as ``tests/test_push.py`` counts graphs."""
    ingest_paths(store, [seed_path])
    assert store.query("ASK { ?s ?p ?o }")
    assert not store.query("ASK { ?s ?p ?o }", union=False)
    named = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"
    assert int(next(iter(store.query(named, union=False)))["n"].value) == len(store)


def test_export_ingest_again_export_is_identical(tmp_path: Path, seed_path: Path) -> None:
    with Store(tmp_path / "st") as store:
        ingest_paths(store, [seed_path])
        first = _nt(store)
        (tmp_path / "graph.nt").write_bytes(first)
        ingest_paths(store, [seed_path])
        assert _nt(store) == first


def test_same_input_same_triples_in_separate_stores(
    tmp_path: Path, seed_bytes: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")
    corpus = [(json.dumps(s).encode(), f"s{i}") for i, s in enumerate(generate_corpus(30).stories)]
    outs = []
    for name, docs in (("a", corpus), ("b", list(reversed(corpus)))):
        with Store(tmp_path / name) as store:
            ingest_bytes(store, [(seed_bytes, "seed.json"), *docs])
            outs.append(_nt(store))
    assert outs[0] == outs[1]  # same content, same bytes, whatever the ingest order


def test_changed_bytes_replace_graph_and_record_revision(store: Store, seed_path: Path) -> None:
    original = seed_path.read_bytes()
    ingest_bytes(store, [(original, "v1.json")])
    doc = json.loads(original)
    doc["headline"] = "A corrected headline"
    doc["sections"] = doc["sections"][:2]
    changed = json.dumps(doc).encode()
    report = ingest_bytes(store, [(changed, "v2.json")])
    assert report.count("replaced") == 1
    headlines = {r["h"].value for r in store.query("SELECT ?h WHERE { ?s schema:headline ?h }")}
    assert headlines == {"A corrected headline"}  # nothing stale left
    sections = store.query("SELECT (COUNT(?x) AS ?n) WHERE { ?x a hc:Section }")
    assert int(next(iter(sections))["n"].value) == 2
    mapped = map_story(parse_story(changed, "v2.json"), _info_of(store))
    # The story graph is exactly the new mapping, and the shared graphs hold exactly what the
    # new version says (claims only the dropped sections cited are retracted).
    assert set(store.sorted_lines(SEED_URL)) == {(t + " .\n").encode() for t in mapped.triples}
    said = revision_contents(store, SEED_URL)  # the replaced version's text, kept for history
    assert [Content.from_json(t) for t in said.values()] == [
        from_story(parse_story(original, "v1.json"))
    ]
    shared = {(t + " .\n").encode() for d in mapped.shared.values() for t in d.triples}
    graphs = set(store.graph_names()) - set(store.story_graphs())
    assert {line for g in graphs for line in store.sorted_lines(g)} == shared
    assert len(store) == len(mapped) + len(shared)
    import hashlib

    rows = list(
        store.query(
            "SELECT ?old WHERE { ?s hc:rawDocument ?new . ?new prov:wasRevisionOf ?o ."
            " ?o hc:sha256 ?old }"
        )
    )
    assert [r["old"].value for r in rows] == [hashlib.sha256(original).hexdigest()]
    # a third version keeps the whole chain
    doc["headline"] = "Third"
    ingest_bytes(store, [(json.dumps(doc).encode(), "v3.json")])
    chain = list(store.query("SELECT ?o WHERE { ?a prov:wasRevisionOf ?o }"))
    assert len(chain) == 2


def _info_of(store: Store):  # type: ignore[no-untyped-def]
    """Rebuild the IngestInfo the store used, to compare exact graphs."""
    import datetime as dt

    from hcgraph.mapping import IngestInfo, Revision

    sha = store.raw_sha256(SEED_URL)
    assert sha is not None
    said = revision_contents(store, SEED_URL)  # what each replaced version said
    revisions = tuple(
        Revision(s, t, None, said.get(s)) for s, t, _ in store.revision_chain(SEED_URL, sha)[1:]
    )
    row = next(
        iter(
            store.query(
                "SELECT ?t ?src ?n WHERE { ?i a hc:Ingest ; prov:endedAtTime ?t ;"
                " hc:sourceLocation ?src ; prov:used ?r . ?r hc:byteSize ?n }"
            )
        )
    )
    return IngestInfo(
        sha, row["src"].value, dt.datetime.fromisoformat(row["t"].value), int(row["n"].value),
        revisions,
    )  # fmt: skip


def test_replace_graph_writes_only_the_difference_and_ends_with_the_new_content() -> None:
    g, shared = "urn:x:g", "urn:x:shared"
    lines = [f'<urn:x:s> <urn:x:p> "{n}" .\n' for n in range(5)]
    with Store(None) as st:
        assert st.replace_graph(g, "".join(lines[:3])) == (0, 3)
        also = {shared: "<urn:x:t> <urn:x:p> <urn:x:o> .\n"}
        assert st.replace_graph(g, "".join(lines[1:5]), also) == (1, 2)  # "0" out; "3", "4" in
        assert st.sorted_lines(g) == sorted(line.encode() for line in lines[1:5])
        assert st.graph_size(shared) == 1
        assert st.replace_graph(g, "".join(lines[1:5])) == (0, 0)  # nothing to write
        # a blank node cannot be deleted as data: the graph is dropped and written whole
        st.load_nquads(b"_:b <urn:x:p> <urn:x:o> <urn:x:g> .\n")
        assert st.replace_graph(g, lines[0]) == (5, 1)
        assert st.sorted_lines(g) == [lines[0].encode()]
        with pytest.raises(StoreError, match="write failed"):
            st.replace_graph(g, "<urn:x:s> <urn:x:p> not-a-term .\n")
        assert st.sorted_lines(g) == [lines[0].encode()]


def test_read_only_store_refuses_writes(tmp_path: Path, seed_path: Path) -> None:
    with Store(tmp_path / "st") as store:
        ingest_paths(store, [seed_path])
    with Store(tmp_path / "st", read_only=True) as ro:
        assert ro.story_graphs() == [SEED_URL]
        with pytest.raises(StoreError, match="read-only"):
            remove_story(ro, SEED_URL)


def test_missing_store_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no store here"):
        Store(tmp_path / "nothing", read_only=True)


def test_second_writer_gets_a_clear_error(tmp_path: Path) -> None:
    with Store(tmp_path / "st"), pytest.raises(StoreError, match="the store is in use by "):
        Store(tmp_path / "st")


@pytest.mark.slow  # a subprocess, killed
@pytest.mark.parametrize("mode", ["stream", "batches"])
def test_killed_ingest_leaves_only_whole_stories(tmp_path: Path, mode: str) -> None:
    """SIGKILL an ingest inside a store write: after recovery every story in the store is
    complete, the shared graphs say exactly what those stories say, and a re-run finishes.

    ``stream``: ``hcgraph ingest``'s segment bulk loads, killed as the third one starts.
    ``batches``: the crawler's batch-by-batch writes, killed as the third write starts.
    """
    corpus = generate_corpus(400, seed=7)
    stories_dir = tmp_path / "stories"
    corpus.write(stories_dir)
    store_dir = tmp_path / "st"
    script = textwrap.dedent(f"""
        import hcgraph.pipeline as pl
        from hcgraph.ingest import discover, ingest_paths
        from hcgraph.store import Store
        def announce(real):
            def wrapped(*args, **kwargs):
                print("write", flush=True)
                return real(*args, **kwargs)
            return wrapped
        pl.SEGMENT = 20_000  # a bulk load every ~40 stories
        Store.load_nquads = announce(Store.load_nquads)
        with Store({str(store_dir)!r}) as st:
            if {mode!r} == "stream":
                ingest_paths(st, [{str(stories_dir)!r}], batch_size=50)
            else:
                paths = discover([{str(stories_dir)!r}])
                docs = [pl.Document(p.read_bytes(), str(p), location=p.name) for p in paths]
                with pl.Pipeline(st) as pipe:
                    for k in range(0, len(docs), 50):
                        pipe.process(docs[k : k + 50])
    """)
    kill_after_lines(script, 3, env={"SOURCE_DATE_EPOCH": "1790000000"})
    by_url = {s["url"]: s for s in corpus.stories}
    with Store(store_dir) as store:
        assert store.ledger.dirty  # the kill interrupted a write
        recover(store)
        assert not store.ledger.dirty
        graphs = store.story_graphs()
        if mode == "batches":  # two whole batches, maybe the third, never part of one
            assert len(graphs) in (100, 150)
        else:  # whole stories only: two segments, maybe part of the third, removed whole
            assert 0 < len(graphs) < 150
        # Exactly what a clean ingest of the stored stories gives, shared graphs included.
        expected = Store(None)
        paths = [stories_dir / f"{by_url[u]['slug']}.json" for u in graphs]
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("SOURCE_DATE_EPOCH", "1790000000")
            ingest_paths(expected, sorted(paths))
        for graph in expected.graph_names():
            assert store.sorted_lines(graph) == expected.sorted_lines(graph), graph
        assert store.graph_names() == expected.graph_names()
    # and the re-run completes the job
    with Store(store_dir) as store:
        report = ingest_paths(store, [stories_dir])
        assert report.ok
        assert len(store.story_graphs()) == len(corpus.stories)
