"""Push story graphs to triple stores (SPARQL 1.1 Graph Store Protocol or Update).

``push_graphs(store, resolve_endpoint(url), PushOptions(...))``; see docs/pushing.md.
"""

from .auth import Credentials, credentials_from_env
from .endpoints import PRESETS, RemoteEndpoint, resolve_endpoint
from .protocols import LocalGraph, local_graphs
from .pusher import (
    BULK_MIN_GRAPHS,
    GraphFailure,
    PushOptions,
    PushReport,
    push_graphs,
    push_graphs_async,
)
from .state import STATE_FILE, PushState
from .verify import Mismatch, VerifyReport, remote_counts

__all__ = [
    "BULK_MIN_GRAPHS",
    "PRESETS",
    "STATE_FILE",
    "Credentials",
    "GraphFailure",
    "LocalGraph",
    "Mismatch",
    "PushOptions",
    "PushReport",
    "PushState",
    "RemoteEndpoint",
    "VerifyReport",
    "credentials_from_env",
    "local_graphs",
    "push_graphs",
    "push_graphs_async",
    "remote_counts",
    "resolve_endpoint",
]
