"""The audit report's charts: colour-blind-safe lines, axes with units, legends off the data.

The colours are read from the rendered SVG (not from the constants), compared with CIEDE2000
also under simulated protanopia and deuteranopia (Machado et al. 2009); the geometry is
checked on the SVG and, for the legends, with ``getBBox`` in real Chromium.
"""

from __future__ import annotations

import itertools
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from hcgraph import Store, ingest_bytes
from hcgraph.provenance.auditing import audit
from hcgraph.provenance.report_html import render_report
from hcsample.corpus import generate_corpus
from tests.conftest import SEED
from tests.support.chromium import CHROMIUM
from tests.support.colour import ciede2000, lab, min_delta_e

SVG = "{http://www.w3.org/2000/svg}"
#: Smallest CIEDE2000 difference between two series' colours, in every simulated vision.
DISTINCT = 20.0


def test_the_colour_science_matches_published_values() -> None:
    # Sharma, Wu & Dalal (2005), test pairs 1 and 17.
    assert ciede2000((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485)) == pytest.approx(
        2.0425, abs=1e-4
    )
    assert ciede2000((50.0, 2.5, 0.0), (73.0, 25.0, -18.0)) == pytest.approx(27.1492, abs=1e-4)
    assert lab("#ffffff") == pytest.approx((100.0, 0.0, 0.0), abs=0.01)
    # Red and green: far apart normally, close for a deuteranope.
    assert min_delta_e("#d62728", "#2ca02c") < 20 < ciede2000(lab("#d62728"), lab("#2ca02c"))


@pytest.fixture(scope="module")
def report_html() -> str:
    seed = json.loads(SEED.read_text())
    stories = generate_corpus(60, seed=3, hostile=True, include_seed=seed).stories
    for story, room in zip(stories[-2:], ("science", "health"), strict=True):  # 6 newsrooms
        story["newsroom"], story["newsroom_title"] = room, room.title()
        story["links"]["newsroom"] = f"https://news.example.org/n/{room}/"
        story["labels"]["newsroom"] = room.title()
    docs = [(json.dumps(s).encode(), f"s{i}") for i, s in enumerate(stories)]
    with Store(None) as st:
        assert not ingest_bytes(st, docs).failures
        return render_report(audit(st))


def _charts(html: str) -> dict[str, ET.Element]:
    out = {}
    for svg in re.findall(r"<svg .*?</svg>", html, re.DOTALL):
        root = ET.fromstring(svg)
        out[root.get("aria-label") or ""] = root
    assert set(out) == {"source age histogram", "findings per newsroom per day",
                        "publisher concentration"}  # fmt: skip
    return out


def test_newsroom_lines_are_colour_blind_safe(report_html: str) -> None:
    chart = _charts(report_html)["findings per newsroom per day"]
    lines = chart.findall(f".//{SVG}polyline")
    colours = [str(p.get("stroke")).lower() for p in lines]
    # Four newsrooms drawn on their own, the two with the fewest findings summed into one.
    assert len(colours) == len(set(colours)) == 5
    legend = [t.text for g in chart.iter(f"{SVG}g") if g.get("class") == "legend"
              for t in g.iter(f"{SVG}text")]  # fmt: skip
    assert len(legend) == 5 and legend[-1] == "2 other newsrooms"
    for a, b in itertools.combinations(colours, 2):
        assert min_delta_e(a, b) >= DISTINCT, (a, b)
    for c in colours:  # and every line stands out from the white page
        assert min_delta_e(c, "#ffffff") >= 30, c
    # Colour is not the only cue: each line has its own dash pattern.
    assert len({p.get("stroke-dasharray") for p in lines}) == len(lines)
    # The age histogram's two bar colours (in and out of range) too.
    bars = {str(r.get("fill")).lower() for r in _charts(report_html)["source age histogram"]
            .iter(f"{SVG}rect") if r.get("class") == "bar"}  # fmt: skip
    assert len(bars) == 2 and min_delta_e(*sorted(bars)) >= DISTINCT


def _plot_area(chart: ET.Element) -> tuple[float, float, float, float]:
    rect = next(r for r in chart.iter(f"{SVG}rect") if r.get("class") == "plot-area")
    x, y, w, h = (float(str(rect.get(k))) for k in ("x", "y", "width", "height"))
    return x, y, x + w, y + h


