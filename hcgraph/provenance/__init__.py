"""Provenance answers for people, each with its views: ``trace`` (where did this sentence come
from), ``audit`` (does each story keep its disclosure's promises) and ``history`` (every version
of a story and what changed); the SPARQL they share is in ``_graph.py``.
"""

from .auditing import CHECKS, AuditFinding, AuditOptions, AuditReport, StoryAudit, audit
from .prov_export import PROV_FORMATS, to_prov_document
from .report_html import render_report, write_report
from .tracing import Trace, trace
from .versions import Change, History, Version, diff_stories, history

__all__ = [
    "CHECKS",
    "PROV_FORMATS",
    "AuditFinding",
    "AuditOptions",
    "AuditReport",
    "Change",
    "History",
    "StoryAudit",
    "Trace",
    "Version",
    "audit",
    "diff_stories",
    "history",
    "render_report",
    "to_prov_document",
    "trace",
    "write_report",
]
