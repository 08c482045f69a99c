"""``hcgraph history``: every version of a story, and what changed."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from ..errors import visible
from ..mdtext import md_cell, md_code, md_url
from ..mdtext import md_text as _md
from ..provenance.versions import History, history
from ..store import Store
from ._common import out_console, store_option, width_option


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
    claims and listed sources added/removed, corrections, headline.

    \b
    Example:
      hcgraph history https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/
    """
    with Store(store_dir, read_only=True) as store:
        h = history(store, story_url)
    if fmt == "json":
        click.echo(h.to_json())
    elif fmt == "md":
        click.echo(_markdown(h), nl=False)
    else:
        _table(h)


def _v(text: str | None) -> str:
    """Text from a story (or the archive) for the terminal: one line, escaped."""
    return visible(text or "", one_line=True)


def _table(h: History) -> None:
    table = Table(title=Text(f"history of {_v(h.url)}"))
    for col in ("#", "first seen", "last seen", "sha256", "fetches", "in graph", "changes"):
        table.add_column(col, justify="right" if col in ("#", "fetches") else "left",
                         no_wrap=col in ("#", "sha256", "fetches"))  # fmt: skip
    for i, v in enumerate(h.versions, 1):
        table.add_row(str(i), _short(v.first_seen), _short(v.last_seen), _v(v.sha256[:12]),
                      str(v.fetches), v.in_graph or "archive only",
                      Text(_v(v.summary())))  # fmt: skip
    out_console.print(table, soft_wrap=False)
    for i, v in enumerate(h.versions, 1):
        if not v.changes or v.changes[0].kind == "not compared":
            continue
        out_console.print(Text(f"version {i - 1} -> {i}", style="bold"))
        for c in v.changes:
            detail = c.diff or c.new or c.old or ""
            line = f"  {c.kind} {_v(c.what)}" + (f": {_v(detail)}" if detail else "")
            out_console.print(Text(line), soft_wrap=False)


def _short(when: str | None) -> str:
    """An ISO time to the second, for the table (JSON keeps the full precision)."""
    return when[:19].replace("T", " ") if when else "-"


def _markdown(h: History) -> str:
    lines = [f"# History of {md_url(h.url)}", "",
             "| # | first seen | last seen | sha256 | fetches | in graph | changes |",
             "| ---: | --- | --- | --- | ---: | --- | --- |"]  # fmt: skip
    for i, v in enumerate(h.versions, 1):
        lines.append(f"| {i} | {v.first_seen or '-'} | {v.last_seen or '-'} | "
                     f"{md_cell(v.sha256[:12])} | {v.fetches} | {v.in_graph or 'archive only'} | "
                     f"{md_cell(v.summary())} |")  # fmt: skip
    for i, v in enumerate(h.versions, 1):
        if v.changes and v.changes[0].kind != "not compared":
            lines += ["", f"## Version {i - 1} → {i}", ""]
            for c in v.changes:
                detail = c.diff or c.new or c.old or ""
                lines.append(
                    f"- {c.kind} {md_code(c.what)}" + (f": {_md(detail)}" if detail else "")
                )
    return "\n".join(lines) + "\n"
