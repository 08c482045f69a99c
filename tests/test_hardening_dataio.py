"""Data in and out: hcgraph's own namespace, JSON that is not RFC 8259, bad ingest paths,
store opening errors (a second writer, a damaged store) and atomic split exports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hcgraph.crawling import CrawlOptions, crawl
from hcgraph.errors import StoryError
from hcgraph.model import parse_story
from hcgraph.store import Store
from tests.conftest import ROOT, SEED
from tests.crawlserver import FAST, CrawlServer, stories_in


def _doc(seed_path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(seed_path.read_text())
    return doc


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


# --- a story cannot take over hcgraph's own IRIs ---------------------------------------------

OWN = [
    "https://w3id.org/hcgraph/graph/sources",
    "https://w3id.org/hcgraph/graph/publishers",
    "https://w3id.org/hcgraph/graph/agents",
    "https://w3id.org/hcgraph/id/manifest/1811111111111111111",
    "https://w3id.org/hcgraph/ns",
]


def _own_iris(store_dir: Path) -> list[str]:
    """Story graphs and typed subjects the store holds inside hcgraph's namespace, other
    than what hcgraph itself wrote there (nothing at all when the store is empty)."""
    with Store(store_dir, read_only=True) as st:
        rows = st.query("SELECT DISTINCT ?s WHERE { ?s a hc:Story }")
        stories = [str(r[0].value) for r in rows]
        return [s for s in [*stories, *st.story_graphs()] if s.startswith("https://w3id.org/")]


@pytest.mark.parametrize("url", OWN)
def test_ingest_refuses_a_story_url_in_hcgraphs_namespace(
    invoke: Any, tmp_path: Path, seed_path: Path, url: str
) -> None:
    doc = _doc(seed_path)
    doc["url"] = url
    bad = _write(tmp_path / "bad.json", doc)
    store_dir = tmp_path / "store"
    result = invoke("ingest", bad, seed_path, "--store", store_dir)
    assert result.exit_code == 3
    assert "bad.json: url: must not be in hcgraph's own namespace" in result.stderr
    assert "ingested 1 stories" in result.stdout  # the good file still went in
    assert _own_iris(store_dir) == []


@pytest.mark.parametrize(
    "url",
    [
        "HTTPS://W3ID.ORG/hcgraph/ns",
        "http://w3id.org/hcgraph/graph/sources",
        "https://w3id.org:443/hcgraph/id/claim/1",
        "https://w3id.org./hcgraph/",
        "https://w3id.org/%68cgraph/graph/links",
        "https://w3id.org/hcgraph",
    ],
)
def test_every_spelling_of_the_namespace_is_refused(seed_path: Path, url: str) -> None:
    doc = _doc(seed_path)
    doc["url"] = url
    with pytest.raises(StoryError) as info:
        parse_story(json.dumps(doc), "x.json")
    assert info.value.problems[0][0] == "url"
    assert "own namespace" in info.value.problems[0][1]


@pytest.mark.parametrize("url", ["https://w3id.org/hcgraphs/x/", "https://example.org/hcgraph/"])
def test_urls_beside_the_namespace_are_kept(seed_path: Path, url: str) -> None:
    doc = _doc(seed_path)
    doc["url"] = url
    assert parse_story(json.dumps(doc), "x.json").url == url


@pytest.mark.parametrize(
    ("where", "path"),
    [
        (("related", 0, "url"), "related[0].url"),
        (("manifests", 0, "source_url"), "manifests[0].source_url"),
        (("links", "newsroom"), "links.newsroom"),
        (("links", "edition"), "links.edition"),
    ],
)
def test_urls_that_name_described_things_are_refused_in_the_namespace(
    seed_path: Path, where: tuple[Any, ...], path: str
) -> None:
    """A related story, a source document, a newsroom or an edition is described under its
    URL (in the links, sources and agents graphs): inside hcgraph's namespace it would take
    over a manifest, a shared graph or a term."""
    doc = _doc(seed_path)
    node = doc
    for key in where[:-1]:
        node = node.setdefault(key, {}) if isinstance(key, str) else node[key]
    node[where[-1]] = "https://w3id.org/hcgraph/id/manifest/1811111111111111111"
    with pytest.raises(StoryError) as info:
        parse_story(json.dumps(doc), "x.json")
    assert any(p == path and "own namespace" in m for p, m in info.value.problems)


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_crawl_refuses_a_story_in_hcgraphs_namespace(
    crawl_server: CrawlServer, tmp_path: Path
) -> None:
    """The crawl parses with the same model: a page served under the namespace (through a
    mirror here) whose story claims that URL fails, and nothing is stored."""
    from tests.crawlserver import Reply, story

    prefix = crawl_server.prefix()
    url = "https://w3id.org/hcgraph/graph/sources/"
    body = json.loads(story("x"))
    body["url"] = url
    served = Reply(body=json.dumps(body).encode())
    crawl_server.route(f"{prefix}/hcgraph/graph/sources/index.json", served)
    options = CrawlOptions(mirrors=(f"https://w3id.org={crawl_server.base}{prefix}",), policy=FAST)
    report = crawl([url], tmp_path / "store", options)
    assert report.exit_code == 3
    (failure,) = report.failures
    assert failure["json_path"] == "url" and "own namespace" in failure["reason"]
    assert stories_in(tmp_path / "store") == set()


# --- JSON that RFC 8259 does not allow --------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "NaN", "Infinity", "-Infinity", "1e400", "1E+400", "[1, NaN]",
        # no exponent, more digits than a double holds: read as Infinity all the same
        "1" + "0" * 400 + ".5", "-" + "9" * 320 + ".1", "9" * 309 + ".0",
    ],
    ids=lambda v: v if len(v) < 20 else f"{v[:4]}-{len(v)}-chars",
)  # fmt: skip
def test_non_finite_numbers_are_refused_with_their_path(seed_path: Path, value: str) -> None:
    text = json.dumps(_doc(seed_path))
    raw = text[:-1] + ', "x_future": {"a": ' + value + "}}"
    with pytest.raises(StoryError) as info:
        parse_story(raw.encode(), "x.json")
    path, message = info.value.problems[0]
    assert path == ("x_future.a[1]" if value.startswith("[") else "x_future.a")
    assert "not JSON" in message or "beyond a double" in message


def test_the_words_nan_and_infinity_in_text_are_kept(seed_path: Path) -> None:
    doc = _doc(seed_path)
    doc["x_future"] = {"a": "NaN, to Infinity", "b": "1e400"}
    assert parse_story(json.dumps(doc), "x.json").extra["x_future"]["b"] == "1e400"


@pytest.mark.parametrize(
    "surrogate",
    [pytest.param(b"\xed\xa0\x80", id="encoded"), pytest.param(b"\\ud800", id="escaped")],
)
def test_a_lone_surrogate_is_refused_with_its_path(seed_path: Path, surrogate: bytes) -> None:
    """Neither is Unicode text: stored, either became U+FFFD without a word."""
    raw = seed_path.read_bytes().replace(b"Agentic RL grows up", b"Agentic " + surrogate, 1)
    with pytest.raises(StoryError) as info:
        parse_story(raw, "x.json")
    assert info.value.problems[0][0] == "headline"
    assert "surrogate U+D800" in info.value.problems[0][1]


def test_ingest_names_the_path_of_a_nan(invoke: Any, tmp_path: Path, seed_path: Path) -> None:
    text = json.dumps(_doc(seed_path))
    bad = tmp_path / "nan.json"
    bad.write_text(text[:-1] + ', "x_future": [0, {"b": NaN}]}')
    result = invoke("ingest", bad, "--store", tmp_path / "store")
    assert result.exit_code == 3
    assert "nan.json: x_future[1].b: NaN is not JSON" in result.stderr


# --- ingest: a missing path is a user error; a FIFO is never opened ---------------------------


def test_ingest_of_a_missing_path_exits_1_and_creates_nothing(invoke: Any, tmp_path: Path) -> None:
    store_dir = tmp_path / "output" / "store"
    result = invoke("ingest", tmp_path / "typo.json", "--store", store_dir)
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'typo.json'}: no such file or directory"
    ]
    assert not (tmp_path / "output").exists()


def test_a_missing_path_among_good_ones_refuses_the_run(
    invoke: Any, tmp_path: Path, seed_path: Path
) -> None:
    store_dir = tmp_path / "store"
    result = invoke("ingest", seed_path, tmp_path / "a.json", tmp_path / "b", "--store", store_dir)
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert line.endswith("a.json: no such file or directory (and 1 more missing paths)")
    assert not store_dir.exists()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_ingest_refuses_what_is_no_regular_file(
    invoke: Any, tmp_path: Path, seed_path: Path, kind: str
) -> None:
    """A FIFO with no writer blocked ingest forever; a device is no story file either. Each
    is refused by its path, unopened, and the other files go in."""
    import os

    if kind == "fifo":
        odd = tmp_path / "pipe.json"
        os.mkfifo(odd)
        why = "not a regular file (a FIFO)"
    else:
        odd = Path("/dev/zero")
        why = "not a regular file (a character device)"
    result = invoke("ingest", odd, seed_path, "--store", tmp_path / "store")
    assert result.exit_code == 3
    assert f"{odd}: {why}" in result.stderr
    assert "ingested 1 stories" in result.stdout


# --- store opening errors: one line each --------------------------------------------------------


def _damage(store_dir: Path) -> None:
    (store_dir / "oxigraph" / "CURRENT").write_text("garbage\n")


@pytest.mark.parametrize(
    "command",
    [
        ["stats"],
        ["export", "--format", "nquads"],
        ["ingest", "tests/fixtures/agentic-rl-production.json"],
        ["query", "publisher-reach"],
        ["check"],
        ["check", "--deep"],
        ["serve", "--port", "0"],  # its query workers name it as the CLI does
    ],
    ids=lambda c: "-".join(c[:2]) if c[1:2] == ["--deep"] else c[0],
)
def test_a_damaged_store_is_one_line_saying_how_to_rebuild(
    run_cli: Any, invoke: Any, tmp_path: Path, seed_path: Path, command: list[str]
) -> None:
    store_dir = tmp_path / "store"
    assert invoke("ingest", seed_path, "--store", store_dir).exit_code == 0
    _damage(store_dir)
    proc = run_cli(*command, "--store", store_dir, cwd=ROOT)
    assert proc.returncode == 1
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: {store_dir}: the store is damaged (Corruption: ")
    assert "ingest again" in line  # no archive here: rebuild has nothing to rebuild from


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_damaged_crawled_store_is_rebuilt_as_its_message_says(
    run_cli: Any, tmp_path: Path
) -> None:
    assert run_cli("demo", "--stories", "5", "--out", tmp_path / "out").returncode == 0
    store_dir = tmp_path / "out" / "store"
    before = run_cli("stats", "--format", "json", "--store", store_dir).stdout
    _damage(store_dir)
    proc = run_cli("stats", "--store", store_dir)
    hint = f"hcgraph rebuild --drop-unarchived --store {store_dir}"
    assert proc.returncode == 1 and hint in proc.stderr
    refused = run_cli("rebuild", "--store", store_dir)  # without the flag: said, not guessed
    assert refused.returncode == 1 and "--drop-unarchived" in refused.stderr
    assert run_cli(*hint.split()[1:]).returncode == 0
    assert run_cli("stats", "--format", "json", "--store", store_dir).stdout == before


@pytest.mark.parametrize(
    "command",
    [["ingest", "tests/fixtures/agentic-rl-production.json"], ["rebuild", "--drop-unarchived"]],
    ids=lambda c: c[0],
)
def test_a_second_writer_is_told_who_holds_the_store(
    run_cli: Any, tmp_path: Path, command: list[str]
) -> None:
    """RocksDB's "IO error: While lock file: …/LOCK: Resource temporarily unavailable" was all
    a second writer got."""
    import os

    store_dir = tmp_path / "store"
    (store_dir / "archive" / "packs").mkdir(parents=True)  # rebuild gets to the store
    with Store(store_dir, holder="hcgraph crawl"):
        proc = run_cli(*command, "--store", store_dir, cwd=ROOT)
    assert proc.returncode == 1
    (line,) = proc.stderr.strip().splitlines()
    assert line == (
        f"error: {store_dir}: the store is in use by hcgraph crawl, pid {os.getpid()}; "
        "wait for it to finish, or stop it"
    )
    assert not (store_dir / "writer.json").exists()  # the holder's record went with it


def test_the_cli_names_its_command_as_the_holder(invoke: Any, tmp_path: Path) -> None:
    import sys

    from hcgraph.errors import StoreBusyError

    store_dir = tmp_path / "store"
    argv = sys.argv
    sys.argv = ["/usr/bin/hcgraph", "--quiet", "ingest", "x.json"]
    try:
        with Store(store_dir), pytest.raises(StoreBusyError) as info:
            Store(store_dir)
    finally:
        sys.argv = argv
    assert info.value.holder is not None and info.value.holder.startswith("hcgraph ingest, pid")


def test_a_stale_holder_record_is_not_believed(tmp_path: Path) -> None:
    """A writer killed by SIGKILL leaves writer.json behind: a dead pid names nobody."""
    from hcgraph.store import holder_of

    (tmp_path / "writer.json").write_text('{"pid": 999999999, "command": "hcgraph crawl"}')
    assert holder_of(tmp_path) is None


# --- crawl: an empty seed -------------------------------------------------------------------


@pytest.mark.parametrize("seed", ["", "  ", "\t"])
def test_an_empty_seed_is_refused(
    invoke: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: str
) -> None:
    """``hcgraph crawl "$UNSET"`` crawled the current directory, then what it linked to."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "story.json").write_bytes(SEED.read_bytes())  # what "" found: the cwd's files
    result = invoke("crawl", seed, "--store", tmp_path / "store")
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert line == (
        f"error: seed {seed!r} is empty: give a story URL or a local story file "
        "(an unset shell variable?)"
    )
    assert not (tmp_path / "store").exists()


