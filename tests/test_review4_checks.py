"""Review of the read side and the checks (2026-12-07): odd option values and inputs meet one
clear line, never a traceback."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hcgraph.cli import cli
from hcgraph.crate import write_rocrate
from hcgraph.errors import ExportError
from hcgraph.ingest import ingest_paths
from hcgraph.limits import limit_memory
from hcgraph.store import Store
from tests.conftest import SEED


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("review4") / "store"
    with Store(directory) as st:
        ingest_paths(st, [SEED])
    return directory


@pytest.mark.parametrize("value", ["nan", "inf", "-nan"])
def test_query_timeout_refuses_nan_and_inf(invoke: Any, store_dir: Path, value: str) -> None:
    """click's FloatRange lets nan and inf through; they crashed in select() with a traceback."""
    result = invoke_safe("query", "publisher-reach", "--timeout-s", value, "--store", store_dir)
    assert result.exit_code == 2, result.output
    assert "--timeout-s" in result.output and "finite" in result.output


def invoke_safe(*args: object) -> Any:
    """The CLI in-process, its exceptions kept in the result (exit code 1 for a crash)."""
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_a_query_memory_past_what_the_os_holds_is_no_crash() -> None:
    """``--query-memory 99999999999999999999999G`` reached setrlimit, which raised
    OverflowError: the query process died "without an answer (OverflowError ...)"."""
    import resource

    before = resource.getrlimit(resource.RLIMIT_DATA)
    limit_memory(99999999999999999999999 << 30)  # raised OverflowError
    assert resource.getrlimit(resource.RLIMIT_DATA) == before


@pytest.mark.parametrize(
    "report",
    [
        {"seeds": 5},
        {"seeds": None},
        {"seeds": "https://example.org/"},
        {"seeds": [{"url": "x"}]},
        {"seeds": [], "started_at": 3},
        ["https://example.org/"],
    ],
)
def test_a_malformed_crawl_report_is_named(store_dir: Path, tmp_path: Path, report: Any) -> None:
    """seeds that are no list of URLs crashed (TypeError) or became one input per character."""
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    with pytest.raises(ExportError, match="not a crawl report"):
        write_rocrate(store_dir, tmp_path / "crate", report=path)
    assert not (tmp_path / "crate").exists()


def _rdf12_store(directory: Path, *, triple_term: bool) -> Path:
    """The seed story plus an ``@he--rtl`` headline (and a triple term) in its graph."""
    import pyoxigraph as ox

    from tests.conftest import SEED_URL

    story = ox.NamedNode(SEED_URL)
    with Store(directory) as st:
        ingest_paths(st, [SEED])
        rtl = ox.Literal("שלום", language="he", direction=ox.BaseDirection.RTL)
        st.ox.add(ox.Quad(story, ox.NamedNode("http://schema.org/alternativeHeadline"), rtl, story))
        if triple_term:
            said = ox.Triple(story, ox.NamedNode("http://schema.org/headline"), rtl)
            reifies = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies")
            st.ox.add(ox.Quad(story, reifies, said, story))
    return directory


def test_jsonld_keeps_a_literals_direction(tmp_path: Path) -> None:
    """``"שלום"@he--rtl`` was written as ``{"@value", "@language": "he"}``: its direction lost."""
    import pyoxigraph as ox

    store_dir = _rdf12_store(tmp_path / "store", triple_term=False)
    out = tmp_path / "graph.jsonld"
    result = invoke_safe("export", "--format", "jsonld", "--out", out, "--store", store_dir)
    assert result.exit_code == 0, result.output
    back = {q.object for q in ox.parse(out.read_bytes(), format=ox.RdfFormat.JSON_LD)}
    assert ox.Literal("שלום", language="he", direction=ox.BaseDirection.RTL) in back


def test_jsonld_refuses_a_triple_term_in_one_line(tmp_path: Path) -> None:
    """A triple term crashed ``export --format jsonld`` with a ValueError traceback."""
    store_dir = _rdf12_store(tmp_path / "store", triple_term=True)
    out = tmp_path / "graph.jsonld"
    result = invoke_safe("export", "--format", "jsonld", "--out", out, "--store", store_dir)
    assert result.exit_code == 1 and result.exception is not None
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.output.startswith("error: ") and "triple term" in result.output
    assert "trig" in result.output and not out.exists()


def test_jsonld_refuses_an_iri_that_reads_back_as_a_curie(tmp_path: Path) -> None:
    """An IRI whose scheme is a prefix name (``schema:x``) crashed with a ValueError."""
    import pyoxigraph as ox

    store_dir = tmp_path / "store"
    with Store(store_dir) as st:
        graph = ox.NamedNode("https://example.org/story/")
        st.ox.add(ox.Quad(ox.NamedNode("schema:x"), ox.NamedNode("http://a/p"), graph, graph))
    result = invoke_safe("export", "--format", "jsonld", "--store", store_dir)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "read back as a CURIE" in result.output