@pytest.mark.parametrize(
    ("label", "unit"),
    [("findings per newsroom per day", "findings per day"),
     ("source age histogram", "sources per day of age")],
)  # fmt: skip
def test_charts_have_a_y_axis_with_ticks_and_a_unit(
    report_html: str, label: str, unit: str
) -> None:
    chart = _charts(report_html)[label]
    left, top, _right, bottom = _plot_area(chart)
    axis = next(g for g in chart.iter(f"{SVG}g") if g.get("class") == "y-axis")
    ticks = [t for t in axis.iter(f"{SVG}line") if t.get("class") == "tick"]
    values = [int(str(t.text)) for t in axis.iter(f"{SVG}text") if t.get("class") != "unit"]
    assert len(ticks) == len(values) >= 2 and values[0] == 0 and values == sorted(values)
    ys = sorted(float(str(t.get("y1"))) for t in ticks)
    assert ys[0] == pytest.approx(top) and ys[-1] == pytest.approx(bottom)
    assert all(float(str(t.get("x2"))) == left for t in ticks)
    units = [t.text for t in axis.iter(f"{SVG}text") if t.get("class") == "unit"]
    assert units == [unit]
    # The tallest data point is within the axis range (nothing drawn above the top tick).
    marks = [float(str(e.get("y"))) for e in chart.iter(f"{SVG}rect") if e.get("class") == "bar"]
    marks += [float(str(e.get("cy"))) for e in chart.iter(f"{SVG}circle")]
    assert marks and min(marks) >= top - 0.01
    x_units = [t.text for g in chart.iter(f"{SVG}g") if g.get("class") == "x-axis"
               for t in g.iter(f"{SVG}text") if t.get("class") == "unit"]  # fmt: skip
    assert len(x_units) == 1 and x_units[0]


@pytest.mark.slow  # a real browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")
def test_legends_never_cover_the_data_in_chromium(
    browser: Any, report_html: str, tmp_path: Path
) -> None:
    path = tmp_path / "audit.html"
    path.write_text(report_html)
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.route("**/*", lambda r: r.abort() if r.request.url.startswith("http") else r.continue_())
    page.goto(path.as_uri())
    page.wait_for_function("() => window.hcauditReady === true")
    boxes = page.evaluate("""() => Array.from(document.querySelectorAll('svg')).map(svg => {
      const box = el => {
        const b = el.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height];
      };
      const plot = svg.querySelector('rect.plot-area');
      return {label: svg.getAttribute('aria-label'),
              plot: plot ? box(plot) : null,
              legends: Array.from(svg.querySelectorAll('g.legend')).map(box),
              data: Array.from(svg.querySelectorAll('polyline.series, rect.bar')).map(box),
              view: svg.viewBox.baseVal.height};
    })""")
    page.close()
    charted = [b for b in boxes if b["plot"] is not None]
    assert {b["label"] for b in charted} == {"source age histogram",
                                             "findings per newsroom per day"}  # fmt: skip
    for chart in charted:
        x0, y0, x1, y1 = chart["plot"]
        assert chart["legends"] and chart["data"]
        for lx0, ly0, lx1, ly1 in chart["legends"]:
            assert ly0 > y1 or ly1 < y0 or lx0 > x1 or lx1 < x0, chart["label"]  # disjoint
            assert ly1 <= chart["view"]  # inside the drawing, not clipped
        for dx0, dy0, dx1, dy1 in chart["data"]:  # the data stays in the plot area
            assert x0 - 4 <= dx0 and dx1 <= x1 + 4 and y0 - 4 <= dy0 and dy1 <= y1 + 4


def test_the_page_is_one_autoescaping_template() -> None:
    """The report's markup is the Jinja template ``audit.html``, autoescaping every value:
    no HTML is written by hand in the module (as the citation maps: one way of writing
    HTML), and hostile text lands escaped wherever it goes: cells, attributes, SVG labels,
    tooltips and evidence."""
    import inspect

    from hcgraph.provenance import report_html

    source = inspect.getsource(report_html)
    assert not re.search(r"<(?:html|td|tr|th|table|div|section|a|span|details)[ >]", source)
    assert "escape(" not in source
    evil = '<b onmouseover="x">\'&'
    seed = json.loads(SEED.read_text())
    story = {**seed, "headline": evil, "newsroom": evil, "publishers": [evil]}
    story["manifests"] = [{**m, "source_name": evil} for m in seed["manifests"]]
    with Store(None) as st:
        assert not ingest_bytes(st, [(json.dumps(story).encode(), "s")]).failures
        html = render_report(audit(st))
    assert evil not in html and "<b onmouseover" not in html
    escaped = "&lt;b onmouseover=&#34;x&#34;&gt;&#39;&amp;"
    assert html.count(escaped) >= 5
