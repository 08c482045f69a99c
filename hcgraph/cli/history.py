"""``hcgraph history``: every version of a story, and what changed."""

from __future__ import annotations

from pathlib import Path

import click

from ..provenance.versions import history, render_markdown, render_table
from ._common import on_store, out_console, store_option, width_option


@click.command("history")
@click.argument("story_url")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "md"]), default="table",
              show_default=True)  # fmt: skip
@width_option
@store_option
def history_command(story_url: str, fmt: str, store_dir: Path) -> None:
    """List every version of STORY_URL hcgraph has seen and what changed between them.

    Versions come from the raw archive (every fetch, with time and SHA-256) and the graph's
    prov:wasRevisionOf chain. Changes: paragraphs added/removed/edited (word diff), cited
    claims and listed sources added/removed, corrections, headline. Withdrawals (the
    story's URL answered 404/410) are listed under the version withdrawn.

    \b
    Example:
      hcgraph history https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/
    """
    h = on_store(history, store_dir, story_url)
    if fmt == "json":
        click.echo(h.to_json())
    elif fmt == "md":
        click.echo(render_markdown(h), nl=False)
    else:
        for item in render_table(h):
            out_console.print(item, soft_wrap=False)
