"""One client connection of ``hcgraph serve``: requests answered one at a time, in order.

The request stream is parsed by llhttp (``httptools``: Node.js's parser, uvicorn's), strict
where RFC 9112 is; :class:`RequestParser` adds a size limit on the head, a length limit on
the body, HTTP/1.0 and 1.1 only, no chunked bodies. :class:`Conn` adds time limits, one
request answered at a time (pipelined ones wait their turn), ``100 Continue``, keep-alive and
the answer's framing (a length, or chunks). A :class:`Conn` is an asyncio ``Protocol``
(callbacks, no task, no stream); its time limits are checked by the front's watchdog.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import time
from typing import TYPE_CHECKING

import httptools

from .endpoint import MAX_BODY, MAX_HEAD, Extra, Query, Refusal, Request
from .worker import DATA, END, START, WHOLE, encode_query, memory_message

if TYPE_CHECKING:
    from .front import Front
    from .pool import Worker

_PIPELINED = 16  # requests parsed ahead of the one answered before reading pauses
_NO_CACHE: Extra = (("Cache-Control", "no-cache"),)
_VARY: Extra = (("Vary", "Accept"),)


class RequestParser:
    """Bytes in (:meth:`feed`), ``Request`` objects or a final ``Refusal`` out
    (``queue``). ``in_body``: a request's head is read, its body awaited; ``body_since``: when
    the head of the request whose body is awaited arrived; ``continue_due``: that request's
    client waits for ``100 Continue`` before it sends the body."""

    def __init__(self) -> None:
        self.parser = httptools.HttpRequestParser(self)
        self.in_body = False
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
        if not self.in_body:
            self.head_bytes += len(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:  # an Upgrade or CONNECT: no HTTP/1.1 after it
            self.broken = True
            if self.queue and isinstance(self.queue[-1], Request):
                self.queue[-1].keep = False
        except Exception as exc:  # the parser's errors, and a Refusal from a callback
            self._fail(_refusal(exc))
        if not self.in_body and self.head_bytes > MAX_HEAD and not self.broken:
            self._fail(Refusal(431, "request head too large", close=True))

    def _fail(self, refusal: Refusal) -> None:
        """The stream cannot be parsed further: the requests before are answered, then this."""
        self.broken = True
        self.queue.append(refusal)

    # --- llhttp callbacks -----------------------------------------------------------------
    def on_message_begin(self) -> None:
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
        self.in_body, self.head_bytes = True, 0
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
        self.in_body, self.head_bytes = False, 0
        self.continue_due = False


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
    value, transfer = _framing(request)
    if transfer is not None or (value is None and request.method == "POST"):
        raise Refusal(411, "send a Content-Length", close=True)
    if value is None:
        return 0
    digits = value.strip().lstrip("0") or "0"
    if len(digits) > len(str(MAX_BODY)) or int(digits) > MAX_BODY:
        raise Refusal(413, "request body too large", close=True)
    return int(digits)


def _framing(request: Request) -> tuple[str | None, str | None]:
    """The request's (first) Content-Length and Transfer-Encoding, in one look."""
    value = transfer = None
    for key, text in request.headers:
        if key == "content-length" and value is None:
            value = text
        elif key == "transfer-encoding":
            transfer = text
    return value, transfer


@functools.lru_cache(maxsize=64)  # a worker gives few kinds of answer
def answer_head(head: bytes) -> tuple[int, str]:
    """The status and media type of a worker's answer head (``STATUS MEDIA-TYPE``)."""
    status, _, media = head.decode("latin-1").partition(" ")
    return int(status), media