# --- export --split: the whole new dump or the old one; stdout that cannot be written -------

_KILLED_MID_EXPORT = """
import os, signal, sys
import hcgraph.dump as dump
real = dump._flush
def flush(target, index, lines, compress):
    path = real(target, index, lines, compress)
    if index == 1:  # two shards of the new dump are on disk: kill -9, no clean-up at all
        os.kill(os.getpid(), signal.SIGKILL)
    return path
dump._flush = flush
from hcgraph.cli import main
main(sys.argv[1:])
"""


@pytest.fixture(scope="module")
def dump_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from hcgraph.ingest import ingest_bytes
    from hcsample.corpus import generate_corpus

    directory = tmp_path_factory.mktemp("dump") / "store"
    corpus = generate_corpus(30, seed=25)
    with Store(directory) as store:
        docs = ((json.dumps(d).encode(), str(d["url"])) for d in corpus.stories)
        assert not ingest_bytes(store, docs).failures
    return directory


def _split(store_dir: Path, out: Path, n: int) -> list[str]:
    return ["export", "--format", "nquads", "--gzip", "--split", str(n), "--out", str(out),
            "--store", str(store_dir)]  # fmt: skip


def _dump(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_killed_split_export_leaves_the_old_dump_whole(
    invoke: Any, dump_store: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys

    from tests.conftest import cli_env

    out = tmp_path / "dump"
    assert invoke(*_split(dump_store, out, 100_000)).exit_code == 0
    old = _dump(out)
    assert list(old) == ["graph-00000.nq.gz"]
    args = [sys.executable, "-c", _KILLED_MID_EXPORT, *_split(dump_store, out, 2000)]
    killed = subprocess.run(args, env=cli_env(), capture_output=True, timeout=100)
    assert killed.returncode == -9
    assert _dump(out) == old  # not the new shard 0 over the old one
    fresh = tmp_path / "fresh"  # killed on its first export: no half dump at all
    args = [sys.executable, "-c", _KILLED_MID_EXPORT, *_split(dump_store, fresh, 2000)]
    assert subprocess.run(args, env=cli_env(), capture_output=True, timeout=100).returncode == -9
    assert not fresh.exists()
    # The next export clears what the killed ones left beside the directories.
    assert invoke(*_split(dump_store, out, 2000)).exit_code == 0
    assert len(_dump(out)) > 2
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".dump.")) == []


