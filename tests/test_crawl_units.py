"""Unit tests of the crawler's parts: URLs, scope, mirrors, Retry-After, the frontier, and
one fetch through ``httpx.MockTransport`` (no sockets)."""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils

import httpx
import pytest

from hcgraph.crawling.fetch import Fetcher, FetchPolicy, Politeness, retry_after_seconds
from hcgraph.crawling.frontier import Frontier
from hcgraph.errors import CrawlError
from hcgraph.urls import Mirror, Mirrors, Scope, canonicalize, json_url, page_url


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("HTTPS://HangingContext.com/stories/x", "https://hangingcontext.com/stories/x/"),
        ("https://hangingcontext.com:443/stories/x/#top", "https://hangingcontext.com/stories/x/"),
        ("https://h.example/a/?utm_source=x&id=3&fbclid=y", "https://h.example/a/?id=3"),
        ("https://h.example/a/./b/../c", "https://h.example/a/c/"),
        ("https://h.example", "https://h.example/"),
        ("https://h.example/s/index.json", "https://h.example/s/index.json"),
        ("https://user:pw@h.example/s/", "https://h.example/s/"),
        ("http://h.example:8080/s", "http://h.example:8080/s/"),
        ("https://h.example/a b/", "https://h.example/a%20b/"),
    ],
)
def test_canonicalize(raw: str, canonical: str) -> None:
    assert canonicalize(raw) == canonical


@pytest.mark.parametrize(
    "bad", ["file:///etc/passwd", "javascript:alert(1)", "/relative", "ftp://x/"]
)
def test_canonicalize_refuses_non_http(bad: str) -> None:
    with pytest.raises(ValueError):
        canonicalize(bad)


def test_json_url_and_back() -> None:
    page = "https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/"
    assert json_url(page) == page + "index.json"
    assert json_url(page.rstrip("/")) == page + "index.json"
    assert json_url(page + "index.json") == page + "index.json"
    assert json_url(page, "story.json") == page + "story.json"
    assert page_url(page + "index.json") == page


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://site.example/stories/a/", None),
        ("https://SITE.example:443/stories/a/", None),
        ("https://other.example/stories/a/", "off-site"),
        ("https://site.example@evil.example/stories/", "off-site"),
        ("file:///etc/passwd", "scheme file: not allowed"),
        ("javascript:alert(1)", "scheme javascript: not allowed"),
        ("data:text/plain,hi", "scheme data: not allowed"),
    ],
)
def test_scope(url: str, reason: str | None) -> None:
    scope = Scope.of(["https://site.example/stories/seed/index.json"])
    why = scope.why_not(url)
    if reason is None:
        assert why is None
    else:
        assert why is not None and reason in why


def test_allow_host_extends_scope() -> None:
    scope = Scope.of(["https://site.example/"], ["Other.Example"])
    assert scope.why_not("https://other.example:8443/x/") is None


def test_mirrors_rewrite_both_ways() -> None:
    mirrors = Mirrors((Mirror.parse("https://hangingcontext.com=http://127.0.0.1:8000/hc"),))
    logical = "https://hangingcontext.com/stories/a/index.json"
    fetch = mirrors.to_fetch(logical)
    assert fetch == "http://127.0.0.1:8000/hc/stories/a/index.json"
    assert mirrors.to_logical(fetch) == logical
    assert mirrors.to_fetch("https://other.example/x/") == "https://other.example/x/"
    assert (
        mirrors.to_logical("http://127.0.0.1:8000/elsewhere/") == "http://127.0.0.1:8000/elsewhere/"
    )


def test_bad_mirror_spec_is_a_user_error() -> None:
    with pytest.raises(CrawlError, match="ORIGIN=MIRROR"):
        Mirror.parse("https://hangingcontext.com")
    with pytest.raises(CrawlError, match="file"):
        Mirror.parse("https://hangingcontext.com=file:///tmp")


def test_retry_after_seconds_and_http_date() -> None:
    now = dt.datetime(2026, 11, 1, 12, 0, 0, tzinfo=dt.UTC)
    assert retry_after_seconds("7", now) == 7
    later = email.utils.format_datetime(now + dt.timedelta(seconds=90), usegmt=True)
    assert retry_after_seconds(later, now) == pytest.approx(90)
    past = email.utils.format_datetime(now - dt.timedelta(seconds=90), usegmt=True)
    assert retry_after_seconds(past, now) == 0
    assert retry_after_seconds("soon", now) is None
    assert retry_after_seconds(None, now) is None


