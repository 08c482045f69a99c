"""Manifest replies into the store's archive: fetched by id over HTTP, or read from saved files.

``GET {api}/manifests/by-id/{id}`` with ``Authorization: Bearer <key>``, each answer kept in
``STORE/archive/manifests`` so none is fetched twice (docs/claims.md). Network errors,
timeouts, 408 and 5xx are retried (:mod:`hcgraph.retry`), then ``failed``; 401/403 raise
:class:`~hcgraph.errors.ManifestAuthError`; a 429 past ``max_retry_after`` or a quota answer
(402, or a 429/403 whose body says ``quota``) stops the run; 404/410 is ``not_found``
(archived); any other answer is ``failed`` (not archived: a rerun asks again); a 200 is
archived, then ``bad_shape`` (named by JSON path) if it cannot be read.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import re
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import httpx

from .._version import __version__
from ..archive import Archive, FetchRecord
from ..crawling.decoding import ACCEPT_ENCODING, Capped, DecodeError, TooLarge
from ..crawling.fetch import kept_headers
from ..errors import ManifestAuthError, ManifestError, OutputError, ReplyShapeError, one_line
from ..iris import minted
from ..retry import Backoff, retry_after_seconds, retryable
from .reply import DEFAULT_API, DEFAULT_KEY_ENV, parse_reply, reply_url

__all__ = [
    "SAVED_MAX_BYTES",
    "SHOWN",
    "ArchivedReply",
    "FetchOptions",
    "FetchReport",
    "archived_replies",
    "fetch_manifests",
    "manifest_archive",
    "manifest_iri",
    "read_saved",
]

#: Shown per list in :meth:`FetchReport.lines`; the rest are counted.
SHOWN = 20
#: The largest saved reply :func:`read_saved` reads (a larger file is ``failed``).
SAVED_MAX_BYTES = 4 << 20
_SYNC_EVERY = 1.0  # s: the archive is flushed at least this often while replies arrive
_GONE = (404, 410)
_STOPS = {
    "rate-limited": " (HTTP 429: the API asked to slow down for longer than hcgraph waits)",
    "quota": " (the key's quota is used up)",
}
_REFUSALS = (
    "reply too large: Content-Length {declared} > {cap} bytes",
    "reply too large: more than {cap} bytes",
)
_QUOTA = re.compile(rb"quota", re.IGNORECASE)
_TOKEN = re.compile(r"[\x21-\x7e]+")  # visible ASCII: what a header value may carry
_IRI_BASE = minted("manifest", "")


def manifest_archive(store_dir: Path | str) -> Archive:
    """The store's archive of manifest replies: ``STORE/archive/manifests`` (apart from the
    story archive's packs, so no command takes a reply for a story)."""
    return Archive(Path(store_dir) / "archive" / "manifests")


def manifest_iri(manifest_id: str) -> str:
    """The manifest's IRI: what a fetch record says was asked for (``FetchRecord.url``)."""
    return minted("manifest", manifest_id)


def _id_of(iri: str) -> str | None:
    """The manifest id of a record's ``url`` (an IRI :func:`manifest_iri` made), or None."""
    rest = iri[len(_IRI_BASE) :] if iri.startswith(_IRI_BASE) else ""
    return unquote(rest) if rest and "/" not in rest else None


@dataclass
class FetchOptions:
    """How :func:`fetch_manifests` asks. Defaults are those of ``hcgraph manifests fetch``."""

    api: str = DEFAULT_API  # a base URL, or a template holding {manifest_id} (reply_url)
    key_env: str = DEFAULT_KEY_ENV  # the *name* of the environment variable holding the key
    max_fetch: int | None = None  # the budget: at most this many ids requested (None: all)
    rate: float = 2.0  # request starts per second (0: unlimited)
    retries: int = 3  # extra attempts on 5xx, 408, network errors and a short 429
    timeout: float = 30.0  # seconds for one attempt
    max_bytes: int = 4 << 20  # a larger reply is refused (failed), never read whole
    max_retry_after: float = 60.0  # the longest Retry-After waited out; longer stops the run
    backoff_base: float = 0.5  # the first back-off delay, in seconds (doubles, jittered)


