"""The audit as one self-contained, offline HTML file.

Safety rules (as for the citation maps): every piece of story text goes through
:func:`html.escape`; links are written only for absolute http(s) URLs; nothing is fetched (no
CDN, no fonts, no images: the charts are inline SVG drawn here); a Content-Security-Policy
meta allows exactly the one inline style sheet and the one inline script (by SHA-256 hash) and
nothing else — no other script, no connection, no frame, no form. The only script sorts the
scorecard table; it never reads story text as markup.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import math
from collections import Counter, defaultdict
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .._version import __version__
from ..archive import write_atomic
from .audit import CHECKS, AuditReport

__all__ = ["render_report", "write_report", "write_store_report"]

PROMISES: list[str] = list(dict.fromkeys(CHECKS.values()))
SHORT = {"every cited manifest exists": "manifests exist", "sources are recent": "recent",
         "claim ids belong to their manifest": "claims belong",
         "the story does not repeat a recent story": "no repeat",
         "each paragraph is supported": "supported", "declared counts are true": "counts",
         "trust label fits": "trust"}  # fmt: skip
PALETTE = ["#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2",
           "#97bbf5", "#9c6b4e", "#9498a0"]  # fmt: skip

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1em 2em;
color:#222}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%;margin:.5em 0}
th,td{border-bottom:1px solid #eee;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f6f6f6;cursor:pointer;user-select:none;white-space:nowrap}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
td.num,th.num{text-align:right}.ok{color:#1a7f37}.bad{color:#c0392b;font-weight:600}
.cards{display:flex;gap:1em;flex-wrap:wrap}.card{border:1px solid #ddd;border-radius:6px;
padding:.6em 1em;min-width:10em}.card b{font-size:1.6em;display:block}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(360px,1fr));gap:1.5em}
figure{margin:0}figcaption{font-weight:600;margin-bottom:.3em}
details{margin:.4em 0;border-left:3px solid #c0392b;padding-left:.6em}
summary{cursor:pointer}dl{margin:.2em 0 .6em 1em}dt{font-weight:600}dd{margin:0 0 .2em 1em;
word-break:break-word}code{font-size:.92em}.muted{color:#777}
""".strip()

_SCRIPT = """
(function () {
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var num = th.classList.contains("num");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-v") || "";
          var y = b.cells[col].getAttribute("data-v") || "";
          if (num) { x = parseFloat(x) || 0; y = parseFloat(y) || 0; }
          return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  window.hcauditReady = true;
})();
""".strip()


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


CSP = (
    f"default-src 'none'; script-src {_hash(_SCRIPT)}; style-src {_hash(_STYLE)}; "
    "img-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'; frame-src 'none'"
)


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _link(url: str | None, text: str | None = None) -> str:
    label = _e(text if text is not None else url)
    if url and urlsplit(url).scheme in ("http", "https") and not any(c in url for c in "\"'<> "):
        return f'<a href="{_e(url)}" rel="noopener noreferrer">{label}</a>'
    return label


def render_report(report: AuditReport) -> str:
    """The whole HTML document as a string."""
    failing = report.failing
    o = report.options
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>hcgraph audit</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>hcgraph audit: do the stories keep their disclosure promises?</h1>",
        f'<p class="muted">hcgraph {_e(__version__)} · max source age {o.max_source_age} '
        f"days · repeat window {o.repeat_window} days · repeat threshold "
        f"{o.repeat_threshold} · {report.total_stories} stories in the store</p>",
        '<div class="cards">',
        f'<div class="card"><b>{len(report.stories)}</b>stories audited</div>',
        f'<div class="card"><b class="ok">{len(report.stories) - len(failing)}</b>'
        "keep every promise</div>",
        f'<div class="card"><b class="bad">{len(failing)}</b>break a promise</div>',
        f'<div class="card"><b>{len(report.findings)}</b>findings</div>',
        "</div>",
        "<h2>Findings per check</h2>",
        '<table id="checks"><thead><tr><th>promise</th><th>check</th>'
        '<th class="num">findings</th></tr></thead><tbody>',
    ]
    for name, n in report.counts().items():
        cls = ' class="bad"' if n else ""
        parts.append(f"<tr><td>{_e(CHECKS[name])}</td><td><code>{_e(name)}</code></td>"
                     f'<td class="num"><span{cls}>{n}</span></td></tr>')  # fmt: skip
    parts.append("</tbody></table>")
    parts.append('<h2>Charts</h2><div class="charts">')
    parts.append(_figure("Source age (days between source and story)", _age_chart(report)))
    parts.append(_figure("Findings per newsroom over time", _newsroom_chart(report)))
    parts.append(_figure("Publisher concentration (share of citations)", _publisher_chart(report)))
    parts.append("</div>")
    parts.append(_scorecard(report))
    parts.append(_evidence(failing))
    parts.append(f"<script>{_SCRIPT}</script></body></html>\n")
    return "\n".join(parts)


