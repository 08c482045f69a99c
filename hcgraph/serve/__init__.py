"""A read-only SPARQL 1.1 Protocol endpoint over the store, served in-process by hcgraph.

Every query passes the guard in the HTTP front (no ``SERVICE``, a ``Host`` naming the port
served, no updates) before a worker process holding the store read-only runs it; one past
its time, or whose client went, is stopped by killing its worker. What it promises:
docs/queries.md and docs/security.md. Parts: server (socket, lifetime), front (event loop),
http (a connection, parsed by llhttp), endpoint (routing, negotiation), pool, worker.
"""

from __future__ import annotations

from .endpoint import negotiate
from .server import DEFAULT_PORT, DEFAULT_TIMEOUT_S, Endpoint

__all__ = ["DEFAULT_PORT", "DEFAULT_TIMEOUT_S", "Endpoint", "negotiate"]
