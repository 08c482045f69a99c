"""hcgraph: provenance knowledge graphs from Hanging Context stories.

The public API: everything the CLI does is available here by import.

>>> from hcgraph import Store, ingest_paths, export
>>> with Store(None) as store:                      # in-memory
...     report = ingest_paths(store, ["tests/fixtures"])
"""

from ._version import __version__
from .archive import Archive, FetchRecord
from .crawl import CrawlOptions, CrawlReport, FetchPolicy, crawl
from .demo import run_demo
from .errors import (
    CheckError,
    CrawlError,
    ExportError,
    HcgraphError,
    NotAStoryError,
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
from .rebuild import RebuildReport, rebuild
from .stats import graph_stats
from .store import DEFAULT_STORE, Store

__all__ = [
    "DEFAULT_STORE",
    "FORMATS",
    "Archive",
    "CheckError",
    "CrawlError",
    "CrawlOptions",
    "CrawlReport",
    "ExportError",
    "FetchPolicy",
    "FetchRecord",
    "HcgraphError",
    "IngestInfo",
    "IngestReport",
    "NotAStoryError",
    "PushError",
    "QueryError",
    "RebuildReport",
    "Store",
    "StoreError",
    "Story",
    "StoryError",
    "UnknownFormatError",
    "VizError",
    "__version__",
    "crawl",
    "export",
    "graph_stats",
    "ingest_bytes",
    "ingest_paths",
    "map_story",
    "parse_story",
    "rebuild",
    "run_demo",
    "to_networkx",
]