@dataclass
class FetchReport:
    """What one run of :func:`fetch_manifests` or :func:`read_saved` did, by manifest id."""

    fetched: list[str] = field(default_factory=list)  # reply archived this run
    already: list[str] = field(default_factory=list)  # reply (or 404) archived before
    not_found: list[str] = field(default_factory=list)  # answered 404 (or 410) this run
    bad_shape: list[tuple[str, str, str]] = field(default_factory=list)  # id, JSON path, why
    failed: list[tuple[str, str]] = field(default_factory=list)  # id, why (after retries)
    left: list[str] = field(default_factory=list)  # not asked: budget, a stop, no saved file
    stopped: str | None = None  # why the run stopped early ("rate-limited", "quota")
    resume_after: dt.datetime | None = None  # when a rerun may go on, if the API said
    requests: int = 0  # HTTP requests made, retries included
    directory: Path | None = None  # where saved replies were read from (read_saved)

    def lines(self) -> list[str]:
        """The human report, one fact a line (server and file text made visible)."""
        what = "read from saved files" if self.directory is not None else "fetched"
        out = [
            f"{len(self.fetched)} manifest replies {what}, {len(self.already)} already "
            f"archived (not asked for again), {self.requests} HTTP requests"
        ]
        if self.not_found:
            out.append(f"not found (404): {_ids(self.not_found)}")
        out += [
            f"not understood: manifest {one_line(i)}: {one_line(path or '(the reply)')}: "
            f"{one_line(why)}"
            for i, path, why in self.bad_shape[:SHOWN]
        ]
        out += _more(len(self.bad_shape), "not understood")
        out += [
            f"failed: manifest {one_line(i)}: {one_line(why)}" for i, why in self.failed[:SHOWN]
        ]
        out += _more(len(self.failed), "failed")
        if self.stopped is not None:
            when = ""
            if self.resume_after is not None:
                when = f"; resume after {self.resume_after:%Y-%m-%dT%H:%M:%SZ}"
            out.append(f"stopped early: {self.stopped}{_STOPS.get(self.stopped, '')}{when}")
        if self.left:
            out.append(f"left: {len(self.left)} not {self._left_why()}: {_ids(self.left)}")
        return out

    def _left_why(self) -> str:
        if self.directory is not None:
            return f"read (no saved reply in {one_line(self.directory)})"
        if self.stopped is not None:
            return "requested (the run stopped; run it again to go on)"
        return "requested (over the budget; run again, or raise --max, to fetch them)"


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(one_line(i) for i in ids[:SHOWN])
    return shown + (f" … and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")


def _more(count: int, what: str) -> list[str]:
    return [f"{what}: … and {count - SHOWN} more"] if count > SHOWN else []


@dataclass(frozen=True)
class ArchivedReply:
    """The newest archived answer for one manifest."""

    manifest_id: str
    record: FetchRecord  # its fetch_url: the API URL, or the saved file's path
    status: int  # 200 (a reply, fetched or saved) or 404
    body: bytes | None  # the reply's bytes as received (None for a 404)
    sha256: str | None  # the body's SHA-256 (None for a 404)


def archived_replies(archive: Archive) -> dict[str, ArchivedReply]:
    """The newest archived answer per manifest id (a record whose body no longer matches its
    hash is passed over: the next run fetches that manifest again)."""
    newest: dict[str, ArchivedReply] = {}
    for record in archive.records():  # oldest first: a later answer replaces an earlier
        manifest_id = _id_of(record.url)
        if manifest_id is None:
            continue
        if record.status in _GONE:
            newest[manifest_id] = ArchivedReply(manifest_id, record, 404, None, None)
        elif record.sha256 is not None and record.status in (200, None):
            body = archive.intact_body(record.sha256)
            if body is not None:
                newest[manifest_id] = ArchivedReply(manifest_id, record, 200, body, record.sha256)
    return newest


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class _Stop(Exception):
    """The API said to stop (429 or a quota answer)."""

    why: str
    wait: float | None


@dataclass
class _Answer:
    """One HTTP attempt: a status with headers and (capped) body, or a failure."""

    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    error: str | None = None
    retryable: bool = False  # a network error or timeout (retried like a 5xx)


