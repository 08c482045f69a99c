"""Ground-truth facts computed straight from story dicts, without RDF or SPARQL.

What: :func:`ground_truth` walks ``hangingcontext.desk/1`` story documents (real ones or those
from :mod:`hcsample.corpus`) once and returns a frozen :class:`GroundTruth` of counts,
citation indexes and integrity findings.

Why: tests of the graph builder and its queries need an independent oracle. Everything here
is plain Python over the JSON, so a SPARQL answer that disagrees with it points at the
graph side. Ids are always compared as strings (JSON integers are converted with ``str``),
because the stories sometimes carry big integer ids.

Vocabulary used in the field docs:

* a story's **url** is its ``url`` field;
* a manifest is **cited** by a story when a cite in one of its paragraphs or key facts
  names it (whether or not the story lists it);
* a manifest is **listed** by a story when it appears in the story's ``manifests[]``;
* the **publisher** of a manifest id is the ``source_name`` it is listed with; one listed
  anywhere in the input counts for every story (a manifest listed under two names has both).

**Withdrawn** stories (``ground_truth(stories, withdrawn=urls)``: their URL answered
404/410, their graphs are kept) are left out of every story-level fact and count; what they
say about shared things (a manifest's publisher, the manifests a claim is cited under) still
counts, as the graph keeps those descriptions while any stored story states them, and a
related link to one is a link to a story that is in the graph.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

__all__ = ["Counts", "GroundTruth", "ground_truth"]

MISMATCH_FIELDS = ("publishers", "source_count", "cited_manifest_ids")


@dataclass(frozen=True)
class Counts:
    """Totals over the input.

    Attributes:
        stories: number of story dicts given.
        sections: total ``sections[]`` entries.
        paragraphs: total paragraphs over all sections.
        key_facts: total ``key_facts[]`` entries.
        claims: distinct claim ids cited anywhere (paragraph or key-fact cites).
        manifests: distinct manifest ids listed in ``manifests[]`` or cited anywhere.
        publishers: distinct ``source_name`` values of listed manifests.
        related: distinct ``related[].url`` values.
        unresolved: total ``unresolved[]`` strings (not deduplicated).
    """

    stories: int
    sections: int
    paragraphs: int
    key_facts: int
    claims: int
    manifests: int
    publishers: int
    related: int
    unresolved: int


@dataclass(frozen=True)
class GroundTruth:
    """Facts about a set of stories. Ids are strings; story keys are story urls.

    Attributes:
        counts: the totals, see :class:`Counts`.
        story_urls: urls of all input stories.
        manifest_citing_stories: manifest id -> urls of stories citing it (paragraph or key
            fact), including citations of manifests the story does not list.
        claim_citing_stories: claim id -> urls of stories citing it (paragraph or key fact).
        story_cited_manifests: story url -> manifest ids it cites (basis of co-citation).
        publisher_reach: publisher -> ``(n_stories, n_manifests, n_claims)``: stories citing
            at least one manifest of that publisher, distinct manifests of that publisher that
            are cited, distinct claim ids cited under those manifests. Only publishers with at
            least one citation appear.
        uncited_paragraphs: ``(story_url, section_index, paragraph_index)`` (0-based) of
            paragraphs whose ``cites`` is missing or empty.
        unsupported_key_facts: ``(story_url, key_fact_index)`` of key facts citing at least
            one claim id that no paragraph of the same story cites (under any manifest).
        cited_unlisted: ``(story_url, manifest_id)`` cited by the story but not listed by it.
        listed_uncited: ``(story_url, manifest_id)`` listed by the story but not cited by it.
        claim_manifest_conflicts: claim ids cited under more than one manifest id anywhere in
            the input.
        declared_mismatch: story url -> the names among ``publishers``, ``source_count``,
            ``cited_manifest_ids`` whose declared value disagrees with the content, compared as
            sets: ``publishers`` vs the listed manifests' ``source_name`` values,
            ``source_count`` vs the number of ``manifests[]`` entries, ``cited_manifest_ids`` vs
            the manifest ids cited by paragraphs or key facts. A missing field is a mismatch.
            Only stories with at least one mismatch appear.
        declared_sides: ``(story_url, field)`` -> ``(declared, derived)`` for each mismatching
            list field (``publishers``, ``cited_manifest_ids``): the story's own list as a set
            (empty when missing) and what the content says (the listed manifests'
            ``source_name`` values, the cited manifest ids).
        related_not_ingested: ``(story_url, related_url)`` for related urls that are not the
            url of any input story.
        newsroom_publisher: ``(newsroom, publisher)`` -> number of stories of that newsroom
            citing at least one manifest of that publisher.
        source_lag_days: ``(story_url, manifest_id)`` -> story ``published_at`` date (UTC)
            minus the listed manifest's ``published_date``, in whole days; only for listed
            manifests where both dates parse.
        related_edges: story url -> related urls that are input stories (for hop queries).
    """

    counts: Counts
    story_urls: frozenset[str]
    manifest_citing_stories: dict[str, frozenset[str]]
    claim_citing_stories: dict[str, frozenset[str]]
    story_cited_manifests: dict[str, frozenset[str]]
    publisher_reach: dict[str, tuple[int, int, int]]
    uncited_paragraphs: frozenset[tuple[str, int, int]]
    unsupported_key_facts: frozenset[tuple[str, int]]
    cited_unlisted: frozenset[tuple[str, str]]
    listed_uncited: frozenset[tuple[str, str]]
    claim_manifest_conflicts: frozenset[str]
    declared_mismatch: dict[str, frozenset[str]]
    declared_sides: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]]
    related_not_ingested: frozenset[tuple[str, str]]
    newsroom_publisher: dict[tuple[str, str], int]
    source_lag_days: dict[tuple[str, str], int]
    related_edges: dict[str, tuple[str, ...]] = field(repr=False)

    def source_reuse(self, min_stories: int = 2) -> frozenset[str]:
        """Manifest ids cited by at least ``min_stories`` distinct stories."""
        return frozenset(
            m for m, urls in self.manifest_citing_stories.items() if len(urls) >= min_stories
        )

    def co_citation(self, k: int = 2) -> dict[tuple[str, str], int]:
        """Story pairs ``(url_a, url_b)`` with ``url_a < url_b`` sharing >= ``k`` cited manifests.

        The value is the number of distinct manifests both stories cite. Cost grows with the
        square of the number of stories citing the most popular manifest.
        """
        shared: Counter[tuple[str, str]] = Counter()
        for urls in self.manifest_citing_stories.values():
            for pair in combinations(sorted(urls), 2):
                shared[pair] += 1
        return {pair: n for pair, n in shared.items() if n >= k}

    def within_hops(self, seed_urls: Iterable[str], depth: int) -> frozenset[str]:
        """Input-story urls reachable from ``seed_urls`` in at most ``depth`` related hops.

        Seeds that are input stories are included (hop 0); only related urls that are input
        stories are followed. Seeds that are not input stories contribute nothing.
        """
        frontier = {u for u in seed_urls if u in self.story_urls}
        reached = set(frontier)
        for _ in range(max(0, depth)):
            frontier = {n for u in frontier for n in self.related_edges.get(u, ())} - reached
            if not frontier:
                break
            reached |= frontier
        return frozenset(reached)


def ground_truth(stories: Iterable[dict[str, Any]], withdrawn: Iterable[str] = ()) -> GroundTruth:
    """Compute :class:`GroundTruth` for ``stories`` (consumed once, in a single pass + joins);
    the stories whose url is in ``withdrawn`` are withdrawn (see the module docstring)."""
    gone = set(withdrawn)
    acc = _Accumulator()
    for story in stories:
        if str(story["url"]) in gone:
            acc.add_withdrawn(story)
        else:
            acc.add(story)
    return acc.result()


def _cites_of(story: dict[str, Any]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(manifest_id, claim_id)`` pairs cited by paragraphs and by key facts, as strings.

    A cite with no claim ids still cites its manifest; it yields ``(manifest_id, "")``.
    """
    para = [
        pair
        for section in story.get("sections") or []
        for paragraph in section.get("paragraphs") or []
        for pair in _cite_pairs(paragraph.get("cites"))
    ]
    facts = [
        pair for fact in story.get("key_facts") or [] for pair in _cite_pairs(fact.get("cites"))
    ]
    return para, facts


