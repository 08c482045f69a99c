"""Review of crawl/push/fetch (2026-12-07): the manifest API client against absurd answers."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from hcgraph.claims.fetching import manifest_archive
from hcgraph.claims.reply import parse_reply
from tests.manifestserver import manifest_id, reply_body
from tests.test_manifests_fetch import Api, ids, run


@pytest.mark.parametrize("retry_after", ["999999999999", "1" * 400], ids=["31k-years", "inf"])
def test_a_429_asking_to_wait_past_year_9999_stops_the_run_cleanly(
    tmp_path: Path, retry_after: str
) -> None:
    """The resume date overflowed ``datetime`` and the run ended in a traceback."""
    api = Api(**{manifest_id(1): [httpx.Response(429, headers={"Retry-After": retry_after})]})
    report, _archive = run(api, manifest_archive(tmp_path), ids(1, 2))
    assert report.stopped == "rate-limited"
    assert report.resume_after is None
    assert report.left == ids(1, 2)
    assert any("rate" in line for line in report.lines())


def test_a_claim_id_given_twice_with_two_texts_is_bad_shape(tmp_path: Path) -> None:
    """The second text silently replaced the first ("nothing is guessed", says reply.py)."""
    doc = json.loads(reply_body(manifest_id(1), claims=3))
    doc["signal"]["claims"][2]["claim_id"] = doc["signal"]["claims"][0]["claim_id"]
    api = Api(**{manifest_id(1): [httpx.Response(200, content=json.dumps(doc).encode())]})
    report, _archive = run(api, manifest_archive(tmp_path), ids(1))
    ((ident, path, reason),) = report.bad_shape
    assert (ident, path) == (manifest_id(1), "signal.claims[2].claim_id")
    assert "signal.claims[0]" in reason


def test_a_claim_given_twice_with_the_same_text_is_read() -> None:
    doc = json.loads(reply_body(manifest_id(1), claims=2))
    doc["signal"]["claims"].append(dict(doc["signal"]["claims"][0]))
    reply = parse_reply(json.dumps(doc).encode(), "x.json", manifest_id(1))
    assert len(reply.claims) == 2