def fetch_manifests(
    ids: Sequence[str],
    archive: Archive,
    options: FetchOptions | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    transport: httpx.BaseTransport | None = None,
) -> FetchReport:
    """Fetch the replies of ``ids`` (in order, each once) not yet in ``archive``
    (:func:`manifest_archive`), archiving each as it arrives (the rules: the module docstring).
    The key is read from ``environ`` (default ``os.environ``); tests pass ``transport``.

    Raises:
        ManifestError: no key in the variable (and something to fetch), or a bad ``--api``.
        ManifestAuthError: the API refused the key (what came before is kept).
        OutputError: the archive cannot be written.
    """
    options = options or FetchOptions()
    report = FetchReport()
    known = archived_replies(archive)
    pending: list[str] = []
    for manifest_id in dict.fromkeys(ids):
        if not manifest_id.strip():
            report.failed.append((manifest_id, "an empty manifest id"))
            continue
        (report.already if manifest_id in known else pending).append(manifest_id)
    budget = len(pending) if options.max_fetch is None else max(0, options.max_fetch)
    todo, report.left = pending[:budget], pending[budget:]
    if not todo:
        return report
    first = reply_url(options.api, todo[0])  # a bad --api fails here, before any request
    try:
        httpx.URL(first)
    except httpx.InvalidURL as exc:  # "http://[::1", a control character: no traceback
        raise ManifestError(f"--api {options.api!r}: not a URL: {one_line(exc)}") from None
    key = _key(os.environ if environ is None else environ, options.key_env)
    with _Run(archive, options, key, report, transport) as run:
        run.all(todo)
    return report


def _key(environ: Mapping[str, str], name: str) -> str:
    """The key in ``environ[name]`` (surrounding whitespace dropped); never in a message."""
    key = environ.get(name, "").strip()
    if not key:
        raise ManifestError(
            f"no API key: set the environment variable {one_line(name)} to the manifest "
            "API's key (the key is read from there only, never from an option)"
        )
    if not _TOKEN.fullmatch(key):
        raise ManifestError(
            f"the key in the environment variable {one_line(name)} is not usable in an "
            "HTTP header (it holds a space, a control or a non-ASCII character)"
        )
    return key


