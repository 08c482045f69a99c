"""The saved-query library: headers, parameters, errors, and every query against ground truth.

Ground truth (tests.support.groundtruth) is computed straight from the story dicts, never through
SPARQL; a disagreement points at the query (or at the graph).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from hcgraph import QueryError, Store, load_query, run_query, saved_queries
from hcgraph.ingest import ingest_paths
from hcgraph.queries import QUERY_DIR, parse_query_text
from hcgraph.shacl import _to_rdflib
from tests.conftest import ROOT, SEED, SEED_URL
from tests.support.groundtruth import ground_truth

ISSUE_QUERIES = {
    "source-reuse", "publisher-reach", "claim-reuse", "co-citation", "story-trail",
    "uncited-paragraphs", "unsupported-key-facts", "dangling-citations", "declared-vs-derived",
    "source-lag", "related-not-ingested", "newsroom-publisher",
}  # fmt: skip


@pytest.fixture(scope="module")
def seed_store() -> Any:
    with Store(None) as st:
        ingest_paths(st, [SEED])
        yield st


@pytest.fixture(scope="module")
def seed_truth() -> Any:
    return ground_truth([json.loads(SEED.read_text())])


# --- the library ----------------------------------------------------------------------------
def test_the_twelve_queries_exist_with_headers() -> None:
    library = saved_queries()
    assert set(library) >= ISSUE_QUERIES
    for name, query in library.items():
        assert query.title and query.question, name
        assert "definition" in query.notes and "columns" in query.notes, name
        assert "PREFIX hc:" in query.text, f"{name} must declare its own prefixes"
        for param in query.params:
            assert f"?{param.name}" in query.text


def test_parameters_are_declared() -> None:
    library = saved_queries()
    k, story = library["co-citation"].params
    assert (k.name, k.type, k.default, k.required) == ("k", "integer", "2", False)
    assert (story.name, story.type, story.required) == ("story", "iri", True)
    (story,) = library["story-trail"].params
    assert (story.name, story.type, story.required) == ("story", "iri", True)


def test_canonical_files_are_the_packaged_ones() -> None:
    top = sorted(p.name for p in (ROOT / "queries").glob("*.rq"))
    assert top == sorted(p.name for p in QUERY_DIR.glob("*.rq"))
    assert len(top) >= 12


@pytest.mark.slow  # a subprocess
def test_queries_ship_as_package_data(tmp_path: Path) -> None:
    """Built the way a wheel is built (setuptools build_py, from a copy of the source tree):
    the symlinked hcgraph/data/queries becomes real .rq files inside the package, and every
    map template (the two pages and the parts they import) ships with it."""
    src = tmp_path / "src"
    shutil.copytree(
        ROOT, src, symlinks=True,
        ignore=shutil.ignore_patterns(".git", "output", "build", "*.egg-info", "__pycache__"),
    )  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py",
         "--build-lib", str(tmp_path / "lib")],
        capture_output=True, text=True, timeout=240, cwd=src,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    built = tmp_path / "lib" / "hcgraph"
    for rq in (ROOT / "queries").glob("*.rq"):
        copy = built / "data" / "queries" / rq.name
        assert copy.is_file() and not copy.is_symlink()
        assert copy.read_text() == rq.read_text()
    assert (built / "shapes.ttl").is_file()
    pages = sorted(p.name for p in (ROOT / "hcgraph" / "viz").glob("*.html"))
    assert "_map_common.html" in pages
    assert sorted(p.name for p in (built / "viz").glob("*.html")) == pages
    assert set(saved_queries(built / "data" / "queries")) == set(saved_queries())


def test_records_are_plain_python(seed_store: Store) -> None:
    rows = run_query(seed_store, "publisher-reach").records()
    assert rows and all(isinstance(r["stories"], int) for r in rows)
    trail = run_query(seed_store, "story-trail", {"story": SEED_URL})
    first = next(iter(trail))
    assert isinstance(first["claim_id"], str) and len(first["claim_id"]) == 19  # exact, no float
    assert first["story"] == SEED_URL


def test_unknown_name_lists_the_saved_ones() -> None:
    with pytest.raises(QueryError) as err:
        load_query("source-reuses")
    assert "source-reuse" in str(err.value) and "co-citation" in str(err.value)


def test_syntax_error_reports_line_and_column(tmp_path: Path, seed_store: Store) -> None:
    bad = tmp_path / "bad.rq"
    bad.write_text("# title: broken\nSELECT ?s WHERE {\n  ?s ?p ?o .\n  BIND (1 AS ?s ?s) }\n")
    with pytest.raises(QueryError) as err:
        run_query(seed_store, bad)
    assert "line 4, column 17" in str(err.value) and "bad.rq" in str(err.value)


def test_param_errors_are_clear(seed_store: Store) -> None:
    with pytest.raises(QueryError, match="required"):
        run_query(seed_store, "story-trail")
    with pytest.raises(QueryError, match="unknown parameter 'x'"):
        run_query(seed_store, "co-citation", {"x": "1"})
    with pytest.raises(QueryError, match="not a valid integer"):
        run_query(seed_store, "co-citation", {"k": "two"})
    with pytest.raises(QueryError, match="bad param line"):
        parse_query_text("# param: oops\nSELECT * {}", "x")


HOSTILE = [
    '"} ; DROP ALL ; {"', "} ; DROP ALL ; { ?s ?p ?o }", "x\" . } INSERT DATA { <a> <b> <c> } #",
    "<urn:x>", "' OR 1=1 --", "\\u0022}",
]  # fmt: skip


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_parameters_change_nothing(seed_store: Store, value: str) -> None:
    before = sorted(str(q) for q in seed_store.ox)
    with pytest.raises(QueryError, match=r"not an absolute IRI|not a valid integer"):
        run_query(seed_store, "story-trail", {"story": value})
    with pytest.raises(QueryError, match="not a valid integer"):
        run_query(seed_store, "co-citation", {"k": value})
    # a literal parameter is just an odd string: bound as a term, it matches nothing
    q = parse_query_text(
        "# param: needle literal\nSELECT ?s ?needle WHERE { ?s ?p ?needle }", "needle-test"
    )
    assert len(run_query(seed_store, q, {"needle": value})) == 0
    assert sorted(str(q) for q in seed_store.ox) == before


def test_parameter_can_be_a_term(seed_store: Store) -> None:
    rows = run_query(seed_store, "story-trail", {"story": ox.NamedNode(SEED_URL)})
    assert len(rows) == 25  # 9 paragraphs, one row per cited claim (some cite several)


# --- ground truth on the seed story -----------------------------------------------------------
def test_seed_story(seed_store: Store, seed_truth: Any) -> None:
    assert len(run_query(seed_store, "source-reuse")) == 0  # one story reuses nothing
    reach = {r["name"]: (r["stories"], r["manifests"], r["claims"])
             for r in run_query(seed_store, "publisher-reach")}  # fmt: skip
    assert reach == seed_truth.publisher_reach
    assert sum(r[2] for r in reach.values()) == 24  # the seed's 24 distinct claims
    related = {(r["story"], r["related"]) for r in run_query(seed_store, "related-not-ingested")}
    assert related == set(seed_truth.related_not_ingested) and len(related) == 4
    for name in ("uncited-paragraphs", "unsupported-key-facts", "dangling-citations",
                 "declared-vs-derived", "claim-reuse"):  # fmt: skip
        assert len(run_query(seed_store, name)) == 0, name
    assert len(run_query(seed_store, "co-citation", {"story": SEED_URL, "k": 1})) == 0
    lag_rows = run_query(seed_store, "source-lag")
    lags = {(r["story"], r["manifest_id"]): r["lag_days"] for r in lag_rows}
    assert lags == seed_truth.source_lag_days and len(lags) == 5


Trail = list[tuple[int, int, int | None, str | None, str | None]]


def _trail_oracle(story: dict[str, Any]) -> Trail:
    """(section, paragraph, citation, manifest id, claim id) in reading order, from the dict."""
    rows: Trail = []
    for i, section in enumerate(story["sections"], 1):
        for j, para in enumerate(section["paragraphs"], 1):
            if not para.get("cites"):
                rows.append((i, j, None, None, None))
            for k, cite in enumerate(para.get("cites") or [], 1):
                claims = sorted({str(c) for c in cite.get("claim_ids") or []}) or [None]
                rows.extend((i, j, k, str(cite["manifest_id"]), c) for c in claims)
    return rows


def test_story_trail_is_in_reading_order(seed_store: Store) -> None:
    story = json.loads(SEED.read_text())
    got = [(r["section"], r["position"], r["citation"], r["manifest_id"], r["claim_id"])
           for r in run_query(seed_store, "story-trail", {"story": SEED_URL})]  # fmt: skip
    assert got == _trail_oracle(story)
    first = next(iter(run_query(seed_store, "story-trail", {"story": SEED_URL})))
    assert first["publisher"] and first["source"].startswith("http") and first["issued"]


# --- ground truth on a generated corpus ------------------------------------------------------
def test_corpus_has_what_we_test(corpus_store: Any) -> None:
    gt = corpus_store.truth
    assert gt.source_reuse(2) and gt.cited_unlisted and gt.listed_uncited
    assert gt.claim_manifest_conflicts and gt.declared_mismatch and gt.uncited_paragraphs
    assert gt.unsupported_key_facts and gt.related_not_ingested


def test_source_reuse(corpus_store: Any) -> None:
    rows = run_query(corpus_store.store, "source-reuse").records()
    gt = corpus_store.truth
    want = {m: len(gt.manifest_citing_stories[m]) for m in gt.source_reuse(2)}
    assert {r["manifest_id"]: r["stories"] for r in rows} == want
    assert [r["stories"] for r in rows] == sorted((r["stories"] for r in rows), reverse=True)
    assert any(r["title"] and r["publishers"] for r in rows)


def test_source_stories_lists_each_reused_manifests_stories(corpus_store: Any) -> None:
    gt = corpus_store.truth
    reused = sorted(gt.source_reuse(2))
    assert reused
    for manifest_id in reused:
        rows = run_query(corpus_store.store, "source-stories", {"manifest_id": manifest_id})
        records = rows.records()
        assert {r["story"] for r in records} == gt.manifest_citing_stories[manifest_id]
        assert len(records) == len(gt.manifest_citing_stories[manifest_id])  # once each
        assert all(r["manifest_id"] == manifest_id and r["headline"] for r in records)


def test_claim_reuse(corpus_store: Any) -> None:
    rows = run_query(corpus_store.store, "claim-reuse").records()
    gt = corpus_store.truth
    want = {c: len(s) for c, s in gt.claim_citing_stories.items() if len(s) >= 2}
    assert {r["claim_id"]: r["stories"] for r in rows} == want


def test_claim_stories_lists_each_claims_stories(corpus_store: Any) -> None:
    gt = corpus_store.truth
    claims = sorted(c for c, s in gt.claim_citing_stories.items() if len(s) >= 2)
    for claim_id in claims[:40]:
        records = run_query(corpus_store.store, "claim-stories", {"claim_id": claim_id}).records()
        assert [r["story"] for r in records if r["claim_id"] == claim_id] == [
            r["story"] for r in records
        ]
        assert sorted(r["story"] for r in records) == sorted(gt.claim_citing_stories[claim_id])


def test_pages_add_up_to_the_whole_answer(corpus_store: Any) -> None:
    """--offset/--limit pages, in the query's own order, concatenate to the unpaged rows."""
    gt = corpus_store.truth
    manifest_id = max(gt.source_reuse(2), key=lambda m: len(gt.manifest_citing_stories[m]))
    params = {"manifest_id": manifest_id}
    whole = run_query(corpus_store.store, "source-stories", params).terms
    assert len(whole) > 10
    pages = [
        run_query(corpus_store.store, "source-stories", params, limit=7, offset=k).terms
        for k in range(0, len(whole) + 7, 7)
    ]
    assert all(len(page) == 7 for page in pages[: len(whole) // 7])
    assert [row for page in pages for row in page] == whole
    assert run_query(corpus_store.store, "source-stories", params, limit=0).terms == []
    with pytest.raises(QueryError, match="whole numbers"):
        run_query(corpus_store.store, "source-stories", params, offset=-1)


#: The largest answer cell a saved query may return: the limit another triple store puts on
#: a string cell (Virtuoso: SR319/SR478 past 4 KB). A cell listing every citing story of a
#: popular manifest passes it at ~60 stories; the 300-story corpus has manifests cited by more.
MAX_CELL = 4096


def test_no_saved_query_answers_with_a_cell_that_grows_with_the_corpus(corpus_store: Any) -> None:
    gt = corpus_store.truth
    top = max(gt.manifest_citing_stories.values(), key=len)
    assert len(" ".join(top)) > MAX_CELL  # the corpus is big enough to tell
    examples = {
        "manifest_id": max(
            gt.manifest_citing_stories, key=lambda m: len(gt.manifest_citing_stories[m])
        ),
        "claim_id": max(gt.claim_citing_stories, key=lambda c: len(gt.claim_citing_stories[c])),
        "story": max(gt.story_cited_manifests, key=lambda s: len(gt.story_cited_manifests[s])),
    }
    for name, query in saved_queries().items():
        params = {p.name: examples[p.name] for p in query.params if p.required}
        result = run_query(corpus_store.store, query, params)
        longest = max(
            (len(str(term.value)) for row in result.terms for term in row if term is not None),
            default=0,
        )
        assert longest <= MAX_CELL, (name, longest)


def test_publisher_reach(corpus_store: Any) -> None:
    rows = run_query(corpus_store.store, "publisher-reach").records()
    assert {r["name"]: (r["stories"], r["manifests"], r["claims"]) for r in rows} == (
        corpus_store.truth.publisher_reach
    )


@pytest.mark.parametrize("k", [2, 3, 5])
def test_co_citation(corpus_store: Any, k: int) -> None:
    """Asked once per story, the per-story answers add up to every pair, each seen from both
    of its stories with the same count."""
    got: dict[tuple[str, str], int] = {}
    seen: dict[tuple[str, str], int] = defaultdict(int)
    for url in sorted(corpus_store.truth.story_urls):
        for r in run_query(corpus_store.store, "co-citation", {"k": k, "story": url}).records():
            assert r["story"] == url and r["k"] == k and r["other"] != url
            a, b = sorted((url, r["other"]))
            assert got.setdefault((a, b), r["shared"]) == r["shared"]
            seen[(a, b)] += 1
    assert got == corpus_store.truth.co_citation(k)
    assert set(seen.values()) <= {2}


def test_uncited_paragraphs(corpus_store: Any) -> None:
    rows = run_query(corpus_store.store, "uncited-paragraphs").records()
    got = {(r["story"], r["section"] - 1, r["position"] - 1) for r in rows}
    assert got == set(corpus_store.truth.uncited_paragraphs)


def test_unsupported_key_facts(corpus_store: Any) -> None:
    rows = run_query(corpus_store.store, "unsupported-key-facts").records()
    assert {(r["story"], r["position"] - 1) for r in rows} == set(
        corpus_store.truth.unsupported_key_facts
    )
    assert all(r["unsupported_claim_ids"] for r in rows)


def test_dangling_citations(corpus_store: Any) -> None:
    rows = run_query(corpus_store.store, "dangling-citations").records()
    by_kind: dict[str, set[Any]] = defaultdict(set)
    for r in rows:
        key = r["claim_id"] if r["problem"] == "claim-conflict" else (r["story"], r["manifest_id"])
        by_kind[r["problem"]].add(key)
    gt = corpus_store.truth
    assert by_kind["cited-unlisted"] == set(gt.cited_unlisted)
    assert by_kind["listed-uncited"] == set(gt.listed_uncited)
    assert by_kind["claim-conflict"] == set(gt.claim_manifest_conflicts)


def test_declared_vs_derived(corpus_store: Any) -> None:
    rows = run_query(corpus_store.store, "declared-vs-derived").records()
    got: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        got[r["story"]].add(r["field"])
    assert {s: frozenset(f) for s, f in got.items()} == corpus_store.truth.declared_mismatch
    counts = [r for r in rows if r["field"] == "source_count"]
    assert counts and all(r["declared"] != r["derived"] for r in counts)


def test_declared_vs_derived_shows_both_lists(corpus_store: Any) -> None:
    """The declared and derived columns of the list fields hold the real lists (each one a
    GROUP_CONCAT of its own: an aggregate over a UNION where one side is unbound per row is an
    error on Oxigraph, which left both columns empty)."""
    rows = run_query(corpus_store.store, "declared-vs-derived").records()
    got = {
        (r["story"], r["field"]): (frozenset((r["declared"] or "").split()),
                                   frozenset((r["derived"] or "").split()))
        for r in rows if r["field"] != "source_count"
    }  # fmt: skip
    truth = corpus_store.truth.declared_sides
    assert {f for _, f in truth} == {"publishers", "cited_manifest_ids"}
    assert got == truth


def test_source_lag(corpus_store: Any) -> None:
    rows = run_query(corpus_store.store, "source-lag").records()
    assert {(r["story"], r["manifest_id"]): r["lag_days"] for r in rows} == (
        corpus_store.truth.source_lag_days
    )
    by_pub = run_query(corpus_store.store, "source-lag-by-publisher").records()
    lags: dict[str, list[int]] = defaultdict(list)
    for r in rows:
        lags[r["publisher"]].append(r["lag_days"])
    got = {r["publisher"]: (r["citations"], r["min_lag_days"], r["max_lag_days"]) for r in by_pub}
    assert got == {p: (len(v), min(v), max(v)) for p, v in lags.items()}


def test_related_not_ingested(corpus_store: Any) -> None:
    rows = run_query(corpus_store.store, "related-not-ingested").records()
    got = {(r["story"], r["related"]) for r in rows}
    assert got == set(corpus_store.truth.related_not_ingested)


def test_newsroom_publisher(corpus_store: Any) -> None:
    rows = run_query(corpus_store.store, "newsroom-publisher").records()
    assert {(r["newsroom"], r["publisher"]): r["stories"] for r in rows} == (
        corpus_store.truth.newsroom_publisher
    )


def test_story_trail_of_generated_stories(corpus_store: Any) -> None:
    for story in corpus_store.stories[1:40:7]:
        rows = run_query(corpus_store.store, "story-trail", {"story": story["url"]})
        got = [(r["section"], r["position"], r["citation"], r["manifest_id"], r["claim_id"])
               for r in rows]  # fmt: skip
        # sections without paragraphs contribute no rows (there is no paragraph to show)
        assert got == _trail_oracle(story), story["url"]


def _rdflib_text(term: Any) -> str:
    """A term's text as rdflib prints it (rdflib normalises literals, e.g. dateTimes)."""
    return "" if term is None else str(_to_rdflib(term))


def test_queries_are_portable_sparql(seed_store: Store) -> None:
    """The same text gives the same rows in rdflib (a second, independent SPARQL engine)."""
    import rdflib

    ds = rdflib.Dataset(default_union=True)
    nq = seed_store.ox.dump(format=ox.RdfFormat.N_QUADS)
    ds.parse(data=nq.decode(), format="nquads")
    seed = json.loads(SEED.read_text())
    manifest_id = seed["manifests"][0]["manifest_id"]
    claim_id = seed["sections"][0]["paragraphs"][0]["cites"][0]["claim_ids"][0]
    required = {"story": SEED_URL, "manifest_id": manifest_id, "claim_id": claim_id}
    for name, query in saved_queries().items():
        params = {p.name: required[p.name] for p in query.params if p.required}
        answer = run_query(seed_store, query, params)
        ours = {tuple(_rdflib_text(t) for t in row) for row in answer.terms}
        bindings: dict[str, Any] = {
            k: rdflib.URIRef(v) if k == "story" else rdflib.Literal(v) for k, v in params.items()
        }
        if name == "co-citation":
            bindings = {"k": rdflib.Literal(1), "story": rdflib.URIRef(SEED_URL)}
            rows = run_query(seed_store, query, {"k": 1, "story": SEED_URL}).terms
            ours = {tuple(_rdflib_text(t) for t in row) for row in rows}
        theirs = {
            tuple("" if v is None else str(v) for v in row)
            for row in ds.query(query.text, initBindings=bindings)
        }
        assert theirs == ours, name


# --- ORDER BY: run_query sorts in Python what the engine would sort -----------------------
def _key_columns(result: Any, query: Any) -> list[tuple[str, ...]]:
    from hcgraph.queries import _split_order

    _text, order = _split_order(query.text)
    columns = [result.variables.index(name) for name, _desc in order]
    return [tuple(str(row[c]) for c in columns) for row in result.terms]


@pytest.mark.parametrize("name", sorted(saved_queries()))
def test_python_sort_matches_the_engines_order_by(corpus_store: Any, name: str) -> None:
    """Every saved query's rows come in the order Oxigraph's own ORDER BY gives them.

    Rows tied on every sort key may come in either order, so the sequences of sort keys are
    compared (plus the rows as multisets).
    """
    from hcgraph.queries import _materialise, bind_params

    query = saved_queries()[name]
    gt = corpus_store.truth
    examples = {
        "story": SEED_URL,
        "manifest_id": max(gt.source_reuse(2), key=lambda m: len(gt.manifest_citing_stories[m])),
        "claim_id": max(gt.claim_citing_stories, key=lambda c: len(gt.claim_citing_stories[c])),
    }
    params = {p.name: examples[p.name] for p in query.params if p.required}
    ours = run_query(corpus_store.store, query, params)
    engine = _materialise(corpus_store.store.query(query.text, bindings=bind_params(query, params)))
    assert sorted(map(str, ours.terms)) == sorted(map(str, engine.terms))
    assert _key_columns(ours, query) == _key_columns(engine, query)


def test_python_sort_ranks_like_sparql(seed_store: Store) -> None:
    """Unbound < blank < IRI < literal; numbers by value across types; DESC; stable ties."""
    from hcgraph.queries import QueryResult, _order_key, _sort_rows

    values = """VALUES (?k ?i) {
      (UNDEF 0) (<urn:b> 1) (<urn:a> 2) ("b" 3) ("a" 4) (10 5) (2 6) (2.5 7)
      ("01"^^<http://www.w3.org/2001/XMLSchema#integer> 8) (1 9) (<urn:a> 10) (UNDEF 11)
      ("2026-01-02T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> 12)
      ("2026-01-01T23:00:00-02:00"^^<http://www.w3.org/2001/XMLSchema#dateTime> 13)
    }"""
    for order in (["?k"], ["DESC(?k)"], ["DESC(?k)", "?i"], ["?k", "DESC(?i)"]):
        text = f"SELECT ?k ?i WHERE {{ {values} }} ORDER BY {' '.join(order)}"
        engine = [tuple(map(str, row)) for row in run_query_raw(seed_store, text)]
        result = QueryResult(("k", "i"), list(run_query_raw(seed_store, values_only(values))))
        keys = [(o.strip("DESC()?").strip("?"), o.startswith("DESC")) for o in order]
        _sort_rows(result, keys)
        ours = [tuple(map(str, row)) for row in result.terms]
        if len(order) == 1:
            # ties ("01" and 1 are one number, <urn:a> comes twice) are the engine's choice;
            # ours keep the input order (?i ascending), as a stable sort must
            rank = {row[0]: _order_key(row[0]) for row in result.terms}
            assert [rank[r[0]] for r in result.terms] == [
                _order_key(r[0]) for r in run_query_raw(seed_store, text)
            ], order
            for a, b in zip(result.terms, result.terms[1:], strict=False):
                if rank[a[0]] == rank[b[0]]:
                    assert int(a[1].value) < int(b[1].value), order
        else:
            assert ours == engine, order


def values_only(values: str) -> str:
    return f"SELECT ?k ?i WHERE {{ {values} }}"


def run_query_raw(store: Store, text: str) -> list[tuple[Any, ...]]:
    from hcgraph.queries import _materialise

    return _materialise(store.query(text)).terms


def test_cli_pages_a_parameterised_query(invoke: Any, tmp_path: Path) -> None:
    """`hcgraph query source-stories -p manifest_id=ID --limit/--offset` through the CLI."""
    store = tmp_path / "store"
    assert invoke("ingest", str(SEED), "--store", str(store)).exit_code == 0
    manifest_id = json.loads(SEED.read_text())["manifests"][0]["manifest_id"]
    base = ["query", "source-stories", "-p", f"manifest_id={manifest_id}", "--format", "csv"]
    whole = invoke(*base, "--store", str(store))
    assert whole.exit_code == 0, whole.output
    lines = whole.output.splitlines()
    assert lines[0] == "manifest_id,manifest,story,headline,published"
    assert len(lines) == 2 and SEED_URL in lines[1]
    empty = invoke(*base, "--offset", "1", "--store", str(store))
    assert empty.exit_code == 0 and empty.output.splitlines() == lines[:1]
    bad = invoke(*base, "--limit", "-1", "--store", str(store))
    assert bad.exit_code == 2 and "--limit" in bad.output
