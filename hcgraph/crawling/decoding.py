"""Response bodies decoded in bounded pieces and capped: a compression bomb cannot fill memory.

httpx decodes each network chunk whole (a 483-byte brotli body can become 300 MB in one
call). Here raw bytes are decoded at most ``PIECE`` bytes of output per step, and
:class:`Capped` (the crawler's and the manifest fetcher's body reader) stops once its cap is
passed. Supported: ``gzip``/``x-gzip``, ``deflate`` (zlib-wrapped or raw), ``br``,
``identity``, and any chain of them (undone right to left).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Iterable, Iterator

import httpx

__all__ = ["ACCEPT_ENCODING", "PIECE", "Capped", "DecodeError", "Decoder", "TooLarge"]

#: What the crawler asks for (only encodings it can decode in bounded pieces).
ACCEPT_ENCODING = "gzip, deflate, br"
#: Largest piece of decoded output produced at once.
PIECE = 64 * 1024


class DecodeError(Exception):
    """The body is not valid for its Content-Encoding, or the encoding is unknown."""


class _Zlib:
    """One coding (as :class:`_Brotli`): ``feed`` raw bytes for bounded pieces, ``flush`` last."""

    def __init__(self, wbits: int, *, raw_fallback: bool = False) -> None:
        self.d = zlib.decompressobj(wbits)
        self.fallback = raw_fallback  # "deflate" is often sent without its zlib header

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            try:
                out = self.d.decompress(data, PIECE)
            except zlib.error as exc:
                if not self.fallback:
                    raise DecodeError(f"invalid compressed data: {exc}") from None
                self.d = zlib.decompressobj(-zlib.MAX_WBITS)
                self.fallback = False
                continue
            self.fallback = False
            yield out
            data = self.d.unconsumed_tail

    def flush(self) -> bytes:
        return self.d.flush(PIECE)  # all input is consumed: at most one piece is left


class _Brotli:
    def __init__(self) -> None:
        import brotli

        self.brotli = brotli
        self.d = brotli.Decompressor()

    def feed(self, data: bytes) -> Iterator[bytes]:
        try:
            out = self.d.process(data, output_buffer_limit=PIECE)
            # A full piece may leave output behind: drain it (empty input) until none comes.
            while out:
                yield out
                if self.d.is_finished():
                    break
                out = self.d.process(b"", output_buffer_limit=PIECE)
        except self.brotli.error as exc:
            raise DecodeError(f"invalid brotli data: {exc}") from None

    def flush(self) -> bytes:
        return b""


_MAKERS: dict[str, Callable[[], _Zlib | _Brotli]] = {
    "gzip": lambda: _Zlib(16 + zlib.MAX_WBITS),
    "x-gzip": lambda: _Zlib(16 + zlib.MAX_WBITS),
    "deflate": lambda: _Zlib(zlib.MAX_WBITS, raw_fallback=True),
    "br": _Brotli,
}


class Decoder:
    """Undo a ``Content-Encoding`` header's codings, piece by piece.

    Raises:
        DecodeError: an encoding not in the table (so never silently kept encoded).
    """

    def __init__(self, content_encoding: str | None) -> None:
        names = [n.strip().lower() for n in (content_encoding or "").split(",")]
        names = [n for n in names if n not in ("", "identity")]
        unknown = [n for n in names if n not in _MAKERS]
        if unknown:
            raise DecodeError(f"unsupported Content-Encoding {', '.join(unknown)}")
        # The last coding applied is listed last, so it is undone first.
        self._layers = [_MAKERS[n]() for n in reversed(names)]

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decoded pieces (each at most ``PIECE`` bytes per layer) for the next raw chunk."""
        return self._through(0, data)

    def flush(self) -> Iterator[bytes]:
        """Whatever the decoders still hold once the raw body has ended."""
        for n, layer in enumerate(self._layers):
            tail = layer.flush()
            if tail:
                yield from self._through(n + 1, tail)

    def _through(self, layer: int, data: bytes) -> Iterator[bytes]:
        if layer == len(self._layers):
            if data:
                yield data
            return
        for piece in self._layers[layer].feed(data):
            if piece:
                yield from self._through(layer + 1, piece)


class TooLarge(Exception):
    """A body past its cap."""


class Capped:
    """One response's body, decoded in bounded pieces and refused (:class:`TooLarge`) once
    past ``cap`` bytes; an unencoded body whose Content-Length is over the cap is refused
    before a byte is read. ``refusals`` are those two messages (``{declared}``, ``{cap}``
    filled in); past ``deadline`` (``time.monotonic()``) reading raises ``TimeoutError``.
    With ``truncate`` a longer body is not refused: its first ``cap`` bytes are the body
    (robots.txt: RFC 9309 lets a crawler read only the start of a large one)."""

    def __init__(
        self,
        resp: httpx.Response,
        cap: int,
        refusals: tuple[str, str],
        deadline: float | None = None,
        *,
        truncate: bool = False,
    ) -> None:
        declared = resp.headers.get("content-length", "")
        coding = resp.headers.get("content-encoding")
        encoded = (coding or "").lower() not in ("", "identity")
        if declared.isdigit() and int(declared) > cap and not encoded and not truncate:
            raise TooLarge(refusals[0].format(declared=declared, cap=cap))
        self.resp, self.cap, self.past, self.deadline = resp, cap, refusals[1], deadline
        self.truncate = truncate
        self.decoder = Decoder(coding)
        self.chunks: list[bytes] = []
        self.total = 0

    def read(self) -> bytes:
        """The whole body, read from a synchronous stream."""
        consumed = self.resp.is_stream_consumed
        if not consumed and any(self._feed(raw) for raw in self.resp.iter_raw()):
            return b"".join(self.chunks)
        return self._body([self.resp.content] if consumed else self.decoder.flush())

    async def aread(self) -> bytes:
        """The whole body, read from an asynchronous stream."""
        if self.resp.is_stream_consumed:
            return self._body([self.resp.content])
        async for raw in self.resp.aiter_raw():
            if self._feed(raw):
                return b"".join(self.chunks)
        return self._body(self.decoder.flush())

    def _feed(self, raw: bytes) -> bool:
        """Decode and keep a raw chunk; True once a truncating reader has its ``cap`` bytes."""
        self._check_deadline()  # per raw chunk: some decode to nothing (a gzip header)
        return self._take(self.decoder.feed(raw))

    def _body(self, last: Iterable[bytes]) -> bytes:
        self._take(last)
        return b"".join(self.chunks)

    def _take(self, pieces: Iterable[bytes]) -> bool:
        for piece in pieces:
            self.total += len(piece)
            if self.total > self.cap:
                if self.truncate:
                    self.chunks.append(piece[: len(piece) - (self.total - self.cap)])
                    return True
                raise TooLarge(self.past.format(cap=self.cap))
            self._check_deadline()
            self.chunks.append(piece)
        return False

    def _check_deadline(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise TimeoutError
