"""Review of crawl/push/fetch (2026-12-07): a triple store redirecting to a URL httpx cannot
resolve. httpx resolves every ``Location`` it is sent (to set ``next_request``, following or
not) and raises ``httpx.InvalidURL``, which is no ``TransportError``: the push ended in a
hang (the dead worker's queue filled; nothing ever drained it) instead of stopping with the
one-line "redirects" reason any other redirect gets."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from hcgraph import PushError, Store
from hcgraph.push import PushOptions, credentials_from_env, push_graphs
from hcgraph.push.state import STATE_FILE, PushState
from tests.test_push_unit import ENDPOINT, mem_store, run  # noqa: F401 - fixture used by name


@pytest.mark.timeout(60)
@pytest.mark.parametrize("location", ["javascript:alert(1)", "mailto:admin@example.org"])
def test_a_redirect_to_a_non_http_url_stops_the_push_in_one_line(
    mem_store: Store,  # noqa: F811
    location: str,
) -> None:
    answer = httpx.Response(302, headers={"Location": location})
    report = run(mem_store, lambda r: answer, concurrency=1)
    assert report.aborted is not None  # type: ignore[attr-defined]
    assert "127.0.0.1:9/store redirects to a URL" in report.aborted  # type: ignore[attr-defined]
    assert report.pushed == 0  # type: ignore[attr-defined]


@pytest.mark.timeout(60)
def test_a_verify_query_redirected_to_a_non_http_url_is_a_verify_error(
    mem_store: Store,  # noqa: F811
) -> None:
    """The graphs went (204 each); the count query's redirect ended the push in a traceback."""

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "PUT":
            return httpx.Response(204)
        return httpx.Response(302, headers={"Location": "javascript:alert(1)"})

    report = run(mem_store, handler, concurrency=1, verify=True)
    assert report.aborted is None and report.pushed > 0  # type: ignore[attr-defined]
    error = report.verify.error  # type: ignore[attr-defined]
    assert error is not None and "redirects to a URL httpx cannot read" in error


@pytest.mark.timeout(60)
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_under_the_push_journal_stops_the_push_in_one_line(
    mem_store: Store,  # noqa: F811
    tmp_path: Path,
) -> None:
    """``PushState.record`` raises ``PushError`` when its journal cannot be written; raised in
    a sending worker it killed the worker, and the push hung for ever on the queue."""
    state = PushState(tmp_path / STATE_FILE)
    assert state.journal is not None
    state.journal.symlink_to("/dev/full")  # every write: ENOSPC
    report = push_graphs(
        mem_store,
        ENDPOINT,
        PushOptions(backoff=0.0, concurrency=1),
        state=state,
        transport=httpx.MockTransport(lambda r: httpx.Response(204)),
    )
    assert report.aborted is not None
    assert "cannot record the push state" in report.aborted
    assert "No space left on device" in report.aborted


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "challenge",
    [
        'Digest realm="r", nonce="n", qop="auth", algorithm=SHA-512-256',  # RFC 7616, not httpx
        'Digest realm="r", nonce="n", qop="auth-int"',
    ],
    ids=["sha-512-256", "auth-int"],
)
def test_a_digest_challenge_httpx_cannot_answer_stops_the_push_in_one_line(
    mem_store: Store,  # noqa: F811
    challenge: str,
) -> None:
    """httpx raised KeyError / NotImplementedError from its Digest flow: the sending worker
    died and the push hung for ever."""
    creds = credentials_from_env("V", {"V": "alice:pa:ss"})
    answer = httpx.Response(401, headers={"WWW-Authenticate": challenge})
    report = run(mem_store, lambda r: answer, credentials=creds, concurrency=1)
    assert report.aborted is not None  # type: ignore[attr-defined]
    assert "Digest challenge" in report.aborted  # type: ignore[attr-defined]
    assert "pa:ss" not in report.aborted  # type: ignore[attr-defined]


@pytest.mark.timeout(60)
def test_an_unexpected_error_in_a_sending_worker_is_raised_not_a_hang(
    mem_store: Store,  # noqa: F811
) -> None:
    """Any exception a worker did not expect killed it; the producer then waited on the full
    queue for ever (three real cases above). Now the push stops and the error is raised."""

    def handler(request: httpx.Request) -> httpx.Response:
        raise RuntimeError("a bug in a transport")

    with pytest.raises(RuntimeError, match="a bug in a transport"):
        run(mem_store, handler, concurrency=1)


@pytest.mark.parametrize(
    "endpoints", [[1], {"http://h/": []}, {"http://h/": {"graphs": []}}], ids=["list", "e", "g"]
)
def test_a_push_state_of_another_shape_is_one_line(tmp_path: Path, endpoints: object) -> None:
    """A state file edited into another shape raised TypeError/AttributeError (a traceback)."""
    path = tmp_path / STATE_FILE
    path.write_text(json.dumps({"format": "hcgraph-push-state/1", "endpoints": endpoints}))
    with pytest.raises(PushError, match="not an hcgraph push state file"):
        PushState(path).is_current("http://h/", "g", "x")
