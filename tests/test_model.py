"""The story model: the whole document, exact ids, kept extras, errors with source and path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hcgraph.errors import NotAStoryError, StoryError
from hcgraph.model import parse_story


def _doc(seed_path: Path) -> dict:
    return json.loads(seed_path.read_text())


def test_seed_story_parses_whole(seed_bytes: bytes) -> None:
    story = parse_story(seed_bytes, "seed.json")
    assert story.id == "278"
    assert story.headline.startswith("Agentic RL grows up")
    assert story.published_at is not None and story.published_at.year == 2026
    assert len(story.sections) == 5
    assert sum(len(s.paragraphs) for s in story.sections) == 9
    assert len(story.key_facts) == 5
    assert len(story.manifests) == 5
    assert story.manifests[0].manifest_id == "1792439777014362933"
    assert str(story.manifests[0].published_date) == "2026-10-19"
    assert story.writer is not None and story.writer.agent == "muse"
    assert story.decision_card is not None and len(story.decision_card.useful_for) == 2
    assert story.reuse is not None and story.reuse.license_url
    assert story.run_these_manifests is not None
    assert len(story.run_these_manifests.manifest_ids) == 5
    assert story.json_url.endswith("/agentic-rl-production/index.json")


def test_integer_ids_keep_every_digit(seed_path: Path) -> None:
    doc = _doc(seed_path)
    big = 1792440033556282600123  # > 2**64: a float would round it
    doc["id"] = big
    doc["sections"][0]["paragraphs"][0]["cites"][0]["claim_ids"][0] = big
    story = parse_story(json.dumps(doc), "x.json")
    assert story.id == str(big)
    assert story.sections[0].paragraphs[0].cites[0].claim_ids[0] == str(big)


def test_float_id_is_refused_with_path(seed_path: Path) -> None:
    doc = _doc(seed_path)
    doc["sections"][2]["paragraphs"][0]["cites"][0]["manifest_id"] = 1.7924e18
    with pytest.raises(StoryError) as info:
        parse_story(json.dumps(doc), "x.json")
    message = str(info.value)
    assert message.startswith("x.json: sections[2].paragraphs[0].cites[0].manifest_id: ")
    assert "loses digits" in message


def test_missing_field_names_source_and_json_path(seed_path: Path) -> None:
    doc = _doc(seed_path)
    del doc["sections"][2]["paragraphs"][0]["cites"][0]["manifest_id"]
    with pytest.raises(StoryError) as info:
        parse_story(json.dumps(doc), "stories/a.json")
    assert str(info.value) == (
        "stories/a.json: sections[2].paragraphs[0].cites[0].manifest_id: field required"
    )
    assert info.value.problems == [
        ("sections[2].paragraphs[0].cites[0].manifest_id", "field required")
    ]


def test_bad_date_is_a_schema_error(seed_path: Path) -> None:
    doc = _doc(seed_path)
    doc["manifests"][1]["published_date"] = "yesterday"
    with pytest.raises(StoryError) as info:
        parse_story(json.dumps(doc), "x.json")
    assert info.value.problems[0][0] == "manifests[1].published_date"


@pytest.mark.parametrize(
    "text, expect",
    [
        ('{"schema": "hangingcontext.desk/1", "type": "edition", "id": "1", '
         '"url": "https://a.example/x/", "headline": "h"}', "type='edition'"),
        ('{"schema": "other/2", "type": "story"}', "schema='other/2'"),
        ("[1, 2, 3]", "not a JSON object"),
        ('{"hello": "world"}', "schema=None"),
    ],
)  # fmt: skip
def test_not_a_story(text: str, expect: str) -> None:
    with pytest.raises(NotAStoryError) as info:
        parse_story(text, "doc.json")
    assert str(info.value).startswith("doc.json: ")
    assert expect in str(info.value)


def test_invalid_json_reports_line_and_column() -> None:
    with pytest.raises(StoryError) as info:
        parse_story(b'{"schema": "hangingcontext.desk/1",\n  "id": }', "broken.json")
    assert "broken.json: invalid JSON" in str(info.value)
    assert "line 2" in str(info.value)


def test_unknown_fields_are_kept(seed_path: Path) -> None:
    doc = _doc(seed_path)
    doc["x_future"] = {"a": [1, 2]}
    doc["sections"][0]["paragraphs"][0]["tone"] = "dry"
    story = parse_story(json.dumps(doc), "x.json")
    assert story.extra == {"x_future": {"a": [1, 2]}}
    assert story.sections[0].paragraphs[0].extra == {"tone": "dry"}


def test_lone_surrogate_is_refused_with_its_path(seed_path: Path) -> None:
    """Once kept as U+FFFD without a word; no Unicode text, so refused like other bad input
    (tests/test_hardening_dataio.py has the encoded form too)."""
    raw = seed_path.read_text().replace("Agentic RL grows up", "Agentic \\ud800 RL grows up", 1)
    with pytest.raises(StoryError) as info:
        parse_story(raw, "x.json")
    assert info.value.problems[0][0] == "headline"


@pytest.mark.parametrize("url", ["file:///etc/passwd", "not a url", "https://a.example/<x>"])
def test_story_url_must_be_http(seed_path: Path, url: str) -> None:
    doc = _doc(seed_path)
    doc["url"] = url
    with pytest.raises(StoryError) as info:
        parse_story(json.dumps(doc), "x.json")
    assert info.value.problems[0][0] == "url"
