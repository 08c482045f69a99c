"""Issue 14, input validation: hostile depth and size, every schema problem, strict types,
and a processing failure that fails one story, never the whole crawl."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hcgraph import pipeline
from hcgraph.cli import cli
from hcgraph.errors import StoreError, StoryError
from hcgraph.ingest import ingest_bytes
from hcgraph.model import MAX_DEPTH, check_shape, parse_story
from hcgraph.store import Store
from tests.crawlserver import CrawlServer, Site, page, stories_in, story

DEEP = b'{"schema":"hangingcontext.desk/1","x":' + b"[" * 2000 + b"]" * 2000 + b"}"


def _doc(seed_path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(seed_path.read_text())
    return doc


# --- item 0: depth and size ---------------------------------------------------------------
def test_deep_document_is_a_story_error_with_path() -> None:
    with pytest.raises(StoryError) as info:
        parse_story(DEEP, "deep.json")
    assert info.value.json_path == "x" + "[0]" * (MAX_DEPTH - 1)
    assert f"nested deeper than {MAX_DEPTH} levels" in str(info.value)


def test_depth_scan_ignores_brackets_inside_strings() -> None:
    doc = {"a": "[" * 500 + '\\"{' * 100, "b": [[["ok"]]]}
    check_shape(json.dumps(doc), "x", max_depth=4)  # strings hold no structure
    with pytest.raises(StoryError, match=r"b\[0\]\[0\]: nested deeper than 3"):
        check_shape(json.dumps(doc), "x", max_depth=3)


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


def test_depth_scan_measures_every_document_exactly() -> None:
    """The fast depth count (C passes over the bytes) equals the depth of the parsed value
    on seeded random documents full of brackets, quotes and backslashes inside strings."""
    import random

    from hcgraph.model import _max_depth

    rng = random.Random(5)
    tricky = ["[", "]", "{}", '"', "\\", '\\"', "x\\y", "}{", ""]

    def value(level: int) -> Any:
        roll = rng.random()
        if level > 8 or roll < 0.3:
            return rng.choice([rng.choice(tricky) * rng.randint(1, 3), 7, None, True])
        if roll < 0.65:
            return [value(level + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(tricky) + str(k): value(level + 1) for k in range(rng.randint(0, 3))}

    for _ in range(3000):
        doc = value(0)
        assert _max_depth(json.dumps(doc).encode(), 64) == _depth(doc), doc
    assert _max_depth(b"[" * 100_000 + b"]" * 100_000, 64) > 64  # stops at the limit
    assert _max_depth(b'{"a": "unterminated}', 64) > 64  # unsure: the slow walk decides
    assert _max_depth(b"[[]}]]", 64) > 64


@pytest.mark.parametrize("codec", ["utf-16", "utf-32-le"])
def test_deep_document_in_utf16_or_utf32_is_refused(codec: str) -> None:
    """Python's parser reads UTF-16 and UTF-32 bodies (the lenient path), so the depth check
    must see their structure too. U+4122 puts a quote byte (0x22) inside a string: a scan of
    the raw bytes took the deep array for string content, passed it, and json.loads raised
    RecursionError out of parse_story and the crawler's identity check."""
    from hcgraph.crawling.identity_check import declared_url

    odd = "\u4122"
    doc = (
        f'{{"schema":"hangingcontext.desk/1","a":"{odd}","x":'
        + "[" * 2000
        + "]" * 2000
        + f',"b":"{odd}"}}'
    )
    body = doc.encode(codec)
    with pytest.raises(StoryError, match=f"nested deeper than {MAX_DEPTH} levels"):
        parse_story(body, "deep.json")
    assert declared_url(body) is None


def test_long_literal_is_refused_with_path() -> None:
    doc = {"sections": [{"paragraphs": [{"markdown": "x" * 2000}]}]}
    with pytest.raises(StoryError) as info:
        check_shape(json.dumps(doc), "big.json", max_literal=1000)
    assert info.value.json_path == "sections[0].paragraphs[0].markdown"