@pytest.mark.parametrize("mode", ["full", "fast"])
def test_shacl_runs_on_a_store_holding_a_triple_term(tmp_path: Path, mode: str) -> None:
    """``check --shacl full`` crashed (AttributeError: Triple has no 'language') converting an
    RDF 1.2 triple term for pySHACL; the store's other triples are validated as before."""
    from hcgraph.shacl import validate

    plain = tmp_path / "plain"
    with Store(plain) as st:
        ingest_paths(st, [SEED])
        before = validate(st, mode="full")
    with Store(_rdf12_store(tmp_path / "rdf12", triple_term=True)) as st:
        after = validate(st, mode="full")
    assert after == before
    result = invoke_safe("check", "--shacl", mode, "--store", tmp_path / "rdf12")
    assert result.exit_code == 0 and result.exception is None, result.output


def test_a_shapes_file_with_bad_turtle_says_what_is_wrong(tmp_path: Path) -> None:
    """The error was rdflib's first line only, ``at line 3 of <>:``: where, not what."""
    from hcgraph.errors import CheckError
    from hcgraph.shacl import load_shapes

    shapes = tmp_path / "shapes.ttl"
    shapes.write_text("@prefix x: <http://a/> .\nx:a x:b x:c .\nnot turtle <<<\n")
    with pytest.raises(CheckError) as caught:
        load_shapes(shapes)
    assert str(caught.value) == (
        f"{shapes}: cannot load SHACL shapes: line 3: expected directive or statement"
    )


def test_order_by_over_an_ill_typed_decimal_is_no_crash() -> None:
    """``"NaN"^^xsd:decimal`` became Decimal('NaN'), and sorting by it raised
    decimal.InvalidOperation (a traceback): an ill-typed literal stays its text."""
    from hcgraph.queries import parse_query_text, run_query, to_python

    text = (
        "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
        'SELECT ?x WHERE { VALUES ?x { "NaN"^^xsd:decimal 2 "1_0"^^xsd:integer 1 } }\n'
        "ORDER BY ?x\n"
    )
    with Store(None) as st:
        rows = [r["x"] for r in run_query(st, parse_query_text(text, "nan.rq"))]
    assert rows == [1, 2, "1_0", "NaN"]
    import pyoxigraph as ox

    xsd = "http://www.w3.org/2001/XMLSchema#"
    assert to_python(ox.Literal("Infinity", datatype=ox.NamedNode(xsd + "decimal"))) == "Infinity"
    assert to_python(ox.Literal("١٢", datatype=ox.NamedNode(xsd + "integer"))) == "١٢"
    decimal = ox.NamedNode(xsd + "decimal")
    assert to_python(ox.Literal("-1.50", datatype=decimal)) == Decimal("-1.50")


@pytest.mark.parametrize(
    ("given", "lexical"), [("2.5", "2.5"), ("1e5", "100000"), ("-0.0", "-0.0"), (" 3", "3")]
)
def test_a_decimal_parameter_is_an_xsd_decimal(given: str, lexical: str) -> None:
    """``-p d=1e5`` was bound as ``"1E+5"^^xsd:decimal``, an ill-typed literal that compares
    with nothing (so the query answered nothing, silently)."""
    from hcgraph.queries import PARAM_TYPES

    assert PARAM_TYPES["decimal"]("d", given).value == lexical


@pytest.mark.parametrize("given", ["NaN", "Infinity", "-inf", "snan"])
def test_a_decimal_parameter_refuses_what_xsd_decimal_has_not(given: str) -> None:
    from hcgraph.errors import QueryError
    from hcgraph.queries import PARAM_TYPES

    with pytest.raises(QueryError, match="not a valid decimal"):
        PARAM_TYPES["decimal"]("d", given)


@pytest.mark.parametrize(
    "args",
    [
        ("serve", "--timeout-s", "nan"),
        ("serve", "--timeout-s", "inf"),
        ("manifests", "fetch", "--rate", "nan"),
    ],
)
def test_serve_timeout_and_fetch_rate_refuse_nan_and_inf(args: tuple[str, ...]) -> None:
    """Taken as given, a NaN or infinite time limit meant no limit (serve) and a NaN rate a
    crash: both are usage errors, before anything starts."""
    result = invoke_safe(*args)
    assert result.exit_code == 2, result.output
    assert "finite" in result.output


def test_a_rate_of_almost_nothing_sleeps_in_steps_not_an_overflow(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``--rate 1e-300`` asks for 1e300 s between requests: time.sleep overflowed (a
    traceback) on the second request; the pacer now sleeps in bounded steps."""
    import httpx

    from hcgraph.claims import fetching

    slept: list[float] = []
    asked: list[str] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) >= 3:
            raise KeyboardInterrupt  # stop the (very long) wait after a few steps

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        return httpx.Response(404)

    monkeypatch.setattr(fetching.time, "sleep", sleep)
    options = fetching.FetchOptions(api="http://api.test", key_env="K", rate=1e-300)
    with fetching.manifest_archive(tmp_path) as archive, pytest.raises(KeyboardInterrupt):
        fetching.fetch_manifests(["1", "2"], archive, options, environ={"K": "key"},
                                 transport=httpx.MockTransport(answer))  # fmt: skip
    assert len(asked) == 1  # the first request starts at once
    assert slept and all(0 < s <= 60.0 for s in slept)