def _cite_pairs(cites: list[dict[str, Any]] | None) -> Iterator[tuple[str, str]]:
    """Flatten a cites list into ``(manifest_id, claim_id)`` string pairs."""
    for cite in cites or []:
        manifest_id = str(cite["manifest_id"])
        claims = cite.get("claim_ids") or []
        if not claims:
            yield manifest_id, ""
        for claim in claims:
            yield manifest_id, str(claim)


def _story_date(published_at: Any) -> dt.date | None:
    """UTC date of an ISO ``published_at`` (``Z`` or offset), or None if it does not parse."""
    try:
        stamp = dt.datetime.fromisoformat(str(published_at))
    except ValueError:
        return None
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone(dt.UTC)
    return stamp.date()


def _parse_date(value: Any) -> dt.date | None:
    """A ``YYYY-MM-DD`` date, or None."""
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        return None


class _Accumulator:
    """Single-pass collector; :meth:`result` does the cross-story joins."""

    def __init__(self) -> None:
        self.n_stories = self.n_sections = self.n_paragraphs = 0
        self.n_key_facts = self.n_unresolved = 0
        self.urls: set[str] = set()
        self.withdrawn: set[str] = set()  # stored, not current
        self.listed_ids: set[str] = set()
        self.related_urls: set[str] = set()
        self.publishers: set[str] = set()
        self.manifest_publishers: defaultdict[str, set[str]] = defaultdict(set)
        self.manifest_stories: defaultdict[str, set[str]] = defaultdict(set)
        self.claim_stories: defaultdict[str, set[str]] = defaultdict(set)
        self.claim_manifests: defaultdict[str, set[str]] = defaultdict(set)
        self.story_manifests: defaultdict[str, set[str]] = defaultdict(set)
        self.story_newsrooms: list[tuple[str, str]] = []
        self.related: list[tuple[str, str]] = []
        self.uncited_paragraphs: set[tuple[str, int, int]] = set()
        self.unsupported: set[tuple[str, int]] = set()
        self.cited_unlisted: set[tuple[str, str]] = set()
        self.listed_uncited: set[tuple[str, str]] = set()
        self.mismatch: dict[str, frozenset[str]] = {}
        self.sides: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]] = {}
        self.lag: dict[tuple[str, str], int] = {}

    def add(self, story: dict[str, Any]) -> None:
        """Record one story."""
        url = str(story["url"])
        self.n_stories += 1
        self.urls.add(url)
        self.story_newsrooms.append((url, str(story.get("newsroom", ""))))
        self.n_unresolved += len(story.get("unresolved") or [])
        listed = self._add_listing(url, story)
        para, facts = _cites_of(story)
        cited = self._add_cites(url, para + facts)
        self._add_structure(url, story, {claim for _, claim in para if claim})
        self.cited_unlisted |= {(url, m) for m in cited - set(listed)}
        self.listed_uncited |= {(url, m) for m in set(listed) - cited}
        self._add_mismatch(url, story, listed, cited)
        for item in story.get("related") or []:
            self.related.append((url, str(item["url"])))
            self.related_urls.add(str(item["url"]))

    def add_withdrawn(self, story: dict[str, Any]) -> None:
        """Record one withdrawn story: only what it says about shared things."""
        self.withdrawn.add(str(story["url"]))
        for entry in story.get("manifests") or []:
            manifest_id = str(entry["manifest_id"])
            self.listed_ids.add(manifest_id)
            self.manifest_publishers[manifest_id].add(str(entry.get("source_name", "")))
        para, facts = _cites_of(story)
        for manifest_id, claim in para + facts:
            if claim:
                self.claim_manifests[claim].add(manifest_id)

    def _add_listing(self, url: str, story: dict[str, Any]) -> dict[str, str]:
        """Record listed manifests; return manifest id -> source_name for this story."""
        listed: dict[str, str] = {}
        day = _story_date(story.get("published_at"))
        for entry in story.get("manifests") or []:
            manifest_id = str(entry["manifest_id"])
            publisher = str(entry.get("source_name", ""))
            listed[manifest_id] = publisher
            self.listed_ids.add(manifest_id)
            self.publishers.add(publisher)
            self.manifest_publishers[manifest_id].add(publisher)
            source_day = _parse_date(entry.get("published_date"))
            if day is not None and source_day is not None:
                self.lag[(url, manifest_id)] = (day - source_day).days
        return listed

    def _add_cites(self, url: str, pairs: list[tuple[str, str]]) -> set[str]:
        """Record citations; return the manifest ids this story cites."""
        unique = set(pairs)
        cited = {manifest_id for manifest_id, _ in unique}
        for manifest_id in cited:
            self.manifest_stories[manifest_id].add(url)
        for manifest_id, claim in unique:
            if claim:
                self.claim_stories[claim].add(url)
                self.claim_manifests[claim].add(manifest_id)
        self.story_manifests[url] |= cited
        return cited

    def _add_structure(self, url: str, story: dict[str, Any], para_claims: set[str]) -> None:
        """Count sections/paragraphs/key facts; find uncited paragraphs and unsupported facts."""
        for s_index, section in enumerate(story.get("sections") or []):
            self.n_sections += 1
            for p_index, paragraph in enumerate(section.get("paragraphs") or []):
                self.n_paragraphs += 1
                if not paragraph.get("cites"):
                    self.uncited_paragraphs.add((url, s_index, p_index))
        for k_index, fact in enumerate(story.get("key_facts") or []):
            self.n_key_facts += 1
            claims = {claim for _, claim in _cite_pairs(fact.get("cites")) if claim}
            if claims - para_claims:
                self.unsupported.add((url, k_index))

    def _add_mismatch(
        self, url: str, story: dict[str, Any], listed: dict[str, str], cited: set[str]
    ) -> None:
        """Compare the declared summary fields with the content."""
        wrong = set()
        publishers = story.get("publishers")
        if publishers is None or {str(p) for p in publishers} != set(listed.values()):
            wrong.add("publishers")
            declared_names = frozenset(str(p) for p in publishers or ())
            self.sides[(url, "publishers")] = (declared_names, frozenset(listed.values()))
        if story.get("source_count") != len(story.get("manifests") or []):
            wrong.add("source_count")
        declared = story.get("cited_manifest_ids")
        if declared is None or {str(m) for m in declared} != cited:
            wrong.add("cited_manifest_ids")
            declared_ids = frozenset(str(m) for m in declared or ())
            self.sides[(url, "cited_manifest_ids")] = (declared_ids, frozenset(cited))
        if wrong:
            self.mismatch[url] = frozenset(wrong)

    def _publisher_joins(
        self,
    ) -> tuple[dict[str, tuple[int, int, int]], dict[tuple[str, str], int]]:
        """publisher_reach and newsroom_publisher, via each manifest's listed publishers."""
        stories: defaultdict[str, set[str]] = defaultdict(set)
        manifests: defaultdict[str, set[str]] = defaultdict(set)
        claims: defaultdict[str, set[str]] = defaultdict(set)
        for manifest_id, urls in self.manifest_stories.items():
            for publisher in self.manifest_publishers.get(manifest_id, ()):
                stories[publisher] |= urls
                manifests[publisher].add(manifest_id)
        for claim, manifest_ids in self.claim_manifests.items():
            for manifest_id in manifest_ids:
                for publisher in self.manifest_publishers.get(manifest_id, ()):
                    claims[publisher].add(claim)
        reach = {p: (len(stories[p]), len(manifests[p]), len(claims[p])) for p in stories}
        newsroom_counts: Counter[tuple[str, str]] = Counter()
        for url, newsroom in self.story_newsrooms:
            reached = {
                p for m in self.story_manifests.get(url, ()) for p in self.manifest_publishers[m]
            }
            newsroom_counts.update((newsroom, p) for p in reached)
        return reach, dict(newsroom_counts)

    def result(self) -> GroundTruth:
        """Freeze everything into a :class:`GroundTruth`."""
        reach, newsroom_publisher = self._publisher_joins()
        edges: defaultdict[str, list[str]] = defaultdict(list)
        for source, target in self.related:
            if target in self.urls and target not in edges[source]:
                edges[source].append(target)
        counts = Counts(
            stories=self.n_stories,
            sections=self.n_sections,
            paragraphs=self.n_paragraphs,
            key_facts=self.n_key_facts,
            claims=len(self.claim_stories),
            manifests=len(self.listed_ids | set(self.manifest_stories)),
            publishers=len(self.publishers),
            related=len(self.related_urls),
            unresolved=self.n_unresolved,
        )
        return GroundTruth(
            counts=counts,
            story_urls=frozenset(self.urls),
            manifest_citing_stories=_freeze(self.manifest_stories),
            claim_citing_stories=_freeze(self.claim_stories),
            story_cited_manifests=_freeze(self.story_manifests),
            publisher_reach=reach,
            uncited_paragraphs=frozenset(self.uncited_paragraphs),
            unsupported_key_facts=frozenset(self.unsupported),
            cited_unlisted=frozenset(self.cited_unlisted),
            listed_uncited=frozenset(self.listed_uncited),
            claim_manifest_conflicts=frozenset(
                c for c, ms in self.claim_manifests.items() if len(ms) > 1
            ),
            declared_mismatch=dict(self.mismatch),
            declared_sides=dict(self.sides),
            related_not_ingested=frozenset(
                (s, t) for s, t in self.related if t not in self.urls | self.withdrawn
            ),
            newsroom_publisher=newsroom_publisher,
            source_lag_days=dict(self.lag),
            related_edges={u: tuple(ts) for u, ts in edges.items()},
        )


def _freeze(index: dict[str, set[str]]) -> dict[str, frozenset[str]]:
    """Copy a dict of sets into a dict of frozensets."""
    return {key: frozenset(values) for key, values in index.items()}
