"""Related links are canonicalised as the crawler does, so ``related-not-ingested`` does not
list stories that are in the graph under their canonical URL."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hcgraph.ingest import ingest_bytes
from hcgraph.queries import run_query
from hcgraph.store import Store
from hcgraph.urls import canonicalize

SEED = Path(__file__).resolve().parent / "fixtures" / "agentic-rl-production.json"
OTHER = "https://hangingcontext.com/stories/2026-10-21/other-story/"
MISSING = "https://hangingcontext.com/stories/2026-10-22/never-ingested/"


def _stories() -> list[dict[str, Any]]:
    seed = json.loads(SEED.read_text())
    other = copy.deepcopy(seed)
    other["id"], other["url"], other["related"] = "9" * 19, OTHER, []
    other.pop("links", None)
    seed["related"] = [
        {"url": OTHER + "?utm_source=x#top", "headline": "Other, tracked"},
        {"url": OTHER.rstrip("/"), "headline": "Other, no slash"},
        {"url": "HTTPS://HangingContext.com:443/stories/2026-10-21/other-story/?fbclid=1"},
        {"url": MISSING + "?utm_medium=email&b=2&a=1#frag", "headline": "Missing"},
    ]
    return [seed, other]


def test_related_not_ingested_uses_canonical_urls() -> None:
    with Store(None) as store:
        report = ingest_bytes(store, [(json.dumps(s).encode(), f"{i}.json") for i, s in
                                      enumerate(_stories())])  # fmt: skip
        assert report.ok, report.failures
        rows = run_query(store, "related-not-ingested").records()
        related = {r["related"] for r in rows}
        assert related == {MISSING + "?a=1&b=2"}, related
        assert related == {canonicalize(MISSING + "?utm_medium=email&b=2&a=1#frag")}
        links = store.query("SELECT ?r WHERE { ?s <http://purl.org/dc/terms/relation> ?r }")
        targets = {str(row["r"].value) for row in links}  # type: ignore[index]
        assert targets == {OTHER, MISSING + "?a=1&b=2"}  # one link per canonical target
