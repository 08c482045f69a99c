"""The request stream of one connection, parsed by llhttp (``httptools``) into requests.

llhttp (Node.js's parser, uvicorn's) is strict where RFC 9112 is; :class:`RequestParser`
adds what a parser leaves to the server: a size limit on the head, a length limit on the
body, HTTP/1.0 and 1.1 only, no chunked bodies.
"""

from __future__ import annotations

import collections
import time

import httptools

from .endpoint import MAX_BODY, MAX_HEAD, Refusal, Request

# What the parser is in the middle of: nothing, a head, a body.
IDLE, HEAD, BODY = 0, 1, 2


class RequestParser:
    """Bytes in (:meth:`feed`), ``Request`` objects or a final ``Refusal`` out
    (``queue``). ``phase``: what a request is in the middle of; ``body_since``: when
    the head of the request whose body is awaited arrived; ``continue_due``: that request's
    client waits for ``100 Continue`` before it sends the body."""

    def __init__(self) -> None:
        self.parser = httptools.HttpRequestParser(self)
        self.phase = IDLE
        self.partial: Request | None = None
        self.url = b""
        self.body = bytearray()
        self.head_bytes = 0
        self.body_since = 0.0
        self.continue_due = False
        self.queue: collections.deque[Request | Refusal] = collections.deque()
        self.broken = False  # the stream is parsed no further

    def feed(self, data: bytes) -> None:
        """Parse ``data``; what it completes goes to ``queue``."""
        if self.broken:
            return
        if self.phase != BODY:
            self.head_bytes += len(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:  # an Upgrade or CONNECT: no HTTP/1.1 after it
            self.broken = True
            if self.queue and isinstance(self.queue[-1], Request):
                self.queue[-1].keep = False
        except Exception as exc:  # the parser's errors, and a Refusal from a callback
            self._fail(_refusal(exc))
        if self.phase != BODY and self.head_bytes > MAX_HEAD and not self.broken:
            self._fail(Refusal(431, "request head too large", close=True))

    def _fail(self, refusal: Refusal) -> None:
        """The stream cannot be parsed further: the requests before are answered, then this."""
        self.broken = True
        self.queue.append(refusal)

    # --- llhttp callbacks -----------------------------------------------------------------
    def on_message_begin(self) -> None:
        self.phase = HEAD
        self.partial = Request("", "", "")
        self.url = b""

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        assert self.partial is not None
        text = value.decode("latin-1").strip(" \t")  # llhttp keeps trailing whitespace
        self.partial.headers.append((name.decode("latin-1").lower(), text))

    def on_headers_complete(self) -> None:
        request, parser = self.partial, self.parser
        assert request is not None
        request.method = parser.get_method().decode("latin-1")
        request.target = self.url.decode("latin-1")
        version = parser.get_http_version()
        if version != "1.1" and version != "1.0":
            status = 505 if version.startswith(("2", "3")) else 400
            raise Refusal(status, "HTTP/1.1 or HTTP/1.0 only", close=True)
        request.version = "HTTP/1.1" if version == "1.1" else "HTTP/1.0"
        request.keep = parser.should_keep_alive()
        length = _body_length(request)
        self.phase, self.head_bytes = BODY, 0
        if self.body:
            self.body = bytearray()
        self.body_since = time.monotonic()
        # a client waiting for ``100 Continue`` (curl, for bodies over 1 KiB) gets it first
        self.continue_due = bool(length) and request.version == "HTTP/1.1"
        if self.continue_due:
            self.continue_due = (request.get("expect") or "").lower() == "100-continue"

    def on_body(self, body: bytes) -> None:
        self.body += body

    def on_message_complete(self) -> None:
        request, self.partial = self.partial, None
        assert request is not None
        if self.body:
            request.body = bytes(self.body)
            self.body = bytearray()
        self.queue.append(request)
        self.phase, self.head_bytes = IDLE, 0
        self.continue_due = False


def parse_head(head: bytes) -> Request:
    """The request a whole head (no body) parses to, or the refusal it gets (tests)."""
    parser = RequestParser()
    parser.feed(head)
    (item,) = parser.queue
    if isinstance(item, Refusal):
        raise item
    return item


def _refusal(exc: BaseException) -> Refusal:
    """The refusal for an exception out of ``feed_data``: a callback's (maybe wrapped as the
    context of a callback error; queued without its frames), or the parser's (400)."""
    for cause in (exc, exc.__context__):
        if isinstance(cause, Refusal):
            return cause.with_traceback(None)
    if "Content-Length overflow" in str(exc):  # more digits than llhttp's 64 bits
        return Refusal(413, "request body too large", close=True)
    return Refusal(400, f"malformed request: {exc}", close=True)


def _body_length(request: Request) -> int:
    """The request body's length, or a refusal, before any of the body is read: a
    Transfer-Encoding (411: the body is read whole, its length must be known), a POST
    without Content-Length (411), one over ``MAX_BODY`` (413). The parser itself refuses a
    Content-Length that is not a number, and several of them."""
    value = request.get("content-length")
    if request.get("transfer-encoding") is not None or (value is None and request.method == "POST"):
        raise Refusal(411, "send a Content-Length", close=True)
    if value is None:
        return 0
    digits = value.strip().lstrip("0") or "0"
    if len(digits) > len(str(MAX_BODY)) or int(digits) > MAX_BODY:
        raise Refusal(413, "request body too large", close=True)
    return int(digits)
