"""``hcgraph viz``: draw an interactive citation map as one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..viz import RENDERERS, STORY_GROUPS, VIEWS, draw_map
from ._common import file_option, flag_option, on_store, store_option

_BIG_MAP = 5000


@click.command()
@click.option(
    "--view", type=click.Choice(list(VIEWS)), default="reuse", show_default=True,
    help="story: one story's citation trail; reuse: stories ↔ manifests ↔ publishers; "
    "publisher: one publisher's reach; sources: publishers → sources → stories as nested "
    "circles; time: stories by date, citations drawn to their sources' dates.",
)  # fmt: skip
@click.option(
    "--focus", default=None, metavar="STORY-URL|ID|SLUG|MANIFEST-ID|PUBLISHER",
    help="What to centre on: a story (URL, id or slug), a manifest id or a publisher name.",
)  # fmt: skip
@file_option(
    "--out", help="Output HTML file (default: output/map.html, or output/map-VIEW-FOCUS.html)."
)
@click.option(
    "--top", type=click.IntRange(min=1), default=None, metavar="N",
    help="reuse, sources: keep only the N manifests cited by the most stories.",
)  # fmt: skip
@click.option(
    "--group-stories", type=click.Choice(list(STORY_GROUPS)), default=None,
    help="reuse/publisher: fold stories into one node per newsroom, day or both.",
)  # fmt: skip
@click.option(
    "--overview/--stories-all", "overview", default=None,
    help="reuse: draw only sources and publishers, each source's citing stories listed and "
    "drawn on a click (default past 20,000 stories with no --focus/--group-stories), or "
    "draw every story.",
)  # fmt: skip
@click.option(
    "--renderer", type=click.Choice(list(RENDERERS)), default="auto", show_default=True,
    help="webgl (sigma.js: big maps), canvas (vis-network: shapes and arrows), or auto: "
    "webgl past 1,000 nodes (sources and time: one page each, auto only).",
)  # fmt: skip
@flag_option("--include-withdrawn", "Draw withdrawn stories too (default: current stories only).")
@store_option
def viz(store_dir: Path, **options: Any) -> None:
    """Draw an interactive citation map: one HTML file that works offline.

    It opens from file:// with a legend, tooltips, search, filters and click-to-highlight
    provenance.

    \b
    Example:
      hcgraph viz                                   # reuse map -> output/map.html
      hcgraph viz --view story --focus agentic-rl-production
      hcgraph viz --view publisher --focus arxiv-ai-agents-tool-use --out pub.html
      hcgraph viz --top 200 --group-stories newsroom-day   # big corpora, readable
      hcgraph viz --view sources                    # -> output/map-sources.html
      hcgraph viz --view time                       # -> output/map-time.html
    """
    info = on_store(draw_map, store_dir, **options)  # options: draw_map's, named alike
    click.echo(
        f"wrote {info.path} ({info.view} map: {info.nodes} nodes, {info.edges} edges, "
        f"{info.bytes / 1e6:.1f} MB)",
        err=True,
    )
    if info.nodes > _BIG_MAP and options["top"] is None and options["group_stories"] is None:
        click.echo(
            "tip: a map this big reads better with --top N and/or --group-stories newsroom-day",
            err=True,
        )