def test_ingest_deep_file_fails_alone(invoke: Any, tmp_path: Path, seed_path: Path) -> None:
    files = tmp_path / "in"
    files.mkdir()
    (files / "deep.json").write_bytes(DEEP)
    (files / "good.json").write_bytes(seed_path.read_bytes())
    result = invoke("ingest", files, "--store", tmp_path / "store")
    assert result.exit_code == 3
    assert "ingested 1 stories" in result.stdout
    assert "Traceback" not in result.output and "RecursionError" not in result.output
    assert "deep.json: x[0]" in result.stderr and "nested deeper than 64" in result.stderr


@pytest.mark.parametrize("bad", ["a%zz", "[b]", "a\x7fb", "a\x85b"])
def test_story_url_that_is_no_iri_fails_alone(
    invoke: Any, tmp_path: Path, seed_path: Path, bad: str
) -> None:
    """A url the model's own checks let through but RDF refuses (a bad %-escape, a bracket,
    a DEL or C1 control) is a schema error at ``url``, not a crash losing the batch."""
    files = tmp_path / "in"
    files.mkdir()
    (files / "good.json").write_bytes(seed_path.read_bytes())
    doc = _doc(seed_path)
    doc["url"], doc["id"] = f"https://hangingcontext.com/stories/{bad}/", "1899999999999999991"
    (files / "bad.json").write_text(json.dumps(doc))
    result = invoke("ingest", files, "--store", tmp_path / "store")
    assert result.exit_code == 3 and "Traceback" not in result.output, result.output
    assert "ingested 1 stories" in result.stdout
    assert "bad.json: url: must be a valid IRI" in result.stderr


@pytest.mark.parametrize("char, shown", [("\x85", "\\x85"), ("\ue000", "\\ue000")])
def test_an_unprintable_character_in_the_url_is_named_by_its_escape(
    seed_path: Path, char: str, shown: str
) -> None:
    doc = {**_doc(seed_path), "url": f"https://hangingcontext.com/stories/a{char}b/"}
    with pytest.raises(StoryError) as info:
        parse_story(json.dumps(doc).encode(), "u.json")
    assert info.value.json_path == "url" and f"'{shown}'" in info.value.reason


def test_a_file_name_that_is_not_utf8_is_ingested(
    invoke: Any, tmp_path: Path, seed_path: Path
) -> None:
    """A file name from another system (bytes that are not UTF-8) is read, and its name kept
    with a ``\\xff`` escape in the graph and in messages; one such bad file fails alone."""
    files = tmp_path / "in"
    files.mkdir()
    (files / "good.json").write_bytes(seed_path.read_bytes())
    doc = _doc(seed_path)
    doc["url"], doc["id"] = "https://hangingcontext.com/stories/odd/", "1899999999999999992"
    odd = os.fsdecode(bytes(files) + b"/odd\xffname.json")
    Path(odd).write_text(json.dumps(doc))
    Path(os.fsdecode(bytes(files) + b"/bad\xfe.json")).write_text("{")
    store = tmp_path / "store"
    result = invoke("ingest", files, "--store", store)
    assert result.exit_code == 3 and "Traceback" not in result.output, result.output
    assert "ingested 2 stories" in result.stdout
    assert "bad\\xfe.json:" in result.stderr
    with Store(store, read_only=True) as st:
        rows = st.query("SELECT ?l WHERE { ?i hc:sourceLocation ?l }")
        assert {str(r[0].value) for r in rows} == {"good.json", "odd\\xffname.json"}


