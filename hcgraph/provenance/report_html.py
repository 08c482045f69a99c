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

from .._io import write_atomic
from .._version import __version__
from .auditing import CHECKS, AuditReport

__all__ = ["render_report", "write_report", "write_store_report"]

PROMISES: list[str] = list(dict.fromkeys(CHECKS.values()))
SHORT = {"every cited manifest exists": "manifests exist", "sources are recent": "recent",
         "claim ids belong to their manifest": "claims belong",
         "the story does not repeat a recent story": "no repeat",
         "each paragraph is supported": "supported", "declared counts are true": "counts",
         "trust label fits": "trust"}  # fmt: skip
#: Line colours of the newsroom chart, colour-blind safe: every pair is at least CIEDE2000
#: ΔE 20 apart, also under simulated protanopia and deuteranopia (Machado et al. 2009), and
#: each at least ΔE 30 from the white page (Okabe-Ito orange, Paul Tol's indigo and green,
#: black, and grey for the newsrooms drawn together). tests/test_audit_charts.py checks it.
PALETTE = ["#332288", "#E69F00", "#117733", "#000000", "#888888"]
#: Newsrooms drawn as their own line; the rest are summed into one "other newsrooms" line.
ROOMS = len(PALETTE) - 1
#: Each line also has its own dash pattern and marker, so colour is never the only cue.
DASHES = ["", "6 3", "2 2", "8 3 2 3", "1 3"]
MARKERS = ["circle", "square", "triangle", "diamond", "cross"]
#: The age histogram's in-range and out-of-range bars (Okabe-Ito blue and vermillion).
IN_RANGE, OUT_OF_RANGE = "#0072B2", "#D55E00"
BAR = "#0072B2"

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
    write_atomic(target, render_report(report).encode("utf-8"), durable=False)
    return target


def write_store_report(store_dir: Path | str, path: Path | str) -> Path:
    """Audit every story of the store in ``store_dir`` and write the HTML report to ``path``."""
    from ..store import Store
    from .auditing import audit

    with Store(store_dir, read_only=True) as store:
        report = audit(store)
    return write_report(report, path)


def _figure(caption: str, svg: str) -> str:
    return f"<figure><figcaption>{_e(caption)}</figcaption>{svg}</figure>"


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
            f'width="100%" role="img" aria-label="{_e(label)}" font-size="11" '
            f'font-family="system-ui,sans-serif">' + "".join(body) + "</svg>")  # fmt: skip


def nice_ticks(top: float, most: int = 6) -> list[int]:
    """Round tick values from 0 up to at least ``top``: steps of 1, 2 or 5 times a power of
    ten, at most ``most`` steps.

    >>> nice_ticks(7)
    [0, 2, 4, 6, 8]
    >>> nice_ticks(1), nice_ticks(0), nice_ticks(130)
    ([0, 1], [0, 1], [0, 50, 100, 150])
    """
    top = max(1, math.ceil(top))
    magnitude = 1
    while True:
        for factor in (1, 2, 5):
            step = factor * magnitude
            if math.ceil(top / step) <= most:
                return list(range(0, step * math.ceil(top / step) + 1, step))
        magnitude *= 10


