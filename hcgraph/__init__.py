"""hcgraph: provenance knowledge graphs from Hanging Context stories.

The public API: everything the CLI does is available here by import.

>>> from hcgraph import Store, ingest_paths, export
>>> with Store(None) as store:                      # in-memory
...     report = ingest_paths(store, ["tests/fixtures"])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports as _lazy_exports
from ._version import __version__ as __version__

# Each public name → its module, imported on first use (PEP 562): ``hcgraph --help`` starts fast.
_EXPORTS: dict[str, str] = {
    name: module
    for module, names in {
        ".archive": "Archive FetchRecord",
        ".checking": "CheckReport Finding check",
        ".crawling": "CrawlOptions CrawlReport FetchPolicy crawl",
        ".deepcheck": "DeepReport deep_check",
        ".demo": "run_demo",
        ".dump": "write_shards",
        ".errors": (
            "ArchiveError CheckError CrawlError ExportError HcgraphError InputError "
            "NotAStoryError OutputError ProvenanceError PushError QueryError ServeError "
            "StoreBusyError StoreDamagedError StoreError StoryError UnknownFormatError VizError"
        ),
        ".exporting": "FORMATS export",
        ".ingest": "IngestReport ingest_bytes ingest_paths",
        ".mapping": "IngestInfo map_story",
        ".model": "Story parse_story",
        ".pipeline": "Document Outcome Pipeline remove_story",
        ".project": "to_networkx",
        ".provenance": "AuditOptions AuditReport History Trace audit history trace",
        ".push": "PushOptions PushReport credentials_from_env push_graphs resolve_endpoint",
        ".queries": "QueryResult SavedQuery load_query run_query saved_queries",
        ".rebuilding": "RebuildReport rebuild",
        ".serve": "Endpoint",
        ".stats": "graph_stats",
        ".store": "DEFAULT_STORE Store",
        ".viz": "citation_graph draw_map",
        ".webarchive": "export_wacz rebuild_from_wacz",
    }.items()
    for name in names.split()
}

#: Every public name (the ``TYPE_CHECKING`` block below repeats them for static checkers).
__all__ = sorted(["__version__", *_EXPORTS])


__getattr__, __dir__ = _lazy_exports(__name__, globals(), _EXPORTS)


if TYPE_CHECKING:
    # ``X as X``: an explicit re-export for mypy, which cannot read the run-time ``__all__``.
    from .archive import Archive as Archive
    from .archive import FetchRecord as FetchRecord
    from .checking import CheckReport as CheckReport
    from .checking import Finding as Finding
    from .checking import check as check
    from .crawling import CrawlOptions as CrawlOptions
    from .crawling import CrawlReport as CrawlReport
    from .crawling import FetchPolicy as FetchPolicy
    from .crawling import crawl as crawl
    from .deepcheck import DeepReport as DeepReport
    from .deepcheck import deep_check as deep_check
    from .demo import run_demo as run_demo
    from .dump import write_shards as write_shards
    from .errors import ArchiveError as ArchiveError
    from .errors import CheckError as CheckError
    from .errors import CrawlError as CrawlError
    from .errors import ExportError as ExportError
    from .errors import HcgraphError as HcgraphError
    from .errors import InputError as InputError
    from .errors import NotAStoryError as NotAStoryError
    from .errors import OutputError as OutputError
    from .errors import ProvenanceError as ProvenanceError
    from .errors import PushError as PushError
    from .errors import QueryError as QueryError
    from .errors import ServeError as ServeError
    from .errors import StoreBusyError as StoreBusyError
    from .errors import StoreDamagedError as StoreDamagedError
    from .errors import StoreError as StoreError
    from .errors import StoryError as StoryError
    from .errors import UnknownFormatError as UnknownFormatError
    from .errors import VizError as VizError
    from .exporting import FORMATS as FORMATS
    from .exporting import export as export
    from .ingest import IngestReport as IngestReport
    from .ingest import ingest_bytes as ingest_bytes
    from .ingest import ingest_paths as ingest_paths
    from .mapping import IngestInfo as IngestInfo
    from .mapping import map_story as map_story
    from .model import Story as Story
    from .model import parse_story as parse_story
    from .pipeline import Document as Document
    from .pipeline import Outcome as Outcome
    from .pipeline import Pipeline as Pipeline
    from .pipeline import remove_story as remove_story
    from .project import to_networkx as to_networkx
    from .provenance.auditing import AuditOptions as AuditOptions
    from .provenance.auditing import AuditReport as AuditReport
    from .provenance.auditing import audit as audit
    from .provenance.tracing import Trace as Trace
    from .provenance.tracing import trace as trace
    from .provenance.versions import History as History
    from .provenance.versions import history as history
    from .push import PushOptions as PushOptions
    from .push import PushReport as PushReport
    from .push import credentials_from_env as credentials_from_env
    from .push import push_graphs as push_graphs
    from .push import resolve_endpoint as resolve_endpoint
    from .queries import QueryResult as QueryResult
    from .queries import SavedQuery as SavedQuery
    from .queries import load_query as load_query
    from .queries import run_query as run_query
    from .queries import saved_queries as saved_queries
    from .rebuilding import RebuildReport as RebuildReport
    from .rebuilding import rebuild as rebuild
    from .serve import Endpoint as Endpoint
    from .stats import graph_stats as graph_stats
    from .store import DEFAULT_STORE as DEFAULT_STORE
    from .store import Store as Store
    from .viz import citation_graph as citation_graph
    from .viz import draw_map as draw_map
    from .webarchive import export_wacz as export_wacz
    from .webarchive import rebuild_from_wacz as rebuild_from_wacz