def test_frontier_depth_is_shortest_hops() -> None:
    """A URL first reached by a long path moves up when a shorter one appears, and so do
    the links of a story already crawled at the longer depth."""
    f = Frontier(None)
    f.begin("fp", max_depth=3)
    assert f.add("A", 0)
    assert f.add("B", 1, "A")
    assert f.add("C", 2, "B")
    f.mark_done("C", "c", "added", ["D"])
    assert f.add("D", 3, "C")
    assert not f.add("E", 4, "D")  # beyond --depth: not queued
    assert f.add("C", 1, "A") is False  # seen: moved up, not re-queued
    assert f.depth_of("C") == 1
    assert f.depth_of("D") == 2
    assert f.queued(10, set()) == [("A", 0), ("B", 1), ("D", 2)]


def test_frontier_new_run_keeps_validators(tmp_path) -> None:
    from hcgraph.crawling.frontier import Validators

    f = Frontier(tmp_path / "f.sqlite")
    assert f.begin("one", 2) is False
    f.add("A", 0)
    f.set_validators("A", Validators('"e"', None, "ab"))
    f.close()
    f = Frontier(tmp_path / "f.sqlite")
    assert f.begin("one", 2) is True  # unfinished: resume
    assert f.count("queued") == 1
    f.finish()
    assert f.begin("one", 2) is False  # finished: a new run (re-crawl)
    assert f.count("queued") == 0
    assert f.validators("A") == Validators('"e"', None, "ab")


def _fetcher(handler, **policy) -> Fetcher:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler), follow_redirects=False)
    scope = Scope.of(["https://site.example/"])
    return Fetcher(client, Politeness(4), FetchPolicy(backoff_base=0.001, **policy), scope.why_not)


def test_fetch_retries_then_succeeds_with_mock_transport() -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if len(calls) < 3:
            return httpx.Response(503)
        return httpx.Response(200, json={"ok": True})

    result = asyncio.run(_fetcher(handler).get("https://site.example/a/index.json"))
    assert result.error is None and result.status == 200 and result.attempts == 3
    assert result.body == b'{"ok":true}'
    assert len(calls) == 3


def test_fetch_gives_up_after_retries() -> None:
    result = asyncio.run(
        _fetcher(lambda r: httpx.Response(502), retries=2).get("https://site.example/a/")
    )
    assert result.status == 502 and result.attempts == 3
    assert result.error is not None and "gave up after 2 retries" in result.error


def test_fetch_refuses_redirect_off_site_and_to_file() -> None:
    for location in ("https://evil.example/x/", "file:///etc/passwd"):
        fetcher = _fetcher(lambda r, loc=location: httpx.Response(302, headers={"Location": loc}))
        result = asyncio.run(fetcher.get("https://site.example/a/"))
        assert result.kind == "redirect" and "refused" in (result.error or "")
        assert result.body is None


def test_fetch_refuses_declared_oversize_without_reading() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Length": "999999"}, content=b"x" * 999999)

    result = asyncio.run(_fetcher(handler, max_bytes=1000).get("https://site.example/a/"))
    assert result.kind == "too-large" and "Content-Length 999999" in (result.error or "")


def test_retry_after_too_long_gives_up_at_once() -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(429, headers={"Retry-After": "3600"})

    result = asyncio.run(_fetcher(handler, max_retry_after=5).get("https://site.example/a/"))
    assert result.kind == "retry-after" and "3600" in (result.error or "")
    assert len(calls) == 1


def test_one_retry_policy_for_crawl_and_push() -> None:
    """The crawler and the pusher time their retries with the same policy."""
    import random

    from hcgraph.push.pusher import _MAX_RETRY_AFTER
    from hcgraph.retry import Backoff

    policy = FetchPolicy(backoff_base=1.0, backoff_cap=4.0, max_retry_after=60).backoff
    rng = random.Random(1)
    delays = [policy.delay(n, rng) for n in range(1, 6)]
    assert all(0.5 * min(4.0, 2 ** (n - 1)) <= d <= min(4.0, 2 ** (n - 1)) for n, d in
               zip(range(1, 6), delays, strict=True))  # fmt: skip
    assert policy.wait(1, "30", rng) == 30  # the server asks for longer: honoured
    assert policy.wait(1, "61", rng) is None  # longer than the limit: give up
    later = "Wed, 21 Oct 2099 07:28:00 GMT"
    assert Backoff(max_retry_after=10**12).wait(1, later) > 1e6  # an HTTP date works too
    assert Backoff().max_retry_after >= _MAX_RETRY_AFTER