class _Run:
    """One run of :func:`fetch_manifests`: the client, the pace, the archive writes."""

    def __init__(
        self,
        archive: Archive,
        options: FetchOptions,
        key: str,
        report: FetchReport,
        transport: httpx.BaseTransport | None,
    ) -> None:
        self.archive, self.options, self.report = archive, options, report
        self._key = key
        self.interval = 1.0 / options.rate if options.rate > 0 else 0.0
        self.next_start = 0.0  # no request starts before (the rate, a Retry-After)
        self.backoff = Backoff(options.backoff_base, 30.0, options.max_retry_after)
        # the transport itself, not an httpx.Client: no redirects, cookies or auth flows
        self.transport = transport or _transport(options.api)
        self.own_transport = transport is None
        self.headers = {
            "Authorization": f"Bearer {key}",
            "Accept": "application/json",
            "Accept-Encoding": ACCEPT_ENCODING,
            "User-Agent": f"hcgraph/{__version__} (manifest reader)",
        }
        self.extensions = {"timeout": httpx.Timeout(options.timeout).as_dict()}

    def __enter__(self) -> _Run:
        self.syncer = _Syncer(self.archive)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.own_transport:
            self.transport.close()
        self.syncer.stop()
        self.archive.sync()  # what came is kept, whatever ended the run

    def all(self, todo: list[str]) -> None:
        """Ask for each id in turn until done, stopped, or the key is refused."""
        for at, manifest_id in enumerate(todo):
            try:
                self.one(manifest_id)
            except _Stop as stop:
                self.report.stopped = stop.why
                if stop.wait is not None:
                    # a Retry-After past year 9999 (or infinite) has no date to resume after
                    with contextlib.suppress(OverflowError):
                        self.report.resume_after = _now() + dt.timedelta(seconds=stop.wait)
                self.report.left[:0] = todo[at:]
                return
            self.syncer.check()

    def one(self, manifest_id: str) -> None:
        """Fetch one id (with retries), archive and classify its answer."""
        url = reply_url(self.options.api, manifest_id)
        answer, attempts = self._with_retries(url)
        report = self.report
        if answer.error is not None:
            report.failed.append((manifest_id, self._scrub(answer.error)))
        elif answer.status == 200:
            self._archive(manifest_id, url, answer, attempts)
            _understood(report, manifest_id, answer.body, url, self._scrub)
        elif answer.status in _GONE:
            self._archive(manifest_id, url, answer, attempts)
            report.not_found.append(manifest_id)
        else:
            report.failed.append((manifest_id, self._unexpected(answer)))

    def _with_retries(self, url: str) -> tuple[_Answer, int]:
        """The final answer for ``url`` and the requests it took; raises :class:`_Stop` or
        :class:`~hcgraph.errors.ManifestAuthError` when the API says so."""
        retries = max(0, self.options.retries)
        for n in range(retries + 1):
            self._pace()
            self.report.requests += 1
            answer = self._get(url)
            self._check_refusal(answer, last=n == retries)
            wait = None  # None: final; also for a server asking for a long pause (fails)
            if answer.retryable or retryable(answer.status):
                wait = self.backoff.wait(n + 1, answer.headers.get("retry-after"))
            if wait is None or n == retries:
                if wait is not None or answer.retryable:
                    tries = f"{retries} {'retry' if retries == 1 else 'retries'}"
                    answer.error = f"{self._unexpected(answer)} (gave up after {tries})"
                return answer, n + 1
            self.next_start = max(self.next_start, time.monotonic() + wait)
        raise AssertionError("unreachable")  # pragma: no cover - the loop always returns

    def _pace(self) -> None:
        """Wait for the next start: at most ``rate`` a second, never before a Retry-After."""
        while (delay := self.next_start - time.monotonic()) > 0:
            time.sleep(min(delay, 60.0))  # time.sleep overflows past ~1e9 s (--rate 1e-300)
        self.next_start = max(self.next_start, time.monotonic()) + self.interval

    def _check_refusal(self, answer: _Answer, *, last: bool) -> None:
        """Raise for a quota answer, a 429 that is not to be waited out, or 401/403."""
        status, report = answer.status, self.report
        wait = retry_after_seconds(answer.headers.get("retry-after"))
        if status == 402 or (status in (403, 429) and _QUOTA.search(answer.body)):
            raise _Stop("quota", wait)
        if status in (401, 403):
            kept = len(report.fetched) + len(report.not_found) + len(report.bad_shape)
            raise ManifestAuthError(
                f"the manifest API refused the key in the environment variable "
                f"{one_line(self.options.key_env)} (HTTP {status}); "
                f"{kept} answers received before it are kept in the archive"
            )
        if status == 429 and (wait is None or wait > self.options.max_retry_after or last):
            raise _Stop("rate-limited", wait)

    def _get(self, url: str) -> _Answer:
        """One GET: status, the kept headers, and the body up to ``max_bytes``."""
        answer = _Answer()
        deadline = time.monotonic() + self.options.timeout
        try:
            request = httpx.Request("GET", url, headers=self.headers, extensions=self.extensions)
            resp = self.transport.handle_request(request)
            try:
                answer.status = resp.status_code
                answer.headers = kept_headers(resp.headers)
                answer.body = Capped(resp, self.options.max_bytes, _REFUSALS, deadline).read()
            finally:
                resp.close()
        except TooLarge as exc:
            answer.error = str(exc)
        except DecodeError as exc:
            answer.error = f"cannot decode the reply: {exc}"
        except (httpx.TimeoutException, TimeoutError):
            answer.error = f"timed out after {self.options.timeout:g} s"
            answer.retryable = True
        except (httpx.TransportError, OSError) as exc:  # connection refused, reset, …
            answer.error = self._scrub(f"{type(exc).__name__}: {one_line(exc)}")
            answer.retryable = True
        return answer

    def _archive(self, manifest_id: str, url: str, answer: _Answer, attempts: int) -> None:
        """Body first, then its record: a record is only ever read with its body there."""
        body = answer.body if answer.status == 200 else None
        sha = self.archive.put_body(body) if body is not None else None
        iri = manifest_iri(manifest_id)
        record = FetchRecord(
            url=iri,
            final_url=iri,
            fetch_url=url,
            status=answer.status,
            fetched_at=_now().isoformat(),
            sha256=sha,
            size=len(body) if body is not None else 0,
            headers={k: self._scrub(v) for k, v in answer.headers.items()},
            attempts=attempts,
        )
        self.archive.add_record(record)

    def _unexpected(self, answer: _Answer) -> str:
        if answer.error is not None:
            return answer.error
        where = answer.headers.get("location")
        moved = f" to {self._scrub(one_line(where))} (not followed: one host)" if where else ""
        return f"HTTP {answer.status}{moved}"

    def _scrub(self, text: str) -> str:
        """``text`` without the key (a server or a library may echo it back)."""
        return text.replace(self._key, "[the key]") if self._key in text else text


