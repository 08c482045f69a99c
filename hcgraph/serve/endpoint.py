"""SPARQL 1.1 Protocol for ``hcgraph serve``: routing, the guard, Host rules, negotiation.

Nothing here touches a socket: :meth:`Routes.route` takes a parsed :class:`Request` and
answers with a static page (the workbench), the query to run and the Accept header to
answer it by, or raises :class:`Refusal` (the answer given instead).
"""

from __future__ import annotations

import email.utils
import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import NamedTuple
from urllib.parse import parse_qs, urlsplit

__all__ = ["GRAPH_TYPES", "SOLUTION_TYPES", "Query", "Refusal", "Request", "Routes", "negotiate"]

MAX_BODY = 16 * 1024 * 1024
MAX_HEAD = 64 * 1024
_KEPT = 4096  # query strings and texts up to this length have their reading kept (Routes)

Extra = tuple[tuple[str, str], ...]  # headers after Content-Type and Content-Length

# Reason phrases; 413's by RFC 9110 (Python before 3.13 has the older "Request Entity Too Large").
REASONS = {status.value: status.phrase for status in HTTPStatus} | {413: "Content Too Large"}

SOLUTION_TYPES = (
    ("application/sparql-results+json", "JSON"), ("application/sparql-results+xml", "XML"),
    ("text/csv", "CSV"), ("text/tab-separated-values", "TSV"), ("application/json", "JSON"),
    ("application/xml", "XML"), ("text/xml", "XML"),
)  # fmt: skip
GRAPH_TYPES = (
    ("application/n-triples", "N_TRIPLES"), ("text/turtle", "TURTLE"),
    ("application/rdf+xml", "RDF_XML"), ("application/n-quads", "N_QUADS"),
    ("application/trig", "TRIG"), ("text/plain", "N_TRIPLES"), ("application/xml", "RDF_XML"),
)  # fmt: skip


class Refusal(Exception):
    """An answer given instead of running the query: status, one-line message; ``close``
    ends the connection after it (the request stream can no longer be trusted)."""

    def __init__(self, status: int, message: str, *, close: bool = False, allow: str = ""):
        super().__init__(message)
        self.status = status
        self.message = message
        self.close = close
        self.allow = allow


@dataclass(slots=True)
class Request:
    """A parsed request: method, target (as sent), version (``HTTP/1.1``), headers (names
    lower-cased, in order), body; ``keep``: the connection stays open after the answer."""

    method: str
    target: str
    version: str
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    keep: bool = True

    def get(self, name: str) -> str | None:
        return next((value for key, value in self.headers if key == name), None)


class Query(NamedTuple):
    """A query to run, and the Accept header its answer is negotiated by."""

    text: str
    accept: str


class Target(NamedTuple):
    """A request target split into the parts routing needs; ``authority`` is set for an
    absolute-form target (``http://host:port/path``), which RFC 9112 makes the one that
    counts over the Host header."""

    path: str
    query: str
    authority: str | None = None


def split_target(target: str) -> Target:
    """The path, query and (absolute form) authority of a request target; 400 for any
    other form (``*``, ``host:port``, a scheme other than http)."""
    if target[:1] == "/":  # origin form; "//x/y" is a path here, not an authority
        path, _, query = target.partition("?")
        return Target(path, query)
    parts = urlsplit(target)
    if parts.scheme.lower() != "http" or not parts.netloc:
        raise Refusal(400, "the request target must be a path (or an http:// URL)", close=True)
    return Target(parts.path or "/", parts.query, parts.netloc)