def write_report(report: AuditReport, path: Path | str) -> Path:
    """Write :func:`render_report` to ``path`` atomically; return the path."""
    target = Path(path)
    write_atomic(target, render_report(report).encode("utf-8"))
    return target


def write_store_report(store_dir: Path | str, path: Path | str) -> Path:
    """Audit every story of the store in ``store_dir`` and write the HTML report to ``path``."""
    from ..store import Store
    from .audit import audit

    with Store(store_dir, read_only=True) as store:
        report = audit(store)
    return write_report(report, path)


def _figure(caption: str, svg: str) -> str:
    return f"<figure><figcaption>{_e(caption)}</figcaption>{svg}</figure>"


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
            f'width="100%" role="img" aria-label="{_e(label)}" font-size="11" '
            f'font-family="system-ui,sans-serif">' + "".join(body) + "</svg>")  # fmt: skip


def _age_chart(report: AuditReport) -> str:
    ages = Counter(days for _, _, days in report.source_ages)
    if not ages:
        return '<p class="muted">no dated sources</p>'
    lo, hi = min(min(ages), 0), max(max(ages), 1)
    bins = list(range(lo, hi + 1))
    if len(bins) > 60:  # wide ranges: group into weeks
        step = math.ceil(len(bins) / 60)
        grouped: Counter[int] = Counter()
        for d, n in ages.items():
            grouped[lo + (d - lo) // step * step] += n
        ages, bins = grouped, list(range(lo, hi + 1, step))
    w, h, pad = 420, 220, 30
    top = max(ages.values())
    bw = (w - 2 * pad) / len(bins)
    body = [f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="#999"/>']
    limit = report.options.max_source_age
    for i, b in enumerate(bins):
        n = ages.get(b, 0)
        bh = (h - 2 * pad) * n / top
        x, y = pad + i * bw, h - pad - bh
        color = "#c0392b" if b < 0 or b > limit else "#4269d0"
        body.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(bw - 1, 1):.1f}" '
                    f'height="{bh:.1f}" fill="{color}">'
                    f"<title>{b} days: {n}</title></rect>")  # fmt: skip
        if len(bins) <= 20 or i % max(1, len(bins) // 10) == 0:
            body.append(f'<text x="{x + bw / 2:.1f}" y="{h - pad + 14}" '
                        f'text-anchor="middle">{b}</text>')  # fmt: skip
    body.append(f'<text x="{pad}" y="{pad - 10}">max {top} sources per bin; red: outside '
                f"0..{limit} days</text>")  # fmt: skip
    return _svg(w, h, body, "source age histogram")


def _newsroom_chart(report: AuditReport) -> str:
    per: defaultdict[str, Counter[str]] = defaultdict(Counter)
    days: set[str] = set()
    for s in report.stories:
        day = (s.published_at or "")[:10]
        if not day:
            continue
        days.add(day)
        per[s.newsroom or "(none)"][day] += len(s.findings)
    if not days:
        return '<p class="muted">no dated stories</p>'
    axis = sorted(days)
    rooms = sorted(per)[: len(PALETTE)]
    w, h, pad = 420, 220, 30
    top = max(1, max(c[d] for c in per.values() for d in axis))
    step = (w - 2 * pad) / max(1, len(axis) - 1)
    body = [f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="#999"/>',
            f'<text x="{pad}" y="{pad - 10}">max {top} findings per day</text>']  # fmt: skip
    for k, room in enumerate(rooms):
        color = PALETTE[k]
        pts = []
        for i, d in enumerate(axis):
            x = pad + i * step if len(axis) > 1 else w / 2
            y = h - pad - (h - 2 * pad) * per[room][d] / top
            pts.append(f"{x:.1f},{y:.1f}")
            body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{color}">'
                        f"<title>{_e(room)} {d}: {per[room][d]}</title></circle>")  # fmt: skip
        body.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="{color}" '
                    'stroke-width="1.5"/>')  # fmt: skip
        body.append(f'<text x="{w - pad}" y="{pad + 12 * k}" text-anchor="end" '
                    f'fill="{color}">{_e(room)}</text>')  # fmt: skip
    for i, d in enumerate(axis):
        if len(axis) <= 8 or i % max(1, len(axis) // 6) == 0:
            x = pad + i * step if len(axis) > 1 else w / 2
            body.append(f'<text x="{x:.1f}" y="{h - pad + 14}" text-anchor="middle">'
                        f"{_e(d[5:])}</text>")  # fmt: skip
    return _svg(w, h, body, "findings per newsroom per day")


def _publisher_chart(report: AuditReport) -> str:
    counts = report.publisher_citations
    total = sum(counts.values())
    if not total:
        return '<p class="muted">no citations</p>'
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    hhi = sum((n / total) ** 2 for n in counts.values())
    w, row, pad, label_w = 420, 18, 24, 170
    h = pad * 2 + row * len(top)
    body = [f'<text x="0" y="14">{len(counts)} publishers · HHI {hhi:.3f} · top 3 hold '
            f"{sum(n for _, n in top[:3]) / total:.0%}</text>"]  # fmt: skip
    for i, (name, n) in enumerate(top):
        y = pad + i * row
        bw = (w - label_w - 50) * n / top[0][1]
        short = name if len(name) <= 26 else name[:25] + "\u2026"
        body.append(f'<text x="{label_w - 4}" y="{y + 12}" text-anchor="end">{_e(short)}'
                    f"<title>{_e(name)}</title></text>")  # fmt: skip
        body.append(f'<rect x="{label_w}" y="{y + 2}" width="{bw:.1f}" height="{row - 4}" '
                    f'fill="{PALETTE[i % len(PALETTE)]}"/>')  # fmt: skip
        body.append(f'<text x="{label_w + bw + 4:.1f}" y="{y + 12}">{n / total:.1%}</text>')
    return _svg(w, h, body, "publisher concentration")


def _scorecard(report: AuditReport) -> str:
    heads = ["story", "newsroom", "published"]
    out = [f"<h2>Scorecard ({len(report.stories)} stories; click a column to sort)</h2>",
           '<table class="sortable" id="scorecard"><thead><tr>']  # fmt: skip
    out += [f"<th>{h}</th>" for h in heads]
    out += ['<th class="num">sources</th>', '<th class="num">findings</th>']
    out += [f'<th class="num" title="{_e(p)}">{_e(SHORT.get(p, p))}</th>' for p in PROMISES]
    out.append("</tr></thead><tbody>")
    for s in report.stories:
        broken = Counter(f.promise for f in s.findings)
        anchor = "f-" + hashlib.sha256(s.url.encode()).hexdigest()[:16]
        title = _link(s.url, s.headline or s.url)
        if s.findings:
            title += f' · <a href="#{anchor}">evidence</a>'
        cells = [
            f'<td data-v="{_e(s.headline or s.url)}">{title}</td>',
            f'<td data-v="{_e(s.newsroom)}">{_e(s.newsroom)}</td>',
            f'<td data-v="{_e(s.published_at)}">{_e((s.published_at or "")[:16])}</td>',
            f'<td class="num" data-v="{s.sources}">{s.sources}</td>',
            f'<td class="num" data-v="{len(s.findings)}">'
            f'<span class="{"bad" if s.findings else "ok"}">{len(s.findings)}</span></td>',
        ]
        for p in PROMISES:
            n = broken.get(p, 0)
            mark = f'<span class="bad">\u2717 {n}</span>' if n else '<span class="ok">\u2713</span>'
            cells.append(f'<td class="num" data-v="{n}">{mark}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _evidence(failing: list[Any]) -> str:
    out = [f"<h2>Evidence ({len(failing)} stories)</h2>"]
    for s in failing:
        anchor = "f-" + hashlib.sha256(s.url.encode()).hexdigest()[:16]
        out.append(f'<section id="{anchor}"><h3>{_link(s.url, s.headline or s.url)}</h3>')
        out.append(f'<p class="muted">{_e(s.url)} · {_e(s.newsroom)} · '
                   f"{_e(s.published_at)}</p>")  # fmt: skip
        for f in s.findings:
            out.append(f"<details><summary><code>{_e(f.check)}</code> {_e(f.message)}"
                       f' <span class="muted">({_e(f.promise)})</span></summary><dl>')  # fmt: skip
            for key, value in f.evidence.items():
                out.append(f"<dt>{_e(key)}</dt><dd>{_value(value)}</dd>")
            out.append("</dl></details>")
        out.append("</section>")
    return "\n".join(out)


def _value(value: Any) -> str:
    if isinstance(value, str):
        return _link(value) if value.startswith(("http://", "https://")) else _e(value)
    if isinstance(value, list):
        return ", ".join(_value(v) for v in value) or '<span class="muted">(none)</span>'
    if isinstance(value, dict):
        return "; ".join(f"{_e(k)}: {_value(v)}" for k, v in value.items())
    if isinstance(value, float):
        return _e(f"{value:g}")
    if isinstance(value, dt.date):
        return _e(value.isoformat())
    return _e(value)