class Conn(asyncio.Protocol):
    """One client connection: parse requests, answer them one at a time, in order."""

    transport: asyncio.Transport

    def __init__(self, front: Front) -> None:
        self.front = front
        self.since = time.monotonic()  # start of the wait for a head, or for a body
        self.paused_since: float | None = None  # the client stopped reading our answer
        self.eof = False
        self.closed = False
        self.left = 0  # closing: bytes of answers the client has not taken yet
        self.advancing = False
        self.reading = True
        self.request: Request | None = None  # the request being answered
        self.parser = RequestParser()
        # the query in flight
        self.worker: Worker | None = None
        self.waiting = False  # queued for a worker
        self.message = b""
        self.deadline: float | None = None
        self.reason = ""
        self.sent = False

    # --- asyncio callbacks ----------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        front = self.front
        if front.stopping.is_set():  # accepted as the server stops: its connections are closed
            self.closed = True
            self.transport.abort()
            return
        if len(front.conns) >= front.max_connections:
            self._refuse(Refusal(503, "too many connections; retry", close=True))
            front.loop.call_later(1.0, self.transport.abort)
            return
        front.conns.add(self)

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        parser = self.parser
        parser.feed(data)
        if parser.continue_due:
            self._send_continue()
        if len(parser.queue) >= _PIPELINED and self.reading:
            self.reading = False
            self.transport.pause_reading()
        self._advance()

    def eof_received(self) -> bool:
        self.eof = True
        self._advance()
        return True  # half-open: an answer under way may still go out

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.front.conns.discard(self)  # its place is free again
        self.waiting = False
        worker = self.worker
        if worker is not None and worker.head is self:  # its query is of no use now:
            self.reason = self.reason or "gone"  # stopped, the worker replaced
            self.front.pool.fail(worker)
        elif worker is not None:  # not started: its answer is thrown away
            self.front.pool.drop(self)

    def pause_writing(self) -> None:
        self.paused_since = time.monotonic()
        if self.worker is not None and self.worker.head is self:
            self.worker.pause()

    def resume_writing(self) -> None:
        self.paused_since = None
        if self.worker is not None:
            if self.worker.head is self:
                self.worker.listen()
        else:
            self._advance()

    # --- the watchdog ---------------------------------------------------------------------
    def tick(self, now: float) -> None:
        """A client that stopped reading is dropped (also from a closing connection), a head
        or a body late ends the connection; a query past its deadline gets 503 if still
        queued, else its worker is killed, as is the worker of a query whose client went."""
        limit = self.front.read_timeout_s
        if self.closed:  # closing, the rest of its answers not yet taken by the client
            self._tick_closing(now, limit)
        elif self.paused_since is not None and now - self.paused_since >= limit:
            self._abort()  # it stopped reading
        elif self.request is None:  # free: waiting for a request head or body
            body = self.parser.in_body
            if now - (max(self.since, self.parser.body_since) if body else self.since) < limit:
                return
            if body:
                self._refuse(Refusal(400, "the request body did not arrive in time", close=True))
            else:
                self._close()
        else:
            self._tick_query(now)

    def _tick_closing(self, now: float, limit: float) -> None:
        """A closing connection stays (and holds its place) until the client has taken the
        rest of its answers: it is dropped once it takes none of them for ``limit`` s."""
        left = self.transport.get_write_buffer_size()
        if left < self.left:
            self.left, self.since = left, now
        elif now - self.since >= limit:
            self._abort()

    def _tick_query(self, now: float) -> None:
        late = self.deadline is not None and now >= self.deadline
        worker = self.worker
        if self.waiting:  # queued for a worker
            if late:
                self.waiting = False
                self._timed_out()
        elif worker is None or self.reason or not (late or self.eof):
            return
        elif worker.head is self:  # running
            self._stop_query(worker, late)
        else:  # in a worker's batch, not started: dropped from it
            self.front.pool.drop(self)
            if late:
                self._timed_out()
            else:
                self._abort()

    def _stop_query(self, worker: Worker, late: bool) -> None:
        """Kill the worker of a query past its deadline (``late``) or whose client went."""
        self.reason = "timeout" if late else "gone"
        worker.kill()
        worker.listen()  # to see its pipe end, even if the client is slow
        if late and self.sent:
            self._abort()  # a half answer must not look whole

    # --- requests -------------------------------------------------------------------------
    def _close(self) -> None:
        self.closed = True
        self.since, self.left = time.monotonic(), self.transport.get_write_buffer_size()
        self.transport.close()

    def _abort(self) -> None:
        self.closed = True
        self.transport.abort()

    def _advance(self) -> None:
        """Answer the parsed requests in order while the connection is free for one (not
        busy with a query, not waiting for a slow client to read, not already doing so)."""
        if self.advancing:
            return
        self.advancing = True
        try:
            queue = self.parser.queue
            while not self.closed and self.request is None and self.paused_since is None:
                if not queue:
                    if self.eof or self.parser.broken:
                        self._close()  # nothing more will come, or can be read
                    elif not self.reading:
                        self.reading = True
                        self.transport.resume_reading()
                    return
                item = queue.popleft()
                if isinstance(item, Refusal):
                    self._refuse(item)
                else:
                    self._handle(item)
        finally:
            self.advancing = False

    def _send_continue(self) -> None:
        """``100 Continue`` to a client waiting for it, once its request is the next one."""
        parser = self.parser
        if parser.continue_due and self.request is None and not parser.queue and not self.closed:
            parser.continue_due = False
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def _handle(self, request: Request) -> None:
        self.request = request
        try:
            routed = self.front.routes.route(request)
        except Refusal as refusal:
            self._refuse(refusal)
            return
        if not isinstance(routed, Query):
            media, data = routed
            self._reply(200, media, data, request.keep, _NO_CACHE)
            return
        timeout = self.front.timeout_s
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.reason, self.sent = "", False
        self.message = encode_query(routed.text, routed.accept)
        self.front.pool.take(self)

    @property
    def head_only(self) -> bool:
        """The request is a HEAD: its answer goes without a body."""
        return self.request is not None and self.request.method == "HEAD"

    @property
    def chunked(self) -> bool:
        """A streamed answer to the request goes in chunks (HTTP/1.1), not to the close."""
        return self.request is not None and self.request.version == "HTTP/1.1"

    def _reply(self, status: int, media: str, body: bytes, keep: bool, extra: Extra) -> None:
        """A whole answer, sent with its length (the head only, to a HEAD); then the next
        request, or close."""
        head = self.front.routes.whole_head(status, media, len(body), extra, not keep)
        self.transport.write(head if self.head_only else head + body)
        self._done(keep)

    def _refuse(self, refusal: Refusal) -> None:
        """A one-line plain answer instead of (or to) the query."""
        request = self.request
        keep = not refusal.close and request is not None and request.keep
        allow = (("Allow", refusal.allow),) if refusal.allow else ()
        body = (refusal.message + "\n").encode()
        self._reply(refusal.status, "text/plain; charset=utf-8", body, keep, allow)

    def _done(self, keep: bool) -> None:
        """The answer is written: on to the next request, or close."""
        self.request = None
        self.deadline = None
        if not keep:
            self._close()
            return
        self.since = time.monotonic()
        self._send_continue()
        self._advance()

    def _timed_out(self) -> None:
        timeout = self.front.timeout_s
        message = f"the query did not finish within {timeout:g} s (hcgraph serve --timeout-s)"
        self._refuse(Refusal(503, message))

    # --- the query in a worker ------------------------------------------------------------
    def _release(self) -> None:
        """The answer is read whole: the worker goes on to the next of its batch."""
        worker, self.worker = self.worker, None
        assert worker is not None
        self.front.pool.answered(worker)

    def frame(self, kind: bytes, payload: bytes) -> None:
        """One frame from the worker: a whole answer (sent with its length), or a streamed
        answer's start, data and end; then the next request."""
        if kind in (WHOLE, START) and not self.sent:
            head, _, body = payload.partition(b"\n")
            status, media = answer_head(head)
            if kind == START:
                self._stream(status, media, body)
            else:
                self._whole(status, media, body)
        elif kind == DATA and self.sent:
            self._data(payload)
        elif kind == END and self.sent:
            self._data(payload)
            self._end()
        else:
            assert self.worker is not None
            self.front.pool.fail(self.worker)

    def _whole(self, status: int, media: str, body: bytes) -> None:
        """A short answer: sent with its length."""
        self._release()
        if not self.closed and self.request is not None:
            self._reply(status, media, body, self.request.keep, _VARY if status == 200 else ())

    def _end(self) -> None:
        """A streamed answer is all sent: the last chunk, then the next request."""
        self._release()
        if not self.closed and self.request is not None:
            if self.chunked and not self.head_only:
                self.transport.write(b"0\r\n\r\n")
            self._done(self.request.keep)

    def _stream(self, status: int, media: str, body: bytes) -> None:
        """A long answer's head and first piece: streamed (chunked on HTTP/1.1; to the close
        on 1.0)."""
        if self.closed or self.request is None:
            return
        headers = [("Content-Type", media), ("Vary", "Accept")]
        if self.chunked:
            headers.append(("Transfer-Encoding", "chunked"))
        self.request.keep = self.request.keep and self.chunked
        self.transport.write(self.front.routes.head(status, headers, not self.request.keep))
        self.sent = True
        self._data(body)

    def _data(self, payload: bytes) -> None:
        """A piece of a streamed answer."""
        if not self.closed and payload and not self.head_only:
            write = self.transport.write
            write(b"%x\r\n%s\r\n" % (len(payload), payload) if self.chunked else payload)

    def worker_failed(self, out_of_memory: bool = False) -> None:
        """Its worker ended (killed by the watchdog, crashed, ran out of memory, or sent
        nonsense)."""
        self.worker = None
        if self.closed:
            return
        if self.reason == "timeout" and not self.sent:
            self._timed_out()
        elif out_of_memory and not self.sent:
            self._refuse(Refusal(503, memory_message(self.front.pool.query_memory)))
        elif not self.sent and not self.reason:
            self._refuse(Refusal(500, "the query worker failed on this query"))
        else:
            self._abort()