class _Plot:
    """The plot area of a chart (``rect.plot-area``): value → pixel, axes with units.

    Everything that is not data — tick labels, axis titles, legend — is drawn outside this
    rectangle, so nothing ever covers the data.
    """

    def __init__(self, left: float, top: float, width: float, height: float, ymax: int) -> None:
        self.left, self.top, self.width, self.height, self.ymax = left, top, width, height, ymax

    @property
    def bottom(self) -> float:
        return self.top + self.height

    def y(self, value: float) -> float:
        return self.bottom - self.height * value / self.ymax

    def frame(self, ticks: list[int], unit: str, x_unit: str) -> list[str]:
        """The plot-area rectangle, the y axis (ticks, grid lines, unit), the x axis line and
        its unit under the tick labels."""
        x0, t, b = self.left, self.top, self.bottom
        r = x0 + self.width
        out = [f'<rect class="plot-area" x="{x0}" y="{t}" width="{self.width}" '
               f'height="{self.height}" fill="none"/>',
               f'<g class="y-axis"><line x1="{x0}" y1="{t}" x2="{x0}" y2="{b}" '
               'stroke="#666"/>']  # fmt: skip
        for v in ticks:
            y = self.y(v)
            out.append(f'<line class="tick" x1="{x0 - 4}" y1="{y:.1f}" x2="{x0}" y2="{y:.1f}" '
                       f'stroke="#666"/><line x1="{x0}" y1="{y:.1f}" x2="{r}" y2="{y:.1f}" '
                       f'stroke="#eee"/><text x="{x0 - 6}" y="{y + 4:.1f}" '
                       f'text-anchor="end">{v}</text>')  # fmt: skip
        out.append(f'<text class="unit" transform="translate({x0 - 34},{(t + b) / 2:.1f}) '
                   f'rotate(-90)" text-anchor="middle">{_e(unit)}</text></g>')  # fmt: skip
        out.append(f'<g class="x-axis"><line x1="{x0}" y1="{b}" x2="{r}" y2="{b}" stroke="#666"/>'
                   f'<text class="unit" x="{x0 + self.width / 2:.1f}" y="{b + 30}" '
                   f'text-anchor="middle">{_e(x_unit)}</text></g>')  # fmt: skip
        return out


def _marker(kind: str, x: float, y: float, color: str, tip: str = "") -> str:
    title = f"<title>{_e(tip)}</title>" if tip else ""
    if kind == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}">{title}</circle>'
    if kind == "square":
        return (f'<rect x="{x - 3:.1f}" y="{y - 3:.1f}" width="6" height="6" '
                f'fill="{color}">{title}</rect>')  # fmt: skip
    shapes: dict[str, list[tuple[float, float]]] = {
        "triangle": [(0, -3.5), (3.5, 3), (-3.5, 3)],
        "diamond": [(0, -4), (4, 0), (0, 4), (-4, 0)],
        "cross": [(-1, -4), (1, -4), (1, -1), (4, -1), (4, 1), (1, 1), (1, 4), (-1, 4), (-1, 1),
                  (-4, 1), (-4, -1), (-1, -1)],
    }  # fmt: skip
    pts = " ".join(f"{x + dx:.1f},{y + dy:.1f}" for dx, dy in shapes[kind])
    return f'<polygon points="{pts}" fill="{color}">{title}</polygon>'


def _legend(top: float, left: float, entries: list[tuple[str, str, str, str]]) -> list[str]:
    """A legend below the x axis: one row per (label, colour, dash, marker)."""
    out = ['<g class="legend">']
    for i, (label, color, dash, marker) in enumerate(entries):
        y = top + 16 * i
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + 24}" y2="{y:.1f}" '
                   f'stroke="{color}" stroke-width="2"{dashes}/>')  # fmt: skip
        out.append(_marker(marker, left + 12, y, color))
        out.append(f'<text x="{left + 32}" y="{y + 4:.1f}">{_e(label)}</text>')
    out.append("</g>")
    return out