def test_a_smaller_dump_replaces_a_longer_one_exactly(
    invoke: Any, dump_store: Path, seed_path: Path, tmp_path: Path
) -> None:
    out = tmp_path / "dump"
    assert invoke(*_split(dump_store, out, 1000)).exit_code == 0
    assert len(_dump(out)) > 3
    small = tmp_path / "small"
    assert invoke("ingest", seed_path, "--store", small).exit_code == 0
    assert invoke(*_split(small, out, 1000)).exit_code == 0
    fresh = tmp_path / "fresh"
    assert invoke(*_split(small, fresh, 1000)).exit_code == 0
    assert _dump(out) == _dump(fresh)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_split_export_never_replaces_other_files(
    invoke: Any, dump_store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "dump"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = invoke(*_split(dump_store, out, 1000))
    assert result.exit_code == 1
    assert "holds 'notes.txt', not a shard" in result.stderr
    assert _dump(out) == {"notes.txt": b"mine"}


def test_a_split_export_through_a_symlink_keeps_the_link(
    invoke: Any, dump_store: Path, tmp_path: Path
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert invoke(*_split(dump_store, link, 1000)).exit_code == 0
    assert link.is_symlink() and len(_dump(real)) > 3


@pytest.mark.slow
@pytest.mark.parametrize("gz", [[], ["--gzip"]], ids=["plain", "gzip"])
def test_export_to_a_full_stdout_is_one_line(dump_store: Path, gz: list[str]) -> None:
    import subprocess
    import sys

    from tests.conftest import cli_env

    with open("/dev/full", "wb") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "hcgraph", "export", *gz, "--store", str(dump_store)],
            stdout=full, stderr=subprocess.PIPE, text=True, env=cli_env(), timeout=120,
        )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "error: stdout: cannot write the export: No space left on device"
    ]
