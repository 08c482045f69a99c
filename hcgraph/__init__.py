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

# Lazy (PEP 562): each public name is imported on first use, so ``hcgraph --help`` starts fast.
_EXPORTS: dict[str, str] = {
    "ProvenanceError": ".errors",
    "trace": ".provenance",
    "history": ".provenance",
    "audit": ".provenance",
    "Trace": ".provenance",
    "History": ".provenance",
    "AuditReport": ".provenance",
    "AuditOptions": ".provenance",
    "Archive": ".archive",
    "ArchiveError": ".errors",
    "CheckError": ".errors",
    "CheckReport": ".checking",
    "CrawlError": ".errors",
    "CrawlOptions": ".crawling",
    "CrawlReport": ".crawling",
    "DEFAULT_STORE": ".store",
    "DeepReport": ".deepcheck",
    "Document": ".pipeline",
    "Endpoint": ".serve",
    "ExportError": ".errors",
    "FORMATS": ".exporting",
    "FetchPolicy": ".crawling",
    "FetchRecord": ".archive",
    "Finding": ".checking",
    "HcgraphError": ".errors",
    "IngestInfo": ".mapping",
    "InputError": ".errors",
    "IngestReport": ".ingest",
    "NotAStoryError": ".errors",
    "OutputError": ".errors",
    "Outcome": ".pipeline",
    "Pipeline": ".pipeline",
    "PushError": ".errors",
    "PushOptions": ".push",
    "PushReport": ".push",
    "QueryError": ".errors",
    "QueryResult": ".queries",
    "RebuildReport": ".rebuilding",
    "SavedQuery": ".queries",
    "ServeError": ".errors",
    "Store": ".store",
    "StoreBusyError": ".errors",
    "StoreDamagedError": ".errors",
    "StoreError": ".errors",
    "Story": ".model",
    "StoryError": ".errors",
    "UnknownFormatError": ".errors",
    "VizError": ".errors",
    "check": ".checking",
    "citation_graph": ".viz",
    "crawl": ".crawling",
    "deep_check": ".deepcheck",
    "credentials_from_env": ".push",
    "draw_map": ".viz",
    "export": ".exporting",
    "graph_stats": ".stats",
    "ingest_bytes": ".ingest",
    "ingest_paths": ".ingest",
    "load_query": ".queries",
    "map_story": ".mapping",
    "parse_story": ".model",
    "push_graphs": ".push",
    "rebuild": ".rebuilding",
    "remove_story": ".pipeline",
    "resolve_endpoint": ".push",
    "run_demo": ".demo",
    "run_query": ".queries",
    "saved_queries": ".queries",
    "to_networkx": ".project",
    "write_shards": ".dump",
    "export_wacz": ".webarchive",
    "rebuild_from_wacz": ".webarchive",
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
