"""bench/RESULTS.md opens with one table of today's figures, and its links resolve.

Every ``#anchor`` link inside the file and every ``RESULTS.md#anchor`` link in the docs and
the README names a heading of the file (GitHub's slugs), so moving sections under *History*
or appending new ones cannot leave a dangling link; each row of the table gives a date and
the command that produced its figure.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "RESULTS.md"


def _anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, and a
    ``-1``, ``-2`` … suffix on repeated headings."""
    seen: Counter[str] = Counter()
    out = set()
    for line in text.splitlines():
        match = re.match(r"#{1,6} (.+)", line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-")
        out.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return out


def _table(text: str) -> list[list[str]]:
    """The rows of the first table after the "Today's figures" heading."""
    section = text.split("## Today's figures", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip("|").split(" | ")] for ln in lines[2:]]


def test_the_file_opens_with_todays_figures_then_history() -> None:
    text = RESULTS.read_text()
    headings = [ln for ln in text.splitlines() if ln.startswith("## ")]
    assert headings[:2] == ["## Today's figures", "## History"]
    rows = _table(text)
    assert len(rows) >= 20
    things = [r[0] for r in rows]
    assert len(set(things)) == len(things)  # one row per thing
    for row in rows:
        assert len(row) == 7, row
        assert re.fullmatch(r"20\d\d-\d\d-\d\d", row[4]), row
        assert any(tool in row[5] for tool in ("bench/", "hcgraph", "script", "pytest")), row


def test_every_link_into_the_results_resolves() -> None:
    anchors = _anchors(RESULTS.read_text())
    links = re.findall(r"\]\(#([^)]+)\)", RESULTS.read_text())
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        links += re.findall(r"RESULTS\.md#([^)\s]+)\)", doc.read_text())
    assert len(links) >= 20
    missing = sorted(set(links) - anchors)
    assert not missing, missing
