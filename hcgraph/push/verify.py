"""What the server holds: its graphs' names, and ``--verify``'s triple counts per graph.

The queries use ``GRAPH ?g`` (whatever the server's default graph is); graphs the local store
does not have are ignored (a shared server may hold other data).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx
import pyoxigraph as ox

from ..errors import PushError, first_line
from .endpoints import RemoteEndpoint

__all__ = ["Mismatch", "VerifyReport", "compare_counts", "remote_counts", "remote_graphs"]

_COUNTS = "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g"
_GRAPHS = "SELECT ?g WHERE { GRAPH ?g { } }"  # empty graphs too


@dataclass(frozen=True)
class Mismatch:
    """A graph whose remote triple count differs (``remote`` is 0 when it is missing)."""

    graph: str
    local: int
    remote: int


@dataclass
class VerifyReport:
    """How many graphs were compared, which differ; ``error``: the count query failed
    (nothing was compared)."""

    checked: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return not self.mismatches and self.error is None


def compare_counts(local: Mapping[str, int], remote: Mapping[str, int]) -> VerifyReport:
    """Compare per-graph triple counts; every local graph must have the same remote count."""
    differ = [Mismatch(g, n, remote.get(g, 0)) for g, n in sorted(local.items())]
    return VerifyReport(len(local), [m for m in differ if m.local != m.remote])


async def remote_counts(client: httpx.AsyncClient, endpoint: RemoteEndpoint) -> dict[str, int]:
    """Triples per named graph on the server (raises PushError as :func:`remote_graphs`)."""
    counts: dict[str, int] = {}
    for graph, n in await _select(client, endpoint, _COUNTS, ("g", "n"), "verify: "):
        if isinstance(graph, ox.NamedNode) and isinstance(n, ox.Literal):
            counts[graph.value] = int(n.value)
    return counts


async def remote_graphs(client: httpx.AsyncClient, endpoint: RemoteEndpoint) -> set[str]:
    """The names of the graphs the server holds (raises PushError: the server cannot be
    reached, answers an HTTP error or not with SPARQL JSON results)."""
    rows = await _select(client, endpoint, _GRAPHS, ("g",), "listing the server's graphs: ")
    return {g.value for (g,) in rows if isinstance(g, ox.NamedNode)}


async def _select(
    client: httpx.AsyncClient,
    endpoint: RemoteEndpoint,
    query: str,
    variables: tuple[str, ...],
    doing: str,
) -> list[tuple[object, ...]]:
    """The rows (``variables`` in order) of a SELECT on the server's query endpoint; a
    failure (as :func:`remote_graphs` lists them) is a PushError prefixed ``doing``."""
    url = endpoint.query_url
    try:
        response = await client.post(
            url, data={"query": query}, headers={"Accept": "application/sparql-results+json"}
        )
    except httpx.TransportError as exc:
        raise PushError(f"{doing}cannot reach {url}: {first_line(exc)}") from exc
    except httpx.InvalidURL as exc:  # httpx resolves a Location (javascript:…) and fails
        raise PushError(f"{doing}{url} redirects to a URL httpx cannot read: {exc}") from exc
    if response.status_code >= 300:
        raise PushError(f"{doing}HTTP {response.status_code} from {url}")
    try:
        answer = ox.parse_query_results(response.content, ox.QueryResultsFormat.JSON)
        if not isinstance(answer, ox.QuerySolutions):
            raise ValueError("a boolean answer")
        return [tuple(row[v] for v in variables) for row in answer]
    except (SyntaxError, ValueError, KeyError) as exc:
        raise PushError(f"{doing}{url} did not answer with SPARQL JSON results") from exc
