"""Provenance answers for people: ``trace``, ``audit`` and ``history``.

:func:`~hcgraph.provenance.tracing.trace` (where did this sentence come from),
:func:`~hcgraph.provenance.auditing.audit` (does each story keep the promises of its
disclosure) and :func:`~hcgraph.provenance.versions.history` (every version of a story and
what changed), each with its views; the SPARQL they share is in ``_graph.py``.
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
