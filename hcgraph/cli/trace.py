"""``hcgraph trace``: where did this sentence come from?"""

from __future__ import annotations

from pathlib import Path

import click

from .._io import write_atomic
from ..provenance.prov_export import PROV_FORMATS
from ..provenance.trace_picture import MAX_STORIES
from ..provenance.tracing import render_markdown, render_tree, trace
from ._common import TermConsole, file_option, on_store, out_console, store_option, width_option

FORMATS = ["tree", "json", "md", *PROV_FORMATS]


@click.command("trace")
@click.argument("target")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="tree", show_default=True)
@file_option("-o", "--output", help="Write to this file instead of stdout.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True,
              help="For a manifest or claim: detail at most this many citing stories.")  # fmt: skip
@click.option("--all", "show_all", is_flag=True, help="Detail every citing story.")
@width_option
@store_option
def trace_command(
    target: str, fmt: str, output: Path | None, limit: int, show_all: bool, store_dir: Path
) -> None:
    """Print the provenance chain of TARGET.

    TARGET is a story URL, a paragraph or key-fact IRI (URL#s2-p1, URL#kf1), a manifest id or
    a claim id. The chain: sentence → cited claim ids → manifest (title, date) → source
    document (URL, date) → publisher, plus the writer agent and run and hcgraph's ingest.
    For a manifest or claim: every story and paragraph citing it. provn/provjson are W3C PROV
    (written with the prov package); dot/svg are a top-down picture of the chain (svg needs
    Graphviz), drawing a few citing stories and counting the rest.

    \b
    Example:
      hcgraph trace 'https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/#s1-p1'
      hcgraph trace 1792439777014362933 --format provn -o manifest.provn
    """
    if fmt in ("dot", "svg"):  # the picture draws a few citing stories and counts the rest
        limit, show_all = MAX_STORIES, False
    tr = on_store(trace, store_dir, target, limit=None if show_all else limit)
    if fmt == "tree" and output is None:
        # A terminal: wrapped to its width (never cropped); a pipe: whole lines (grep finds
        # a whole title or URL).
        out_console.print(render_tree(tr), soft_wrap=False)
        return
    if fmt == "json":
        text = tr.to_json() + "\n"
    elif fmt == "md":
        text = render_markdown(tr) + "\n"
    elif fmt == "tree":
        import io

        buffer = io.StringIO()  # not a terminal: whole lines (or --width), no colours
        TermConsole(file=buffer, highlight=False, emoji=False).print(render_tree(tr))
        text = buffer.getvalue()
    else:
        text = PROV_FORMATS[fmt](tr)
    if output is None:
        click.echo(text, nl=False)
    else:
        write_atomic(output, text.encode("utf-8"))  # atomic; an OSError becomes one line
        out_console.print(f"wrote {fmt} trace -> {output}", markup=False)
