"""hcgraph's one exception hierarchy.

Every error a user can cause (bad input, a failing server, a wrong option) is raised as
one of these, so the CLI can print a single line instead of a traceback and library users
can catch exactly what they mean to::

    HcgraphError
    ├── StoryError            a document is not a valid story (names source + JSON path)
    │   └── NotAStoryError    valid JSON, but not a hangingcontext.desk/1 story
    ├── InputError            an input path given (a story file, a directory) is missing
    ├── StoreError            the embedded store cannot be opened, read or written
    │   ├── ArchiveError      the raw archive cannot give back a body (missing, corrupt)
    │   ├── StoreBusyError    another process is writing to it
    │   ├── StoreDamagedError its database is damaged (rebuild it)
    │   ├── StoreDiskError    its files cannot be written or read (a full disk)
    │   └── StoreFormatError  it is in a format this hcgraph does not read (rebuild it)
    ├── OutputError           an output file or directory cannot be written
    ├── ExportError           an export cannot be produced
    │   └── UnknownFormatError
    ├── QueryError            a saved query is unknown, malformed or badly parameterised
    ├── CheckError            shapes cannot be loaded or run
    ├── CrawlError            a crawl cannot start (bad seed, bad option)
    ├── VizError              a map cannot be drawn (unknown view, graph too large)
    ├── PushError             a triple store rejected or failed a push
    ├── ServeError            the SPARQL endpoint cannot start (host, port, workers)
    ├── ManifestError         manifest replies cannot be read or fetched
    │   ├── ManifestAuthError the manifest API refused the key (401/403)
    │   └── ReplyShapeError   a reply is not the shape hcgraph reads (names the JSON path)
    └── ProvenanceError       a trace/audit/history target is unknown
"""

from __future__ import annotations

import re

__all__ = [
    "MAX_PROBLEMS",
    "ArchiveError",
    "CheckError",
    "CrawlError",
    "ExportError",
    "HcgraphError",
    "InputError",
    "ManifestAuthError",
    "ManifestError",
    "NotAStoryError",
    "OutputError",
    "ProvenanceError",
    "PushError",
    "QueryError",
    "ReplyShapeError",
    "ServeError",
    "StoreBusyError",
    "StoreDamagedError",
    "StoreDiskError",
    "StoreError",
    "StoreFormatError",
    "StoryError",
    "UnknownFormatError",
    "VizError",
    "failure_text",
    "first_line",
    "one_line",
    "visible",
]


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (for one-line user errors).

    >>> first_line(OSError("disk full\\nat block 7"))
    'disk full'
    >>> first_line(KeyError())
    'KeyError'
    """
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# Never raw on a terminal: C0/C1 controls and DEL (escape sequences, CR, NEL), bidi controls
# (U+202A-E, U+2066-9, LRM/RLM, ALM), characters that hide text (soft hyphen, zero width space,
# word joiner, invisible operators, BOM, U+FFF9-B, tag characters U+E0000-7F), U+2028/9 and
# lone surrogates. ZWNJ/ZWJ stay: scripts and emoji need them and they hide nothing.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f]"
)
_UNSAFE_LINE = re.compile(_UNSAFE.pattern[:1] + "\t\n" + _UNSAFE.pattern[1:])


def _escape(match: re.Match[str]) -> str:
    char = match.group()  # as Python's repr writes it (\x1b, \u202e, \t, \n), but CR as \x0d
    return "\\x0d" if char == "\r" else char.encode("unicode_escape").decode("ascii")


def visible(text: str, *, one_line: bool = False) -> str:
    r"""``text`` with each control, bidi and hiding character as a ``\xNN``/``\uNNNN``
    escape: what every text someone else wrote goes through before a terminal prints it.
    Tab and newline are kept, unless ``one_line``.

    >>> visible("\x1b[31mred\x07 \u202eevil\u0085")
    '\\x1b[31mred\\x07 \\u202eevil\\x85'
    >>> visible("a\tb\nc \U000e0041", one_line=True)
    'a\\tb\\nc \\U000e0041'
    """
    return (_UNSAFE_LINE if one_line else _UNSAFE).sub(_escape, text)


def one_line(text: object) -> str:
    """:func:`visible` on one line, for any value (``None`` is ``""``): a cell, a failure."""
    return visible("" if text is None else str(text), one_line=True)


#: Problems listed per story; the rest are counted ("… and N more").
MAX_PROBLEMS = 20


def problem_lines(problems: list[tuple[str, str]]) -> list[str]:
    """``path: message`` for each problem, at most :data:`MAX_PROBLEMS`, then ``… and N more``."""
    lines = [f"{path}: {msg}" if path else msg for path, msg in problems[:MAX_PROBLEMS]]
    if len(problems) > MAX_PROBLEMS:
        lines.append(f"… and {len(problems) - MAX_PROBLEMS} more")
    return lines


def failure_text(json_path: str | None, reason: str) -> str:
    """A failure's one-line reason (:attr:`StoryError.reason`) after its first JSON path.

    >>> failure_text("related[0].url", "bad; related[1].url: bad"), failure_text(None, "gone")
    ('related[0].url: bad; related[1].url: bad', 'gone')
    """
    return f"{json_path}: {reason}" if json_path else reason


class HcgraphError(Exception):
    """Base of every error hcgraph raises on purpose."""


class StoryError(HcgraphError):
    """A document (from ``source``, a path or URL) failed to parse or validate as a story;
    ``problems`` are ``(json_path, message)`` pairs."""

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        self.source = source
        self.problems = problems
        super().__init__(f"{source}: {'; '.join(problem_lines(problems) or ['invalid story'])}")

    @property
    def json_path(self) -> str:
        """The JSON path of the first problem (``""`` for the whole document)."""
        return self.problems[0][0] if self.problems else ""

    @property
    def reason(self) -> str:
        """Every problem (capped) in one line, without the first path: ``msg1; path2: msg2; …``."""
        if not self.problems:
            return "invalid story"
        _, *rest = problem_lines(self.problems)
        return "; ".join([self.problems[0][1], *rest])


class NotAStoryError(StoryError):
    """Valid JSON that is not a ``hangingcontext.desk/1`` story (wrong schema or type)."""


class InputError(HcgraphError):
    """An input path the user gave (a story file or directory) does not exist."""


class StoreError(HcgraphError):
    """The embedded RDF store could not be opened, read or written."""


class StoreBusyError(StoreError):
    """Another process holds the store's write lock: ``holder`` says which (``hcgraph crawl,
    pid 123``), or is ``None`` when unknown."""

    def __init__(self, message: str, holder: str | None = None) -> None:
        super().__init__(message)
        self.holder = holder


class StoreDamagedError(StoreError):
    """The store's database is damaged (``Corruption`` from the engine): rebuild it."""


