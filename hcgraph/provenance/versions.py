"""``history``: how did a story change?

Versions come from two places and are merged by SHA-256:

* the raw archive (``STORE/archive``, :mod:`hcgraph.archive`): every fetch of the story's
  JSON, with its time; a ``304 Not Modified`` re-confirms the body it names. Bodies are kept,
  so two archived versions can be compared;
* the graph: the story's current raw document and its ``prov:wasRevisionOf`` chain (what
  ``hcgraph ingest`` of local files records too, without bodies).

Withdrawals come from both too: the story's ``prov:invalidatedAtTime`` (withdrawn now), a
revision's (withdrawn before it came back), and the archive's fetches answering 404/410
twice in a row (the crawler's rule), each filed under the version that was current then.

Between consecutive versions, :func:`diff_stories` lists what changed: paragraphs
added/removed/edited (a word diff), cited claims and listed sources added/removed, new
corrections, a changed headline or dek. What a version said comes from its archived body, or
else from the graph: the current version's story graph, an earlier one's
``hc:versionContent`` (kept on the revision when it was replaced, see
:mod:`hcgraph.version_content`). Only a version replaced before hcgraph kept that cannot
be compared: the store holds just its SHA-256 and time, and the history says so.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from ..archive import Archive
from ..errors import HcgraphError, ProvenanceError
from ..errors import one_line as _v
from ..iris import named_node
from ..mdtext import md_cell, md_code, md_text, md_url
from ..model import Story, parse_story
from ..store import Store
from ..version_content import Content, from_graph, from_story
from ._graph import rows

__all__ = [
    "Change",
    "History",
    "Version",
    "diff_content",
    "diff_stories",
    "history",
    "render_markdown",
    "render_table",
]

_CHAIN = """
SELECT ?story ?raw ?sha ?created ?ended ?loc ?said WHERE { GRAPH ?story {
  ?story hc:rawDocument ?current .
  ?current prov:wasRevisionOf* ?raw .
  OPTIONAL { ?raw hc:sha256 ?sha }
  OPTIONAL { ?raw dcterms:created ?created }
  OPTIONAL { ?raw hc:versionContent ?said }
  OPTIONAL { ?ingest prov:used ?raw ; prov:endedAtTime ?ended .
             OPTIONAL { ?ingest hc:sourceLocation ?loc } }
} }
"""
_RAW = "https://w3id.org/hcgraph/id/raw/"


@dataclass
class Version:
    """One version (distinct body) of the story.

    Attributes:
        sha256: SHA-256 of the raw bytes.
        first_seen / last_seen: first and last fetch (or ingest) that saw these bytes.
        fetches: archive records naming these bytes (200s and 304s).
        sources: where the bytes were fetched from (fetch URL or file).
        in_graph: ``current`` (the graph is built from it), ``revision`` (in the
            ``prov:wasRevisionOf`` chain) or ``None`` (archive only).
        archived: the body is in the archive.
        changes: what changed from the previous version (empty for the first).
        withdrawn: when the story was withdrawn while this was its version (its URL
            answered 404/410), oldest first.
    """

    sha256: str
    first_seen: str | None = None
    last_seen: str | None = None
    fetches: int = 0
    sources: list[str] = field(default_factory=list)
    in_graph: str | None = None
    archived: bool = False
    changes: list[Change] = field(default_factory=list)
    withdrawn: list[str] = field(default_factory=list)
    content: Content | None = field(default=None, repr=False)
    chain_position: int = field(default=-1, repr=False)  # in the revision chain, oldest 0

    def withdrawn_at(self, when: str | None) -> None:
        """File one withdrawal (an ISO time) under this version, once."""
        if when and when not in self.withdrawn:
            self.withdrawn.append(when)
            self.withdrawn.sort()

    def summary(self) -> str:
        """``+1 paragraph, ~1 edited, +2 citations`` style one-liner."""
        counts = Counter(c.kind for c in self.changes)  # kinds in first-change order
        return ", ".join(f"{n} {k}" for k, n in counts.items())


@dataclass(frozen=True)
class Change:
    """One difference between two versions: ``kind`` (e.g. ``paragraph edited``), ``what``
    (a paragraph key, manifest or claim id) and details (old/new text, word diff)."""

    kind: str
    what: str
    old: str | None = None
    new: str | None = None
    diff: str | None = None


@dataclass
class History:
    """Every version of one story hcgraph has seen, oldest first; ``withdrawn_at``: when
    the story was withdrawn, while it is (None: it is current)."""

    url: str
    versions: list[Version]
    withdrawn_at: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``--format json``)."""
        return {
            "url": self.url,
            "withdrawn_at": self.withdrawn_at,
            "versions": [
                {
                    "version": i,
                    "sha256": v.sha256,
                    "first_seen": v.first_seen,
                    "last_seen": v.last_seen,
                    "fetches": v.fetches,
                    "sources": v.sources,
                    "in_graph": v.in_graph,
                    "archived": v.archived,
                    "withdrawn": v.withdrawn,
                    "changes": [
                        {k: val for k, val in c.__dict__.items() if val is not None}
                        for c in v.changes
                    ],
                }
                for i, v in enumerate(self.versions, 1)
            ],
        }

    def to_json(self) -> str:
        """The history as indented JSON."""
        return json.dumps(self.as_dict(), indent=2, ensure_ascii=False)