def test_a_story_that_trips_the_mapping_fails_alone(
    invoke: Any, tmp_path: Path, seed_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unforeseen error while mapping one story (a bug some input triggers) fails that
    file with its reason; the others are stored, and a later file with the same url and id
    is neither its repeat nor its id clash."""
    real = pipeline.map_story

    def map_story(story: Any, info: Any) -> Any:
        if "/trips/" in story.url and "first" in story.headline:
            raise KeyError("boom")
        return real(story, info)

    monkeypatch.setattr(pipeline, "map_story", map_story)
    files = tmp_path / "in"
    files.mkdir()
    (files / "a-good.json").write_bytes(seed_path.read_bytes())
    doc = _doc(seed_path)
    doc["url"], doc["id"] = "https://hangingcontext.com/stories/trips/", "1899999999999999993"
    for name, headline in (("b-trips.json", "the first"), ("c-again.json", "the second")):
        (files / name).write_text(json.dumps({**doc, "headline": headline}))
    result = invoke("ingest", files, "--store", tmp_path / "store")
    assert result.exit_code == 3 and "Traceback" not in result.output, result.output
    assert "ingested 2 stories (2 added" in result.stdout
    assert "b-trips.json: cannot be mapped to RDF: KeyError: 'boom'" in result.stderr
    assert "warning" not in result.stderr  # c is no repeat of b, nor b's id clash


def _trips_on_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mapping raises for any story whose headline holds "first"."""
    real = pipeline.map_story

    def map_story(story: Any, info: Any) -> Any:
        if "first" in story.headline:
            raise KeyError("boom")
        return real(story, info)

    monkeypatch.setattr(pipeline, "map_story", map_story)


def test_a_failed_mapping_forgets_only_what_it_added(
    seed_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored story, then its url and id again failing to map, then its id under another
    url: the third is still the first's id clash (the failure did not erase what the first
    stored story holds)."""
    _trips_on_first(monkeypatch)
    doc = _doc(seed_path)
    other = {**doc, "url": "https://hangingcontext.com/stories/other/"}
    docs = [
        (json.dumps(doc).encode(), "a.json"),
        (json.dumps({**doc, "headline": "the first"}).encode(), "b.json"),
        (json.dumps(other).encode(), "c.json"),
    ]
    with Store(None) as store:
        report = ingest_bytes(store, docs)
    assert [f.source for f in report.failures] == ["b.json"]
    assert [(r.source, r.id_clash) for r in report.id_clashes] == [("c.json", doc["url"])]


def test_crawl_a_failed_mapping_does_not_own_the_story(
    seed_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a crawl, the same story fetched under a second URL after the first copy failed to
    map is stored, not called a duplicate of the failed fetch."""
    _trips_on_first(monkeypatch)
    doc = _doc(seed_path)
    first = json.dumps({**doc, "headline": "the first"}).encode()
    mirror = "https://mirror.example/agentic/index.json"
    with Store(None) as store, pipeline.Pipeline(store, crawl_claims={}) as run:
        outcomes = list(run.run([
            pipeline.Document(first, doc["url"], key=doc["url"]),
            pipeline.Document(json.dumps(doc).encode(), mirror, key=mirror),
        ]))  # fmt: skip
        assert outcomes[0].reason is not None and outcomes[0].reason.startswith("cannot be mapped")
        assert outcomes[1].duplicate_of is None and outcomes[1].status == "added"
        assert store.story_graphs() == [doc["url"]]


def test_ingest_max_bytes(invoke: Any, tmp_path: Path, seed_path: Path) -> None:
    files = tmp_path / "in"
    files.mkdir()
    (files / "good.json").write_bytes(seed_path.read_bytes())
    big = _doc(seed_path)
    big["url"] = "https://hangingcontext.com/stories/big/"
    big["id"] = "1899999999999999990"
    big["dek"] = "x" * 30_000
    (files / "big.json").write_text(json.dumps(big))
    result = invoke("ingest", files, "--store", tmp_path / "store", "--max-bytes", "25k")
    assert result.exit_code == 3
    assert "ingested 1 stories" in result.stdout
    assert "big.json: file too large: more than the 25600-byte cap" in result.stderr


@pytest.mark.parametrize("command", ["ingest", "crawl"])
@pytest.mark.parametrize("value", ["-5", "inf", "1e400", "nan"])
def test_max_bytes_out_of_range_is_a_usage_error(
    tmp_path: Path, seed_path: Path, command: str, value: str
) -> None:
    """A negative or infinite cap is refused like ``abc`` (exit 2, the option named), not a
    ValueError/OverflowError traceback where the cap is used."""
    result = CliRunner().invoke(
        cli, [command, str(seed_path), "--store", str(tmp_path / "store"), "--max-bytes", value]
    )
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"Invalid value for '--max-bytes': '{value}' is not a size" in result.output
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("command", ["ingest", "crawl"])
def test_huge_max_bytes_reads_a_small_file(
    invoke: Any, tmp_path: Path, seed_path: Path, command: str
) -> None:
    """A generous cap is no allocation: the file is read piece by piece (it was a
    MemoryError, or OverflowError for ``1e300``, on a 40 KB story)."""
    local = ["--depth", "0"] if command == "crawl" else []  # the seed file only, no network
    for cap in ("1000g", "1e300"):
        args = [command, seed_path, *local, "--store", tmp_path / "store", "--max-bytes", cap]
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        assert "too large" not in result.output


@pytest.mark.parametrize(("option", "value"), [("--timeout", "nan"), ("--rate", "inf")])
def test_crawl_non_finite_number_is_a_usage_error(
    tmp_path: Path, seed_path: Path, option: str, value: str
) -> None:
    """click's FloatRange lets nan and inf through; --timeout nan was a NaN-deadline crash."""
    args = ["crawl", str(seed_path), "--store", str(tmp_path / "store"), option, value]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option}': '{value}' is not a finite number" in result.output


