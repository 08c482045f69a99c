"""Claims with their text: replies into the graph, the support verdicts, and what reads them
(the saved queries, audit, trace, exports). Starts from the real story and the real reply
shape (``shared/fixtures/manifest-reply.json``, copied to tests/support/replies/)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest
import rdflib

from hcgraph.archive import FetchRecord
from hcgraph.claims.fetching import manifest_archive
from hcgraph.claims.graphing import reply_graph, support_graph
from hcgraph.claims.pulling import cited_manifests, pull_manifests
from hcgraph.claims.verdicts import check_support
from hcgraph.errors import ManifestError
from hcgraph.ingest import ingest_paths
from hcgraph.iris import minted
from hcgraph.provenance.auditing import audit
from hcgraph.provenance.report_html import render_report
from hcgraph.provenance.tracing import trace
from hcgraph.queries import run_query
from hcgraph.store import Store
from tests.conftest import SEED, SEED_URL

REPLIES = Path(__file__).resolve().parent / "support" / "replies"
MID = "1792439777014362933"  # the manifest whose reply the fixture holds
TB_CLAIM = "1792440033560591298"  # "LAR-27B reaches 77.3% on TerminalBench-2.1."
HOSTILE = '<script>alert("x")</script> \x1b[31m\u202e & "quoted"'


def _reply() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REPLIES / f"{MID}.json").read_text(encoding="utf-8"))
    return data


def _pulled(tmp_path: Path, reply: dict[str, Any] | None = None) -> Path:
    """A store holding the seed story and the (maybe changed) reply, pulled from a --dir."""
    replies = tmp_path / "replies"
    replies.mkdir(parents=True, exist_ok=True)
    (replies / f"{MID}.json").write_text(json.dumps(reply or _reply()), encoding="utf-8")
    with Store(tmp_path / "store") as store:
        ingest_paths(store, [SEED])
        pull_manifests(store, directory=replies)
    return tmp_path / "store"


def _changed_number() -> dict[str, Any]:
    reply = _reply()
    for claim in reply["signal"]["claims"]:
        if claim["claim_id"] == TB_CLAIM:
            claim["text"] = "LAR-27B reaches 79.3% on TerminalBench-2.1."
    return reply


def test_most_cited_manifests_come_first(tmp_path: Path) -> None:
    with Store(tmp_path / "store") as store:
        ingest_paths(store, [SEED])
        ids = cited_manifests(store)
    story = json.loads(SEED.read_text(encoding="utf-8"))
    assert sorted(ids) == sorted(story["cited_manifest_ids"])


def test_reply_graph_holds_claim_texts_brief_and_the_fetch(tmp_path: Path) -> None:
    reply = _reply()
    with Store(_pulled(tmp_path), read_only=True) as store:
        quads = list(store.quads(graph=ox.NamedNode(reply_graph(MID))))
        texts = {
            q.subject.value.rsplit("/", 1)[-1]: q.object.value
            for q in quads
            if q.predicate.value == "http://www.w3.org/ns/prov#value"
        }
        preds = {q.predicate.value for q in quads}
    assert texts == {c["claim_id"]: c["text"] for c in reply["signal"]["claims"]}
    assert "http://purl.org/dc/terms/abstract" in preds  # the Brief
    assert "http://www.w3.org/ns/prov#wasGeneratedBy" in preds  # the fetch activity
    assert "http://www.w3.org/ns/prov#endedAtTime" in preds
    assert "https://w3id.org/hcgraph/ns#sha256" in preds


def test_the_real_story_is_supported_by_its_real_reply(tmp_path: Path) -> None:
    """The fixture's claims restate the story's sentences: every checked pair is supported;
    the four manifests with no reply are not checkable, never unsupported."""
    with Store(_pulled(tmp_path), read_only=True) as store:
        report = audit(store)
        rows = run_query(store, "unsupported-paragraphs").records()
    card = report.stories[0]
    assert card.support["unsupported"] == 0
    assert card.support["supported"] == 10  # p1: 3 claims, p2: 4, kf1: 3 under MID
    assert card.support["not-checkable"] == 25
    assert report.counts()["unsupported-claim"] == 0 and rows == []


def test_a_changed_number_is_found_with_its_span(tmp_path: Path) -> None:
    with Store(_pulled(tmp_path, _changed_number()), read_only=True) as store:
        rows = run_query(store, "unsupported-paragraphs").records()
        report = audit(store)
        html = render_report(report)
    assert {r["passage"].rsplit("#", 1)[-1] for r in rows} == {"s1-p2", "kf1"}
    assert {r["reason"] for r in rows} == {"number"}
    assert all(r["claim_id"] == TB_CLAIM and "79.3%" in r["claim"] for r in rows)
    assert any("77.3%" in r["span"] or "79.3%" in r["claim_span"] for r in rows)
    assert report.exit_code == 1
    found = [f for f in report.findings if f.check == "unsupported-claim"]
    assert len(found) == 2 and all(f.evidence["spans"] for f in found)
    assert "<mark>" in html and "unsupported-claim" in html


def test_claims_the_reply_lacks_are_not_checkable_never_unsupported(tmp_path: Path) -> None:
    reply = _reply()
    reply["signal"]["claims"] = [c for c in reply["signal"]["claims"] if c["claim_id"] != TB_CLAIM]
    with Store(_pulled(tmp_path, reply), read_only=True) as store:
        report = audit(store)
        reasons = {r for (r,) in _select(store, "[] hc:reason ?r")}
    assert report.counts()["unsupported-claim"] == 0
    assert report.stories[0].support["not-checkable"] == 27  # 25 + TB claim in p2 and kf1
    assert {"claim-text-missing", "manifest-not-fetched"} <= reasons


def test_not_found_and_bad_shape_replies_are_named_not_guessed(tmp_path: Path) -> None:
    bad = _reply()
    bad["signal"]["claims"][1]["claim_id"] = 1792440033559591381  # a number: refused
    store_dir = _pulled(tmp_path, bad)
    with Store(store_dir, read_only=True) as store:
        status = _select(store, "?m hc:replyStatus ?s", graph=reply_graph(MID))
        comment = _select(store, "?m rdfs:comment ?c", graph=reply_graph(MID))
        reasons = {r for (r,) in _select(store, "[] hc:reason ?r")}
    assert status == [(minted("manifest", MID), "bad-shape")] or status[0][1] == "bad-shape"
    assert "signal.claims[1].claim_id" in comment[0][1]
    assert "reply-not-understood" in reasons
    # A 404 answer archived for another cited manifest: "not found", the rest go on.
    other = "1792416145597853654"
    with manifest_archive(store_dir) as archive:
        archive.add_record(
            FetchRecord(
                url=minted("manifest", other), final_url=minted("manifest", other),
                fetch_url=f"http://127.0.0.1:9/manifests/by-id/{other}", status=404,
                fetched_at="2026-12-06T12:00:00+00:00",
            )
        )  # fmt: skip
    with Store(store_dir) as store:
        pull_manifests(store, directory=tmp_path / "replies")
        reasons = {r for (r,) in _select(store, "[] hc:reason ?r")}
        status = _select(store, "?m hc:replyStatus ?s", graph=reply_graph(other))
    assert "manifest-not-found" in reasons and status[0][1] == "not-found"


def test_checks_are_incremental_and_follow_changed_replies(tmp_path: Path) -> None:
    store_dir = _pulled(tmp_path)
    with Store(store_dir) as store:
        again = check_support(store)
        assert (again.checked, again.unchanged) == (0, 1)
        before = store.sorted_lines(support_graph(SEED_URL))
    (tmp_path / "replies" / f"{MID}.json").write_text(json.dumps(_changed_number()))
    with Store(store_dir) as store:
        report = pull_manifests(store, directory=tmp_path / "replies")
        assert report.load.written == [MID] and report.support.checked == 1
        assert report.support.counts["unsupported"] == 2
        assert store.sorted_lines(support_graph(SEED_URL)) != before
        forced = check_support(store, force=True)
        assert forced.checked == 1


def test_verdicts_are_deterministic(tmp_path: Path) -> None:
    one = _pulled(tmp_path / "a", _changed_number())
    two = _pulled(tmp_path / "b", _changed_number())
    with Store(one, read_only=True) as a, Store(two, read_only=True) as b:
        graph = support_graph(SEED_URL)
        assert a.sorted_lines(graph) == b.sorted_lines(graph)
        assert len(a.sorted_lines(graph)) > 100


def test_hostile_claim_text_stays_text(tmp_path: Path) -> None:
    reply = _reply()
    reply["signal"]["claims"][0]["text"] += HOSTILE
    reply["brief"] = HOSTILE
    store_dir = _pulled(tmp_path, reply)
    with Store(store_dir, read_only=True) as store:
        turtle = tmp_path / "g.trig"
        with turtle.open("wb") as out:
            store.dump(out, ox.RdfFormat.TRIG)
        tr = trace(store, SEED_URL + "#s1-p1")
        report = audit(store)
    parsed = rdflib.Dataset()
    parsed.parse(turtle, format="trig")
    objects = [str(q[2]) for q in parsed.quads((None, None, None, None))]
    assert sum(o.endswith(HOSTILE) for o in objects) == 2  # claim and brief, exactly
    texts = [e["text"] for p in tr.stories[0].parts for c in p.citations
             for e in tr.claim_entries(p, c) if e["text"]]  # fmt: skip
    assert any(t.endswith(HOSTILE) for t in texts)
    html = render_report(report)
    assert "<script>alert" not in html


def test_cli_fetch_from_a_directory_reports_and_exits_3_when_some_are_missing(
    invoke: Any, tmp_path: Path
) -> None:
    replies = tmp_path / "replies"
    shutil.copytree(REPLIES, replies)
    assert invoke("ingest", SEED, "--store", tmp_path / "st").exit_code == 0
    result = invoke("manifests", "fetch", "--dir", replies, "--store", tmp_path / "st")
    assert result.exit_code == 3  # four of the five cited manifests have no saved reply
    assert "verdicts" in result.output and "10 supported" in result.output
    result = invoke("manifests", "check", "--store", tmp_path / "st")
    assert result.exit_code == 0 and "0 stories checked, 1 unchanged" in result.output
    result = invoke("manifests", "fetch", "--dir", tmp_path / "nope", "--store", tmp_path / "st")
    assert result.exit_code == 1


def test_an_in_memory_store_has_no_archive_for_replies() -> None:
    with Store(None) as store, pytest.raises(ManifestError, match="on-disk store"):
        pull_manifests(store, directory=REPLIES)


def test_reply_conflicts_compare_the_reply_with_the_listing(tmp_path: Path) -> None:
    reply = _reply()
    reply["source"]["title"] = "Another title"
    with Store(_pulled(tmp_path, reply), read_only=True) as store:
        rows = run_query(store, "reply-conflicts").records()
    assert [(r["manifest_id"], r["property"], r["stated"]) for r in rows] == [
        (MID, "title", "Another title")
    ]


def test_trace_json_carries_claim_text_and_verdict(tmp_path: Path) -> None:
    with Store(_pulled(tmp_path, _changed_number()), read_only=True) as store:
        data = trace(store, SEED_URL + "#s1-p2").as_dict()
    claims = [c for p in data["stories"][0]["parts"] for cite in p["citations"]
              for c in cite["claims"]]  # fmt: skip
    by_id = {c["claim_id"]: c for c in claims}
    assert by_id[TB_CLAIM]["verdict"] == "unsupported" and "79.3%" in by_id[TB_CLAIM]["text"]
    assert {c["verdict"] for c in claims} == {"supported", "unsupported"}


def _select(store: Store, pattern: str, graph: str | None = None) -> list[tuple[str, ...]]:
    """Distinct rows of the variables in ``pattern``, in their order there."""
    names = list(dict.fromkeys(w for w in pattern.split() if w.startswith("?")))
    where = f"GRAPH <{graph}> {{ {pattern} }}" if graph else pattern
    prefix = "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
    result = store.query(f"{prefix}SELECT DISTINCT {' '.join(names)} WHERE {{ {where} }}")
    assert isinstance(result, ox.QuerySolutions)
    return sorted(tuple(term.value for term in row) for row in result)


def test_check_reports_unsupported_passages_and_reply_conflicts(tmp_path: Path) -> None:
    from hcgraph.checking import check

    reply = _changed_number()
    reply["source"]["title"] = "Another title"
    with Store(_pulled(tmp_path, reply), read_only=True) as store:
        report = check(store, shacl=False)
    found = {(f.check, f.focus.rsplit("#", 1)[-1]) for f in report.findings}
    assert {("unsupported-paragraphs", "s1-p2"), ("unsupported-paragraphs", "kf1")} <= found
    assert ("reply-conflicts", f"https://w3id.org/hcgraph/id/manifest/{MID}") in {
        (f.check, f.focus) for f in report.findings
    }
    assert not report.ok
