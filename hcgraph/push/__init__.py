"""Push story graphs to triple stores (SPARQL 1.1 Graph Store Protocol or Update).

>>> from hcgraph import Store
>>> from hcgraph.push import PushOptions, push_graphs, resolve_endpoint
>>> with Store("output/store", read_only=True) as store:            # doctest: +SKIP
...     target = resolve_endpoint("http://127.0.0.1:7878")
...     report = push_graphs(store, target, PushOptions(verify=True))
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