def history(store: Store, story_url: str, archive: Archive | Path | str | None = None) -> History:
    """Every version of ``story_url`` from the archive and the graph, with changes.

    Args:
        store: the store (its ``archive/`` is used unless ``archive`` is given).
        story_url: the story's canonical URL (its page, not ``index.json``).
        archive: another raw archive directory.

    Raises:
        ProvenanceError: neither the graph nor the archive knows the story.
    """
    url = story_url.strip().split("#", 1)[0].removesuffix("index.json")
    if archive is None and store.directory is not None:
        archive = store.directory / "archive"
    arc = archive if isinstance(archive, Archive) or archive is None else Archive(archive)
    versions: dict[str, Version] = {}
    if arc is not None:
        _from_archive(arc, url, versions)
    withdrawn_at = _from_graph(store, url, versions)
    if not versions:
        raise ProvenanceError(f"{story_url}: no version of this story in the store or archive")
    ordered = sorted(
        versions.values(), key=lambda v: (v.first_seen or "", v.chain_position, v.sha256)
    )
    # The graph's chain is authoritative for order where it exists: newest is current.
    ordered.sort(key=lambda v: v.in_graph == "current")
    for prev, cur in pairwise(ordered):
        if prev.content is not None and cur.content is not None:
            cur.changes = diff_content(prev.content, cur.content)
        else:
            unknown = prev if prev.content is None else cur
            cur.changes = [Change("not compared", _UNKNOWN.format(sha=unknown.sha256[:12]))]
    return History(url, ordered, withdrawn_at)


_UNKNOWN = (
    "the store holds only the SHA-256 and time of version {sha}: its body is not in the"
    " archive and its text was not kept when it was replaced"
)


def _from_archive(arc: Archive, url: str, versions: dict[str, Version]) -> None:
    parsed: dict[str, Story | None] = {}
    gone: set[str] = set()  # fetch URLs whose last answer was 404/410
    latest: Version | None = None  # the version the last good fetch saw
    for rec in arc.records():
        if not (rec.url.startswith(url) or rec.final_url.startswith(url)):
            continue
        if rec.error is None and rec.status in (404, 410):
            if rec.url in gone and latest is not None:  # confirmed: the crawler withdrew it
                latest.withdrawn_at(_iso(rec.time))
            gone.add(rec.url)
            continue
        gone.discard(rec.url)
        if not rec.sha256:
            continue
        if rec.sha256 not in parsed:
            try:
                story = parse_story(arc.get_body(rec.sha256), rec.url)
            except HcgraphError:
                story = None
            parsed[rec.sha256] = story if story is not None and story.url == url else None
        story = parsed[rec.sha256]
        if story is None:
            continue
        v = latest = versions.setdefault(rec.sha256, Version(rec.sha256))
        if not v.archived:
            v.content, v.archived = from_story(story), True
        v.fetches += 1
        when = _iso(rec.time)
        v.first_seen = min(filter(None, [v.first_seen, when]))
        v.last_seen = max(filter(None, [v.last_seen, when]))
        if rec.fetch_url not in v.sources:
            v.sources.append(rec.fetch_url)


