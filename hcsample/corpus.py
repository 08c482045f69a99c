"""Deterministic synthetic corpus of Hanging Context-shaped stories.

What: ``generate_corpus`` / ``iter_stories`` build story documents with the same shape as a
real ``hangingcontext.desk/1`` story (sections, paragraphs with cites, key facts, manifests,
related links, ...), drawn from a shared pool of manifests whose popularity is Zipf-skewed.

Why: the graph builder, its SPARQL queries and its benchmarks need corpora of any size whose
answers are known in advance (see :mod:`tests.support.groundtruth`). The corpus can be made hostile
(quotes, backslashes, control characters, markup, Turtle and SPARQL-looking text) to test
escaping, and can carry planted oddities (dangling citations, mismatched declared fields,
unknown fields, integer ids, ...) to test that the builder tolerates and reports them.

Everything is deterministic by seed: randomness comes only from ``random.Random`` instances
seeded with strings derived from the seed (never global random, time, uuid or ``hash()``).
Each story is built from its index alone (its own RNG, plus a 5-byte-per-story table of
headline choices that related links also read), so ``iter_stories`` streams 100k stories in
flat memory and related links can point forward to stories not yet generated.

Generated stories are plainly sample data: ``"sample": true``, URLs under a reserved
example domain, and a disclosure saying they are synthetic.
"""

from __future__ import annotations

import copy
import datetime as dt
import gc
import json
import random
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from operator import itemgetter
from pathlib import Path
from typing import Any, TypedDict, TypeVar, Unpack
from urllib.parse import urlsplit

from hcgraph._io import ensure_dir, write_atomic

from .claims import SampleTexts, packaged_replies
from .filler import text_bank

__all__ = [
    "DEFAULT_BASE_URL",
    "ODDITIES",
    "Corpus",
    "CorpusOptions",
    "generate_corpus",
    "iter_stories",
]

_T = TypeVar("_T")

DEFAULT_BASE_URL = "https://news.example.org"
PAPERS_BASE_URL = "https://papers.example.org"
API_BASE_URL = "https://api.example.org"

STORY_ID_BASE = 1_800_000_000_000_000_000
MANIFEST_ID_BASE = 1_810_000_000_000_000_000
CLAIM_ID_BASE = 1_820_000_000_000_000_000

BASE_DATE = dt.date(2026, 10, 1)
HOSTILE_RATE = 0.2
ODDITY_RATE = 0.025
SEED_MANIFEST_RATE = 0.08
SEED_RELATED_RATE = 0.05
MISSING_RELATED_RATE = 0.08
CORRECTION_RATE = 0.03

#: Oddity kinds planted when ``oddities=True``. Each lands in about 2.5% of stories and, when
#: ``n_stories >= 50``, is forced on story index ``1 + 3 * position`` so it appears at least once.
ODDITIES: tuple[str, ...] = (
    "extra_top_field",  # unknown top-level key "x_future_field"
    "extra_nested_field",  # unknown keys in labels, decision_card, a paragraph and a manifest
    "dangling_cite",  # a cite of a manifest_id that manifests[] does not list
    "listed_uncited",  # a manifests[] entry that nothing cites
    "claim_conflict",  # a claim of manifest A also cited under manifest B
    "empty_section",  # a section with "paragraphs": []
    "uncited_paragraph",  # a paragraph with "cites": []
    "unsupported_key_fact",  # a key fact citing a claim no paragraph of the story cites
    "publishers_mismatch",  # declared publishers missing one
    "source_count_mismatch",  # declared source_count off by one (+1)
    "cited_ids_mismatch",  # declared cited_manifest_ids missing one
    "int_story_id",  # story "id" as a JSON integer (> 2**53)
    "int_claim_id",  # one paragraph claim id as a JSON integer (> 2**53)
)
_FORCE_ODDITIES_MIN_STORIES = 50

HOSTILE_SNIPPETS: tuple[str, ...] = (
    'she said "quoted" twice',
    'triple """ double quotes """ inside',
    "triple ''' single quotes ''' inside",
    "back\\slash C:\\path\\to\\file and a literal \\n",
    "line one\nline two",
    "carriage\rreturn",
    "tab\tseparated\tvalues",
    "caf\u00e9 na\u00efve r\u00e9sum\u00e9",
    "\u6f22\u5b57 \u30c6\u30ad\u30b9\u30c8",
    "RTL \u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627 end",
    "emoji \U0001f600\U0001f680",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '"> . <urn:x> <urn:y> "z" .',
    "@prefix x: <y> .",
    "} ; DROP ALL ; {",
    "zero\u200bwidth and \u202eoverride\u202c",
)

