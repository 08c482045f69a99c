"""Provenance answers for people: ``trace``, ``audit`` and ``history``.

Where did this sentence come from, does each story keep its disclosure's promises, and every
version of a story with what changed, each with its views; their shared SPARQL is in ``_graph.py``.
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
