"""hcgraph: provenance knowledge graphs from Hanging Context stories.

The public API: everything the CLI does is available here by import.

>>> from hcgraph import Store, ingest_paths, export
>>> with Store(None) as store:                      # in-memory
...     report = ingest_paths(store, ["tests/fixtures"])
"""

from ._version import __version__
from .archive import Archive, FetchRecord
from .check import CheckReport, Finding, check
from .crawl import CrawlOptions, CrawlReport, FetchPolicy, crawl
from .demo import run_demo
from .dump import write_shards
from .errors import (
    CheckError,
    CrawlError,
    ExportError,
    HcgraphError,
    NotAStoryError,
    ProvenanceError,
    PushError,
    QueryError,
    StoreError,
    StoryError,
    UnknownFormatError,
    VizError,
)
from .export import FORMATS, export
from .ingest import IngestReport, ingest_bytes, ingest_paths
from .mapping import IngestInfo, map_story
from .model import Story, parse_story
from .project import to_networkx
from .provenance import AuditOptions, AuditReport, History, Trace, audit, history, trace
from .push import PushOptions, PushReport, credentials_from_env, push_graphs, resolve_endpoint
from .queries import QueryResult, SavedQuery, load_query, run_query, saved_queries
from .rebuild import RebuildReport, rebuild
from .serve import Endpoint
from .stats import graph_stats
from .store import DEFAULT_STORE, Store
from .viz import citation_graph, draw_map

__all__ = [
    "DEFAULT_STORE",
    "FORMATS",
    "Archive",
    "AuditOptions",
    "AuditReport",
    "CheckError",
    "CheckReport",
    "CrawlError",
    "CrawlOptions",
    "CrawlReport",
    "Endpoint",
    "ExportError",
    "FetchPolicy",
    "FetchRecord",
    "Finding",
    "HcgraphError",
    "History",
    "IngestInfo",
    "IngestReport",
    "NotAStoryError",
    "ProvenanceError",
    "PushError",
    "PushOptions",
    "PushReport",
    "QueryError",
    "QueryResult",
    "RebuildReport",
    "SavedQuery",
    "Store",
    "StoreError",
    "Story",
    "StoryError",
    "Trace",
    "UnknownFormatError",
    "VizError",
    "__version__",
    "audit",
    "check",
    "citation_graph",
    "crawl",
    "credentials_from_env",
    "draw_map",
    "export",
    "graph_stats",
    "history",
    "ingest_bytes",
    "ingest_paths",
    "load_query",
    "map_story",
    "parse_story",
    "push_graphs",
    "rebuild",
    "resolve_endpoint",
    "run_demo",
    "run_query",
    "saved_queries",
    "to_networkx",
    "trace",
    "write_shards",
]
