"""hcgraph's one exception hierarchy.

Every error a user can cause (bad input, a failing server, a wrong option) is raised as
one of these, so the CLI can print a single line instead of a traceback and library users
can catch exactly what they mean to::

    HcgraphError
    ├── StoryError            a document is not a valid story (names source + JSON path)
    │   └── NotAStoryError    valid JSON, but not a hangingcontext.desk/1 story
    ├── StoreError            the embedded store cannot be opened, read or written
    ├── ExportError           an export cannot be produced
    │   └── UnknownFormatError
    ├── QueryError            a saved query is unknown, malformed or badly parameterised
    ├── CheckError            shapes cannot be loaded or run
    ├── CrawlError            a crawl cannot start (bad seed, bad option)
    ├── VizError              a map cannot be drawn (unknown view, graph too large)
    ├── PushError             a triple store rejected or failed a push
    └── ProvenanceError       a trace/audit/history target is unknown
"""

from __future__ import annotations

__all__ = [
    "CheckError",
    "CrawlError",
    "ExportError",
    "HcgraphError",
    "NotAStoryError",
    "ProvenanceError",
    "PushError",
    "QueryError",
    "StoreError",
    "StoryError",
    "UnknownFormatError",
    "VizError",
]


class HcgraphError(Exception):
    """Base of every error hcgraph raises on purpose."""


class StoryError(HcgraphError):
    """A document failed to parse or validate as a story.

    Attributes:
        source: the file path or URL the bytes came from.
        problems: ``(json_path, message)`` pairs, e.g.
            ``("sections[2].paragraphs[0].cites[1].manifest_id", "field required")``.
    """

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        self.source = source
        self.problems = problems
        first_path, first_msg = problems[0] if problems else ("", "invalid story")
        where = f"{first_path}: " if first_path else ""
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(f"{source}: {where}{first_msg}{more}")


class NotAStoryError(StoryError):
    """Valid JSON that is not a ``hangingcontext.desk/1`` story (wrong schema or type)."""


class StoreError(HcgraphError):
    """The embedded RDF store could not be opened, read or written."""


class ExportError(HcgraphError):
    """An export could not be produced."""


class UnknownFormatError(ExportError):
    """An export format name that no serializer is registered for."""


class QueryError(HcgraphError):
    """A saved query is unknown, has a syntax error, or got bad parameters."""


class CheckError(HcgraphError):
    """SHACL shapes or integrity checks could not be loaded or run."""


class CrawlError(HcgraphError):
    """A crawl could not start: a bad seed, option or archive."""


class VizError(HcgraphError):
    """A citation map could not be drawn."""


class PushError(HcgraphError):
    """A triple store rejected a push or could not be reached."""


class ProvenanceError(HcgraphError):
    """A trace, audit or history target is unknown or cannot be answered."""
