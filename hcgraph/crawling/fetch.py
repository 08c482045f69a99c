"""One logical GET: retries with back-off, Retry-After, a streamed size cap, safe redirects.

A :class:`Fetcher` retries connection errors, timeouts, 408, 429 and 5xx with jittered
back-off, honouring ``Retry-After`` for the whole host; decodes the body in bounded pieces
(:mod:`.decoding`) up to the cap; and follows redirects by hand, each target mapped back
from a mirror and checked against the crawl scope. Failures are returned, not raised: a
:class:`FetchResult` with ``error`` set. Each request waits for a :class:`Politeness` slot
for its host (a per-host semaphore, then its rate, ``Retry-After`` or ``Crawl-delay``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from urllib.parse import urljoin

import httpx

from ..retry import Backoff, retry_after_seconds, retryable
from ..urls import Mirrors, canonicalize, host_of
from .decoding import Capped, DecodeError, TooLarge

__all__ = [
    "KEPT_HEADERS",
    "FetchPolicy",
    "FetchResult",
    "Fetcher",
    "Politeness",
    "kept_headers",
]

#: Response headers recorded in the archive.
KEPT_HEADERS = (
    "content-type", "content-length", "content-encoding", "etag", "last-modified", "date",
    "cache-control", "retry-after", "location", "server",
)  # fmt: skip
_KEPT = frozenset(KEPT_HEADERS)
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_REFUSALS = (
    "body too large: Content-Length {declared} > cap {cap} bytes",
    "body too large: more than the {cap}-byte cap",
)


@dataclass
class _Host:
    sem: asyncio.Semaphore
    interval: float
    next_start: float = 0.0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class Politeness:
    """Per-host limits: ``per_host`` requests in flight, ``rate`` starts a second (``None``
    or ``0``: unlimited), and host-wide back-off."""

    def __init__(self, per_host: int = 8, rate: float | None = None) -> None:
        self.per_host = max(1, per_host)
        self.interval = 1.0 / rate if rate else 0.0
        self._hosts: dict[str, _Host] = {}

    def _host(self, host: str) -> _Host:
        state = self._hosts.get(host)
        if state is None:
            state = self._hosts[host] = _Host(asyncio.Semaphore(self.per_host), self.interval)
        return state

    def set_min_interval(self, host: str, seconds: float) -> None:
        """Never start requests to ``host`` closer than ``seconds`` apart (robots Crawl-delay)."""
        state = self._host(host)
        state.interval = max(state.interval, seconds)

    def defer(self, host: str, seconds: float) -> None:
        """No new request to ``host`` for ``seconds`` (a ``Retry-After`` applies to the host)."""
        state = self._host(host)
        state.next_start = max(state.next_start, time.monotonic() + max(0.0, seconds))

    @asynccontextmanager
    async def slot(self, host: str) -> AsyncIterator[None]:
        """Hold one request slot for ``host``: waits for the per-host limit and rate."""
        state = self._host(host)
        async with state.sem:
            async with state.lock:  # starts are serialised so the interval holds exactly
                # Re-check after each sleep: a Retry-After may have pushed the start back.
                while (delay := state.next_start - time.monotonic()) > 0:
                    await asyncio.sleep(delay)
                state.next_start = max(state.next_start, time.monotonic()) + state.interval
            yield


@dataclass(frozen=True)
class FetchPolicy:
    """Limits for one fetch. Defaults suit a public site.

    Attributes:
        timeout: seconds for one attempt, connect to last byte.
        retries: extra attempts after the first, for retryable failures.
        backoff_base: first back-off delay in seconds (doubles each retry, with jitter).
        backoff_cap: longest back-off delay.
        max_retry_after: the longest ``Retry-After`` honoured; longer gives up.
        max_bytes: body cap (decoded bytes).
        max_redirects: redirects followed per URL.
    """

    timeout: float = 30.0
    retries: int = 3
    backoff_base: float = 0.5
    backoff_cap: float = 30.0
    max_retry_after: float = 300.0
    max_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 5

    @property
    def backoff(self) -> Backoff:
        """The retry timing as hcgraph's one retry policy (:mod:`hcgraph.retry`)."""
        return Backoff(self.backoff_base, self.backoff_cap, self.max_retry_after)


@dataclass
class FetchResult:
    """The outcome of one logical GET (after retries and redirects).

    ``url``/``final_url`` are logical (original-site) URLs; ``fetch_url``/``final_fetch_url``
    are where the bytes really came from (differ only with a mirror). ``error`` is ``None``
    on success (any final HTTP status, including 404 and 304, is a successful *fetch*);
    otherwise ``kind`` says what went wrong: ``timeout``, ``connection``, ``too-large``,
    ``redirect``, ``retry-after``, ``decode`` or ``http`` (retryable status, retries spent).
    """

    url: str
    fetch_url: str
    final_url: str = ""
    final_fetch_url: str = ""
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    error: str | None = None
    kind: str = "ok"
    attempts: int = 0
    redirects: list[str] = field(default_factory=list)
    fetched_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))


@dataclass
class _Attempt:
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    error: str | None = None
    kind: str = "ok"
    transient: bool = False  # worth another attempt
    retry_after: float | None = None  # the server's Retry-After, in seconds