def _age_chart(report: AuditReport) -> str:
    ages = Counter(days for _, _, days in report.source_ages)
    if not ages:
        return '<p class="muted">no dated sources</p>'
    lo, hi = min(min(ages), 0), max(max(ages), 1)
    bins = list(range(lo, hi + 1))
    step = 1
    if len(bins) > 60:  # wide ranges: group into weeks
        step = math.ceil(len(bins) / 60)
        grouped: Counter[int] = Counter()
        for d, n in ages.items():
            grouped[lo + (d - lo) // step * step] += n
        ages, bins = grouped, list(range(lo, hi + 1, step))
    limit = report.options.max_source_age
    ticks = nice_ticks(max(ages.values()))
    w = 440
    plot = _Plot(52, 12, w - 52 - 26, 150, ticks[-1])
    bin_note = f" ({step}-day bins)" if step > 1 else ""
    body = plot.frame(ticks, "sources per bin" if step > 1 else "sources per day of age",
                      f"days between source and story{bin_note}")  # fmt: skip
    bw = plot.width / len(bins)
    for i, b in enumerate(bins):
        n = ages.get(b, 0)
        x, y = plot.left + i * bw, plot.y(n)
        color = OUT_OF_RANGE if b < 0 or b > limit else IN_RANGE
        body.append(f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{max(bw - 1, 1):.1f}" '
                    f'height="{plot.bottom - y:.1f}" fill="{color}">'
                    f"<title>{b} days: {n}</title></rect>")  # fmt: skip
        if len(bins) <= 20 or i % max(1, len(bins) // 10) == 0:
            body.append(f'<text x="{x + bw / 2:.1f}" y="{plot.bottom + 14}" '
                        f'text-anchor="middle">{b}</text>')  # fmt: skip
    top = plot.bottom + 46
    body += _legend(top, plot.left, [(f"within 0..{limit} days", IN_RANGE, "", "square"),
                                     (f"outside 0..{limit} days (a finding)", OUT_OF_RANGE, "",
                                      "square")])  # fmt: skip
    return _svg(w, int(top + 16 * 2), body, "source age histogram")


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
    ranked = sorted(per, key=lambda r: (-sum(per[r].values()), r))
    rooms = ranked[:ROOMS]
    series = [(room, per[room]) for room in rooms]
    rest = [r for r in ranked if r not in rooms]
    if rest:
        other: Counter[str] = Counter()
        for r in rest:
            other.update(per[r])
        label = rest[0] if len(rest) == 1 else f"{len(rest)} other newsrooms"
        series.append((label, other))
    ticks = nice_ticks(max(c[d] for _, c in series for d in axis))
    w = 440
    plot = _Plot(52, 12, w - 52 - 26, 150, ticks[-1])
    body = plot.frame(ticks, "findings per day", "publication day (UTC)")
    step = plot.width / max(1, len(axis) - 1)

    def x_of(i: int) -> float:
        return plot.left + i * step if len(axis) > 1 else plot.left + plot.width / 2

    entries = []
    for k, (room, counts) in enumerate(series):
        color, dash = PALETTE[k], DASHES[k]  # the summed rest, if any, is last: grey
        pts = " ".join(f"{x_of(i):.1f},{plot.y(counts[d]):.1f}" for i, d in enumerate(axis))
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        body.append(f'<polyline class="series" points="{pts}" fill="none" stroke="{color}" '
                    f'stroke-width="1.8"{dashes}/>')  # fmt: skip
        body += [_marker(MARKERS[k], x_of(i), plot.y(counts[d]), color,
                         f"{room} {d}: {counts[d]} findings")
                 for i, d in enumerate(axis)]  # fmt: skip
        entries.append((room, color, dash, MARKERS[k]))
    for i, d in enumerate(axis):
        if len(axis) <= 8 or i % max(1, len(axis) // 6) == 0:
            body.append(f'<text x="{x_of(i):.1f}" y="{plot.bottom + 14}" text-anchor="middle">'
                        f"{_e(d[5:])}</text>")  # fmt: skip
    top = plot.bottom + 46
    body += _legend(top, plot.left, entries)
    return _svg(w, int(top + 16 * len(entries)), body, "findings per newsroom per day")


def _publisher_chart(report: AuditReport) -> str:
    counts = report.publisher_citations
    total = sum(counts.values())
    if not total:
        return '<p class="muted">no citations</p>'
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    hhi = sum((n / total) ** 2 for n in counts.values())
    w, row, pad, label_w = 440, 18, 24, 170
    h = pad * 2 + row * len(top) + 20
    body = [f'<text x="0" y="14">{len(counts)} publishers · HHI {hhi:.3f} · top 3 hold '
            f"{sum(n for _, n in top[:3]) / total:.0%}</text>"]  # fmt: skip
    for i, (name, n) in enumerate(top):
        y = pad + i * row
        bw = (w - label_w - 50) * n / top[0][1]
        short = name if len(name) <= 26 else name[:25] + "\u2026"
        body.append(f'<text x="{label_w - 4}" y="{y + 12}" text-anchor="end">{_e(short)}'
                    f"<title>{_e(name)}</title></text>")  # fmt: skip
        body.append(f'<rect class="bar" x="{label_w}" y="{y + 2}" width="{bw:.1f}" '
                    f'height="{row - 4}" fill="{BAR}"/>')  # fmt: skip
        body.append(f'<text x="{label_w + bw + 4:.1f}" y="{y + 12}">{n / total:.1%}</text>')
    body.append(
        f'<text class="unit" x="{label_w}" y="{pad + row * len(top) + 14}">'
        "share of all citations (%), top 10 publishers</text>"
    )
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
