"""The API reference (docs/api/) builds strictly: Sphinx with ``-n -W``, so every
cross-reference in the docstrings resolves and every public name is documented; and it
covers every module a library user meets."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import hcgraph
from tests.conftest import ROOT

API = ROOT / "docs" / "api"
# Modules the reference leaves out: the CLI (its manual is docs/commands.md), the private
# helpers (``_io``, ``_lazy``, …) and the synthetic test corpus generators (``sample*``).
LEFT_OUT = re.compile(r"hcgraph(\.cli(\..*)?|\.sample(_\w+)?|(\..*)?\._\w+|\.__main__)$")


def _modules() -> set[str]:
    package = ROOT / "hcgraph"
    names = set()
    for path in package.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if not LEFT_OUT.match(name):
            names.add(name)
    return names


def _documented() -> set[str]:
    text = "\n".join(page.read_text(encoding="utf-8") for page in API.glob("*.rst"))
    return set(re.findall(r"^\.\. automodule:: (\S+)$", text, re.M))


def test_every_module_is_in_the_reference() -> None:
    """A new module gets its place in a page of docs/api/ (or is private: ``_name``)."""
    missing = _modules() - _documented()
    assert not missing, f"modules missing from docs/api/*.rst: {sorted(missing)}"
    assert not _documented() - _modules() - {"hcgraph"}, "a page documents a module that is gone"


@pytest.mark.slow
def test_api_reference_builds_strictly(tmp_path: Path) -> None:
    out = tmp_path / "html"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-n", "-W", "--keep-going", "-q", "-b", "html",
         str(API), str(out)],
        capture_output=True, text=True, env=env, timeout=240,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-4000:]
    assert "WARNING" not in build.stderr
    index = (out / "index.html").read_text(encoding="utf-8")
    # Each public name links to where it is documented (the build fails if one is not).
    for name in ("Store", "ingest_paths", "crawl", "trace", "push_graphs", "draw_map"):
        assert f"hcgraph.{name}</span>" in index
    assert 'href="store.html#hcgraph.store.Store"' in index
    assert len(re.findall(r'<li><p><a class="reference internal"', index)) == len(
        [n for n in hcgraph.__all__ if n != "__version__"]
    )
    # A docstring's cross-reference became a link: the crawler's map of its modules.
    crawling = (out / "crawling.html").read_text(encoding="utf-8")
    assert 'href="#module-hcgraph.crawling.discovery"' in crawling