class Routes:
    """What this endpoint answers: the Host names it takes, its static pages, the guard."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        allow_service: bool,
        static: Mapping[str, tuple[str, bytes]],
    ) -> None:
        # here: the query workers import this module (negotiate), not the guard's vocabulary
        from ..sparqlguard import SERVICE_REFUSED, uses_service

        self.uses_service = uses_service
        self.service_refused = SERVICE_REFUSED.replace("--allow-service", "serve --allow-service")
        bracketed = f"[{host}]" if ":" in host else host
        names = {bracketed, "localhost"} | ({"127.0.0.1"} if host == "127.0.0.1" else {"[::1]"})
        self.hosts = {f"{n}:{port}".lower() for n in names}
        self.allow_service = allow_service
        self.static = dict(static)
        self._date = (0.0, b"")
        # Clients repeat their queries (a page, a dashboard, a benchmark): the text a query
        # string gives (or its refusal) and the guard's verdict on a text are kept for the
        # last few hundred short ones; a long or new one is read in full.
        self._from_query_string = functools.lru_cache(maxsize=512)(self._text_of)
        self._guarded = functools.lru_cache(maxsize=512)(uses_service)
        self._heads: dict[tuple[int, str, Extra, bool], tuple[bytes, bytes, bytes]] = {}

    def route(self, request: Request) -> tuple[str, bytes] | Query:
        """A static page (media type, bytes: the workbench), or the query to run; anything
        else is a refusal."""
        target = split_target(request.target)
        self.check_host(request, target)
        if request.method in {"GET", "HEAD"} and target.path in self.static:
            return self.static[target.path]
        return self.query(request, target)

    def check_host(self, request: Request, target: Target) -> None:
        """The DNS rebinding guard: the Host header (and an absolute-form target's
        authority) must name this endpoint; one Host header, required on HTTP/1.1."""
        hosts = [value for key, value in request.headers if key == "host"]
        if len(hosts) == 1 and target.authority is None and hosts[0].lower() in self.hosts:
            return  # the common case, decided in one look
        self._check_hosts(request.version, hosts, target.authority)

    def _check_hosts(self, version: str, hosts: list[str], authority: str | None) -> None:
        """:meth:`check_host` in full: the Host headers sent and the target's authority."""
        if len(hosts) > 1:
            raise Refusal(400, "send one Host header", close=True)
        if not hosts and version == "HTTP/1.1":
            raise Refusal(400, "an HTTP/1.1 request needs a Host header", close=True)
        for name in (*hosts, *([authority] if authority is not None else [])):
            if name.lower() not in self.hosts:
                raise Refusal(403, f"Host {name!r} is not this endpoint (DNS rebinding guard)")

    def query(self, request: Request, target: Target) -> Query:
        """The query text and Accept header of a GET, HEAD or POST to ``/query``; otherwise,
        or for an unusable query, a refusal."""
        check_route(request.method, target.path)
        if request.method == "POST":
            params = parse_qs(target.query)
            add_body_params(params, request)
            text = self._text_of(params)
        elif len(target.query) <= _KEPT:
            text = self._from_query_string(target.query)
        else:
            text = self._text_of(target.query)
        if isinstance(text, Refusal):  # a new one: a kept one raised again keeps its frames
            raise Refusal(text.status, text.message)
        return Query(text, ", ".join([v for k, v in request.headers if k == "accept"]))

    def _text_of(self, query: str | dict[str, list[str]]) -> str | Refusal:
        """The one query text of a request's parameters (or of its query string), guarded;
        or the refusal it gets."""
        params = parse_qs(query) if isinstance(query, str) else query
        if "default-graph-uri" in params or "named-graph-uri" in params:
            return Refusal(400, "default-graph-uri and named-graph-uri are not supported here")
        texts = params.get("query", [])
        if len(texts) != 1:
            return Refusal(400, "give one query (a 'query' parameter or a sparql-query body)")
        text = texts[0]
        if self.allow_service:
            return text
        refused = self._guarded(text) if len(text) <= _KEPT else self.uses_service(text)
        return Refusal(400, self.service_refused) if refused else text

    def whole_head(self, status: int, media: str, length: int, extra: Extra, close: bool) -> bytes:
        """The head of an answer sent whole: what :meth:`head` gives for ``Content-Type``,
        ``Content-Length`` and ``extra``, from parts made once per kind of answer."""
        key = (status, media, extra, close)
        parts = self._heads.get(key)
        if parts is None:
            if len(self._heads) >= 256:  # a bound; few kinds of answer exist
                self._heads.clear()
            before, after = self.head(status, [("Content-Type", media), ("Content-Length", "\0"),
                                               *extra], close).split(b"\0")  # fmt: skip
            line, _, rest = before.partition(b"\r\nDate: ")
            parts = self._heads[key] = (line + b"\r\nDate: ", rest[rest.index(b"\r\n") :], after)
        return b"%s%s%s%d%s" % (parts[0], self._now(), parts[1], length, parts[2])

    def _now(self) -> bytes:
        """The ``Date`` header's value, made once a second."""
        now = time.time()
        if now - self._date[0] >= 1.0:
            self._date = (now, email.utils.formatdate(now, usegmt=True).encode())
        return self._date[1]

    def head(self, status: int, headers: list[tuple[str, str]], close: bool) -> bytes:
        """A response head: the status line, ``Date``, ``headers``, and ``Connection: close``
        if ``close``."""
        lines = "".join(f"{k}: {v}\r\n" for k, v in headers)
        lines += "Connection: close\r\n" if close else ""
        reason = REASONS.get(status, "Error").encode()
        parts = (status, reason, self._now(), lines.encode("latin-1"))
        return b"HTTP/1.1 %d %s\r\nDate: %s\r\n%s\r\n" % parts


