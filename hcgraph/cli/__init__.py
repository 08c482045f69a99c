"""The ``hcgraph`` command line: a thin layer over the library.

Each command lives in its own module under ``hcgraph.cli`` and is listed in ``COMMANDS``
(name → ``module:function``); modules are imported only when their command runs, so
``hcgraph --help`` stays fast. Library errors (:class:`~hcgraph.errors.HcgraphError`) become
one-line messages on stderr with exit code 1 — never a traceback.

Exit codes: 0 success; 1 user error (bad option, bad store, unknown name); 2 usage error
(click); 3 partial failure (some inputs or URLs failed, the rest done).
"""

from __future__ import annotations

import pkgutil
import sys
from typing import Any

import click

from .._version import __version__
from ..damage import damage_found
from ..errors import HcgraphError, visible

__all__ = ["COMMANDS", "SUMMARIES", "main"]

COMMANDS: dict[str, str] = {
    "ingest": "hcgraph.cli.ingest:ingest",
    "export": "hcgraph.cli.export:export",
    "stats": "hcgraph.cli.stats:stats",
    "push": "hcgraph.cli.push:push_command",
    "viz": "hcgraph.cli.viz:viz",
    "crawl": "hcgraph.cli.crawl:crawl_command",
    "rebuild": "hcgraph.cli.rebuild:rebuild",
    "demo": "hcgraph.cli.demo:demo",
    "query": "hcgraph.cli.query:query",
    "check": "hcgraph.cli.check:check",
    "serve": "hcgraph.cli.serve:serve",
    "trace": "hcgraph.cli.trace:trace_command",
    "audit": "hcgraph.cli.audit:audit_command",
    "history": "hcgraph.cli.history:history_command",
    "manifests": "hcgraph.cli.manifests:manifests",
    "archive": "hcgraph.cli.archive:archive",
    "package": "hcgraph.cli.package:package",
}


#: One line per command for ``hcgraph --help``, so listing the commands imports none of
#: them (tests/test_cli.py checks each is the start of its command's own help).
SUMMARIES: dict[str, str] = {
    "ingest": "Ingest story JSON files (or directories of them) into the store.",
    "export": "Export the graph: the union of all graphs, the named graphs, or a projection.",
    "stats": "Count stories, triples and nodes per type.",
    "push": "Push each named graph to a triple store.",
    "viz": "Draw an interactive citation map: one HTML file that works offline.",
    "crawl": "Crawl stories from SEED URLs breadth-first over their related links.",
    "rebuild": "Rebuild the store's graph from the raw archive the crawler kept.",
    "demo": "Run the whole job offline on a bundled sample site.",
    "query": "Run a saved query by NAME, or any SPARQL .rq FILE, over the store.",
    "check": "Validate the store: SHACL shapes plus the integrity queries.",
    "serve": "Serve the store read-only over the SPARQL 1.1 Protocol until Ctrl-C.",
    "trace": "Print the provenance chain of TARGET.",
    "audit": "Check stories (default: all current ones) against the promises of their disclosure.",
    "history": "List every version of STORY_URL hcgraph has seen and what changed between them.",
    "manifests": "Read the cited manifests' claims and check each paragraph against them.",
    "archive": "Hand the raw archive to web-archive tools: export it as a WACZ of WARC records.",
    "package": "Package the store's graph, claim reviews, audit and crawl report as an RO-Crate.",
}


class _LazyGroup(click.Group):
    """A click group whose commands come from ``COMMANDS`` and are imported on demand."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Every command has a line in SUMMARIES (a test checks): listing imports none.
        with formatter.section("Commands"):
            formatter.write_dl([(name, SUMMARIES[name]) for name in self.list_commands(ctx)])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        command = pkgutil.resolve_name(target)
        assert isinstance(command, click.Command)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (HcgraphError, RuntimeError, OSError) as exc:
            # Ours, or a damaged table met while reading (past the places that name it).
            problem = exc if isinstance(exc, HcgraphError) else damage_found(exc)
            if problem is None:
                raise
            # The message often quotes a story, a server or a file name: escaped for the terminal.
            click.echo(f"error: {visible(str(problem))}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hcgraph")
def cli() -> None:
    """hcgraph: provenance knowledge graphs from Hanging Context stories.

    \b
    Example:
      hcgraph ingest tests/fixtures/ && hcgraph stats && hcgraph export --format turtle
    """


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="hcgraph")
