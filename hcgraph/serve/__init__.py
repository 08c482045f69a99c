"""A read-only SPARQL 1.1 Protocol endpoint over the store, served in-process by hcgraph.

What: :class:`~hcgraph.serve.server.Endpoint` listens on one loopback port (``/query``, GET or
POST, any SPARQL client: YASGUI, SPARQLWrapper, rdflib's SPARQLStore, curl) and evaluates each
query in a small pool of worker processes, each holding the store open read-only
(``pyoxigraph.Store.read_only``) and querying it with ``use_default_graph_as_union`` exactly as
:meth:`hcgraph.store.Store.query` does. Workers listen on no port: they read requests from, and
stream answers to, pipes of the one front process, so no query reaches the store without passing
the guard below.

Why processes: a query in pyoxigraph cannot be interrupted, so a query whose client went
away or whose time (``timeout_s``, default 30 s) ran out is stopped by killing its worker,
which is then replaced; the client of a timed-out query gets ``503`` (or, when part of the
answer was already sent, a connection closed before the final chunk, which every HTTP
client reports as an error, never as a complete document). Answers are streamed in pieces
(64 KiB), small ones sent with a ``Content-Length``.

**Parts.** :mod:`~hcgraph.serve.server` (the :class:`~hcgraph.serve.server.Endpoint`:
socket, fronts, lifetime),
:mod:`~hcgraph.serve.front` (an event loop, the server-wide connection count),
:mod:`~hcgraph.serve.http` (a connection: HTTP/1.1 parsed by llhttp through ``httptools``),
:mod:`~hcgraph.serve.endpoint` (SPARQL 1.1 Protocol routing, Host rules, content
negotiation), :mod:`~hcgraph.serve.pool` (the worker pool) and
:mod:`~hcgraph.serve.worker` (the worker process).

**Guard.** (1) The query may not use ``SERVICE`` (:func:`hcgraph.sparqlguard.uses_service`;
``allow_service`` lifts this): Oxigraph would fetch the URL (SSRF). (2) The ``Host``
header must name the loopback address and port served (``127.0.0.1:PORT``,
``localhost:PORT``, ``[::1]:PORT``), as must the authority of an absolute-form target
(``GET http://host:port/query``): a web page whose host name an attacker re-pointed at
127.0.0.1 sends its own host name and gets 403 (DNS rebinding). A request with two Host
headers, or an HTTP/1.1 request with none, gets 400 (RFC 9112). (3) Only GET/HEAD and POST
to ``/query``; updates get 403.

**Limits.** The request head must arrive within ``read_timeout_s`` (10 s; also the idle
time allowed between keep-alive requests) and the body within as long again; a head over
64 KiB gets 431, a body over 16 MiB 413. At most ``max_connections`` (256) connections are
open at once in the whole server, all fronts together (more get 503); ``workers`` queries
run at once (per front) and the rest wait (inside their timeout). A client that stops
reading an answer for ``read_timeout_s`` is dropped.

**Fresh data.** Before each query a worker looks at the database directory: if its files
changed since the worker opened it and no writer holds the database any more (the lock
file of Oxigraph's RocksDB, checked without taking it), the worker reopens it, so the
first query after an ingest or crawl finishes answers from the new data. While a writer
is running, queries answer from the data as it was when the worker last opened it.
"""

from __future__ import annotations

from .endpoint import negotiate
from .server import DEFAULT_PORT, DEFAULT_TIMEOUT_S, Endpoint

__all__ = ["DEFAULT_PORT", "DEFAULT_TIMEOUT_S", "Endpoint", "negotiate"]
