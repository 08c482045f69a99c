"""Provenance answers for people: ``trace``, ``audit`` and ``history``.

* :func:`~hcgraph.provenance.tracing.trace` — where did this sentence come from (claims →
  manifest → source → publisher, writer run, hcgraph ingest); renders as a tree, JSON,
  Markdown or W3C PROV (:mod:`hcgraph.provenance.prov_export`).
* :func:`~hcgraph.provenance.auditing.audit` — does each story keep the promises of its
  disclosure; terminal/JSON/Markdown views (:mod:`~hcgraph.provenance.render_audit`) and
  one offline HTML report (:mod:`~hcgraph.provenance.report_html`).
* :func:`~hcgraph.provenance.versions.history` — every version of a story seen, and what
  changed between them; renders as a table, JSON or Markdown
  (:mod:`~hcgraph.provenance.versions`).

The SPARQL reads the store's one layout (story graphs, plus shared graphs stating each
manifest, claim and publisher once): see ``hcgraph/provenance/_graph.py``.
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
