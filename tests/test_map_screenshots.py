"""The docs' map screenshots (scripts/map_screenshots.py, issue 40 item 6) keep up with the CLI.

A view added to ``hcgraph viz --view`` without a screenshot fails here, and so does an image
docs/maps.md shows that is not in docs/img/.
"""

from __future__ import annotations

import importlib.util
import re
from types import ModuleType

import click

from hcgraph.cli import cli
from tests.conftest import ROOT

MAPS = ROOT / "docs" / "maps.md"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "map_screenshots", ROOT / "scripts" / "map_screenshots.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cli_views() -> list[str]:
    viz = cli.get_command(click.Context(cli), "viz")
    assert viz is not None
    (view,) = [p for p in viz.params if p.name == "view"]
    assert isinstance(view.type, click.Choice)
    return list(view.type.choices)


def test_the_script_shoots_every_view_the_cli_offers() -> None:
    script = _script()
    assert sorted(script.VIEWS) == sorted(_cli_views())
    assert len(set(script.VIEWS)) == len(script.VIEWS)
    names = script.image_names()
    for view in _cli_views():
        assert f"map-{view}-300.png" in names and f"map-{view}-10k.png" in names


def test_docs_show_every_screenshot_and_each_exists() -> None:
    shown = re.findall(r"!\[[^\]]+\]\((img/[^)\s]+\.png)\)", MAPS.read_text(encoding="utf-8"))
    assert len(shown) == len(set(shown))
    for name in _script().image_names():
        assert f"img/{name}" in shown, f"docs/maps.md does not show {name}"
    missing = [s for s in shown if not (MAPS.parent / s).is_file()]
    assert missing == []
    # Small enough to keep in the repository.
    total = sum((MAPS.parent / s).stat().st_size for s in shown)
    assert total < 3.5e6, f"{total / 1e6:.1f} MB of screenshots"