# --- issue 38 item 6: out-of-range numbers and a missing argument are usage errors ----------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "--max-per-story", "-5"],
         "Invalid value for '--max-per-story': -5 is not in the range x>=0."),
        (["audit", "--max-source-age", "1e20"],
         "Invalid value for '--max-source-age': '1e20' is not a valid integer range."),
        (["audit", "--max-source-age", "100000000000000000000"],
         "Invalid value for '--max-source-age': 100000000000000000000 is not in the range"
         " 0<=x<=36500."),
        (["ingest"], "Error: give story files or directories, or --withdraw URL"),
    ],
)  # fmt: skip
def test_bad_arguments_are_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    """Exit 2 with click's usage message, before any store is opened or created."""
    store = tmp_path / "store"
    result = CliRunner().invoke(cli, [*args, "--store", str(store)], prog_name="hcgraph")
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"Usage: hcgraph {args[0]} ")
    assert message in result.output
    assert "Traceback" not in result.output
    assert not store.exists()


def test_the_largest_source_age_is_accepted_and_the_library_checks_it_too() -> None:
    from hcgraph.errors import ProvenanceError
    from hcgraph.provenance import audit
    from hcgraph.provenance.auditing import AuditOptions
    from hcgraph.provenance.scope import MAX_SOURCE_AGE

    with Store(None) as store:
        assert audit(store, options=AuditOptions(max_source_age=MAX_SOURCE_AGE)).stories == []
        with pytest.raises(ProvenanceError, match="--max-source-age must be at most 36500"):
            audit(store, options=AuditOptions(max_source_age=10**20))


# --- item 5: every problem, each with its path -----------------------------------------------
def test_every_schema_problem_is_reported(invoke: Any, tmp_path: Path, seed_path: Path) -> None:
    doc = _doc(seed_path)
    doc["headline"] = 5
    doc["manifests"][1]["manifest_id"] = 1.5
    doc["key_facts"][2]["self_reported"] = "yes"
    doc["published_at"] = 12345
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(StoryError) as info:
        parse_story(path.read_bytes(), str(path))
    paths = {p for p, _ in info.value.problems}
    assert paths == {
        "headline",
        "manifests[1].manifest_id",
        "key_facts[2].self_reported",
        "published_at",
    }
    result = invoke("ingest", path, "--store", tmp_path / "store")
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("failed:")]
    assert len(lines) == 4
    for p in paths:
        assert any(f"bad.json: {p}: " in ln for ln in lines)


def test_problem_list_is_capped() -> None:
    doc = {"schema": "hangingcontext.desk/1", "type": "story", "id": "1", "url": "https://a.b/",
           "headline": "h", "manifests": [{"manifest_id": 1.5} for _ in range(30)]}  # fmt: skip
    with pytest.raises(StoryError) as info:
        parse_story(json.dumps(doc), "many.json")
    assert len(info.value.problems) == 30
    assert str(info.value).endswith("… and 10 more")


