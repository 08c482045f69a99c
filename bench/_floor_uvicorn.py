"""A floor for ``bench_serve.py``: uvicorn (httptools) answering a fixed ASK, no guard, no store.

The least an ASGI server on uvicorn's fastest HTTP stack does per request; its rate is the
ceiling of any endpoint built on it, before routing, the guard or a query.

Usage (from bench_serve.py)::

    python -m uvicorn _floor_uvicorn:app --app-dir bench --http httptools ...
"""

from __future__ import annotations

from typing import Any

BODY = b'{"head":{},"boolean":true}'
HEADERS = [(b"content-type", b"application/sparql-results+json"), (b"vary", b"Accept")]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The fixed answer to any HTTP request."""
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": BODY})
