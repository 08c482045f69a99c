"""What an audit looks at and finds: the checks, a finding, and the facts of the stories wanted.

:func:`open_scope` builds an :class:`AuditScope` once for every check. Up to :data:`LOCAL_MAX`
named stories are read one by one (neighbours on demand); otherwise with a few whole-store
queries. Both modes give the same answers.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import ProvenanceError
from ..iris import named_node
from ..store import Store
from ._graph import count, literal_time, manifest_id, publisher_name, rows

__all__ = [
    "CHECKS",
    "LOCAL_MAX",
    "MAX_REPEAT_WINDOW",
    "MAX_SOURCE_AGE",
    "VERDICTS",
    "AuditFinding",
    "AuditOptions",
    "AuditScope",
    "StoryFacts",
    "load_facts",
    "manifest_ids",
    "open_scope",
]

#: check name → the promise it tests.
CHECKS: dict[str, str] = {
    "dangling-manifest": "every cited manifest exists",
    "source-too-old": "sources are recent",
    "source-after-story": "sources are recent",
    "claim-conflict": "claim ids belong to their manifest",
    "repeat": "the story does not repeat a recent story",
    "uncited-paragraph": "each paragraph is supported",
    "unsupported-claim": "each paragraph is supported",
    "declared-publishers": "declared counts are true",
    "declared-source-count": "declared counts are true",
    "declared-cited-manifests": "declared counts are true",
    "trust-label": "trust label fits",
}

#: The verdicts of the support check a story's tally counts.
VERDICTS = ("supported", "unsupported", "not-checkable")

#: The longest ``repeat_window`` and ``max_source_age``, in days (100 years): longer says
#: nothing more, and a huge window would overflow a timedelta instead of being a usage error.
MAX_REPEAT_WINDOW = MAX_SOURCE_AGE = 36_500


@dataclass(frozen=True)
class AuditOptions:
    """Thresholds of the audit (the CLI's ``--max-source-age`` etc.)."""

    max_source_age: int = 30
    repeat_window: int = 7
    repeat_threshold: float = 0.8
    include_withdrawn: bool = False  # audit withdrawn stories too when auditing all of them


@dataclass(frozen=True)
class AuditFinding:
    """One broken promise, with its evidence (JSON-ready values)."""

    story: str
    check: str
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def promise(self) -> str:
        """The disclosure promise this finding breaks."""
        return CHECKS[self.check]


@dataclass
class StoryFacts:
    """What the graph says about one story, as the checks need it (manifest IRIs)."""

    url: str
    headline: str = ""
    # what the content says: manifests listed and cited
    listed: set[str] = field(default_factory=set)
    cited: set[str] = field(default_factory=set)
    # what the story declares about itself: source count, publishers, cited manifests
    declared_count: int | None = None
    declared_publishers: set[str] = field(default_factory=set)
    declared_cited: set[str] = field(default_factory=set)
    trust: str | None = None
    trust_text: str | None = None
    # when and where
    published: dt.datetime | None = None
    published_text: str | None = None
    room: str | None = None


def manifest_ids(iris: Iterable[str]) -> list[str]:
    """Sorted manifest ids of manifest IRIs."""
    return sorted(manifest_id(m) for m in iris)


#: Up to this many stories named, ``audit`` looks them (and their neighbours) up one by one
#: instead of reading the whole store.
LOCAL_MAX = 20

_FIELDS = (
    ("schema:headline", "headline"),
    ("schema:datePublished", "published"),
    ("hc:trust", "trust"),
    ("hc:trustText", "trustText"),
    ("hc:declaredSourceCount", "count"),
    ("hc:newsroom", "room"),
)
_SELECT = "SELECT ?story " + " ".join(f"?{v}" for _, v in _FIELDS) + " WHERE {"
_STORIES = (
    f"{_SELECT} GRAPH ?story {{ ?story a hc:Story .\n"
    + "".join(f"  OPTIONAL {{ ?story {p} ?{v} }}\n" for p, v in _FIELDS)
    + "} }"
)
# The same for the whole store: each property one scan, left-joined by hash (the form above
# looks every property up per story: about 3x the CPU on the on-disk store at 10k stories).
_ALL_STORIES = (
    f"{_SELECT}\n{{ SELECT ?story WHERE {{ GRAPH ?story {{ ?story a hc:Story }} }} }}\n"
    + "".join(
        f"OPTIONAL {{ {{ SELECT ?story ?{v} WHERE {{ GRAPH ?story {{ ?story {p} ?{v} }} }} }} }}\n"
        for p, v in _FIELDS
    )
    + "}"
)
_LISTED = "SELECT ?story ?m WHERE { GRAPH ?story { ?story hc:listsManifest ?m } }"
_DECLARED_PUB = "SELECT ?story ?p WHERE { GRAPH ?story { ?story hc:declaredPublisher ?p } }"
_DECLARED_CITED = "SELECT ?story ?m WHERE { GRAPH ?story { ?story hc:declaredCitedManifest ?m } }"
# hc:citesManifest: the derived summary of the manifests the story's citations name.
_CITED_DIFF = (
    "SELECT ?story ?m WHERE { GRAPH ?story { ?story hc:citesManifest ?m "
    "MINUS { ?story hc:declaredCitedManifest ?m } } }",
    "SELECT ?story ?m WHERE { GRAPH ?story { ?story hc:declaredCitedManifest ?m "
    "MINUS { ?story hc:citesManifest ?m } } }",
)
_CITED = "SELECT ?story ?m WHERE { GRAPH ?story { ?story hc:citesManifest ?m } }"
_COUNT_STORIES = "SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { GRAPH ?s { ?s a hc:Story } }"


@dataclass
class AuditScope:
    """The stories an audit reports on (``wanted``, in report order) and how to read them:
    ``only`` the stories looked up one by one (local mode; ``None``: whole-store queries),
    ``facts`` those read, ``total`` the stories in the store (what cross-story checks saw)."""

    store: Store
    wanted: list[str]
    only: list[str] | None
    facts: dict[str, StoryFacts]
    total: int

    @property
    def local(self) -> bool:
        """True when the wanted stories are looked up one by one."""
        return self.only is not None

    def story(self, url: str) -> StoryFacts:
        """The facts of ``url``: read already, or loaded now (a neighbour outside the scope)."""
        return self.facts.get(url) or load_facts(self.store, [url])[url]

    def manifests(self) -> set[str]:
        """Every manifest the scope's stories list or cite."""
        return {m for s in self.facts.values() for m in s.listed | s.cited}


def open_scope(
    store: Store, stories: Iterable[str] | None, include_withdrawn: bool = False
) -> AuditScope:
    """The scope auditing ``stories`` (``None``: every current story, withdrawn ones only with
    ``include_withdrawn``), its facts read.

    Raises:
        ProvenanceError: a story URL given is not in the store.
    """
    given = None if stories is None else list(dict.fromkeys(stories))
    only = given if given is not None and len(given) <= LOCAL_MAX else None
    facts = load_facts(store, only)
    withdrawn = set() if include_withdrawn else set(store.withdrawn_stories())
    if given is None:
        facts = {url: s for url, s in facts.items() if url not in withdrawn}
    wanted = sorted(facts) if given is None else given
    _all_found(wanted, facts)
    total = len(facts) if only is None else count(store, _COUNT_STORIES) - len(withdrawn)
    return AuditScope(store, wanted, only, facts, total)


def _all_found(wanted: list[str], facts: dict[str, StoryFacts]) -> None:
    """Raise a :class:`~hcgraph.errors.ProvenanceError` naming the first story not found."""
    for url in wanted:
        if url not in facts:
            raise ProvenanceError(f"{url}: no such story in the store")


def each(store: Store, sparql: str, only: list[str] | None) -> Iterator[tuple[str | None, ...]]:
    """Rows of a ``?story``-first query: whole store, or story by story (bound)."""
    if only is None:
        yield from rows(store, sparql)
        return
    for url in only:
        node = named_node(url)
        if node is None:  # not an IRI: no rows, so the caller reports no such story
            continue
        for row in rows(store, sparql, story=node):
            yield (url, *row)


def load_facts(store: Store, only: list[str] | None = None) -> dict[str, StoryFacts]:
    """The facts of the stories ``only`` names (``None``: every story in the store)."""
    data: dict[str, StoryFacts] = {}
    for row in each(store, _STORIES if only is not None else _ALL_STORIES, only):
        if row[0] is not None and row[0] not in data:
            data[row[0]] = _story(row)
    for s, m in _pairs(store, _LISTED, only, data):
        s.listed.add(m)
    for s, m in _pairs(store, _CITED, only, data):
        s.cited.add(m)
    _declared_cited(store, data, only)
    for s, p in _pairs(store, _DECLARED_PUB, only, data):
        s.declared_publishers.add(publisher_name(p))
    return data


def _pairs(
    store: Store, sparql: str, only: list[str] | None, data: dict[str, StoryFacts]
) -> Iterator[tuple[StoryFacts, str]]:
    """(a story's facts, the value) for each row of a two-column ``?story``-first query whose
    story was read and whose value is bound."""
    for url, value in each(store, sparql, only):
        if url is not None and url in data and value is not None:
            yield data[url], value


def _story(row: tuple[str | None, ...]) -> StoryFacts:
    """A story's facts from one row of :data:`_STORIES`."""
    url, headline, published, trust, trust_text, count, room = row
    assert url is not None
    s = StoryFacts(url, headline or "", trust=trust, trust_text=trust_text, room=room)
    s.published, s.published_text = literal_time(published), published
    s.declared_count = int(count) if count is not None and count.lstrip("-").isdigit() else None
    return s


def _declared_cited(store: Store, data: dict[str, StoryFacts], only: list[str] | None) -> None:
    """Declared cited ids: the whole store is compared in the engine (MINUS both ways), and
    only the stories that differ are read in full (the others declare what they cite)."""
    if only is None:
        odd = sorted({u for q in _CITED_DIFF for u, _ in rows(store, q) if u in data})
        for s in data.values():
            s.declared_cited = set(s.cited)
    else:
        odd = [u for u in only if u in data]
    for url in odd:
        data[url].declared_cited = set()
    for s, m in _pairs(store, _DECLARED_CITED, odd, data):
        s.declared_cited.add(m)