def check_route(method: str, path: str) -> None:
    """Refuse any request but a GET, HEAD or POST to ``/query``."""
    if method not in {"GET", "HEAD", "POST"}:
        raise Refusal(405, "read-only endpoint: GET, HEAD or POST /query", allow="GET, HEAD, POST")
    if method == "POST" and path != "/query":
        raise Refusal(403, "read-only endpoint: POST only to /query")
    if path != "/query":
        raise Refusal(404, "not found: the SPARQL endpoint is /query")


def add_body_params(params: dict[str, list[str]], request: Request) -> None:
    """Add a POST body's parameters: a form's fields, or a ``sparql-query`` body as ``query``;
    an update (form field or body) is refused."""
    kind = (request.get("content-type") or "").split(";")[0].strip().lower()
    text = request.body.decode("utf-8", "replace")
    if kind == "application/x-www-form-urlencoded":
        form = parse_qs(text)
        if "update" in form:
            raise Refusal(403, "read-only endpoint: updates are refused")
        for key, values in form.items():
            params.setdefault(key, []).extend(values)
    elif kind == "application/sparql-query":
        params.setdefault("query", []).append(text)
    elif kind == "application/sparql-update":
        raise Refusal(403, "read-only endpoint: updates are refused")
    else:
        raise Refusal(415, "POST the query as application/sparql-query or a form (query=...)")


@functools.lru_cache(maxsize=256)  # clients send few distinct Accept headers
def negotiate(accept: str, offers: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
    """The offer (media type, format name) an Accept header prefers; None if none is
    acceptable. No Accept: the first offer. Ties go to the earlier offer.

    An offer's ``q`` is that of the most specific range matching it (exact, ``type/*``,
    ``*/*``; the highest among equally specific ones); ``q`` is 1 if absent, 0 if unreadable.
    """
    if not accept.strip():
        return offers[0]
    ranges = _ranges(accept)
    best, chosen = 0.0, None
    for offer in offers:
        media = offer[0]
        specific = {media: 3, f"{media.split('/')[0]}/*": 2, "*/*": 1}
        matches = [(specific[r], q) for r, q in ranges if r in specific]
        q = max(matches)[1] if matches else 0.0
        if q > best:
            best, chosen = q, offer
    return chosen


def _ranges(accept: str) -> list[tuple[str, float]]:
    """An Accept header's media ranges, lower-cased, each with its ``q``."""
    ranges: list[tuple[str, float]] = []
    for item in accept.split(","):
        media, *params = (p.strip() for p in item.split(";"))
        q = 1.0
        for key, _, value in (param.partition("=") for param in params):
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if media:
            ranges.append((media.lower(), q))
    return ranges
