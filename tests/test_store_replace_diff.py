"""``Store.replace_graph`` writes only the difference; the store it leaves must equal the one
the plain way leaves (drop the graph, insert the new N-Triples) after any sequence of
replacements, whatever the literals: forms the engine canonicalises (``"01"`` as an integer,
``"1.0"`` as a decimal, a language tag's case, dateTime offsets), Unicode in either
normalisation form, text that is SPARQL syntax, very long literals, triple terms."""

from __future__ import annotations

import textwrap
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from hcgraph.errors import StoreError
from hcgraph.ingest import ingest_paths
from hcgraph.pipeline import recover
from hcgraph.rdftext import literal, typed
from hcgraph.store import Store
from hcsample.corpus import generate_corpus
from tests.support.killing import kill_after_lines

_X = "http://www.w3.org/2001/XMLSchema#"
_G, _SHARED = "urn:x:story", "urn:x:shared"
_TEXTS = [
    "plain",
    "caf\u00e9",  # NFC
    "cafe\u0301",  # NFD: a different literal, kept as written
    '} } DROP ALL ; INSERT DATA { GRAPH <urn:x:evil> { <urn:a> <urn:b> "c" } }',
    "''' \"\"\" } GRAPH <urn:x:evil> {",
    'a "quoted" \\ backslash\nnew line\r\ttab',
    "\\u0022 \\u007D written as text",
    "x" * 70_000,
]
_OBJECTS = [
    *(literal(t) for t in _TEXTS),
    *(literal(t)[:-1] + '"@EN-us' for t in _TEXTS[:2]),
    '"plain"@en-US',
    typed("01", _X + "integer"),
    typed("1", _X + "integer"),
    typed("+1", _X + "integer"),
    typed("1", _X + "boolean"),
    typed("true", _X + "boolean"),
    typed("1.0", _X + "decimal"),
    typed("1", _X + "decimal"),
    typed("2020-01-01T00:00:00+00:00", _X + "dateTime"),
    typed("2020-01-01T00:00:00Z", _X + "dateTime"),
    typed("2020-01-01T02:00:00.500000+02:00", _X + "dateTime"),
    typed("abc", _X + "integer"),  # ill-typed: kept as written
    "<urn:x:o>",
    '<<( <urn:x:a> <urn:x:b> "01"^^<' + _X + "integer> )>>",
]
_LINES = [f"<urn:x:s{s}> <urn:x:p> {o} .\n" for s in range(2) for o in _OBJECTS]
_graph = st.lists(st.sampled_from(_LINES), max_size=8).map("".join)
_also = st.one_of(
    st.just({}),
    st.builds(lambda body: {_SHARED: body}, _graph),
    st.builds(lambda body: {_G: body}, _graph),  # the graph itself: added to, as before
)


def _dropped_and_inserted(store: Store, graph: str, nt: str, also: Mapping[str, str]) -> None:
    """The plain way: drop the graph, insert the new text and ``also`` in one update."""
    extra = "".join(f"GRAPH <{name}> {{\n{body}}}\n" for name, body in also.items())
    store.ox.update(
        f"DROP SILENT GRAPH <{graph}> ;\nINSERT DATA {{ GRAPH <{graph}> {{\n{nt}}}\n{extra}}}"
    )


def _contents(store: Store) -> bytes:
    return store.ox.dump(format=ox.RdfFormat.N_QUADS) or b""


@seed(20261207)
@settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.tuples(_graph, _also), min_size=1, max_size=5))
def test_writing_the_difference_leaves_what_dropping_and_inserting_leaves(
    steps: list[tuple[str, dict[str, str]]],
) -> None:
    with Store(None) as diffed, Store(None) as plain:
        for nt, also in steps:
            diffed.replace_graph(_G, nt, also)
            _dropped_and_inserted(plain, _G, nt, also)
            assert sorted(_contents(diffed).splitlines()) == sorted(_contents(plain).splitlines())


def test_literals_that_are_sparql_syntax_stay_data_in_the_update() -> None:
    """The update holds the engine's own serialisation of each stale and new triple: a
    literal that reads as SPARQL (braces, DROP ALL, GRAPH, quotes) is deleted and inserted as
    a literal, and no other graph is touched."""
    lines = [f"<urn:x:s> <urn:x:p> {literal(t)} .\n" for t in _TEXTS[3:7]]
    with Store(None) as store:
        store.replace_graph(_SHARED, "<urn:x:a> <urn:x:b> <urn:x:c> .\n")
        store.replace_graph(_G, "".join(lines[:2]))
        assert store.replace_graph(_G, "".join(lines[2:])) == (2, 2)
        assert store.sorted_lines(_G) == sorted(line.encode() for line in lines[2:])
        assert store.graph_names() == [_SHARED, _G]
        assert store.graph_size(_SHARED) == 1
        assert store.replace_graph(_G, "".join(lines[:2])) == (2, 2)
        assert store.sorted_lines(_G) == sorted(line.encode() for line in lines[:2])
        assert store.graph_names() == [_SHARED, _G]


