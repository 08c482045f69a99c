"""What an audit finds: the checks, the options, one finding, and the facts read per story."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ._graph import manifest_id

__all__ = [
    "CHECKS",
    "MAX_REPEAT_WINDOW",
    "MAX_SOURCE_AGE",
    "AuditFinding",
    "AuditOptions",
    "StoryFacts",
    "manifest_ids",
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
