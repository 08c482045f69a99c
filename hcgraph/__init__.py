"""hcgraph: provenance knowledge graphs from Hanging Context stories.

The public API: everything the CLI does is available here by import.

>>> from hcgraph import Store, ingest_paths, export
>>> with Store(None) as store:                      # in-memory
...     report = ingest_paths(store, ["tests/fixtures"])
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from ._version import __version__

# The package is lazy (PEP 562): ``import hcgraph`` loads no submodule; each public name is
# imported on first use, so ``hcgraph --help`` and small scripts start fast.
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
    "CheckError": ".errors",
    "CheckReport": ".check",
    "CrawlError": ".errors",
    "CrawlOptions": ".crawl",
    "CrawlReport": ".crawl",
    "DEFAULT_STORE": ".store",
    "Document": ".pipeline",
    "Endpoint": ".serve",
    "ExportError": ".errors",
    "FORMATS": ".export",
    "FetchPolicy": ".crawl",
    "FetchRecord": ".archive",
    "Finding": ".check",
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
    "RebuildReport": ".rebuild",
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
    "check": ".check",
    "citation_graph": ".viz",
    "crawl": ".crawl",
    "credentials_from_env": ".push",
    "draw_map": ".viz",
    "export": ".export",
    "graph_stats": ".stats",
    "ingest_bytes": ".ingest",
    "ingest_paths": ".ingest",
    "load_query": ".queries",
    "map_story": ".mapping",
    "parse_story": ".model",
    "push_graphs": ".push",
    "rebuild": ".rebuild",
    "remove_story": ".pipeline",
    "resolve_endpoint": ".push",
    "run_demo": ".demo",
    "run_query": ".queries",
    "saved_queries": ".queries",
    "to_networkx": ".project",
    "write_shards": ".dump",
}

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
    "Document",
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
    "Outcome",
    "OutputError",
    "Pipeline",
    "ProvenanceError",
    "PushError",
    "PushOptions",
    "PushReport",
    "QueryError",
    "QueryResult",
    "RebuildReport",
    "SavedQuery",
    "ServeError",
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
    "remove_story",
    "resolve_endpoint",
    "run_demo",
    "run_query",
    "saved_queries",
    "to_networkx",
    "trace",
    "write_shards",
]


class _Package(types.ModuleType):
    """The package object: keeps a public function when its submodule of the same name loads.

    Importing ``hcgraph.export`` (the CLI does) makes the import system set the package's
    ``export`` attribute to that submodule, which would shadow the lazy ``export`` function
    and break ``from hcgraph import export``. Here the function wins, as it did when the
    package imported everything eagerly; the submodule stays in ``sys.modules``. (A
    sub-package, ``hcgraph.crawl``, keeps its attribute: ``import hcgraph.crawl.process``
    must go through it.)
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if (
            isinstance(value, types.ModuleType)
            and _EXPORTS.get(name) == f".{name}"
            and value.__name__ == f"{__name__}.{name}"
            and not hasattr(value, "__path__")  # a sub-package stays importable through it
            and hasattr(value, name)
        ):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hcgraph' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:
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
        OutputError,
        ProvenanceError,
        PushError,
        QueryError,
        ServeError,
        StoreError,
        StoryError,
        UnknownFormatError,
        VizError,
    )
    from .export import FORMATS, export
    from .ingest import IngestReport, ingest_bytes, ingest_paths
    from .mapping import IngestInfo, map_story
    from .model import Story, parse_story
    from .pipeline import Document, Outcome, Pipeline, remove_story
    from .project import to_networkx
    from .provenance.audit import AuditOptions, AuditReport, audit
    from .provenance.history import History, history
    from .provenance.trace import Trace, trace
    from .push import PushOptions, PushReport, credentials_from_env, push_graphs, resolve_endpoint
    from .queries import QueryResult, SavedQuery, load_query, run_query, saved_queries
    from .rebuild import RebuildReport, rebuild
    from .serve import Endpoint
    from .stats import graph_stats
    from .store import DEFAULT_STORE, Store
    from .viz import citation_graph, draw_map