def test_a_stale_triple_term_holding_a_blank_node_drops_the_graph_and_writes_it_whole() -> None:
    """Blank nodes cannot be deleted as data, nor can a triple term that holds one."""
    with Store(None) as store:
        store.load_nquads(b"<urn:x:s> <urn:x:p> <<( _:b <urn:x:p> <urn:x:o> )>> <urn:x:story> .\n")
        assert store.replace_graph(_G, '<urn:x:s> <urn:x:p> "new" .\n') == (1, 1)
        assert store.sorted_lines(_G) == [b'<urn:x:s> <urn:x:p> "new" .\n']


@pytest.mark.slow  # a subprocess, killed
def test_an_ingest_killed_while_replacing_changed_stories_leaves_each_old_or_new_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL an ingest of 120 changed stories while it writes their differences: after
    recovery each story's graph is its old version or its new one, whole, and the re-run
    leaves the store an uninterrupted ingest of both versions leaves."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")
    corpus = generate_corpus(120, seed=11)
    old, new = tmp_path / "old", tmp_path / "new"
    corpus.write(old)
    for story in corpus.stories:
        story["headline"] = f"{story['headline']} (updated)"
    corpus.write(new)
    store_dir = tmp_path / "st"
    with Store(store_dir) as store:
        assert ingest_paths(store, [old]).count("added") == 120
    was, now = Store(None), Store(None)
    ingest_paths(was, [old])
    ingest_paths(now, [old])
    assert ingest_paths(now, [new]).count("replaced") == 120
    script = textwrap.dedent(f"""
        from hcgraph.ingest import ingest_paths
        from hcgraph.store import Store
        real = Store.replace_graph
        def announced(self, *args, **kwargs):
            print("write", flush=True)
            return real(self, *args, **kwargs)
        Store.replace_graph = announced
        with Store({str(store_dir)!r}) as st:
            ingest_paths(st, [{str(new)!r}], batch_size=10)
    """)
    kill_after_lines(script, 40)
    with Store(store_dir) as store:
        assert store.ledger.dirty  # the kill interrupted a write
        recover(store)
        assert not store.ledger.dirty
        versions = [
            (
                store.sorted_lines(g) == now.sorted_lines(g),
                store.sorted_lines(g) == was.sorted_lines(g),
            )
            for g in now.story_graphs()
        ]
        assert all(a != b for a, b in versions)  # old or new, whole: never both, never neither
        assert 39 <= sum(a for a, _ in versions) < 120  # the 40th was starting
        assert ingest_paths(store, [new]).ok
        assert store.graph_names() == now.graph_names()
        for graph in now.graph_names():
            assert store.sorted_lines(graph) == now.sorted_lines(graph), graph


class _Interleaved:
    """The store's engine; once the graph's triples are read, another thread removes the
    graph, given half a second to land before the difference is written."""

    def __init__(self, store: Store) -> None:
        self.engine = store.ox
        self.other = threading.Thread(target=store.remove_graph, args=(_G,))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def quads_for_pattern(self, *pattern: Any) -> Iterator[ox.Quad]:
        found = list(self.engine.quads_for_pattern(*pattern))
        if not self.other.is_alive() and self.other.ident is None:
            self.other.start()
            self.other.join(0.5)
        return iter(found)


def test_no_other_write_lands_between_reading_the_graph_and_writing_its_difference() -> None:
    """The difference is of the graph as read: a write of another thread (a removal) waits
    until it is written, else the graph would keep only the inserted half."""
    lines = [f'<urn:x:s> <urn:x:p> "{n}" .\n' for n in range(3)]
    with Store(None) as store:
        store.replace_graph(_G, "".join(lines[:2]))
        engine = store.ox
        store.ox = interleaved = _Interleaved(store)  # type: ignore[assignment]
        assert store.replace_graph(_G, "".join(lines[1:])) == (1, 1)
        interleaved.other.join()
        store.ox = engine
        assert store.sorted_lines(_G) == []  # removed after the replacement, not amid it


@pytest.mark.parametrize("graph", ["urn:x> } } ; DROP ALL ; INSERT DATA { GRAPH <urn:y", "no iri"])
def test_a_graph_name_that_is_no_iri_is_refused_as_a_store_error_writing_nothing(
    graph: str,
) -> None:
    """As the drop-and-insert refused it (the engine's parser did): a StoreError."""
    with Store(None) as store:
        store.replace_graph(_SHARED, "<urn:x:a> <urn:x:b> <urn:x:c> .\n")
        with pytest.raises(StoreError, match="write failed"):
            store.replace_graph(graph, '<urn:x:s> <urn:x:p> "v" .\n')
        assert store.graph_names() == [_SHARED]
        assert store.graph_size(_SHARED) == 1