def _from_graph(store: Store, url: str, versions: dict[str, Version]) -> str | None:
    """Versions from the graph; when the story is withdrawn now, since when."""
    story = named_node(url)  # None: not an IRI (a slug, a space), so not in the graph
    current = store.raw_sha256(url)
    if story is None or current is None:
        return None
    marks = {sha: _iso(when) for sha, when in store.withdrawn_versions(url).items()}
    now = store.withdrawn_at(url)
    if now is not None:
        marks[current] = _iso(now)
    chain = [sha for sha, _when in reversed(store.revisions(url, current))]
    for raw, sha, created, ended, loc, said in rows(store, _CHAIN, story=story):
        sha = sha or (raw or "").removeprefix(_RAW)
        if not sha:
            continue
        v = versions.setdefault(sha, Version(sha))
        v.in_graph = "current" if sha == current else "revision"
        v.chain_position = chain.index(sha) if sha in chain else -1  # ties of time: the chain
        if v.content is None:  # not archived: what the graph keeps of it
            v.content = from_graph(store, url) if sha == current else _kept(said)
        seen = ended or created
        if seen and not v.first_seen:
            v.first_seen = v.last_seen = _iso(dt.datetime.fromisoformat(seen))
        if loc and loc not in v.sources:
            v.sources.append(loc)
        v.withdrawn_at(marks.get(sha))
    return marks.get(current) if now is not None else None


def _kept(said: str | None) -> Content | None:
    return Content.from_json(said) if said else None


def _iso(value: dt.datetime) -> str:
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def word_diff(old: str, new: str) -> str:
    """``[-removed-]{+added+}`` word diff of two texts."""
    a, b = old.split(), new.split()
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.extend(a[i1:i2])
            continue
        if i2 > i1:
            out.append("[-" + " ".join(a[i1:i2]) + "-]")
        if j2 > j1:
            out.append("{+" + " ".join(b[j1:j2]) + "+}")
    return " ".join(out)


def diff_stories(old: Story, new: Story) -> list[Change]:
    """What changed from ``old`` to ``new`` (see the module docstring)."""
    return diff_content(from_story(old), from_story(new))


def diff_content(old: Content, new: Content) -> list[Change]:
    """What changed from one version's :class:`~hcgraph.version_content.Content` to the next."""
    return [
        *_diff_text(old, new),
        *_diff_paragraphs(old.paragraphs, new.paragraphs),
        *_diff_sources(old, new),
    ]


def _diff_text(old: Content, new: Content) -> list[Change]:
    """Headline and dek changes, word by word."""
    changes: list[Change] = []
    if old.headline != new.headline:
        changes.append(Change("headline changed", "headline", old.headline, new.headline,
                              word_diff(old.headline, new.headline)))  # fmt: skip
    if old.dek != new.dek:
        changes.append(Change("dek changed", "dek", old.dek, new.dek, word_diff(old.dek, new.dek)))
    return changes