# --- item 6: strict types ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("published_at", 12345),
        ("published_at", True),
        ("source_count", "5"),
        ("source_count", 5.0),
        ("source_count", True),
    ],
)
def test_wrong_types_are_schema_errors(seed_path: Path, field: str, value: object) -> None:
    doc = _doc(seed_path)
    doc[field] = value
    with pytest.raises(StoryError) as info:
        parse_story(json.dumps(doc), "x.json")
    assert info.value.json_path == field


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("manifests", 0, "published_date"), 20261019),
        (("key_facts", 0, "self_reported"), 1),
        (("key_facts", 0, "self_reported"), "true"),
    ],
)
def test_nested_wrong_types(seed_path: Path, where: tuple[Any, ...], value: object) -> None:
    doc = _doc(seed_path)
    target: Any = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    with pytest.raises(StoryError) as info:
        parse_story(json.dumps(doc), "x.json")
    assert info.value.json_path == ".".join(map(str, where)).replace(".0.", "[0].")


def test_iso_strings_and_exact_ids_still_accepted(seed_path: Path) -> None:
    doc = _doc(seed_path)
    doc["published_at"] = "2026-10-20T08:00:00Z"
    doc["id"] = 123456789012345678901234567890
    story = parse_story(json.dumps(doc), "x.json")
    assert story.id == "123456789012345678901234567890"
    assert story.published_at is not None and story.published_at.year == 2026


# --- item 0: a processing failure never hangs the crawl ---------------------------------------
@pytest.fixture
def site(crawl_server: CrawlServer) -> Site:
    return Site(crawl_server)


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_deep_story_served_to_the_crawler(site: Site, tmp_path: Path) -> None:
    site.add("a", story("a", page("deep"), page("b")))
    site.add("deep", DEEP)
    site.add("b", story("b"))
    report = site.crawl(tmp_path)
    assert report.exit_code == 3
    assert stories_in(tmp_path) == {page("a"), page("b")}
    (fail,) = report.failures
    assert "nested deeper than 64" in fail["reason"]


def _poison(monkeypatch: pytest.MonkeyPatch, exc: type[Exception]) -> None:
    real = pipeline.parse_story

    def parse(raw: bytes | str, source: str) -> Any:
        if "/poison/" in source:
            raise exc("boom from a hostile body")
        return real(raw, source)

    monkeypatch.setattr(pipeline, "parse_story", parse)


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_processing_error_fails_one_story(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _poison(monkeypatch, RecursionError)
    site.add("a", story("a", page("poison"), page("b")))
    site.add("poison", story("poison"))
    site.add("b", story("b"))
    report = site.crawl(tmp_path, store_worker="thread")
    assert report.exit_code == 3
    assert stories_in(tmp_path) == {page("a"), page("b")}
    (fail,) = report.failures
    assert fail["kind"] == "process-error" and "boom" in fail["reason"]


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_dead_worker_ends_crawl_and_resume_skips_the_body(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hcgraph.errors import CrawlError

    _poison(monkeypatch, StoreError)  # as a store that fails says it
    site.add("a", story("a", page("poison"), page("b")))
    site.add("poison", story("poison"))
    site.add("b", story("b"))
    with pytest.raises(CrawlError, match="processing failed"):
        site.crawl(tmp_path, store_worker="thread")
    # The resume retries the bodies of that batch alone: the poisoned one fails the store
    # again and is recorded as failed (it may have been alone the first time too: a body is
    # blamed only once it fails on its own retry).
    with pytest.raises(CrawlError, match="processing failed"):
        site.crawl(tmp_path, store_worker="thread")
    report = site.crawl(tmp_path, store_worker="thread")  # the next resume skips it
    assert report.exit_code == 3
    assert stories_in(tmp_path) == {page("a"), page("b")}
    (fail,) = report.failures
    assert fail["kind"] == "process-error"
