"""A story full of hostile text, built from the real seed story (shared by export tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Hostile text written to *run* if it ever reached a page's DOM as markup: it sets a canary.
CANARY = (
    "<script>window.__pwned='script'</script> <img src=x onerror=\"window.__pwned='img'\"> "
    "</script><script>window.__pwned='breakout'</script> \u2028 end"
)

NASTY = [
    "double \"quotes\" and 'single'",
    "triple \"\"\" quotes ''' inside",
    "back\\slash \\n not-a-newline \\u0041 \\",
    "real\nnewline\r\nand\ttab",
    "unicode é 漢字 עברית 😀 \u200b\u202e",
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    '"> . <urn:x> <urn:y> "z" . @prefix x: <y> .',
    '} ; DROP ALL ; { """ \'',
    "control \x01\x08\x0b\x0c\x1f\x7f chars and NUL \x00 end",
]


def nul_headline_story(seed_path: Path, directory: Path) -> Path:
    """The seed story with the headline ``"a\\u0000b"`` (ingest accepts it; XML 1.0 cannot
    carry it at all), written to ``directory/nul.json``."""
    doc = json.loads(seed_path.read_text())
    doc["headline"] = "a\u0000b"
    path = directory / "nul.json"
    path.write_text(json.dumps(doc))
    return path


def hostile_story(seed_path: Path, *, slug: str = "hostile") -> dict[str, Any]:
    """The seed story with every free-text field (and a publisher name) made hostile."""
    doc = json.loads(seed_path.read_text())
    doc["url"] = f"https://news.example.org/stories/2026-10-21/{slug}/"
    doc["links"]["json"] = doc["url"] + "index.json"
    doc["slug"] = slug
    doc["id"] = "1899999999999999999"
    doc["headline"] = " | ".join(NASTY[:6])
    doc["dek"] = NASTY[6]
    doc["angle"] = NASTY[7]
    for i, section in enumerate(doc["sections"]):
        section["heading"] = NASTY[i % len(NASTY)]
        for j, para in enumerate(section["paragraphs"]):
            para["markdown"] = NASTY[(i + j + 3) % len(NASTY)] * 2
    for i, fact in enumerate(doc["key_facts"]):
        fact["text"] = NASTY[(i + 5) % len(NASTY)]
    doc["unresolved"] = NASTY[:4]
    doc["manifests"][0]["title"] = NASTY[8]
    doc["manifests"][1]["source_name"] = 'pub "<evil>" /../ ?x=1#frag 😀'
    doc["manifests"][2]["source_url"] = "https://papers.example.org/a b<c>"  # not an IRI
    doc["related"].append({"url": "javascript:alert(1)", "headline": NASTY[5], "slug": "x"})
    doc["x_future"] = {"note": NASTY[9]}
    return doc


def canary_documents(seed_path: Path) -> list[tuple[bytes, str]]:
    """The map tests' corpus as ``ingest_bytes`` documents: the seed story, 12 generated
    hostile-text stories, and a hostile story whose headline, first manifest title and first
    paragraph are :data:`CANARY`."""
    from hcsample.corpus import generate_corpus

    seed = json.loads(seed_path.read_text())
    stories = generate_corpus(12, seed=3, hostile=True, include_seed=seed).stories
    hostile = hostile_story(seed_path)
    hostile["headline"] = CANARY
    hostile["manifests"][0]["title"] = CANARY
    hostile["sections"][0]["paragraphs"][0]["markdown"] = CANARY
    return [(json.dumps(s).encode(), f"s{i}") for i, s in enumerate([*stories, hostile])]
