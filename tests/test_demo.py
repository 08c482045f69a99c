"""``hcgraph demo`` end to end: a fresh directory, the real entry point, loopback only."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyoxigraph as ox
import pytest

from hcgraph import demo
from hcgraph.demo import sample_site
from hcgraph.store import Store

SEED = "https://hangingcontext.com/stories/2026-10-20/agentic-rl-production/"


def test_demo_end_to_end(run_cli, tmp_path: Path) -> None:
    result = run_cli("demo", "--stories", "30", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    stories = int(re.search(r"stories\s+(\d+) in the graph \(1 real", out).group(1))
    reused = int(re.search(r"sources\s+(\d+) manifests cited by 2\+ stories", out).group(1))
    failures = int(re.search(r"failures\s+(\d+) related links not ingested", out).group(1))
    assert stories > 10 and reused > 0 and failures >= 4
    for name in ("output/store", "output/graph.ttl", "output/crawl-report.json"):
        assert name in out and (tmp_path / name).exists()
    # Both maps are written, and the summary says how to open them.
    assert "open the maps in a browser" in out
    for name in ("output/map.html", "output/map-story.html"):
        assert (tmp_path / name).resolve().as_uri() in out and (tmp_path / name).exists()

    report = json.loads((tmp_path / "output" / "crawl-report.json").read_text())
    assert report["counts"]["stories"] == stories and len(report["failures"]) == failures
    # the seed's own related links are real stories the sample does not hold: honest 404s
    seed_links = {f["url"] for f in report["failures"] if f["linked_from"] == SEED + "index.json"}
    assert len(seed_links) == 4
    assert all(f["status"] == 404 for f in report["failures"])

    graph = ox.Store()
    graph.load(path=str(tmp_path / "output" / "graph.ttl"), format=ox.RdfFormat.TURTLE)
    story_type = ox.NamedNode("https://w3id.org/hcgraph/ns#Story")
    rdf_type = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    typed = {q.subject.value for q in graph.quads_for_pattern(None, rdf_type, story_type)}
    assert SEED in typed and len(typed) == stories
    assert all(s == SEED or s.startswith("https://news.example.org/") for s in typed)
    for link in seed_links:  # related, but not ingested: no hc:Story
        assert link.removesuffix("index.json") not in typed

    again = run_cli("demo", "--stories", "30", cwd=tmp_path)  # a conditional re-crawl
    assert again.returncode == 0
    assert f"this run: 0 added, 0 replaced, {stories} unchanged" in again.stdout


def test_sample_site_marks_generated_stories() -> None:
    files, seeds = sample_site(5, seed=1)
    assert seeds[0] == SEED
    for path, body in files.items():
        doc = json.loads(body)
        if path.startswith("/news.example.org/"):
            assert doc["sample"] is True
        else:
            assert path.startswith("/hangingcontext.com/") and "sample" not in doc


@pytest.mark.slow  # serves and crawls the sample site
def test_a_feature_adds_its_output_with_one_step(monkeypatch, tmp_path: Path) -> None:
    def count_stories(store_dir: Path, out_dir: Path) -> list[Path]:
        with Store(store_dir, read_only=True) as store:
            target = out_dir / "story-count.txt"
            target.write_text(str(len(store.story_graphs())))
        return [target]

    monkeypatch.setattr(
        demo, "DEMO_STEPS", [*demo.DEMO_STEPS, demo.DemoStep("count", count_stories)]
    )
    result = demo.run_demo(tmp_path / "out", n_stories=5)
    assert result.outputs["count"] == [tmp_path / "out" / "story-count.txt"]
    assert int((tmp_path / "out" / "story-count.txt").read_text()) == result.summary["stories"]
    assert (tmp_path / "out" / "graph.ttl").stat().st_size > 0