# --- the scheduler: leases, the story cap, idle detection -------------------------------------
@pytest.mark.timeout(30)  # a scheduler bug shows as a worker waiting forever
def test_scheduler_leases_shallowest_first_and_never_twice() -> None:
    from hcgraph.crawling.scheduler import Scheduler

    frontier = Frontier(None)
    frontier.begin("test", 1)  # links one hop deep are followed
    frontier.add("https://a.example/deep", 1)
    frontier.add("https://a.example/seed", 0)

    async def scenario() -> list[tuple[str, int] | None]:
        scheduler = Scheduler(frontier, max_stories=None, stored=0)
        first, second = await scheduler.lease(), await scheduler.lease()
        assert scheduler.in_flight == 2
        for url in ("https://a.example/seed", "https://a.example/deep"):
            frontier.mark_failed(url, status=404, kind="http", reason="HTTP 404")
            scheduler.release(url)
        return [first, second, await scheduler.lease()]  # idle, nothing queued: over

    assert asyncio.run(scenario()) == [
        ("https://a.example/seed", 0),
        ("https://a.example/deep", 1),
        None,
    ]


@pytest.mark.timeout(30)  # a scheduler bug shows as a worker waiting forever
def test_scheduler_holds_leases_at_the_cap_until_the_crawl_is_idle() -> None:
    from hcgraph.crawling.scheduler import Scheduler

    frontier = Frontier(None)
    for n in range(3):
        frontier.add(f"https://a.example/{n}", 0)

    async def scenario() -> None:
        scheduler = Scheduler(frontier, max_stories=2, stored=1)  # one stored before a resume
        url, _ = await scheduler.lease() or ("", 0)
        waiting = asyncio.create_task(scheduler.lease())
        await asyncio.sleep(0.01)
        assert not waiting.done()  # 1 stored + 1 in flight reach the cap: wait
        scheduler.handed_over()
        scheduler.release(url)
        await scheduler.wake()
        await asyncio.sleep(0.01)
        assert not waiting.done()  # still counted while it is being processed
        scheduler.processed(1, stored=1)
        await scheduler.wake()
        assert await waiting is None  # the cap is reached by stored stories: the crawl ends
        assert scheduler.idle() and scheduler.cap_reached()

    asyncio.run(scenario())


@pytest.mark.timeout(30)
def test_scheduler_may_fetch_while_a_fetch_runs_or_a_url_waits() -> None:
    """What a batch waiting for bodies asks: can a fetch still bring one?"""
    from hcgraph.crawling.scheduler import Scheduler

    frontier = Frontier(None)
    frontier.add("https://a.example/0", 0)
    frontier.add("https://a.example/1", 0)

    async def scenario() -> list[bool]:
        scheduler = Scheduler(frontier, max_stories=None, stored=0)
        seen = [scheduler.may_fetch()]  # two queued
        first, _ = await scheduler.lease() or ("", 0)
        second, _ = await scheduler.lease() or ("", 0)
        frontier.mark_failed(first, status=404, kind="http", reason="HTTP 404")
        scheduler.release(first)
        seen.append(scheduler.may_fetch())  # one in flight
        frontier.mark_fetched(second, "0" * 64, second, "2026-12-01T00:00:00+00:00", 200)
        scheduler.handed_over()
        scheduler.release(second)
        seen.append(scheduler.may_fetch())  # nothing queued or in flight: only processing
        frontier.add("https://a.example/2", 0)  # queued by what was processed
        seen.append(scheduler.may_fetch())
        scheduler.max_stories = 1
        scheduler.stored = 1
        seen.append(scheduler.may_fetch())  # the cap: nothing more is leased
        return seen

    assert asyncio.run(scenario()) == [True, True, False, True, False]


@pytest.mark.timeout(30)  # a scheduler bug shows as a worker waiting forever
def test_scheduler_stop_ends_waiting_workers() -> None:
    from hcgraph.crawling.scheduler import Scheduler

    frontier = Frontier(None)
    frontier.add("https://a.example/0", 0)

    async def scenario() -> None:
        scheduler = Scheduler(frontier, max_stories=None, stored=0)
        assert await scheduler.lease() is not None
        waiting = asyncio.create_task(scheduler.lease())  # nothing queued, one in flight
        await asyncio.sleep(0.01)
        assert not waiting.done()
        scheduler.stop()
        await scheduler.wake()
        assert await waiting is None

    asyncio.run(scenario())


def test_the_kept_headers_read_in_one_pass_are_what_asking_for_each_gives() -> None:
    from hcgraph.crawling.fetch import KEPT_HEADERS, kept_headers

    headers = httpx.Headers(
        [(b"Server", b"nginx"), (b"ETag", b'"v1"'), (b"Set-Cookie", b"a=1"),
         (b"Cache-Control", b"no-cache"), (b"cache-control", b"max-age=0"),
         (b"Content-Type", b"application/json")]
    )  # fmt: skip
    wanted = {name: headers[name] for name in KEPT_HEADERS if name in headers}
    kept = kept_headers(headers)
    assert kept == wanted and list(kept) == list(wanted)
    assert kept["cache-control"] == "no-cache, max-age=0" and "set-cookie" not in kept
