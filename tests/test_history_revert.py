"""``hcgraph history`` of a story that goes back to earlier bytes: a revert is its own
version, in the graph (ingested files) and in the raw archive (crawls)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from hcgraph import Store, ingest_bytes
from hcgraph.archive import Archive, FetchRecord
from hcgraph.ingest import ingest_documents
from hcgraph.iris import minted
from hcgraph.pipeline import Document
from hcgraph.provenance.versions import History, history
from hcgraph.rebuilding import RebuildReport, rebuild
from hcgraph.vocab import HC, PROV
from tests.crawlserver import CrawlServer, Reply, Site, page, quads_of, story

T0 = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)


def _bodies(seed_bytes: bytes) -> tuple[bytes, bytes]:
    """Two versions of the seed story: A, and B with a new headline."""
    doc = json.loads(seed_bytes)
    a = json.dumps(doc).encode()
    doc["headline"] = "A changed headline"
    return a, json.dumps(doc).encode()


def _ingest(bodies: list[bytes], *, step: dt.timedelta = dt.timedelta(hours=1)) -> tuple[
    History, list[tuple[str, dt.datetime]], set[str]
]:  # fmt: skip
    """Ingest ``bodies`` one after another (``step`` apart); the history, the store's
    revision chain and the raw-document nodes of the story graph."""
    url = json.loads(bodies[0])["url"]
    with Store(None) as st:
        for i, body in enumerate(bodies):
            ingest_bytes(st, [(body, f"v{i + 1}.json")], retrieved_at=T0 + i * step)
        h = history(st, url)
        chain = [(s, t) for s, t, _ in st.revision_chain(url, st.raw_sha256(url) or "")]
        typed = st.quads(None, ox.NamedNode(str(HC.sha256)), None, ox.NamedNode(url))
        nodes = {q.subject.value for q in typed if isinstance(q.subject, ox.NamedNode)}
    return h, chain, nodes


def _sha(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def _headlines(h: History) -> list[list[tuple[str | None, str | None]]]:
    return [[(c.old, c.new) for c in v.changes if c.kind == "headline changed"] for v in h.versions]


def test_a_revert_by_ingest_is_its_own_version(seed_bytes: bytes) -> None:
    a, b = _bodies(seed_bytes)
    h, chain, nodes = _ingest([a, b, a])
    old, new = json.loads(a)["headline"], "A changed headline"
    assert [v.sha256 for v in h.versions] == [_sha(a), _sha(b), _sha(a)]
    assert [v.in_graph for v in h.versions] == ["revision", "revision", "current"]
    times = [T0 + dt.timedelta(hours=i) for i in range(3)]
    iso = [t.isoformat().replace("+00:00", "Z") for t in times]
    assert [v.first_seen for v in h.versions] == iso
    assert [v.sources for v in h.versions] == [[], [], ["v3.json"]]
    assert _headlines(h) == [[], [(old, new)], [(new, old)]]
    assert all(len(v.changes) == 1 for v in h.versions[1:])  # nothing "not compared"
    # the store's chain repeats the SHA, newest first; the older A is a node of its own
    assert chain == [(_sha(a), times[2]), (_sha(b), times[1]), (_sha(a), times[0])]
    assert nodes == {
        minted("raw", _sha(a)),
        minted("raw", _sha(b)),
        minted("raw", _sha(a), "20261201T090000Z"),
    }
    # JSON keeps its shape: one object per version, two with one sha256
    data = h.as_dict()["versions"]
    assert [v["version"] for v in data] == [1, 2, 3]
    assert data[0]["sha256"] == data[2]["sha256"] != data[1]["sha256"]


def test_a_b_a_b_by_ingest_has_four_versions_and_three_changes(seed_bytes: bytes) -> None:
    a, b = _bodies(seed_bytes)
    h, chain, nodes = _ingest([a, b, a, b])
    old, new = json.loads(a)["headline"], "A changed headline"
    assert [v.sha256 for v in h.versions] == [_sha(a), _sha(b), _sha(a), _sha(b)]
    assert [v.in_graph for v in h.versions] == ["revision"] * 3 + ["current"]
    assert _headlines(h) == [[], [(old, new)], [(new, old)], [(old, new)]]
    firsts = [v.first_seen or "" for v in h.versions]
    assert firsts == sorted(firsts) and len(set(firsts)) == 4
    assert [s for s, _ in chain] == [_sha(b), _sha(a), _sha(b), _sha(a)]
    assert len(nodes) == 4  # one raw document per version


def test_reverts_within_one_second_still_get_a_node_each(seed_bytes: bytes) -> None:
    """Ingests with one time (``SOURCE_DATE_EPOCH``, or within a second): the k-th older
    occurrence of a SHA at a time gets ``-k``; the chain neither loops nor merges."""
    a, b = _bodies(seed_bytes)
    h, chain, nodes = _ingest([a, b, a, b, a], step=dt.timedelta(0))
    assert [v.sha256 for v in h.versions] == [_sha(x) for x in (a, b, a, b, a)]
    assert [len(v.changes) for v in h.versions] == [0, 1, 1, 1, 1]
    assert len(chain) == 5 and len(nodes) == 5
    assert minted("raw", _sha(a), "20261201T090000Z-2") in nodes


def test_a_plain_change_keeps_its_triples_and_history(seed_bytes: bytes) -> None:
    """No revert: one node per SHA, as before (the golden tests hold the triples)."""
    a, b = _bodies(seed_bytes)
    h, chain, nodes = _ingest([a, b])
    assert [v.sha256 for v in h.versions] == [_sha(a), _sha(b)]
    assert [v.in_graph for v in h.versions] == ["revision", "current"]
    assert nodes == {minted("raw", _sha(a)), minted("raw", _sha(b))}
    assert len(chain) == 2
    with Store(None) as st:
        for i, body in enumerate([a, b]):
            ingest_bytes(st, [(body, f"v{i + 1}.json")], retrieved_at=T0)
        revision_of = list(st.quads(None, ox.NamedNode(str(PROV.wasRevisionOf)), None, None))
    assert [(q.subject.value, q.object.value) for q in revision_of] == [
        (minted("raw", _sha(b)), minted("raw", _sha(a)))
    ]


@pytest.mark.slow
def test_a_revert_by_crawl_is_its_own_version(
    crawl_server: CrawlServer, tmp_path: Path, invoke: Any
) -> None:
    site = Site(crawl_server)
    a = story("a", sections=[{"heading": "h", "paragraphs": [{"markdown": "First text."}]}])
    b = story("a", sections=[{"heading": "h", "paragraphs": [{"markdown": "Second text."}]}])
    for body in (a, b, a):
        site.add("a", body)
        assert site.crawl(tmp_path, page("a")).exit_code == 0
    site.crawl(tmp_path, page("a"))  # unchanged: a 304 re-confirms the last A
    with Store(tmp_path, read_only=True) as st:
        h = history(st, page("a"))
    assert [v.sha256 for v in h.versions] == [_sha(a), _sha(b), _sha(a)]
    assert [v.in_graph for v in h.versions] == ["revision", "revision", "current"]
    assert [v.fetches for v in h.versions] == [1, 1, 2]
    assert all(v.archived for v in h.versions)
    firsts = [v.first_seen or "" for v in h.versions]
    assert firsts[0] < firsts[1] < firsts[2]
    assert h.versions[0].last_seen == h.versions[0].first_seen  # its fetch, not the third's
    edits = [
        [(c.old, c.new) for c in v.changes if c.kind == "paragraph edited"] for v in h.versions
    ]
    assert edits == [[], [("First text.", "Second text.")], [("Second text.", "First text.")]]
    res = invoke("history", page("a"), "--format", "json", "--store", tmp_path)
    shown = json.loads(res.output)["versions"]
    assert [v["sha256"] for v in shown] == [_sha(a), _sha(b), _sha(a)]
    assert [len(v["changes"]) for v in shown] == [0, 1, 1]


@pytest.mark.slow
def test_a_withdrawal_stays_with_the_version_withdrawn(
    crawl_server: CrawlServer, tmp_path: Path
) -> None:
    """A withdrawn, then B, A, B: only the first A was withdrawn (marks are per version,
    not per SHA-256)."""
    site = Site(crawl_server)
    a = story("b", sections=[{"heading": "h", "paragraphs": [{"markdown": "First text."}]}])
    b = story("b", sections=[{"heading": "h", "paragraphs": [{"markdown": "Second text."}]}])
    site.add("a", story("a", page("b")))
    site.add("b", a)
    site.crawl(tmp_path)
    site.add("b", b"", Reply(404, b"nope", etag=False), status=404, etag=False)
    assert site.crawl(tmp_path).counts["withdrawn"] == 1
    for body in (b, a, b):
        site.add("b", body)
        assert site.crawl(tmp_path).exit_code == 0
    with Store(tmp_path, read_only=True) as st:
        h = history(st, page("b"))
    assert [v.sha256 for v in h.versions] == [_sha(a), _sha(b), _sha(a), _sha(b)]
    assert [bool(v.withdrawn) for v in h.versions] == [True, False, False, False]
    assert h.withdrawn_at is None
    crawled = quads_of(tmp_path)
    rebuild(tmp_path)  # replayed from the archive: the same triples, reverts and marks
    assert quads_of(tmp_path) == crawled


_RAW = minted("raw", "")


def _fold(term: Any) -> Any:
    """A revert's node ``raw/<sha>/<time>`` as the code before reverts named it."""
    if isinstance(term, ox.NamedNode) and term.value.startswith(_RAW):
        return ox.NamedNode(_RAW + term.value.removeprefix(_RAW).split("/")[0])
    return term