TOPICS: tuple[str, ...] = (
    "agents",
    "reasoning",
    "robotics",
    "chips",
    "policy",
    "evals",
    "memory",
    "rl",
    "vision",
    "speech",
    "safety",
    "inference",
    "retrieval",
    "alignment",
    "compilers",
    "datasets",
)
HEAD_SUBJECTS: tuple[str, ...] = (
    "Agent benchmarks",
    "Open-weights models",
    "Inference stacks",
    "Robot policies",
    "Chip roadmaps",
    "Eval suites",
    "Memory systems",
    "Reward models",
    "Vision encoders",
    "Speech models",
    "Safety filters",
    "Retrieval pipelines",
)
HEAD_PREDICATES: tuple[str, ...] = (
    "get a reality check",
    "move from demo to discipline",
    "hit a scaling wall",
    "learn to check their own work",
    "trade accuracy for speed",
    "grow up",
    "face new scrutiny",
    "go open source",
    "outgrow their benchmarks",
)
HEADINGS: tuple[str, ...] = (
    "What changed",
    "The numbers",
    "Why it matters",
    "The caveats",
    "How it works",
    "What to watch",
    "The plumbing",
    "Who benefits",
    "The open questions",
)
UNRESOLVED: tuple[str, ...] = (
    "All results are preprints without independent replication.",
    "The benchmark set was chosen by the authors.",
    "Compute budgets for the baselines are not disclosed.",
    "The code release is promised but not yet public.",
    "Production numbers come from a single deployment.",
    "The comparison omits the strongest closed models.",
)
USEFUL_FOR: tuple[str, ...] = (
    "ML engineers choosing a training recipe",
    "Teams evaluating agent frameworks",
    "Researchers tracking benchmark claims",
    "Product leads planning inference budgets",
)
NOT_FOR: tuple[str, ...] = (
    "Guarantees of production performance",
    "Procurement decisions without your own evals",
)
COMPARE_AGAINST: tuple[str, ...] = (
    "Last edition's baseline numbers",
    "Standard supervised fine-tuning",
    "Closed-model results on the same suite",
)
TRUST_LEVELS: tuple[str, ...] = ("confirmed", "reported", "developing", "single-source")
WRITERS: tuple[str, ...] = ("muse", "quill", "ledger")
NEWSROOMS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("artificial-intelligence", "Artificial Intelligence", ("research", "industry")),
    ("robotics", "Robotics", ("research", "hardware")),
    ("policy", "Policy", ("regulation", "courts")),
    ("compute", "Compute", ("chips", "datacenters")),
)
PUBLISHER_PREFIXES: tuple[str, ...] = (
    "arxiv",
    "sample-wire",
    "lab-blog",
    "daily-papers",
    "preprint-digest",
    "open-review",
)
NAME_HEADS: tuple[str, ...] = ("Loong", "Tree", "Rubric", "Lean", "Flash", "Meta", "Deep", "Sparse")
NAME_TAILS: tuple[str, ...] = ("Sage", "Opt", "EM", "RL", "Bench", "Mind", "Scale", "Mesh")
TITLE_PHRASES: tuple[str, ...] = (
    "Scaling Verifiable Rewards for",
    "A Production-Grade Framework for",
    "Predicting Difficulty in",
    "Critic-Free Training of",
    "Revisiting Evaluation of",
    "Efficient Serving of",
)


@dataclass(frozen=True)
class Corpus:
    """A generated corpus: the story documents plus the seed that produced them.

    ``stories`` are JSON-ready dicts (big integer ids are Python ints, so they stay exact).
    """

    stories: list[dict[str, Any]]
    seed: int
    pool: tuple[_Manifest, ...] = field(default=(), repr=False, compare=False)

    def replies(self) -> dict[str, bytes]:
        """Manifest id → the manifest API's reply (JSON bytes, the shape
        :mod:`hcgraph.claims.reply` reads) for every pool manifest, plus the packaged real
        reply of a seed-story manifest the corpus cites; the seed story's other manifests
        have none (not fetched). Deterministic: the same corpus gives the same bytes."""
        texts = SampleTexts(self.pool)
        gc_was_enabled = gc.isenabled()
        gc.disable()  # as in generate_corpus: no cycles, and full passes over the corpus
        try:
            replies = {m.manifest_id: texts.reply(m) for m in self.pool}
        finally:
            if gc_was_enabled:
                gc.enable()
        cited = {str(i) for story in self.stories for i in story.get("cited_manifest_ids", ())}
        replies.update((k, v) for k, v in packaged_replies().items() if k in cited)
        return dict(sorted(replies.items()))

    def write(self, directory: Path) -> list[Path]:
        """Write one ``<slug>.json`` per story into ``directory`` and return the paths sorted.

        Files use ``json.dumps(ensure_ascii=False, indent=2)`` in UTF-8 so hostile text is
        written verbatim, the way the real site publishes it.
        """
        directory = Path(directory)
        ensure_dir(directory)  # a user error (unwritable path) is one OutputError line
        paths: list[Path] = []
        for story in self.stories:
            slug = str(story["slug"])
            if not slug or "/" in slug or "\\" in slug or slug.startswith("."):
                raise ValueError(f"unsafe slug for a file name: {slug!r}")
            path = directory / f"{slug}.json"
            # atomic like every output; not fsync-ed: writing the corpus again recreates it
            write_atomic(path, _dumps(story).encode("utf-8"), durable=False)
            paths.append(path)
        return sorted(paths)

    def site_files(self, *, by_host: bool = False) -> dict[str, bytes]:
        """Map URL paths (``/stories/<date>/<slug>/index.json``) to JSON bytes.

        Lets tests serve the corpus as a static site (e.g. for crawl tests). Only the path of
        each story's ``url`` is used, so a seed story from another host is served too; with
        ``by_host`` each path starts with the story's host (``/news.example.org/stories/…``:
        one site mirroring several).
        """
        files: dict[str, bytes] = {}
        for story in self.stories:
            parts = urlsplit(str(story["url"]))
            path = parts.path if parts.path.endswith("/") else parts.path + "/"
            host = f"/{parts.netloc}" if by_host else ""
            files[f"{host}{path}index.json"] = _dumps(story).encode("utf-8")
        return files


