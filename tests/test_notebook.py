"""Notebook maps without a browser: what the pages hold (the browser checks are in
tests/test_notebook_browser.py)."""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
import sys
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest

from hcgraph import Store, ingest_bytes
from hcgraph.viz import MapDisplay, show_map, to_pyvis
from tests.conftest import ROOT, SEED


@pytest.fixture(scope="module")
def seed_only() -> Iterator[Store]:
    with Store(None) as st:
        assert not ingest_bytes(st, [(SEED.read_bytes(), "seed.json")]).failures
        yield st


def _csp_scripts(html: str) -> tuple[str, list[str]]:
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp is not None
    scripts = re.findall(r"<script>(.*?)</script>", html, re.DOTALL)
    hashes = ["'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
              for s in scripts]  # fmt: skip
    return csp.group(1), hashes


def test_pyvis_pages_reference_nothing_remote(seed_only: Store, tmp_path: Path) -> None:
    net = to_pyvis(seed_only, view="story", focus="agentic-rl-production")
    for html in (net.generate_html(), net.generate_html(notebook=True)):
        # No element loads anything: no src, no stylesheet link, no CDN.
        assert not re.search(r"<(?:script|link|img|iframe)[^>]*\s(?:src|href)=", html)
        assert "cdnjs" not in html and "jsdelivr" not in html and "bootstrap" not in html
        csp, hashes = _csp_scripts(html)
        assert csp.startswith("default-src 'none'; script-src ")
        assert csp.split("script-src ")[1].split(";")[0].split() == hashes
        assert "unsafe-inline" not in csp.split("script-src ")[1].split(";")[0]
        assert "vis-network" in html and "sourceMappingURL" not in html
    path = tmp_path / "story.html"
    net.write_html(str(path))
    assert path.read_text() == net.html


def test_repr_html_is_a_sandboxed_srcdoc_iframe(seed_only: Store) -> None:
    shown = show_map(seed_only, "story", focus="agentic-rl-production", height="500px")
    assert isinstance(shown, MapDisplay)
    cell = shown._repr_html_()
    match = re.fullmatch(r'<iframe srcdoc="([^"]*)" sandbox="allow-scripts" title="[^"]*" '
                         r'style="[^"]*height:500px[^"]*"></iframe>', cell)  # fmt: skip
    assert match is not None
    assert unescape(match.group(1)) == shown.html
    assert shown.html.startswith("<!DOCTYPE html>")
    net_cell = to_pyvis(seed_only)._repr_html_()
    assert net_cell.startswith('<iframe srcdoc="') and 'sandbox="allow-scripts"' in net_cell


@pytest.mark.slow  # an interpreter start
def test_show_map_needs_no_ipython(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from hcgraph import Store, ingest_bytes\n"
        "from hcgraph.viz import show_map\n"
        f"st = Store(None); ingest_bytes(st, [(open({str(SEED)!r}, 'rb').read(), 's')])\n"
        "html = show_map(st)._repr_html_()\n"
        "print('IPython' in sys.modules, 'pyvis' in sys.modules, html[:7])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)  # fmt: skip
    assert out.stdout.split() == ["False", "False", "<iframe"]