class StoreDiskError(StoreError):
    """The store's files could not be written or read (a full disk): nothing the data did,
    so a crawl blames no story and resumes once the disk has room."""


class StoreFormatError(StoreError):
    """The store is in a format this hcgraph does not read (``hcgraph rebuild`` makes one
    it does)."""


class OutputError(HcgraphError):
    """An output file or directory could not be written (names the path and why)."""


class ExportError(HcgraphError):
    """An export could not be produced."""


class UnknownFormatError(ExportError):
    """An export format name that no serializer is registered for."""


class QueryError(HcgraphError):
    """A saved query is unknown, has a syntax error, or got bad parameters."""


class CheckError(HcgraphError):
    """SHACL shapes or integrity checks could not be loaded or run."""


class ArchiveError(StoreError):
    """The raw archive cannot give back a body: missing, or its bytes no longer match."""


class CrawlError(HcgraphError):
    """A crawl could not start: a bad seed, option or archive."""


class VizError(HcgraphError):
    """A citation map could not be drawn."""


class PushError(HcgraphError):
    """A triple store rejected a push or could not be reached."""


class ServeError(HcgraphError):
    """``hcgraph serve`` could not start (host, port, workers, the vendored workbench)."""


class ProvenanceError(HcgraphError):
    """A trace, audit or history target is unknown or cannot be answered."""


class ManifestError(HcgraphError):
    """Manifest replies could not be read or fetched (bad ``--dir``, ``--api`` or key)."""


class ManifestAuthError(ManifestError):
    """The manifest API refused the key (401/403): the message names its variable, not it."""


class ReplyShapeError(ManifestError):
    """A manifest reply (from ``source``, a URL or path) is not the shape hcgraph reads:
    ``reason`` says what is wrong at ``json_path`` (``signal.claims[2].text``)."""

    def __init__(self, source: str, json_path: str, reason: str) -> None:
        self.source = source
        self.json_path = json_path
        self.reason = reason
        super().__init__(f"{source}: {failure_text(json_path, reason)}")