class _Syncer:
    """Flushes the archive to disk once a second, in a thread of its own: the requests go on
    while the disk catches up (an ``fdatasync`` can take longer than a reply)."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self.error: OutputError | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="manifest-sync", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(_SYNC_EVERY):
            try:
                self.archive.sync()
            except OutputError as exc:  # raised in the fetching thread by check()
                self.error = exc
                return

    def check(self) -> None:
        """Raise the error a background sync met (the disk refused), if any."""
        if self.error is not None:
            raise self.error

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def _transport(api: str) -> httpx.HTTPTransport:
    """A transport to the API's host, through the proxy the environment names for it (as
    an ``httpx.Client`` would: ``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY``, ``NO_PROXY``)."""
    url = httpx.URL(api.replace("{manifest_id}", "0"))
    proxies = urllib.request.getproxies()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    if proxy and not urllib.request.proxy_bypass(url.host):
        return httpx.HTTPTransport(proxy=proxy)
    return httpx.HTTPTransport()


# --- saved replies (--dir) ------------------------------------------------------------------


def read_saved(ids: Sequence[str], directory: Path | str, archive: Archive) -> FetchReport:
    """Archive the saved replies of ``ids`` from ``directory`` (``DIR/{id}.json``, or
    ``DIR/{id}`` as ``curl -o`` may have left it), like fetched ones.

    An unchanged file (its bytes are the newest archived reply for that id) is not archived
    again (``already``); a changed one is archived as a new version. An id with no file is
    ``left``; an unreadable file (or one over :data:`SAVED_MAX_BYTES`) is ``failed``; a file
    whose shape is not understood is archived raw and named in ``bad_shape``.

    Raises:
        ManifestError: ``directory`` is not a directory.
        OutputError: the archive cannot be written.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise ManifestError(f"--dir {one_line(directory)}: not a directory")
    report = FetchReport(directory=directory)
    known = archived_replies(archive)
    try:
        for manifest_id in dict.fromkeys(ids):
            saved = _saved(manifest_id, directory, report)
            if saved is None:
                continue
            path, data = saved
            prior = known.get(manifest_id)
            if prior is not None and prior.sha256 == hashlib.sha256(data).hexdigest():
                report.already.append(manifest_id)
                continue
            sha = archive.put_body(data)
            iri = manifest_iri(manifest_id)
            where = str(path.resolve())
            record = FetchRecord(iri, iri, where, None, _now().isoformat(), sha, len(data))
            archive.add_record(record)
            _understood(report, manifest_id, data, str(path))
    finally:
        archive.sync()
    return report


def _saved(manifest_id: str, directory: Path, report: FetchReport) -> tuple[Path, bytes] | None:
    """The saved reply's path and bytes, or None (``report`` then says why)."""
    if Path(manifest_id).name != manifest_id or manifest_id in (".", "..") or "\0" in manifest_id:
        report.failed.append((manifest_id, "not a file name (a saved reply is DIR/ID.json)"))
        return None
    candidates = (directory / f"{manifest_id}.json", directory / manifest_id)
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        report.left.append(manifest_id)
        return None
    try:
        with path.open("rb") as handle:
            data = handle.read(SAVED_MAX_BYTES + 1)
    except OSError as exc:
        report.failed.append((manifest_id, f"{path}: cannot read: {exc.strerror or exc}"))
        return None
    if len(data) > SAVED_MAX_BYTES:
        report.failed.append((manifest_id, f"{path}: larger than {SAVED_MAX_BYTES} bytes"))
        return None
    return path, data


def _understood(
    report: FetchReport,
    manifest_id: str,
    body: bytes,
    source: str,
    scrub: Callable[[str], str] | None = None,
) -> None:
    """Count an archived reply as fetched, or as ``bad_shape`` when its shape is not read."""
    try:
        parse_reply(body, source, expected_id=manifest_id)
    except ReplyShapeError as exc:
        reason = scrub(exc.reason) if scrub else exc.reason
        report.bad_shape.append((manifest_id, exc.json_path, reason))
    else:
        report.fetched.append(manifest_id)
