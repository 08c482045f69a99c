"""``hcgraph manifests fetch`` as a library call: which manifests, fetched or read, then
loaded into the graph and the stories that cite them checked (the most-cited first).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import ManifestError
from ..provenance._graph import manifest_id, rows
from ..store import Store
from .fetching import FetchOptions, FetchReport, fetch_manifests, manifest_archive, read_saved
from .replies import LoadReport, load_replies
from .verdicts import SupportReport, check_support

__all__ = ["PullReport", "cited_manifests", "pull_manifests"]

_CITED = """
SELECT ?m (COUNT(?story) AS ?n) WHERE { GRAPH ?story { ?story hc:citesManifest ?m } }
GROUP BY ?m ORDER BY DESC(?n) ?m
"""


@dataclass
class PullReport:
    """What :func:`pull_manifests` did: the fetch (or read), the load, the check."""

    fetch: FetchReport
    load: LoadReport
    support: SupportReport

    @property
    def exit_code(self) -> int:
        """3 when some manifests were not had (not found, failed, unreadable, left over
        the budget, or the run stopped early), else 0."""
        f = self.fetch
        partial = f.not_found or f.failed or f.bad_shape or f.left or f.stopped
        return 3 if partial or self.load.bad_shape else 0

    def lines(self) -> list[str]:
        """The human report."""
        out = list(self.fetch.lines())
        out.append(
            f"graph      {len(self.load.written)} reply graphs written, "
            f"{len(self.load.unchanged)} unchanged"
        )
        return out + self.support.lines()


def cited_manifests(store: Store) -> list[str]:
    """Every manifest id the stories cite, the most-cited first (ties by id)."""
    counted = sorted((-int(n or 0), manifest_id(m or "")) for m, n in rows(store, _CITED))
    return [mid for _, mid in counted]


def pull_manifests(
    store: Store,
    options: FetchOptions | None = None,
    *,
    directory: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> PullReport:
    """Get the reply of every manifest the store cites (from the API, or from saved files in
    ``directory``), record them in the graph, and check the stories' support.

    Raises:
        ManifestError: an in-memory store, a missing ``directory``, no key in the environment
            variable named (:class:`~hcgraph.errors.ManifestAuthError` when the API refuses
            it) — what was fetched before a refusal is kept and loaded by the next run.
    """
    if store.directory is None:
        raise ManifestError("manifest replies need an on-disk store (--store DIR)")
    if directory is not None and not directory.is_dir():
        raise ManifestError(f"--dir {directory}: no such directory")
    ids = cited_manifests(store)
    with manifest_archive(store.directory) as archive:
        if directory is not None:
            fetched = read_saved(ids, directory, archive)
        else:
            fetched = fetch_manifests(ids, archive, options, environ=environ)
    loaded = load_replies(store)
    return PullReport(fetched, loaded, check_support(store))