class CorpusOptions(TypedDict, total=False):
    """The keyword arguments of :func:`generate_corpus` and :func:`iter_stories`."""

    hostile: bool
    oddities: bool
    base_url: str
    include_seed: dict[str, Any] | None


def generate_corpus(n_stories: int, seed: int = 0, **options: Unpack[CorpusOptions]) -> Corpus:
    """Generate ``n_stories`` synthetic stories (plus ``include_seed`` first, if given).

    Same arguments give byte-identical JSON. The options (:class:`CorpusOptions`, as for
    :func:`iter_stories`): ``hostile`` (default True) puts awkward text into about one story
    in five (and one manifest title in ten); ``oddities`` (default True) plants the
    :data:`ODDITIES`; ``base_url`` is where the stories live; ``include_seed`` is a real
    story dict, yielded unchanged (deep-copied) before the ``n_stories`` generated stories
    (some of which cite its manifests and link to it).
    """
    gen = _generator(n_stories, seed, **options)
    stream = _stories(gen, n_stories, options.get("include_seed"))
    # Story dicts hold no reference cycles, so the cyclic GC can only waste time here: with
    # millions of live containers its full passes roughly doubled the cost of 10k stories.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        stories = list(stream)
    finally:
        if gc_was_enabled:
            gc.enable()
    return Corpus(stories=stories, seed=seed, pool=tuple(gen.pool))


