"""The audit as one self-contained, offline HTML file.

The page is the Jinja template ``audit.html``, autoescaping every value, the charts too
(built here as element trees and drawn by the template). Links only to absolute http(s)
URLs; nothing is fetched (the charts are inline SVG); a Content-Security-Policy allows just
the one inline style sheet and the one inline script (by hash), which sorts the scorecard.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from functools import cache
from pathlib import Path
from typing import Union
from urllib.parse import urlsplit

from jinja2 import Environment, PackageLoader, Template
from markupsafe import Markup

from .._io import write_atomic
from .._version import __version__
from ..htmltext import visible_bidi, with_script_hashes
from .auditing import CHECKS, AuditReport

__all__ = ["render_report", "write_report"]

#: An element of a chart: ``(tag, attributes, children)``; a child is an element or text.
El = tuple[str, dict[str, object], list[Union["El", str]]]
#: A legend row: (label, colour, dash pattern, marker).
Entry = tuple[str, str, str, str]

PROMISES: list[str] = list(dict.fromkeys(CHECKS.values()))
SHORT = {"every cited manifest exists": "manifests exist", "sources are recent": "recent",
         "claim ids belong to their manifest": "claims belong",
         "the story does not repeat a recent story": "no repeat",
         "each paragraph is supported": "supported", "declared counts are true": "counts",
         "trust label fits": "trust"}  # fmt: skip
#: Line colours of the newsroom chart: every pair CIEDE2000 ΔE ≥ 20 apart, also under simulated
#: protanopia and deuteranopia, each ΔE ≥ 30 from the page (tests/test_audit_charts.py).
PALETTE = ["#332288", "#E69F00", "#117733", "#000000", "#888888"]
#: Newsrooms drawn as their own line; the rest are summed into one "other newsrooms" line.
ROOMS = len(PALETTE) - 1
#: Each line also has its own dash pattern and marker, so colour is never the only cue.
DASHES = ["", "6 3", "2 2", "8 3 2 3", "1 3"]
MARKERS = ["circle", "square", "triangle", "diamond", "cross"]
#: The age histogram's in-range and out-of-range bars (Okabe-Ito blue and vermillion).
IN_RANGE, OUT_OF_RANGE = "#0072B2", "#D55E00"
BAR = "#0072B2"
WIDTH = 440  # of a chart, in SVG units


def _http_url(url: object) -> bool:
    """A URL a link may point to: absolute http(s), with nothing that could end the attribute."""
    return (
        isinstance(url, str)
        and urlsplit(url).scheme in ("http", "https")
        and not any(c in url for c in "\"'<> ")
    )


def _shown(value: object) -> object:
    """A value as the template writes it: ``None`` as nothing, the bidi controls of text made
    visible (a U+202E in a publisher's name would draw it reversed). Markup (a macro's output,
    an ``href`` escaped with ``|e``) is left alone."""
    if value is None:
        return ""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible_bidi(value)
    return value


def _anchor(url: str) -> str:
    return "f-" + hashlib.sha256(url.encode()).hexdigest()[:16]


def _segments(sentence: str, spans: list[dict[str, str]]) -> list[tuple[str, bool]]:
    """``sentence`` cut into (text, marked) pieces: the first occurrence of each span marked
    (the template writes them, autoescaped, marked ones in ``<mark>``)."""
    out, pos = [], 0
    for begin, end in _cuts(sentence, spans):
        out += [(sentence[pos:begin], False), (sentence[begin:end], True)]
        pos = end
    out.append((sentence[pos:], False))
    return [piece for piece in out if piece[0]]


def _cuts(sentence: str, spans: list[dict[str, str]]) -> list[tuple[int, int]]:
    """Where each span first occurs in ``sentence``, in order, overlaps left out."""
    cuts: list[tuple[int, int]] = []
    for m in spans:
        span = m.get("span") or ""
        at = sentence.find(span) if span and span != sentence else -1
        if at >= 0 and all(at >= e or at + len(span) <= b for b, e in cuts):
            cuts.append((at, at + len(span)))
    return sorted(cuts)


@cache
def _template() -> Template:
    env = Environment(
        loader=PackageLoader(__package__, "."),
        autoescape=True,
        finalize=_shown,
    )
    env.tests["http_url"] = _http_url
    env.filters["anchor"] = _anchor
    env.filters["segments"] = _segments
    return env.get_template("audit.html")


def render_report(report: AuditReport) -> str:
    """The whole HTML document as a string."""
    charts = [
        ("Source age (days between source and story)", _age_chart(report)),
        ("Findings per newsroom over time", _newsroom_chart(report)),
        ("Publisher concentration (share of citations)", _publisher_chart(report)),
    ]
    scorecard = []
    for s in report.stories:
        broken = Counter(f.promise for f in s.findings)
        scorecard.append((s, [broken.get(p, 0) for p in PROMISES]))
    html = _template().render(
        report=report, o=report.options, failing=report.failing, version=__version__,
        checks=CHECKS, charts=charts, scorecard=scorecard,
        promises=[(p, SHORT.get(p, p)) for p in PROMISES],
    )  # fmt: skip
    return with_script_hashes(with_script_hashes(html), "style")


def write_report(report: AuditReport, path: Path | str) -> Path:
    """Write :func:`render_report` to ``path`` atomically; return the path."""
    target = Path(path)
    write_atomic(target, render_report(report).encode("utf-8"), durable=False)
    return target


def _svg(width: int, height: int, body: list[El], label: str) -> El:
    return ("svg", {"xmlns": "http://www.w3.org/2000/svg", "viewBox": f"0 0 {width} {height}",
                    "width": "100%", "role": "img", "aria-label": label, "font-size": "11",
                    "font-family": "system-ui,sans-serif"}, list(body))  # fmt: skip


def _muted(text: str) -> El:
    return ("p", {"class": "muted"}, [text])


def _text(text: object, **attrs: object) -> El:
    """An SVG ``<text>``; ``text_anchor`` becomes ``text-anchor``, ``class_`` ``class``."""
    return ("text", {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}, [str(text)])


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
    """The plot area of a chart (``rect.plot-area``): value → pixel, axes with units. Tick
    labels, axis titles and legend are drawn outside it, so nothing covers the data."""

    def __init__(self, ymax: int) -> None:
        self.left, self.top, self.width, self.height, self.ymax = 52, 12, WIDTH - 78, 150, ymax

    @property
    def bottom(self) -> float:
        return self.top + self.height

    def y(self, value: float) -> float:
        return self.bottom - self.height * value / self.ymax

    def frame(self, ticks: list[int], unit: str, x_unit: str) -> list[El]:
        """The plot-area rectangle, the y axis (ticks, grid lines, unit), the x axis line and
        its unit under the tick labels."""
        x0, t, b = self.left, self.top, self.bottom
        r = x0 + self.width
        y_axis: list[El | str] = [_line(x0, t, x0, b, "#666")]
        for v in ticks:
            y = f"{self.y(v):.1f}"
            y_axis += [("line", {"class": "tick", "x1": x0 - 4, "y1": y, "x2": x0, "y2": y,
                                 "stroke": "#666"}, []),
                       _line(x0, y, r, y, "#eee"),
                       _text(v, x=x0 - 6, y=f"{self.y(v) + 4:.1f}", text_anchor="end")]  # fmt: skip
        turn = f"translate({x0 - 34},{(t + b) / 2:.1f}) rotate(-90)"
        y_axis.append(_text(unit, class_="unit", transform=turn, text_anchor="middle"))
        x_axis: list[El | str] = [
            _line(x0, b, r, b, "#666"),
            _text(x_unit, class_="unit", x=f"{x0 + self.width / 2:.1f}", y=b + 30,
                  text_anchor="middle"),
        ]  # fmt: skip
        return [("rect", {"class": "plot-area", "x": x0, "y": t, "width": self.width,
                          "height": self.height, "fill": "none"}, []),
                ("g", {"class": "y-axis"}, y_axis), ("g", {"class": "x-axis"}, x_axis)]  # fmt: skip


def _line(x1: object, y1: object, x2: object, y2: object, stroke: str) -> El:
    return ("line", {"x1": x1, "y1": y1, "x2": x2, "y2": y2, "stroke": stroke}, [])


def _marker(kind: str, x: float, y: float, color: str, tip: str = "") -> El:
    title: list[El | str] = [("title", {}, [tip])] if tip else []
    if kind == "circle":
        return ("circle", {"cx": f"{x:.1f}", "cy": f"{y:.1f}", "r": "3", "fill": color}, title)
    if kind == "square":
        return ("rect", {"x": f"{x - 3:.1f}", "y": f"{y - 3:.1f}", "width": "6", "height": "6",
                         "fill": color}, title)  # fmt: skip
    shapes: dict[str, list[tuple[float, float]]] = {
        "triangle": [(0, -3.5), (3.5, 3), (-3.5, 3)],
        "diamond": [(0, -4), (4, 0), (0, 4), (-4, 0)],
        "cross": [(-1, -4), (1, -4), (1, -1), (4, -1), (4, 1), (1, 1), (1, 4), (-1, 4), (-1, 1),
                  (-4, 1), (-4, -1), (-1, -1)],
    }  # fmt: skip
    pts = " ".join(f"{x + dx:.1f},{y + dy:.1f}" for dx, dy in shapes[kind])
    return ("polygon", {"points": pts, "fill": color}, title)


def _dashes(dash: str) -> dict[str, object]:
    return {"stroke-dasharray": dash} if dash else {}


def _legend(top: float, left: float, entries: list[Entry]) -> list[El]:
    """A legend below the x axis: one row per (label, colour, dash, marker)."""
    rows: list[El | str] = []
    for i, (label, color, dash, marker) in enumerate(entries):
        y = f"{top + 16 * i:.1f}"
        rows += [("line", {"x1": left, "y1": y, "x2": left + 24, "y2": y, "stroke": color,
                           "stroke-width": "2", **_dashes(dash)}, []),
                 _marker(marker, left + 12, top + 16 * i, color),
                 _text(label, x=left + 32, y=f"{top + 16 * i + 4:.1f}")]  # fmt: skip
    return [("g", {"class": "legend"}, rows)]


def _x_label(plot: _Plot, x: float, label: object, shown: bool) -> list[El]:
    """A tick label under the x axis at ``x``, if ``shown`` (long axes label some ticks)."""
    return [_text(label, x=f"{x:.1f}", y=plot.bottom + 14, text_anchor="middle")] if shown else []


def _with_legend(plot: _Plot, body: list[El], entries: list[Entry], label: str) -> El:
    """The chart: ``body`` and a legend below the x axis."""
    top = plot.bottom + 46
    return _svg(WIDTH, int(top + 16 * len(entries)), body + _legend(top, plot.left, entries), label)


def _age_bins(ages: Counter[int]) -> tuple[Counter[int], list[int], int]:
    """Sources per bin, the bins, and the bin width in days (1, or wider for wide ranges)."""
    lo, hi = min(min(ages), 0), max(max(ages), 1)
    step = max(1, math.ceil((hi - lo + 1) / 60))
    if step == 1:
        return ages, list(range(lo, hi + 1)), 1
    grouped: Counter[int] = Counter()
    for d, n in ages.items():
        grouped[lo + (d - lo) // step * step] += n
    return grouped, list(range(lo, hi + 1, step)), step


def _age_chart(report: AuditReport) -> El:
    if not report.source_ages:
        return _muted("no dated sources")
    ages, bins, step = _age_bins(Counter(days for _, _, days in report.source_ages))
    limit = report.options.max_source_age
    ticks = nice_ticks(max(ages.values()))
    plot = _Plot(ticks[-1])
    bin_note = f" ({step}-day bins)" if step > 1 else ""
    body = plot.frame(ticks, "sources per bin" if step > 1 else "sources per day of age",
                      f"days between source and story{bin_note}")  # fmt: skip
    bw = plot.width / len(bins)
    for i, b in enumerate(bins):
        n = ages.get(b, 0)
        x, y = plot.left + i * bw, plot.y(n)
        color = OUT_OF_RANGE if b < 0 or b > limit else IN_RANGE
        body.append(("rect", {"class": "bar", "x": f"{x:.1f}", "y": f"{y:.1f}",
                              "width": f"{max(bw - 1, 1):.1f}", "height": f"{plot.bottom - y:.1f}",
                              "fill": color}, [("title", {}, [f"{b} days: {n}"])]))  # fmt: skip
        body += _x_label(plot, x + bw / 2, b, len(bins) <= 20 or i % max(1, len(bins) // 10) == 0)
    entries = [(f"within 0..{limit} days", IN_RANGE, "", "square"),
               (f"outside 0..{limit} days (a finding)", OUT_OF_RANGE, "", "square")]  # fmt: skip
    return _with_legend(plot, body, entries, "source age histogram")


def _newsroom_series(report: AuditReport) -> tuple[list[str], list[tuple[str, Counter[str]]]]:
    """The publication days, and (label, findings per day) for each line: the newsrooms with
    the most findings, then the rest summed into one."""
    per = _findings_per_day(report)
    ranked = sorted(per, key=lambda r: (-sum(per[r].values()), r))
    series = [(room, per[room]) for room in ranked[:ROOMS]]
    if rest := ranked[ROOMS:]:
        other: Counter[str] = Counter()
        for r in rest:
            other.update(per[r])
        series.append((rest[0] if len(rest) == 1 else f"{len(rest)} other newsrooms", other))
    return sorted({day for counts in per.values() for day in counts}), series


def _findings_per_day(report: AuditReport) -> dict[str, Counter[str]]:
    per: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for s in report.stories:
        if day := (s.published_at or "")[:10]:
            per[s.newsroom or "(none)"][day] += len(s.findings)
    return per


def _newsroom_chart(report: AuditReport) -> El:
    axis, series = _newsroom_series(report)
    if not axis:
        return _muted("no dated stories")
    ticks = nice_ticks(max(c[d] for _, c in series for d in axis))
    plot = _Plot(ticks[-1])
    body = plot.frame(ticks, "findings per day", "publication day (UTC)")
    step = plot.width / max(1, len(axis) - 1)
    xs = (
        [plot.left + i * step for i in range(len(axis))]
        if len(axis) > 1
        else [plot.left + plot.width / 2]
    )
    entries: list[Entry] = []
    for k, (room, counts) in enumerate(series):
        body += _line_series(plot, list(zip(xs, axis, strict=True)), room, counts, k)
        entries.append((room, PALETTE[k], DASHES[k], MARKERS[k]))
    for i, (x, d) in enumerate(zip(xs, axis, strict=True)):
        body += _x_label(plot, x, d[5:], len(axis) <= 8 or i % max(1, len(axis) // 6) == 0)
    return _with_legend(plot, body, entries, "findings per newsroom per day")


def _line_series(
    plot: _Plot, days: list[tuple[float, str]], room: str, counts: Counter[str], k: int
) -> list[El]:
    """Line ``k`` of the newsroom chart (the summed rest, if any, is last: grey)."""
    color, dash = PALETTE[k], DASHES[k]
    pts = " ".join(f"{x:.1f},{plot.y(counts[d]):.1f}" for x, d in days)
    line = {"class": "series", "points": pts, "fill": "none", "stroke": color}
    out: list[El] = [("polyline", {**line, "stroke-width": "1.8", **_dashes(dash)}, [])]
    for x, d in days:
        out.append(
            _marker(MARKERS[k], x, plot.y(counts[d]), color, f"{room} {d}: {counts[d]} findings")
        )
    return out


def _publisher_chart(report: AuditReport) -> El:
    counts = report.publisher_citations
    total = sum(counts.values())
    if not total:
        return _muted("no citations")
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    hhi = sum((n / total) ** 2 for n in counts.values())
    w, row, pad, label_w = WIDTH, 18, 24, 170
    h = pad * 2 + row * len(top) + 20
    share = sum(n for _, n in top[:3]) / total
    body = [_text(f"{len(counts)} publishers · HHI {hhi:.3f} · top 3 hold {share:.0%}", x=0, y=14)]
    for i, (name, n) in enumerate(top):
        y = pad + i * row
        bw = (w - label_w - 50) * n / top[0][1]
        short = name if len(name) <= 26 else name[:25] + "\u2026"
        body += [("text", {"x": label_w - 4, "y": y + 12, "text-anchor": "end"},
                  [short, ("title", {}, [name])]),
                 ("rect", {"class": "bar", "x": label_w, "y": y + 2, "width": f"{bw:.1f}",
                           "height": row - 4, "fill": BAR}, []),
                 _text(f"{n / total:.1%}", x=f"{label_w + bw + 4:.1f}", y=y + 12)]  # fmt: skip
    body.append(_text("share of all citations (%), top 10 publishers", class_="unit",
                      x=label_w, y=pad + row * len(top) + 14))  # fmt: skip
    return _svg(w, h, body, "publisher concentration")