class Fetcher:
    """Runs logical GETs through ``client`` (one that does not follow redirects itself),
    within ``politeness`` and ``policy``; ``scope`` gives why a logical URL may not be
    fetched (None: it may), ``mirrors`` the logical ↔ fetch URL rewrites."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        politeness: Politeness,
        policy: FetchPolicy,
        scope: Callable[[str], str | None],
        mirrors: Mirrors | None = None,
    ) -> None:
        self.client = client
        self.politeness = politeness
        self.policy = policy
        self.scope = scope
        self.mirrors = mirrors or Mirrors()
        self.requests = 0

    async def get(
        self, url: str, headers: Mapping[str, str] | None = None, *, keep_first: int | None = None
    ) -> FetchResult:
        """GET a logical URL; follow safe redirects; never raises for network trouble.
        ``keep_first``: the body is its first that many bytes, the rest unread (robots.txt)."""
        result = FetchResult(url=url, fetch_url=self.mirrors.to_fetch(url))
        current, limit = url, self.policy.max_redirects
        while True:
            fetch_url = self.mirrors.to_fetch(current)
            attempt, tries = await self._with_retries(fetch_url, headers or {}, keep_first)
            result.attempts += tries
            result.final_url, result.final_fetch_url = current, fetch_url
            result.status, result.headers = attempt.status, attempt.headers
            result.body = attempt.body
            result.fetched_at = dt.datetime.now(dt.UTC)
            if attempt.error is not None:
                result.error, result.kind = attempt.error, attempt.kind
                return result
            location = attempt.headers.get("location")
            if attempt.status not in _REDIRECTS or not location:
                return result
            target = self.mirrors.to_logical(urljoin(fetch_url, location.strip()))
            why = self.scope(target)
            if why is not None:
                return self._fail(result, "redirect", f"redirect to {target} refused: {why}")
            target = canonicalize(target)
            if target == url or target in result.redirects:
                chain = " -> ".join([url, *result.redirects, target])
                return self._fail(result, "redirect", f"redirect loop: {chain}")
            if len(result.redirects) == limit:
                return self._fail(result, "redirect", f"too many redirects (more than {limit})")
            result.redirects.append(target)
            current = target

    @staticmethod
    def _fail(result: FetchResult, kind: str, reason: str) -> FetchResult:
        result.error, result.kind, result.body = reason, kind, None
        return result

    async def _with_retries(
        self, fetch_url: str, headers: Mapping[str, str], keep_first: int | None = None
    ) -> tuple[_Attempt, int]:
        host = host_of(canonicalize(fetch_url))
        policy = self.policy
        for n in range(policy.retries + 1):
            last = n == policy.retries
            async with self.politeness.slot(host):
                self.requests += 1
                attempt = await self._once(fetch_url, headers, last, keep_first)
            if not attempt.transient:
                return attempt, n + 1
            if last:
                attempt.error = f"{attempt.error} (gave up after {policy.retries} retries)"
                return attempt, n + 1
            wait = attempt.retry_after
            if wait is not None and wait > policy.max_retry_after:
                attempt.error = (
                    f"HTTP {attempt.status}: Retry-After {wait:.0f} s is longer "
                    f"than the {policy.max_retry_after:.0f} s limit"
                )
                attempt.kind = "retry-after"
                return attempt, n + 1
            if wait is not None:
                self.politeness.defer(host, wait)
            await asyncio.sleep(wait if wait is not None else policy.backoff.delay(n + 1))
        raise AssertionError("unreachable")  # pragma: no cover - the last attempt returns

    async def _once(
        self, fetch_url: str, headers: Mapping[str, str], last: bool, keep_first: int | None = None
    ) -> _Attempt:
        """One attempt; ``transient`` set: worth another (the body is read only on the last)."""
        out = _Attempt()
        try:
            async with asyncio.timeout(self.policy.timeout):
                async with self.client.stream("GET", fetch_url, headers=dict(headers)) as resp:
                    out.status = code = resp.status_code
                    out.headers = kept_headers(resp.headers)
                    if retryable(code):
                        out.error, out.kind, out.transient = f"HTTP {code}", "http", True
                        out.retry_after = retry_after_seconds(resp.headers.get("retry-after"))
                        if not last:
                            return out
                    cap = self.policy.max_bytes if keep_first is None else keep_first
                    reader = Capped(resp, cap, _REFUSALS, truncate=keep_first is not None)
                    out.body = await reader.aread()
        except TooLarge as exc:  # raised before the body is kept
            out.error, out.kind, out.transient = str(exc), "too-large", False
        except (TimeoutError, httpx.TimeoutException):
            reason = f"timed out after {self.policy.timeout:g} s"
            out = _Attempt(error=reason, kind="timeout", transient=True)
        except (DecodeError, httpx.DecodingError) as exc:
            out.error, out.kind, out.transient = f"cannot decode the body: {exc}", "decode", False
        except (httpx.TransportError, OSError) as exc:
            out = _Attempt(error=_describe(exc), kind="connection", transient=True)
        except httpx.InvalidURL as exc:  # raised resolving a Location such as javascript:…
            out = _invalid_url(fetch_url, exc)
        return out


def kept_headers(headers: httpx.Headers) -> dict[str, str]:
    """The :data:`KEPT_HEADERS` of a response, in that order, each as ``headers[name]``
    gives it (repeated fields joined by ``", "``), in one pass over the fields."""
    found: dict[str, str] = {}
    for name, value in headers.multi_items():  # names lower-cased, as KEPT_HEADERS are
        if name in _KEPT:
            found[name] = f"{found[name]}, {value}" if name in found else value
    return {name: found[name] for name in KEPT_HEADERS if name in found}


def _invalid_url(fetch_url: str, exc: httpx.InvalidURL) -> _Attempt:
    """A URL httpx refused: the one requested, or (httpx resolves every ``Location`` it
    gets, following or not) where the answer redirects to."""
    try:
        httpx.URL(fetch_url)
    except httpx.InvalidURL:
        return _Attempt(error=f"not a URL httpx can request: {exc}", kind="connection")
    reason = f"redirect to a URL httpx cannot resolve refused: {exc}"
    return _Attempt(error=reason, kind="redirect")


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    name = type(exc).__name__
    return f"{name}: {text[0]}" if text else name
