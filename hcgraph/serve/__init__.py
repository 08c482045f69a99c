"""A read-only SPARQL 1.1 Protocol endpoint over the store, served in-process by hcgraph.

Every query passes the guard in the HTTP front (no ``SERVICE``, a ``Host`` naming the port
served, no updates) before a worker process holding the store read-only runs it; one past
its time, or whose client went, is stopped by killing its worker. What it promises:
docs/queries.md and docs/security.md.

**Parts.** :mod:`~hcgraph.serve.server` (socket, fronts, lifetime),
:mod:`~hcgraph.serve.front` (an event loop, the server-wide connection count),
:mod:`~hcgraph.serve.http` (a connection), :mod:`~hcgraph.serve.parsing` (HTTP/1.1 by
llhttp), :mod:`~hcgraph.serve.endpoint` (routing, Host rules, content negotiation),
:mod:`~hcgraph.serve.pool` (the worker pool), :mod:`~hcgraph.serve.worker` (a worker).
"""

from __future__ import annotations

from .endpoint import negotiate
from .server import DEFAULT_PORT, DEFAULT_TIMEOUT_S, Endpoint

__all__ = ["DEFAULT_PORT", "DEFAULT_TIMEOUT_S", "Endpoint", "negotiate"]