def iter_stories(
    n_stories: int,
    seed: int = 0,
    *,
    hostile: bool = True,
    oddities: bool = True,
    base_url: str = DEFAULT_BASE_URL,
    include_seed: dict[str, Any] | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield the same stories as :func:`generate_corpus`, in order, one at a time.

    Only the manifest pool (about ``n_stories // 2`` small records) is held in memory, so
    100k-story benchmarks stream in flat memory.
    """
    return _stories(
        _generator(
            n_stories,
            seed,
            hostile=hostile,
            oddities=oddities,
            base_url=base_url,
            include_seed=include_seed,
        ),
        n_stories,
        include_seed,
    )


def _generator(n_stories: int, seed: int, **options: Unpack[CorpusOptions]) -> _Generator:
    if n_stories < 0:
        raise ValueError("n_stories must be >= 0")
    return _Generator(
        n=n_stories,
        seed=seed,
        hostile=options.get("hostile", True),
        oddities=options.get("oddities", True),
        base_url=options.get("base_url", DEFAULT_BASE_URL).rstrip("/"),
        seed_story=options.get("include_seed"),
    )


def _stories(
    gen: _Generator, n_stories: int, include_seed: dict[str, Any] | None
) -> Iterator[dict[str, Any]]:
    if include_seed is not None:
        yield copy.deepcopy(include_seed)
    for index in range(n_stories):
        yield gen.story(index)


def _dumps(story: dict[str, Any]) -> str:
    """Serialise a story the way the corpus files are written."""
    return json.dumps(story, ensure_ascii=False, indent=2)


@dataclass(frozen=True, slots=True)
class _Manifest:
    """One pool manifest: listing fields plus the claim ids that belong to it."""

    manifest_id: str
    title: str
    source_name: str
    source_url: str
    published_date: str
    claims: tuple[str, ...]
    ring: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """``ring`` is ``claims`` twice, so a wrapping run of claims is one slice."""
        object.__setattr__(self, "ring", self.claims + self.claims)

    def entry(self) -> dict[str, Any]:
        """A fresh ``manifests[]`` entry (fresh so oddities can never leak between stories)."""
        return {name: getattr(self, name) for name in _LISTING}


#: The fields of a ``manifests[]`` entry, in the order a story lists them.
_LISTING = ("manifest_id", "title", "source_name", "source_url", "published_date")


@dataclass(frozen=True, slots=True)
class _Head:
    """The parts of a story that other stories' related links need: computed from its index."""

    slug: str
    date: dt.date
    headline: str
    hostile: bool
    url: str


_NO_SNIPPET = 255


@dataclass(frozen=True, slots=True)
class _HeadTable:
    """Per-index headline choices, one byte each, drawn up front from one RNG.

    Related links need the slug and headline of arbitrary other stories; looking them up in
    bytearrays (5 bytes per story) is far cheaper than re-seeding an RNG per lookup and still
    lets every story be built from its index alone.
    """

    topic: bytearray
    subject: bytearray
    predicate: bytearray
    snippet1: bytearray
    snippet2: bytearray

    @classmethod
    def build(cls, rng: random.Random, n: int, hostile: bool) -> _HeadTable:
        """Draw the choices for ``n`` stories; about ``HOSTILE_RATE`` get hostile snippets."""
        rand = rng.random
        columns = [bytearray(n) for _ in range(5)]
        topic, subject, predicate, snippet1, snippet2 = columns
        n_snippets = len(HOSTILE_SNIPPETS)
        for index in range(n):
            topic[index] = int(rand() * len(TOPICS))
            subject[index] = int(rand() * len(HEAD_SUBJECTS))
            predicate[index] = int(rand() * len(HEAD_PREDICATES))
            is_hostile = hostile and rand() < HOSTILE_RATE
            snippet1[index] = int(rand() * n_snippets) if is_hostile else _NO_SNIPPET
            two = is_hostile and rand() < 0.5
            snippet2[index] = int(rand() * n_snippets) if two else _NO_SNIPPET
        return cls(topic, subject, predicate, snippet1, snippet2)


@dataclass
class _Body:
    """Mutable working state while one story's citations are assembled."""

    listed: list[_Manifest]
    sections: list[dict[str, Any]]
    key_facts: list[dict[str, Any]] = field(default_factory=list)


def _zipf_cum_weights(size: int, exponent: float) -> list[float]:
    """Cumulative Zipf weights 1/rank**exponent for ranks 1..size."""
    return list(accumulate(1.0 / (rank**exponent) for rank in range(1, size + 1)))


def _pick(rng: random.Random, items: Sequence[_T]) -> _T:
    """Uniform choice (a little cheaper than ``rng.choice``)."""
    return items[int(rng.random() * len(items))]


def _hostile_text(rng: random.Random, base: str) -> str:
    """Append one or two hostile snippets to ``base``."""
    extra = " ".join(_pick(rng, HOSTILE_SNIPPETS) for _ in range(1 + int(rng.random() * 2)))
    return f"{base} {extra}"


@dataclass(kw_only=True, eq=False)
class _Generator:
    """Holds the manifest pool, the head tables and options; builds any story by index."""

    n: int
    seed: int
    hostile: bool
    oddities: bool
    base_url: str
    seed_story: dict[str, Any] | None

    def __post_init__(self) -> None:
        n = self.n
        self.days = max(2, min(14, n // 100 + 2))
        self.publishers = self._publisher_names(max(8, n // 200))
        self.pool = self._manifest_pool(max(30, n // 2))
        self.pool_cum = _zipf_cum_weights(len(self.pool), 1.1)
        self.seed_manifests = _seed_manifests(self.seed_story) if self.seed_story else []
        self.heads = _HeadTable.build(self._rng("heads", n), n, self.hostile)
        self.texts = SampleTexts(self.pool)  # claim texts; paragraphs restate their claims

    def _rng(self, *parts: object) -> random.Random:
        """A private RNG for one purpose, seeded by a string (hashed with SHA-512 by Random)."""
        return random.Random(":".join(["hcgraph-sample", str(self.seed), *map(str, parts)]))

    @staticmethod
    def _publisher_names(count: int) -> list[str]:
        """``count`` unique publisher names like ``arxiv-agents``."""
        names = []
        width = len(PUBLISHER_PREFIXES) * len(TOPICS)
        for j in range(count):
            prefix = PUBLISHER_PREFIXES[j % len(PUBLISHER_PREFIXES)]
            topic = TOPICS[(j // len(PUBLISHER_PREFIXES)) % len(TOPICS)]
            suffix = f"-{j // width}" if j >= width else ""
            names.append(f"{prefix}-{topic}{suffix}")
        return names

    def _manifest_pool(self, size: int) -> list[_Manifest]:
        """The shared manifests, listed in popularity order (index 0 is most popular)."""
        rng = self._rng("pool", self.n)
        pub_cum = _zipf_cum_weights(len(self.publishers), 1.0)
        ids = list(range(size))
        rng.shuffle(ids)  # popularity rank is unrelated to id order
        pool = []
        for j in ids:
            claim_base = CLAIM_ID_BASE + j * 8
            claims = tuple(str(claim_base + c) for c in range(2 + int(rng.random() * 7)))
            name = f"{_pick(rng, NAME_HEADS)}{_pick(rng, NAME_TAILS)}"
            title = f"{name}: {_pick(rng, TITLE_PHRASES)} {_pick(rng, TOPICS).capitalize()}"
            if self.hostile and rng.random() < HOSTILE_RATE / 2:
                title = _hostile_text(rng, title)
            publisher = self.publishers[bisect_left(pub_cum, rng.random() * pub_cum[-1])]
            date = BASE_DATE - dt.timedelta(days=1 + int(rng.random() * 6))
            pool.append(
                _Manifest(
                    manifest_id=str(MANIFEST_ID_BASE + j),
                    title=title,
                    source_name=publisher,
                    source_url=f"{PAPERS_BASE_URL}/{publisher}/{j:07d}",
                    published_date=date.isoformat(),
                    claims=claims,
                )
            )
        return pool

    # ----- per-story pieces -------------------------------------------------------------

    def head(self, index: int) -> _Head:
        """Slug, date, headline and url of generated story ``index`` (any index, any order)."""
        table = self.heads
        topic = TOPICS[table.topic[index]]
        headline = (
            f"{HEAD_SUBJECTS[table.subject[index]]} {HEAD_PREDICATES[table.predicate[index]]}"
        )
        hostile = table.snippet1[index] != _NO_SNIPPET
        if hostile:
            extra = [HOSTILE_SNIPPETS[table.snippet1[index]]]
            if table.snippet2[index] != _NO_SNIPPET:
                extra.append(HOSTILE_SNIPPETS[table.snippet2[index]])
            headline = f"{headline} {' '.join(extra)}"
        date = BASE_DATE + dt.timedelta(days=index * self.days // max(1, self.n))
        slug = f"sample-{index:05d}-{topic}"
        url = f"{self.base_url}/stories/{date.isoformat()}/{slug}/"
        return _Head(slug=slug, date=date, headline=headline, hostile=hostile, url=url)

    def plan_oddities(self, rng: random.Random, index: int) -> frozenset[str]:
        """Which oddities story ``index`` carries (random few %, plus forced ones)."""
        if not self.oddities:
            return frozenset()
        force = self.n >= _FORCE_ODDITIES_MIN_STORIES
        chosen = set()
        for position, kind in enumerate(ODDITIES):
            hit = rng.random() < ODDITY_RATE
            if hit or (force and index == 1 + 3 * position):
                chosen.add(kind)
        return frozenset(chosen)

    def draw_manifests(self, rng: random.Random, index: int) -> list[_Manifest]:
        """2-7 distinct pool manifests by Zipf popularity; maybe one seed-story manifest last."""
        want = 2 + int(rng.random() * 6)
        want = min(want, len(self.pool))
        cum, total = self.pool_cum, self.pool_cum[-1]
        seen: dict[int, None] = {}
        while len(seen) < want:
            seen[bisect_left(cum, rng.random() * total)] = None
        drawn = [self.pool[j] for j in seen]
        if self.seed_manifests and (index == 0 or rng.random() < SEED_MANIFEST_RATE):
            drawn[-1] = _pick(rng, self.seed_manifests)
        return drawn

    def story(self, index: int) -> dict[str, Any]:
        """Build generated story ``index`` as a JSON-ready dict."""
        rng = self._rng(index)
        head = self.head(index)
        odd = self.plan_oddities(rng, index)
        drawn = self.draw_manifests(rng, index)
        reserved = drawn[0].claims[-1] if "unsupported_key_fact" in odd else None
        body = _Body(listed=list(drawn), sections=self._sections(rng, head, drawn, reserved))
        body.key_facts = _key_facts(rng, body.sections)
        self._apply_citation_oddities(rng, odd, body, drawn, reserved)
        for position, fact in enumerate(body.key_facts):  # no draw: the RNG stream stays
            draw = (index * 7919 + position * 104729) % 65536 / 65536
            fact["text"] = self.texts.key_fact(fact["cites"], draw, fact["text"])
        newsroom, newsroom_title, beats = _pick(rng, NEWSROOMS)
        hour = 6 * int(rng.random() * 4)
        edition = f"{head.date.isoformat()}T{hour:02d}"
        stamp = f"{hour + int(rng.random() * 6):02d}:{int(rng.random() * 60):02d}"
        published_at = f"{head.date.isoformat()}T{stamp}:{int(rng.random() * 60):02d}Z"
        listed_ids = [m.manifest_id for m in body.listed]
        trust = _pick(rng, TRUST_LEVELS)
        story: dict[str, Any] = {
            "schema": "hangingcontext.desk/1",
            "type": "story",
            "sample": True,
            "id": str(STORY_ID_BASE + index),
            "slug": head.slug,
            "edition": edition,
            "url": head.url,
            "newsroom": newsroom,
            "beat": _pick(rng, beats),
            "newsroom_title": newsroom_title,
            "angle": _pick(rng, text_bank().sentences),
            "headline": head.headline,
            "dek": self._maybe_hostile(rng, head, _pick(rng, text_bank().deks)),
            "published_at": published_at,
            "labels": {
                "trust": trust,
                "trust_text": f"{trust.capitalize()} \u00b7 {len(body.listed)} sources",
                "newsroom": newsroom_title,
            },
            "source_count": len(body.listed),
            "publishers": sorted({m.source_name for m in body.listed}),
            "key_facts": body.key_facts,
            "images": [],
            "sections": body.sections,
            "unresolved": self._unresolved(rng, head),
            "decision_card": _decision_card(rng),
            "writer": {"agent": _pick(rng, WRITERS), "run_id": edition},
            "corrections": _corrections(rng, head.date),
            "cited_manifest_ids": _cited_ids(body),
            "manifests": [m.entry() for m in body.listed],
            "run_these_manifests": _run_these(listed_ids),
            "links": {
                "html": head.url,
                "json": head.url + "index.json",
                "markdown": head.url + "index.md",
                "newsroom": f"{self.base_url}/n/{newsroom}/",
                "edition": f"{self.base_url}/editions/{edition}/",
            },
            "related": self._related(rng, index, head),
            "sponsor": _sponsor(),
            # The text names the generator's old module: kept, so corpora stay byte-identical.
            "disclosure": (
                "Synthetic sample data generated by hcgraph.sample for tests and benchmarks. "
                "Not a news story; the sources, claims and links are invented."
            ),
            "reuse": _reuse(self.base_url, head.url),
        }
        _apply_field_oddities(rng, odd, story)
        return story

    def _maybe_hostile(self, rng: random.Random, head: _Head, text: str) -> str:
        """Make ``text`` hostile about half the time in a hostile story."""
        return _hostile_text(rng, text) if head.hostile and rng.random() < 0.5 else text

    def _sections(
        self,
        rng: random.Random,
        head: _Head,
        drawn: list[_Manifest],
        reserved: str | None,
    ) -> list[dict[str, Any]]:
        """3-6 sections of 1-3 paragraphs; every drawn manifest cited at least once."""
        rand = rng.random  # hot loop: bound method and inlined picks
        shape = [1 + int(rand() * 3) for _ in range(3 + int(rand() * 4))]
        n_paragraphs = sum(shape)
        cites: list[list[dict[str, Any]]] = [[] for _ in range(n_paragraphs)]
        for position, manifest in enumerate(drawn):
            cites[position % n_paragraphs].append(_cite(rng, manifest, reserved))
        n_drawn = len(drawn)
        for paragraph in cites:
            have = len(paragraph)
            extra = int(rand() * 3) if have else 1 + int(rand() * 3)
            for _ in range(min(extra, 3 - have)):
                paragraph.append(_cite(rng, drawn[int(rand() * n_drawn)], reserved))
        texts = text_bank().paragraphs
        sections = []
        position = 0
        for count in shape:
            paragraphs = []
            for _ in range(count):
                draw = rand()  # one draw, as when a filler text was picked: counts stay
                text = self.texts.paragraph(cites[position], draw, texts[int(draw * len(texts))])
                if head.hostile:
                    text = self._maybe_hostile(rng, head, text)
                paragraphs.append({"markdown": text, "cites": cites[position]})
                position += 1
            heading = HEADINGS[int(rand() * len(HEADINGS))]
            if head.hostile:
                heading = self._maybe_hostile(rng, head, heading)
            sections.append({"heading": heading, "paragraphs": paragraphs})
        return sections

    def _apply_citation_oddities(
        self,
        rng: random.Random,
        odd: frozenset[str],
        body: _Body,
        drawn: list[_Manifest],
        reserved: str | None,
    ) -> None:
        """Plant the oddities that change citations, sections or the manifests listing."""
        paragraphs = [p for s in body.sections for p in s["paragraphs"]]
        if "dangling_cite" in odd:
            manifest = self._outsider(rng, {m.manifest_id for m in body.listed})
            _pick(rng, paragraphs)["cites"].append(_cite(rng, manifest, None))
        if "listed_uncited" in odd:
            taken = {m.manifest_id for m in body.listed} | set(_cited_ids(body))
            body.listed.append(self._outsider(rng, taken))
        if "claim_conflict" in odd:
            source = paragraphs[0]["cites"][0]
            other = next(m for m in drawn if m.manifest_id != source["manifest_id"])
            cite = {"manifest_id": other.manifest_id, "claim_ids": [source["claim_ids"][0]]}
            paragraphs[-1]["cites"].append(cite)
        if "uncited_paragraph" in odd:
            section = _pick(rng, body.sections)
            text = _pick(rng, text_bank().sentences)
            section["paragraphs"].append({"markdown": text, "cites": []})
        if "empty_section" in odd:
            position = int(rng.random() * (len(body.sections) + 1))
            body.sections.insert(position, {"heading": _pick(rng, HEADINGS), "paragraphs": []})
        if "unsupported_key_fact" in odd and reserved is not None:
            cite = {"manifest_id": drawn[0].manifest_id, "claim_ids": [reserved]}
            body.key_facts.append(_key_fact(rng, [cite]))
        if "int_claim_id" in odd:
            cite = paragraphs[0]["cites"][0]
            cite["claim_ids"][0] = int(cite["claim_ids"][0])

    def _outsider(self, rng: random.Random, taken_ids: set[str]) -> _Manifest:
        """A uniformly drawn pool manifest whose id is not in ``taken_ids``."""
        while True:
            manifest = _pick(rng, self.pool)
            if manifest.manifest_id not in taken_ids:
                return manifest

    def _unresolved(self, rng: random.Random, head: _Head) -> list[str]:
        """0-4 unresolved caveats; a hostile story gets a hostile one."""
        items = [_pick(rng, UNRESOLVED) for _ in range(int(rng.random() * 5))]
        if head.hostile:
            items.append(_hostile_text(rng, "Open question:"))
        return items

    def _related(self, rng: random.Random, index: int, head: _Head) -> list[dict[str, Any]]:
        """1-4 related links: mutual pairs (cycles), random stories, missing ones, the seed."""
        targets: list[dict[str, Any]] = []
        partner = index ^ 1
        if (index // 2) % 4 == 0 and partner < self.n:
            targets.append(self._link(self.head(partner)))
        randoms = []
        if self.n > 1:
            for _ in range(1 + int(rng.random() * 3)):
                other = int(rng.random() * (self.n - 1))
                randoms.append(self._link(self.head(other + (other >= index))))
        if index == 2 or rng.random() < MISSING_RELATED_RATE or not (targets or randoms):
            targets.append(self._missing_link(rng, head))
        if self.seed_story and (index == 0 or rng.random() < SEED_RELATED_RATE):
            story = self.seed_story
            targets.append(
                {"url": story["url"], "headline": story["headline"], "slug": story["slug"]}
            )
        unique = {t["url"]: t for t in [*targets, *randoms]}
        return list(unique.values())[:4]

    @staticmethod
    def _link(target: _Head) -> dict[str, Any]:
        """A related-link object pointing at another generated story."""
        return {"url": target.url, "headline": target.headline, "slug": target.slug}

    def _missing_link(self, rng: random.Random, head: _Head) -> dict[str, Any]:
        """A related link to a story that is never generated (slug prefix ``unpublished-``)."""
        slug = f"unpublished-{int(rng.random() * 100_000):05d}-{_pick(rng, TOPICS)}"
        date = (head.date - dt.timedelta(days=1 + int(rng.random() * 5))).isoformat()
        url = f"{self.base_url}/stories/{date}/{slug}/"
        return {"url": url, "headline": "A story outside this corpus", "slug": slug}


def _seed_manifests(story: dict[str, Any]) -> list[_Manifest]:
    """The seed story's listed manifests with the claim ids it cites under each."""
    claims: dict[str, dict[str, None]] = {}  # manifest id → its claim ids, in citing order
    cite_lists = [p.get("cites", []) for s in story.get("sections", []) for p in s["paragraphs"]]
    cite_lists += [k.get("cites", []) for k in story.get("key_facts", [])]
    for cites in cite_lists:
        for cite in cites:
            bucket = claims.setdefault(str(cite["manifest_id"]), {})
            bucket.update(dict.fromkeys(str(claim) for claim in cite.get("claim_ids", [])))
    manifests = []
    for entry in story.get("manifests", []):
        owned = claims.get(str(entry["manifest_id"]))
        if owned:
            mid, title, name, url, date = itemgetter(*_LISTING)(entry)
            manifests.append(_Manifest(str(mid), title, name, url, date, tuple(owned)))
    return manifests


def _cite(rng: random.Random, manifest: _Manifest, reserved: str | None) -> dict[str, Any]:
    """A cite of a run of 1-3 of the manifest's own claims, never the reserved one."""
    claims = manifest.claims
    if reserved is not None and reserved in claims and len(claims) > 1:
        kept = tuple(c for c in claims if c != reserved)
        return {"manifest_id": manifest.manifest_id, "claim_ids": _run(rng, kept + kept)}
    return {"manifest_id": manifest.manifest_id, "claim_ids": _run(rng, manifest.ring)}


def _run(rng: random.Random, ring: tuple[str, ...]) -> list[str]:
    """1-3 consecutive items (wrapping) of a sequence given twice over in ``ring``."""
    size = len(ring) >> 1
    start = int(rng.random() * size)
    count = 1 + int(rng.random() * 3)
    return list(ring[start : start + (count if count < size else size)])


def _key_fact(rng: random.Random, cites: list[dict[str, Any]]) -> dict[str, Any]:
    """A key fact object with the given cites."""
    text = _pick(rng, text_bank().facts)
    return {"text": text, "self_reported": rng.random() < 0.7, "cites": cites}


def _key_facts(rng: random.Random, sections: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """2-6 key facts, each citing a subset of claims some paragraph already cites."""
    cites = [c for s in sections for p in s["paragraphs"] for c in p["cites"]]
    facts = []
    for _ in range(2 + int(rng.random() * 5)):
        source = _pick(rng, cites)
        claims = source["claim_ids"][: 1 + int(rng.random() * len(source["claim_ids"]))]
        facts.append(_key_fact(rng, [{"manifest_id": source["manifest_id"], "claim_ids": claims}]))
    return facts


def _cited_ids(body: _Body) -> list[str]:
    """Manifest ids cited by paragraphs then key facts, in first-appearance order."""
    cites = [c for s in body.sections for p in s["paragraphs"] for c in p["cites"]]
    cites += [c for fact in body.key_facts for c in fact["cites"]]
    return list(dict.fromkeys(c["manifest_id"] for c in cites))


def _apply_field_oddities(rng: random.Random, odd: frozenset[str], story: dict[str, Any]) -> None:
    """Plant oddities on the finished story: unknown fields, declared mismatches, int ids."""
    if "extra_top_field" in odd:
        story["x_future_field"] = {"version": 2, "flags": ["beta", "sample"], "note": None}
    if "extra_nested_field" in odd:
        story["labels"]["x_badge"] = {"color": "teal", "rank": 3}
        story["decision_card"]["x_audience"] = ["auditors"]
        story["manifests"][0]["x_doi"] = "10.0000/sample"
        paragraphs = [p for s in story["sections"] for p in s["paragraphs"]]
        _pick(rng, paragraphs)["x_confidence"] = 0.73
    if "publishers_mismatch" in odd:
        story["publishers"] = story["publishers"][:-1]
    if "source_count_mismatch" in odd:
        story["source_count"] += 1
    if "cited_ids_mismatch" in odd:
        story["cited_manifest_ids"] = story["cited_manifest_ids"][:-1]
    if "int_story_id" in odd:
        story["id"] = int(story["id"])


def _decision_card(rng: random.Random) -> dict[str, list[str]]:
    """The decision card: who the story is useful for, not for, and what to compare."""
    return {
        "useful_for": sorted({_pick(rng, USEFUL_FOR) for _ in range(2)}),
        "not_for": [_pick(rng, NOT_FOR)],
        "compare_against": sorted({_pick(rng, COMPARE_AGAINST) for _ in range(2)}),
    }


def _corrections(rng: random.Random, date: dt.date) -> list[dict[str, str]]:
    """Usually no corrections; occasionally one dated a day after publication."""
    if rng.random() >= CORRECTION_RATE:
        return []
    when = (date + dt.timedelta(days=1)).isoformat()
    return [{"date": when, "text": "An earlier version misstated a benchmark figure."}]


def _run_these(manifest_ids: list[str]) -> dict[str, Any]:
    """The ``run_these_manifests`` block, pointing at an example API host."""
    template = f"{API_BASE_URL}/manifests/by-id/{{manifest_id}}"
    first = manifest_ids[0] if manifest_ids else ""
    curl = 'curl -s -H "Authorization: Bearer $SAMPLE_KEY"'
    return {
        "title": "Run these Manifests yourself",
        "summary": "Sample data: these Manifest ids are synthetic and resolve nowhere.",
        "manifest_ids": list(manifest_ids),
        "steps": [
            {"n": 1, "title": "Get a key", "text": f"Sample only: see {API_BASE_URL}/connect."},
            {"n": 2, "title": "Read each cited Manifest by id", "text": f"GET {template}"},
            {"n": 3, "title": "Check the claim", "text": "Match sentences to cited claims."},
        ],
        "mcp_url": f"{API_BASE_URL}/mcp",
        "connect_url": f"{API_BASE_URL}/connect",
        "request": {
            "method": "GET",
            "url_template": template,
            "headers": {"Authorization": "Bearer <SAMPLE_KEY>"},
        },
        "commands": {
            "one": f"{curl} {API_BASE_URL}/manifests/by-id/{first}",
            "all": f"for id in {' '.join(manifest_ids)}; do\n"
            f'  {curl} "{API_BASE_URL}/manifests/by-id/$id"\ndone',
        },
    }


def _sponsor() -> dict[str, Any]:
    """A sponsor block of the real shape, clearly marked as sample."""
    return {
        "label": "Sample sponsor",
        "title": "Nothing to buy",
        "text": "Placeholder sponsor block in synthetic sample data.",
        "cta": {"label": "Learn more", "url": f"{API_BASE_URL}/connect"},
        "note": "Synthetic sample data; not an advertisement.",
    }


def _reuse(base_url: str, url: str) -> dict[str, Any]:
    """A reuse block of the real shape, pointing at the sample site."""
    return {
        "version": "1",
        "summary": "Synthetic sample data generated by hcgraph; reuse freely in tests.",
        "attribution": "hcgraph sample data",
        "link_rule": "Link to the story's canonical URL (the url field of the story).",
        "keep_ids_rule": "Keep the Manifest ids the story cites for a claim.",
        "no_endorsement": "Sample data implies no endorsement by anyone.",
        "license_url": f"{base_url}/terms/reuse/",
        "machine_url": f"{base_url}/.well-known/reuse.json",
        "canonical_url": url,
    }
