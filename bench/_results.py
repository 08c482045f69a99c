"""Shared by the bench scripts: print a results section and replace it in bench/RESULTS.md."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def publish(heading: str, section: str, write: bool) -> None:
    """Print a rendered section; with ``write`` (``--write-results``) also store it."""
    print(section)
    if write:
        write_section(heading, section)


def write_section(heading: str, section: str, path: Path = RESULTS) -> None:
    """Replace the ``## heading`` section (up to the next ``## ``) or append it."""
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    start = text.find(heading)
    if start == -1:
        text = text.rstrip() + "\n\n" + section
    else:
        end = text.find("\n## ", start + 1)
        text = text[:start] + section + (text[end + 1 :] if end != -1 else "")
    path.write_text(text)
