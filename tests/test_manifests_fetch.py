"""Manifest replies into the archive (issue 37 items 1 and 5): fetched from a real loopback API
that asks for the bearer key, or read from saved files; never fetched twice, resumable after a
kill -9, stopped by a 429 or a quota answer, and the key never written anywhere."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import logging
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from hcgraph.archive import Archive
from hcgraph.claims.fetching import (
    FetchOptions,
    FetchReport,
    archived_replies,
    fetch_manifests,
    manifest_archive,
    manifest_iri,
    read_saved,
)
from hcgraph.errors import ManifestAuthError, ManifestError
from tests.conftest import ROOT, cli_env
from tests.manifestserver import ManifestServer, Reply, manifest_id, reply_body

KEY = "sk-live-9f8e7d6c5b4a-SECRET-do-not-leak"
ENV = "HCGRAPH_TEST_MANIFEST_KEY"
ENVIRON = {ENV: KEY}


def ids(*ns: int) -> list[str]:
    return [manifest_id(n) for n in ns]


def options(api: str, **kw: object) -> FetchOptions:
    base: dict[str, object] = {"api": api, "key_env": ENV, "rate": 0, "backoff_base": 0.01}
    return FetchOptions(**{**base, **kw})  # type: ignore[arg-type]


def records_per_id(archive: Archive) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in archive.records():
        counts[record.url] = counts.get(record.url, 0) + 1
    return counts


def pack_bytes(store: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(store.rglob("*.pack")))


# --- unit rules (httpx.MockTransport) -------------------------------------------------------


class Api:
    """A MockTransport API: ``answers`` maps an id to a list of responses (the last repeats)."""

    def __init__(self, **answers: list[httpx.Response]) -> None:
        self.answers = answers
        self.seen: list[str] = []
        self.times: list[float] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        ident = request.url.path.rsplit("/", 1)[-1]
        self.seen.append(ident)
        self.times.append(time.monotonic())
        assert request.headers["authorization"] == f"Bearer {KEY}"
        queue = self.answers.get(ident)
        if not queue:
            return httpx.Response(200, content=reply_body(ident))
        return queue.pop(0) if len(queue) > 1 else queue[0]

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


def run(api: Api, archive: Archive, want: list[str], **kw: object) -> tuple[FetchReport, Archive]:
    opts = options("https://api.example", **kw)
    return fetch_manifests(want, archive, opts, environ=ENVIRON, transport=api.transport), archive


def test_no_key_is_refused_before_any_request(tmp_path: Path) -> None:
    api = Api()
    opts = options("https://api.example")
    with pytest.raises(ManifestError) as info:
        fetch_manifests(
            ids(1), manifest_archive(tmp_path), opts, environ={}, transport=api.transport
        )
    assert ENV in str(info.value) and "\n" not in str(info.value)
    assert api.seen == []


def test_a_key_unfit_for_a_header_is_refused_without_showing_it(tmp_path: Path) -> None:
    api = Api()
    bad = "sk-abc\r\nX-Injected: 1"
    with pytest.raises(ManifestError) as info:
        fetch_manifests(
            ids(1),
            manifest_archive(tmp_path),
            options("https://api.example"),
            environ={ENV: bad},
            transport=api.transport,
        )
    assert ENV in str(info.value) and "sk-abc" not in str(info.value)
    assert api.seen == []


def test_nothing_to_fetch_needs_no_key(tmp_path: Path) -> None:
    archive = manifest_archive(tmp_path)
    run(Api(), archive, ids(1))
    report = fetch_manifests(
        ids(1, 2), archive, options("https://a.example", max_fetch=0), environ={}
    )
    assert report.already == ids(1) and report.left == ids(2) and report.requests == 0


def test_a_bad_api_url_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="not an http"):
        fetch_manifests(ids(1), manifest_archive(tmp_path), options("ftp://x"), environ=ENVIRON)


def test_records_name_the_manifest_iri_and_the_api_url(tmp_path: Path) -> None:
    api = Api(**{manifest_id(2): [httpx.Response(404)]})
    report, archive = run(api, manifest_archive(tmp_path), ids(1, 2, 1))
    assert report.fetched == ids(1) and report.not_found == ids(2) and report.requests == 2
    replies = archived_replies(archive)
    one, two = replies[manifest_id(1)], replies[manifest_id(2)]
    assert one.record.url == manifest_iri(manifest_id(1))
    assert one.record.url == f"https://w3id.org/hcgraph/id/manifest/{manifest_id(1)}"
    assert one.record.fetch_url == f"https://api.example/manifests/by-id/{manifest_id(1)}"
    assert one.status == 200 and one.body == reply_body(manifest_id(1)) and one.sha256
    assert (two.status, two.body, two.sha256) == (404, None, None)


def test_the_manifest_archive_is_not_the_story_archive(tmp_path: Path) -> None:
    run(Api(), manifest_archive(tmp_path), ids(1, 2))
    assert (tmp_path / "archive" / "manifests" / "packs").is_dir()
    stories = Archive(tmp_path / "archive")
    assert list(stories.records()) == [] and not stories.exists()


def test_server_errors_are_retried_then_the_id_fails_and_the_run_goes_on(tmp_path: Path) -> None:
    flaky = [httpx.Response(503), httpx.Response(500, headers={"Retry-After": "0"})]
    ok_after = [*flaky, httpx.Response(200, content=reply_body(manifest_id(1)))]
    api = Api(**{manifest_id(1): ok_after, manifest_id(2): [httpx.Response(502)]})
    report, archive = run(api, manifest_archive(tmp_path), ids(1, 2, 3), retries=2)
    assert report.fetched == ids(1, 3)
    assert report.failed == [(manifest_id(2), "HTTP 502 (gave up after 2 retries)")]
    assert api.seen.count(manifest_id(1)) == 3 and api.seen.count(manifest_id(2)) == 3
    assert report.requests == 7
    assert manifest_id(2) not in archived_replies(archive)  # asked again by the next run
    assert archived_replies(archive)[manifest_id(1)].record.attempts == 3


def test_network_errors_are_retried(tmp_path: Path) -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if len(calls) < 3:
            raise httpx.ConnectError("refused", request=request)
        return httpx.Response(200, content=reply_body(manifest_id(1)))

    report = fetch_manifests(
        ids(1),
        manifest_archive(tmp_path),
        options("https://api.example"),
        environ=ENVIRON,
        transport=httpx.MockTransport(handler),
    )
    assert report.fetched == ids(1) and report.requests == 3


def test_a_short_429_is_waited_out_a_long_one_stops_the_run(tmp_path: Path) -> None:
    short = [
        httpx.Response(429, headers={"Retry-After": "0"}),
        httpx.Response(200, content=reply_body(manifest_id(1))),
    ]
    long = [httpx.Response(429, headers={"Retry-After": "7200"})]
    api = Api(**{manifest_id(1): short, manifest_id(2): long})
    before = dt.datetime.now(dt.UTC)
    report, _ = run(api, manifest_archive(tmp_path), [*ids(1, 2), "", *ids(3, 4)], max_fetch=3)
    assert report.fetched == ids(1) and report.stopped == "rate-limited"
    assert report.failed == [("", "an empty manifest id")]
    assert report.left == ids(2, 3, 4)  # the stopped one, the rest of the budget, the over-budget
    assert report.resume_after is not None
    assert dt.timedelta(hours=2) <= report.resume_after - before < dt.timedelta(hours=2, minutes=1)
    assert manifest_id(3) not in api.seen
    assert any("resume after" in line for line in report.lines())


@pytest.mark.parametrize(
    "answer",
    [
        httpx.Response(402, content=b"payment required"),
        httpx.Response(429, content=b'{"error": "daily quota exceeded"}'),
        httpx.Response(403, content=b'{"error": "Quota of 25 manifests used"}'),
    ],
    ids=["402", "429-quota", "403-quota"],
)
def test_a_quota_answer_stops_the_run(tmp_path: Path, answer: httpx.Response) -> None:
    api = Api(**{manifest_id(2): [answer]})
    report, archive = run(api, manifest_archive(tmp_path), ids(1, 2, 3))
    assert report.stopped == "quota" and report.fetched == ids(1) and report.left == ids(2, 3)
    assert api.seen == ids(1, 2)  # not retried
    assert set(archived_replies(archive)) == {manifest_id(1)}


def test_a_refused_key_raises_naming_the_variable_and_keeps_what_came(tmp_path: Path) -> None:
    api = Api(**{manifest_id(3): [httpx.Response(401, content=KEY.encode())]})
    archive = manifest_archive(tmp_path)
    with pytest.raises(ManifestAuthError) as info:
        run(api, archive, ids(1, 2, 3, 4))
    message = str(info.value)
    assert ENV in message and KEY not in message and "\n" not in message
    assert "401" in message and "2 answers" in message
    assert set(archived_replies(archive)) == set(ids(1, 2))
    assert manifest_id(4) not in api.seen


def test_a_reply_over_the_cap_is_refused_and_not_archived(tmp_path: Path) -> None:
    declared = httpx.Response(200, content=b"x" * 5000)
    streamed = httpx.Response(200, content=iter([b"x" * 3000] * 1000))  # no Content-Length
    api = Api(**{manifest_id(1): [declared], manifest_id(2): [streamed]})
    report, archive = run(api, manifest_archive(tmp_path), ids(1, 2, 3), max_bytes=4096)
    assert report.failed == [
        (manifest_id(1), "reply too large: Content-Length 5000 > 4096 bytes"),
        (manifest_id(2), "reply too large: more than 4096 bytes"),
    ]
    assert report.fetched == ids(3) and set(archived_replies(archive)) == set(ids(3))


def test_a_compressed_reply_is_decoded_and_capped(tmp_path: Path) -> None:
    body = reply_body(manifest_id(1))
    packed = gzip.compress(body)
    zipped = httpx.Response(200, headers={"Content-Encoding": "gzip"}, content=iter([packed]))
    bomb = gzip.compress(b" " * 10_000_000)  # ~10 KB that inflates to 10 MB
    bombed = httpx.Response(200, headers={"Content-Encoding": "gzip"}, content=iter([bomb]))
    api = Api(**{manifest_id(1): [zipped], manifest_id(2): [bombed]})
    report, archive = run(api, manifest_archive(tmp_path), ids(1, 2), max_bytes=1 << 20)
    assert report.fetched == ids(1) and archived_replies(archive)[manifest_id(1)].body == body
    assert report.failed == [(manifest_id(2), f"reply too large: more than {1 << 20} bytes")]


def test_a_redirect_is_not_followed(tmp_path: Path) -> None:
    moved = httpx.Response(302, headers={"Location": "https://elsewhere.example/m/1"})
    api = Api(**{manifest_id(1): [moved]})
    report, _ = run(api, manifest_archive(tmp_path), ids(1))
    assert report.failed == [
        (manifest_id(1), "HTTP 302 to https://elsewhere.example/m/1 (not followed: one host)")
    ]
    assert api.seen == ids(1)


def test_a_reply_about_another_manifest_is_named_not_used(tmp_path: Path) -> None:
    api = Api(**{manifest_id(1): [httpx.Response(200, content=reply_body(manifest_id(9)))]})
    report, archive = run(api, manifest_archive(tmp_path), ids(1))
    ((ident, path, reason),) = report.bad_shape
    assert (ident, path) == (manifest_id(1), "manifest_id") and "was asked for" in reason
    assert archived_replies(archive)[manifest_id(1)].body == reply_body(manifest_id(9))


class FakeClock:
    """A clock that moves only when the fetcher sleeps: the pacing is tested without the
    machine's scheduling in the figures (a busy machine delays a request's arrival, not its
    start)."""

    def __init__(self) -> None:
        self.now = time.monotonic()  # the real reading: a body's deadline is read off the real one
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_the_rate_spaces_request_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr("hcgraph.claims.fetching.time", clock)
    api = Api()
    monkeypatch.setattr("tests.test_manifests_fetch.time", clock)  # the API's arrival times
    run(api, manifest_archive(tmp_path), ids(1, 2, 3, 4), rate=20)
    gaps = [b - a for a, b in zip(api.times, api.times[1:], strict=False)]
    assert len(gaps) == 3 and gaps == pytest.approx([0.05] * 3)
    assert len(clock.slept) == 3  # the first request starts at once


def test_the_report_lines(tmp_path: Path) -> None:
    report = FetchReport(
        fetched=ids(1),
        already=ids(2),
        not_found=ids(3),
        bad_shape=[(manifest_id(4), "signal.claims[0].text", "expected a string, found number")],
        failed=[(manifest_id(5), "HTTP 500 \x1b[31m(gave up)")],
        left=ids(6, 7),
    )
    lines = report.lines()
    assert (
        lines[0]
        == "1 manifest replies fetched, 1 already archived (not asked for again), 0 HTTP requests"
    )
    assert f"not found (404): {manifest_id(3)}" in lines
    assert (
        f"not understood: manifest {manifest_id(4)}: signal.claims[0].text: "
        "expected a string, found number"
    ) in lines
    assert f"failed: manifest {manifest_id(5)}: HTTP 500 \\x1b[31m(gave up)" in lines
    assert lines[-1].startswith("left: 2 not requested (over the budget")
    assert all("\x1b" not in line for line in lines)


# --- saved replies (--dir) ------------------------------------------------------------------


def test_saved_replies_are_read_like_fetched_ones(tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / f"{manifest_id(1)}.json").write_bytes(reply_body(manifest_id(1)))
    (saved / manifest_id(2)).write_bytes(reply_body(manifest_id(2)))  # curl -o ID
    bad = json.loads(reply_body(manifest_id(3)))
    bad["signal"]["claims"][1]["text"] = 12
    (saved / f"{manifest_id(3)}.json").write_text(json.dumps(bad))
    (saved / f"{manifest_id(5)}.json").write_bytes(b"<html>not json")
    archive = manifest_archive(tmp_path / "store")
    want = [*ids(1, 2, 3, 4, 5), "../saved/x"]
    report = read_saved(want, saved, archive)
    assert report.fetched == ids(1, 2) and report.left == ids(4) and report.requests == 0
    assert [(i, p) for i, p, _ in report.bad_shape] == [
        (manifest_id(3), "signal.claims[1].text"),
        (manifest_id(5), ""),
    ]
    assert report.failed == [("../saved/x", "not a file name (a saved reply is DIR/ID.json)")]
    replies = archived_replies(archive)
    assert set(replies) == set(ids(1, 2, 3, 5))
    assert replies[manifest_id(1)].record.fetch_url == str(
        (saved / f"{manifest_id(1)}.json").resolve()
    )
    assert replies[manifest_id(2)].status == 200 and replies[manifest_id(2)].record.status is None
    assert any("no saved reply in" in line for line in report.lines())
    # unchanged: not archived again; changed: a new version
    (saved / f"{manifest_id(2)}").write_bytes(reply_body(manifest_id(2), claims=2))
    again = read_saved(ids(1, 2), saved, archive)
    assert again.already == ids(1) and again.fetched == ids(2)
    counts = records_per_id(archive)
    assert counts[manifest_iri(manifest_id(1))] == 1 and counts[manifest_iri(manifest_id(2))] == 2
    assert archived_replies(archive)[manifest_id(2)].body == reply_body(manifest_id(2), claims=2)


def test_a_missing_dir_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="not a directory"):
        read_saved(ids(1), tmp_path / "nope", manifest_archive(tmp_path))


# --- a real loopback API ------------------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[ManifestServer]:
    api = ManifestServer(KEY).start()
    yield api
    api.stop()


_fresh = iter(range(10_000, 1_000_000, 100))


@pytest.fixture
def fresh() -> Callable[[int], list[str]]:
    """``fresh(n)``: ``n`` ids no other test on the shared server uses."""
    return lambda n: ids(*range(next(_fresh), 10**9)[:n])


@pytest.mark.slow
def test_no_manifest_is_fetched_twice_across_reruns(
    server: ManifestServer, fresh: Callable[[int], list[str]], tmp_path: Path
) -> None:
    want = fresh(6)
    for ident in want[:5]:
        server.serve(ident)
    # want[5] has no route: the server's 404
    archive = manifest_archive(tmp_path)
    first = fetch_manifests(want, archive, options(server.base), environ=ENVIRON)
    assert first.fetched == want[:5] and first.not_found == want[5:] and first.requests == 6
    for _ in range(2):
        again = fetch_manifests(
            want, manifest_archive(tmp_path), options(server.base), environ=ENVIRON
        )
        assert again.already == want and again.requests == 0 and again.fetched == []
    assert [server.count(i) for i in want] == [1] * 6
    assert set(records_per_id(archive).values()) == {1}


@pytest.mark.slow
def test_the_budget_and_what_is_left(
    server: ManifestServer, fresh: Callable[[int], list[str]], tmp_path: Path
) -> None:
    want = fresh(7)
    for ident in want:
        server.serve(ident)
    archive = manifest_archive(tmp_path)
    first = fetch_manifests(want, archive, options(server.base, max_fetch=3), environ=ENVIRON)
    assert first.fetched == want[:3] and first.left == want[3:] and first.stopped is None
    assert first.lines()[-1].startswith("left: 4 not requested (over the budget")
    second = fetch_manifests(want, archive, options(server.base, max_fetch=3), environ=ENVIRON)
    assert second.already == want[:3] and second.fetched == want[3:6] and second.left == want[6:]
    assert [server.count(i) for i in want] == [1] * 6 + [0]


@pytest.mark.slow
def test_a_wrong_key_is_one_line_naming_the_variable(
    server: ManifestServer, fresh: Callable[[int], list[str]], tmp_path: Path
) -> None:
    want = fresh(2)
    for ident in want:
        server.serve(ident)
    wrong = "sk-wrong-key-123"
    unkeyed = server.unkeyed
    with pytest.raises(ManifestAuthError) as info:
        fetch_manifests(
            want, manifest_archive(tmp_path), options(server.base), environ={ENV: wrong}
        )
    assert str(info.value) == (
        f"the manifest API refused the key in the environment variable {ENV} (HTTP 401); "
        "0 answers received before it are kept in the archive"
    )
    assert server.unkeyed == unkeyed + 1 and server.count(want[1]) == 0


@pytest.mark.slow
def test_a_wrong_key_exits_non_zero_with_one_line(
    server: ManifestServer, fresh: Callable[[int], list[str]], tmp_path: Path
) -> None:
    """The exit path a CLI takes: the error reaches the user as one line, exit 1."""
    (want,) = fresh(1)
    server.serve(want)
    code = (
        "import sys\n"
        "from hcgraph.claims.fetching import FetchOptions, fetch_manifests, manifest_archive\n"
        "from hcgraph.errors import HcgraphError\n"
        "try:\n"
        f"    fetch_manifests([{want!r}], manifest_archive(sys.argv[1]),\n"
        f"                    FetchOptions(api={server.base!r}, key_env={ENV!r}))\n"
        "except HcgraphError as exc:\n"
        "    print(f'error: {exc}', file=sys.stderr); sys.exit(1)\n"
    )
    env = {**cli_env(), ENV: "not-the-key"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and ENV in done.stderr and "not-the-key" not in done.stderr


@pytest.mark.slow
def test_a_429_stops_keeps_what_came_and_a_rerun_goes_on(
    server: ManifestServer, fresh: Callable[[int], list[str]], tmp_path: Path
) -> None:
    want = fresh(5)
    for ident in want:
        server.serve(ident)
    limited = Reply(429, b'{"error": "slow down"}', {"Retry-After": "900"})
    server.route(want[2], Reply(body=reply_body(want[2])), limited)
    archive = manifest_archive(tmp_path)
    first = fetch_manifests(want, archive, options(server.base), environ=ENVIRON)
    assert first.fetched == want[:2] and first.stopped == "rate-limited"
    assert first.left == want[2:] and first.resume_after is not None
    assert set(archived_replies(archive)) == set(want[:2])
    second = fetch_manifests(want, archive, options(server.base), environ=ENVIRON)
    assert second.already == want[:2] and second.fetched == want[2:] and second.stopped is None
    assert [server.count(i) for i in want] == [1, 1, 2, 1, 1]


@pytest.mark.slow
def test_hostile_reply_text_is_kept_byte_exact(
    server: ManifestServer, fresh: Callable[[int], list[str]], tmp_path: Path
) -> None:
    markup, raw = fresh(2)
    text = '<script>alert(1)</script>\u202e\x1b[31m"; DROP ALL; <a href="javascript:x">'
    body = reply_body(markup, claims=1, text=text)  # control characters escaped, valid JSON
    server.route(markup, Reply(body=body))
    hostile = reply_body(raw, claims=1).replace(b"Claim 0", b"\x1b]8;;http://evil\x07<b>\x00\x85")
    server.route(raw, Reply(body=hostile))  # raw control bytes: not JSON
    archive = manifest_archive(tmp_path)
    report = fetch_manifests([markup, raw], archive, options(server.base), environ=ENVIRON)
    assert report.fetched == [markup]
    assert [(i, p) for i, p, _ in report.bad_shape] == [(raw, "")]
    replies = archived_replies(archive)
    assert replies[markup].body == body and replies[raw].body == hostile
    assert json.loads(replies[markup].body)["signal"]["claims"][0]["text"] == text
    assert all(ch not in line for line in report.lines() for ch in "\x1b\x00\x07\x85\u202e")


@pytest.mark.slow
def test_the_key_never_appears_anywhere(
    server: ManifestServer,
    fresh: Callable[[int], list[str]],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)  # httpx's and httpcore's traces too
    want = fresh(5)
    server.serve(want[0])
    server.route(want[1], Reply(500, b"oops", {"Retry-After": "0"}))
    server.route(want[2], Reply(200, b'{"manifest_id": 7}'))
    server.route(want[3], Reply(429, b"later", {"Retry-After": "86400"}))
    archive = manifest_archive(tmp_path)
    report = fetch_manifests(want, archive, options(server.base, retries=1), environ=ENVIRON)
    assert report.stopped == "rate-limited" and len(report.failed) == 1
    server.route(want[4], Reply(403, b"forbidden"))
    with pytest.raises(ManifestAuthError) as info:
        fetch_manifests(want[4:], archive, options(server.base), environ=ENVIRON)
    messages = [*report.lines(), repr(report), str(info.value), caplog.text]
    assert all(KEY not in m for m in messages)
    assert KEY.encode() not in pack_bytes(tmp_path)


@pytest.mark.slow
def test_a_key_the_server_echoes_is_kept_out_of_records_and_messages(
    server: ManifestServer, fresh: Callable[[int], list[str]], tmp_path: Path
) -> None:
    want = fresh(3)
    server.route(want[0], Reply(302, b"", {"Location": f"https://x.example/?k={KEY}"}))
    server.route(want[1], Reply(500, KEY.encode(), {"Retry-After": "0", "Server": KEY}))
    server.route(want[2], Reply(200, b'{"manifest_id": 7, "echo": "' + KEY.encode() + b'"}'))
    archive = manifest_archive(tmp_path)
    report = fetch_manifests(want, archive, options(server.base, retries=1), environ=ENVIRON)
    assert len(report.failed) == 2 and "[the key]" in report.failed[0][1]
    assert all(KEY not in m for m in [*report.lines(), repr(report)])
    records = b"".join(r.to_json() for r in archive.records())
    assert KEY.encode() not in records
    # the reply that carries the key in its own body is kept as sent (byte-exact), once
    assert pack_bytes(tmp_path).count(KEY.encode()) == 1


@pytest.mark.slow
def test_a_kill_9_mid_fetch_resumes_without_loss(
    server: ManifestServer, fresh: Callable[[int], list[str]], tmp_path: Path
) -> None:
    want = fresh(8)
    for ident in want:
        server.serve(ident)
    stuck = want[4]
    server.route(stuck, Reply(body=reply_body(stuck)), Reply(body=reply_body(stuck), delay=30))
    code = (
        "import sys, json\n"
        "from hcgraph.claims.fetching import FetchOptions, fetch_manifests, manifest_archive\n"
        f"fetch_manifests(json.loads(sys.argv[2]), manifest_archive(sys.argv[1]),\n"
        f"                FetchOptions(api={server.base!r}, key_env={ENV!r}, rate=0))\n"
    )
    env = {**cli_env(), ENV: KEY}
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path), json.dumps(want)], env=env, cwd=ROOT
    )
    try:
        deadline = time.monotonic() + 60
        while server.count(stuck) == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.count(stuck) == 1, "the fetch never reached the stuck manifest"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    archive = manifest_archive(tmp_path)
    assert set(archived_replies(archive)) == set(want[:4])  # everything before the kill
    report = fetch_manifests(want, archive, options(server.base), environ=ENVIRON)
    assert report.already == want[:4] and report.fetched == want[4:]
    assert [server.count(i) for i in want] == [1, 1, 1, 1, 2, 1, 1, 1]
    assert set(records_per_id(archive).values()) == {1} and len(records_per_id(archive)) == 8
    for ident in want:
        assert archived_replies(archive)[ident].body == reply_body(ident)


@pytest.mark.slow
def test_a_server_too_slow_to_answer_times_out_and_the_run_goes_on(
    server: ManifestServer, fresh: Callable[[int], list[str]], tmp_path: Path
) -> None:
    slow, fine = fresh(2)
    server.route(slow, Reply(body=reply_body(slow), delay=3))
    server.serve(fine)
    opts = options(server.base, timeout=0.5, retries=1)
    report = fetch_manifests([slow, fine], manifest_archive(tmp_path), opts, environ=ENVIRON)
    assert report.failed == [(slow, "timed out after 0.5 s (gave up after 1 retry)")]
    assert report.fetched == [fine] and server.count(slow) == 2


@pytest.mark.slow
def test_the_proxy_the_environment_names_is_used_unless_no_proxy(
    server: ManifestServer,
    fresh: Callable[[int], list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As an ``httpx.Client`` would: HTTP_PROXY for the API's host, NO_PROXY to go direct
    (the requests go through the transport itself, so this is hcgraph's to get right)."""
    first, second = fresh(2)
    server.serve(first)
    server.serve(second)
    for name in ("http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.delenv("NO_PROXY", raising=False)
    opts = options(server.base, retries=0)
    through = fetch_manifests([first], manifest_archive(tmp_path), opts, environ=ENVIRON)
    assert [i for i, _ in through.failed] == [first] and server.count(first) == 0
    assert "ConnectError" in through.failed[0][1]
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    direct = fetch_manifests([second], manifest_archive(tmp_path), opts, environ=ENVIRON)
    assert direct.fetched == [second] and server.count(second) == 1