def _old_shape(tokens: list[bytes | None]) -> History:
    """Ingest ``tokens`` (a body, or None: a withdrawal) an hour apart, then fold each
    revert's node onto ``raw/<sha>``, as the code before reverts wrote them (a looped
    chain); the history of that store."""
    url = json.loads(next(t for t in tokens if t is not None))["url"]
    g = ox.NamedNode(url)
    with Store(None) as st:
        for i, body in enumerate(tokens):
            when = T0 + i * dt.timedelta(hours=1)
            if body is None:
                ingest_documents(st, [Document(b"", url, when, withdrawn=True)])
            else:
                ingest_documents(st, [Document(body, f"v{i + 1}.json", when)])
        quads = list(st.quads(None, None, None, g))
        for q in quads:
            st.ox.remove(q)
        for q in quads:
            st.ox.add(ox.Quad(_fold(q.subject), q.predicate, _fold(q.object), g))
        return history(st, url)


def _iso(when: dt.datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


def test_a_looped_chain_from_before_keeps_every_version(seed_bytes: bytes) -> None:
    """A, B, A, C, A by the code before: raw/A revises both C and B (a loop). Every SHA
    the chain reaches is a version, as it was then (the walk alone missed one)."""
    a, b = _bodies(seed_bytes)
    c = b.replace(b"A changed headline", b"A third headline")
    h = _old_shape([a, b, a, c, a])
    assert sorted(v.sha256 for v in h.versions) == sorted(_sha(x) for x in (a, b, c))
    assert h.versions[-1].sha256 == _sha(a) and h.versions[-1].in_graph == "current"
    assert [v.in_graph for v in h.versions[:-1]] == ["revision", "revision"]


def test_a_looped_chain_from_before_keeps_the_withdrawal_on_its_current_node(
    seed_bytes: bytes,
) -> None:
    """A withdrawn, B withdrawn, A by the code before: raw/A (current) carries A's
    withdrawal; history shows it, as it did then."""
    a, b = _bodies(seed_bytes)
    h = _old_shape([a, None, b, None, a])
    hours = [_iso(T0 + dt.timedelta(hours=n)) for n in range(5)]
    assert [v.sha256 for v in h.versions] == [_sha(b), _sha(a)]
    assert [v.withdrawn for v in h.versions] == [[hours[3]], [hours[1]]]
    assert h.withdrawn_at is None


@pytest.mark.parametrize("older", [ox.BlankNode("b1"), ox.Literal("not-an-iri")])
def test_a_revision_of_no_iri_ends_the_chain_and_history_still_lists(
    seed_bytes: bytes, older: ox.BlankNode | ox.Literal
) -> None:
    """A story graph whose oldest raw document says it revised a blank node or a literal
    (written by hand or by another tool): the walk ends there, as ingest's walk ends it,
    and ``history`` lists the versions it has instead of failing on the term."""
    a, b = _bodies(seed_bytes)
    url = json.loads(a)["url"]
    with Store(None) as st:
        for i, body in enumerate([a, b]):
            ingest_bytes(
                st, [(body, f"v{i + 1}.json")], retrieved_at=T0 + i * dt.timedelta(hours=1)
            )
        first = ox.NamedNode(minted("raw", _sha(a)))
        st.ox.add(ox.Quad(first, ox.NamedNode(str(PROV.wasRevisionOf)), older, ox.NamedNode(url)))
        h = history(st, url)
    assert [v.sha256 for v in h.versions][-2:] == [_sha(a), _sha(b)]
    assert h.versions[-1].in_graph == "current"


def test_a_withdrawal_stays_with_its_version_when_times_tie(seed_bytes: bytes) -> None:
    """A withdrawn, then B, A, B, all at one time (``SOURCE_DATE_EPOCH``): the mark stays
    on the first A's node; times alone cannot tell the two A's apart."""
    a, b = _bodies(seed_bytes)
    url = json.loads(a)["url"]
    with Store(None) as st:
        ingest_documents(st, [Document(a, "v1.json", T0)])
        ingest_documents(st, [Document(b"", url, T0, withdrawn=True)])
        for i, body in enumerate([b, a, b]):
            ingest_documents(st, [Document(body, f"v{i + 2}.json", T0)])
        h = history(st, url)
        marked = st.quads(None, ox.NamedNode(str(PROV.invalidatedAtTime)), None, ox.NamedNode(url))
        nodes = [q.subject.value for q in marked]
    assert [v.sha256 for v in h.versions] == [_sha(a), _sha(b), _sha(a), _sha(b)]
    assert [v.withdrawn for v in h.versions] == [[_iso(T0)], [], [], []]
    assert nodes == [minted("raw", _sha(a), "20261201T090000Z")]  # the older A


def test_a_file_then_a_crawl_going_back_to_its_bytes(seed_bytes: bytes, tmp_path: Path) -> None:
    """A ingested from a file, then B and A crawled: the archive holds the crawl's B and A
    only. The graph's versions are matched to the archive's newest first, so the file's A
    stays the first version and the crawled A is current (not the other way round)."""
    a, b = _bodies(seed_bytes)
    url = json.loads(a)["url"]
    fetched = url + "index.json"
    with Store(tmp_path) as st:
        ingest_documents(st, [Document(a, "story.json", T0)])
        arc = Archive(tmp_path / "archive")
        for hour, body in ((1, b), (2, a)):
            when = T0 + dt.timedelta(hours=hour)
            sha = arc.put_body(body)
            arc.add_record(
                FetchRecord(fetched, fetched, fetched, 200, when.isoformat(), sha, len(body))
            )
            ingest_documents(st, [Document(body, fetched, when, key=fetched)], replace=True)
        h = history(st, url)
    hours = [_iso(T0 + dt.timedelta(hours=n)) for n in range(3)]
    assert [v.sha256 for v in h.versions] == [_sha(a), _sha(b), _sha(a)]
    assert [v.first_seen for v in h.versions] == hours
    assert [v.in_graph for v in h.versions] == ["revision", "revision", "current"]
    assert [v.fetches for v in h.versions] == [0, 1, 1]


def _rebuilt(directory: Path, fetches: list[tuple[int, bytes]], url: str) -> RebuildReport:
    """Rebuild a store from an archive of ``fetches`` (hour, body) of ``url`` (200s)."""
    arc = Archive(directory / "archive")
    for hour, body in fetches:
        when = (T0 + dt.timedelta(hours=hour)).isoformat()
        arc.add_record(FetchRecord(url, url, url, 200, when, arc.put_body(body), len(body)))
    arc.close()
    return rebuild(directory)


def test_a_page_that_is_no_story_between_two_of_a_is_no_revert(
    seed_bytes: bytes, tmp_path: Path
) -> None:
    """A, a page that is no story, A: the story never left A, so the second A is no new
    body (as an unchanged re-fetch), and the page, fetched again, fails once; a real revert
    after it (B, A) still counts. The graph is the one of A, B, A alone."""
    a, b = _bodies(seed_bytes)
    url = json.loads(a)["url"] + "index.json"
    login = b"<html>sign in to read</html>"
    short = _rebuilt(tmp_path / "s", [(0, a), (1, login), (2, a)], url)
    assert (short.bodies, dict(short.counts), len(short.failures)) == (2, {"added": 1}, 1)
    mixed = [(0, a), (1, login), (2, a), (3, login), (4, b), (5, a)]
    report = _rebuilt(tmp_path / "m", mixed, url)
    plain = _rebuilt(tmp_path / "p", [(0, a), (4, b), (5, a)], url)
    assert (report.bodies, plain.bodies) == (4, 3)  # A, the page, B and the revert to A
    assert report.counts == plain.counts == {"added": 1, "replaced": 2}
    assert [f.source for f in report.failures] == [url]
    assert [o.status for o in report.outcomes] == ["added", None, "replaced", "replaced"]
    assert quads_of(tmp_path / "m") == quads_of(tmp_path / "p")


def test_a_re_ingest_walks_the_revision_chain_once(
    seed_bytes: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replacing a story reads each earlier version's SHA, time and withdrawal in one walk
    down the chain (it took two: the versions, then their marks)."""
    a, b = _bodies(seed_bytes)
    url = json.loads(a)["url"]
    walks: list[str] = []
    walk = Store._revision_nodes
    monkeypatch.setattr(
        Store, "_revision_nodes", lambda st, g, sha: walks.append(sha) or walk(st, g, sha)
    )
    with Store(None) as st:
        ingest_documents(st, [Document(a, "v1.json", T0)])
        ingest_documents(st, [Document(b"", url, T0 + dt.timedelta(hours=1), withdrawn=True)])
        for hour, body in ((2, b), (3, a)):
            ingest_documents(st, [Document(body, f"v{hour}.json", T0 + dt.timedelta(hours=hour))])
        walks.clear()
        ingest_documents(st, [Document(b, "v5.json", T0 + dt.timedelta(hours=4))])
        assert walks == [_sha(a)]
        chain = st.revision_chain(url, _sha(b))
    hours = [T0 + dt.timedelta(hours=n) for n in (4, 3, 2, 0)]
    marks = [None, None, None, T0 + dt.timedelta(hours=1)]
    assert chain == list(zip([_sha(b), _sha(a), _sha(b), _sha(a)], hours, marks, strict=True))


def test_run_matching_picks_what_a_full_scan_picks() -> None:
    """The graph's versions (newest first) take the archive's runs by SHA-256 from lists
    kept per SHA (linear in the versions); each pick is the one a scan of every archived
    version makes: the latest left before the last match, else the latest left, else new."""
    from hcgraph.provenance.versions import Version, _Runs

    def scan(archived: list[str], takes: list[str]) -> list[int]:
        taken: set[int] = set()
        last, picks, extra = len(archived), [], len(archived)
        for sha in takes:
            same = [i for i, s in enumerate(archived) if i not in taken and s == sha]
            i = next((i for i in reversed(same) if i < last), same[-1] if same else None)
            if i is None:
                picks.append(extra)
                extra += 1
                continue
            taken.add(i)
            last = i
            picks.append(i)
        return picks

    rng = random.Random(19)
    for _ in range(500):
        archived = [rng.choice("abc") for _ in range(rng.randint(0, 12))]
        takes = [rng.choice("abcd") for _ in range(rng.randint(0, 14))]
        versions = [Version(sha) for sha in archived]
        runs = _Runs(versions)
        got = [runs.take(sha) for sha in takes]
        assert [next(i for i, v in enumerate(versions) if v is g) for g in got] == scan(
            archived, takes
        )
        assert [g.sha256 for g in got] == takes
