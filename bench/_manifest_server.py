"""A fast loopback manifest API for ``bench_manifests_fetch.py``: generated replies, from memory.

asyncio ``Protocol`` callbacks in one process (no tasks per connection): it reads each
request head, checks the bearer key (a wrong one is a 401), and answers
``GET /manifests/by-id/{id}`` with that manifest's pre-rendered reply (or a 404), keeping the
connection open. Cheap on purpose, so the client's work is what the bench measures.

Usage::

    python bench/_manifest_server.py PORT KEY COUNT     # prints the port once listening
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import ClassVar

PREFIX = b"/manifests/by-id/"
BASE_ID = 1_000_000_000_000_000_000


def manifest_id(n: int) -> str:
    return str(BASE_ID + n)


def reply_body(ident: str, claims: int = 5) -> bytes:
    """A well-shaped reply (the shape of ``shared/fixtures/manifest-reply.json``), ~1 KB."""
    doc = {
        "manifest_id": ident,
        "source": {
            "name": "arxiv",
            "url": f"https://arxiv.org/abs/2610.{ident[-5:]}",
            "title": f"A paper about manifest {ident}",
            "published_date": "2026-10-19",
        },
        "signal": {
            "claims": [
                {
                    "claim_id": f"{ident[:-1]}{k}",
                    "text": f"Model M-{k} reaches {70 + k}.{k}% on Bench-{k} (manifest {ident}).",
                }
                for k in range(claims)
            ]
        },
        "brief": f"A preprint, manifest {ident}, with {claims} claims.",
    }
    return json.dumps(doc, indent=1).encode()


def _answer(status: bytes, body: bytes) -> bytes:
    return b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
        status,
        len(body),
        body,
    )


def _is_key(line: bytes, auth: bytes) -> bool:
    name, _, value = line.partition(b":")
    return name.strip().lower() == b"authorization" and value.strip() == auth


class Api(asyncio.Protocol):
    answers: ClassVar[dict[bytes, bytes]] = {}
    auth: ClassVar[bytes] = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: asyncio.Transport = transport  # type: ignore[assignment]
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) != -1:
            head, self.buffer = self.buffer[:end], self.buffer[end + 4 :]
            lines = head.split(b"\r\n")
            target = lines[0].split(b" ")[1] if lines[0].count(b" ") == 2 else b""
            keyed = any(_is_key(line, self.auth) for line in lines[1:])
            if not keyed:
                self.transport.write(_answer(b"401 Unauthorized", b'{"error":"unauthorized"}'))
                continue
            body = self.answers.get(target)
            if body is None:
                self.transport.write(_answer(b"404 Not Found", b'{"error":"not found"}'))
            else:
                self.transport.write(body)


async def main(port: int, key: str, count: int) -> None:
    Api.auth = b"Bearer " + key.encode()
    Api.answers = {
        PREFIX + manifest_id(n).encode(): _answer(b"200 OK", reply_body(manifest_id(n)))
        for n in range(count)
    }
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Api, "127.0.0.1", port, backlog=512)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], int(sys.argv[3])))