def _diff_paragraphs(a: Sequence[tuple[str, str]], b: Sequence[tuple[str, str]]) -> list[Change]:
    """Paragraphs edited (aligned by text), removed and added."""
    changes: list[Change] = []
    matcher = difflib.SequenceMatcher(None, [t for _, t in a], [t for _, t in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        olds, news = a[i1:i2], b[j1:j2]
        if op == "replace":
            for (_, ta), (kb, tb) in zip(olds, news, strict=False):
                changes.append(Change("paragraph edited", kb, ta, tb, word_diff(ta, tb)))
            olds, news = olds[len(news) :], news[len(olds) :]
        changes += [Change("paragraph removed", k, t, None) for k, t in olds]
        changes += [Change("paragraph added", k, None, t) for k, t in news]
    return changes


def _diff_sources(old: Content, new: Content) -> list[Change]:
    """Citations and sources added or removed, and corrections added."""
    ca, cb = old.citations, new.citations
    changes = [Change("citation added", f"{m}/{c}") for m, c in sorted(cb - ca)]
    changes += [Change("citation removed", f"{m}/{c}") for m, c in sorted(ca - cb)]
    ma, mb = dict(old.sources), dict(new.sources)
    changes += [Change("source added", m, None, mb[m] or None) for m in sorted(set(mb) - set(ma))]
    changes += [Change("source removed", m, ma[m] or None, None) for m in sorted(set(ma) - set(mb))]
    seen = set(old.corrections)
    for date, text in new.corrections:
        if (date, text) not in seen:
            changes.append(Change("correction added", date or "-", None, text or None))
    return changes


def render_table(h: History) -> list[Any]:
    """Rich renderables for a terminal: the versions as a table, then each version's changes
    from the one before; the story's text escaped (:func:`~hcgraph.errors.visible`)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(f"history of {_v(h.url)}"))
    columns = ("#", "first seen", "last seen", "sha256", "fetches", "in graph", "withdrawn",
               "changes")  # fmt: skip
    for col in columns:
        table.add_column(col, justify="right" if col in ("#", "fetches") else "left",
                         no_wrap=col in ("#", "sha256", "fetches"))  # fmt: skip
    for i, v in enumerate(h.versions, 1):
        table.add_row(str(i), _short(v.first_seen), _short(v.last_seen), _v(v.sha256[:12]),
                      str(v.fetches), v.in_graph or "archive only",
                      ", ".join(_short(w) for w in v.withdrawn) or "-",
                      Text(_v(v.summary())))  # fmt: skip
    out: list[Any] = [table]
    if h.withdrawn_at:
        out.append(Text(f"withdrawn since {_short(h.withdrawn_at)} (its URL answered "
                        "404/410; the graph is kept)", style="bold"))  # fmt: skip
    for i, v in enumerate(h.versions, 1):
        if not v.changes:
            continue
        out.append(Text(f"version {i - 1} -> {i}", style="bold"))
        for c in v.changes:
            if c.kind == "not compared":
                out.append(Text(f"  not compared: {_v(c.what)}"))
                continue
            detail = c.diff or c.new or c.old or ""
            out.append(Text(f"  {c.kind} {_v(c.what)}" + (f": {_v(detail)}" if detail else "")))
    return out


def _short(when: str | None) -> str:
    """An ISO time to the second, for the table (JSON keeps the full precision)."""
    return when[:19].replace("T", " ") if when else "-"


def render_markdown(h: History) -> str:
    """The history as Markdown: the versions table, then each version's changes; the
    story's text escaped for Markdown (:mod:`hcgraph.mdtext`)."""
    lines = [f"# History of {md_url(h.url)}", "",
             "| # | first seen | last seen | sha256 | fetches | in graph | withdrawn | changes |",
             "| ---: | --- | --- | --- | ---: | --- | --- | --- |"]  # fmt: skip
    for i, v in enumerate(h.versions, 1):
        lines.append(f"| {i} | {v.first_seen or '-'} | {v.last_seen or '-'} | "
                     f"{md_cell(v.sha256[:12])} | {v.fetches} | {v.in_graph or 'archive only'} | "
                     f"{', '.join(v.withdrawn) or '-'} | {md_cell(v.summary())} |")  # fmt: skip
    if h.withdrawn_at:
        lines += ["", f"Withdrawn since {h.withdrawn_at} (its URL answered 404/410)."]
    for i, v in enumerate(h.versions, 1):
        if v.changes:
            lines += ["", f"## Version {i - 1} → {i}", ""]
            for c in v.changes:
                if c.kind == "not compared":
                    lines.append(f"- not compared: {md_text(c.what)}")
                    continue
                detail = c.diff or c.new or c.old or ""
                lines.append(
                    f"- {c.kind} {md_code(c.what)}" + (f": {md_text(detail)}" if detail else "")
                )
    return "\n".join(lines) + "\n"
