"""Review of the ingest fast paths: untrusted text stays text, through the public path.

Arbitrary Unicode (quotes, backslashes, CR/LF, U+2028, controls, astral characters, NFD forms)
goes in as a story's headline, a paragraph and an unmapped field; the store must hold the NFC
text, and ``rapper`` must parse the exported N-Triples and Turtle. Lone surrogates (only a JSON
escape can carry one) must be refused in one line naming the JSON path.
"""

from __future__ import annotations

import copy
import io
import json
import shutil
import subprocess
import unicodedata
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hcgraph import Store, export, ingest_bytes

FIXTURE = Path("/work/shared/fixtures/agentic-rl-production.json")
if not FIXTURE.exists():  # the repository's own copy of the seed story
    FIXTURE = Path(__file__).resolve().parent / "fixtures" / "agentic-rl-production.json"

_SPECIAL = [
    '"', "\\", "\n", "\r", "\t", "\u2028", "\u2029", "\x00", "\x07", "\x1b", "\x7f", "\x85",
    "\ufeff", "\ufffe", "\uffff", "\U0001f99c", "\U0010fffd", "e\u0301", "\u212b", "\\u0041",
    '\\"', "\\n", "<>", "'''", '"""', " .\n", "^^", "@en",
]  # fmt: skip
TEXTS = st.lists(
    st.one_of(
        st.sampled_from(_SPECIAL),
        st.text(st.characters(exclude_categories=("Cs",)), max_size=6),
    ),
    min_size=1,
    max_size=12,
).map("".join)


def _story() -> dict[str, Any]:
    return json.loads(FIXTURE.read_bytes())


def _ingest(doc: dict[str, Any], raw: bytes | None = None) -> tuple[Store, Any]:
    store = Store(None)
    body = json.dumps(doc, ensure_ascii=False).encode() if raw is None else raw
    report = ingest_bytes(store, [(body, "story.json")])
    return store, report


def _objects(store: Store, predicate: str, subject: str | None = None) -> list[ox.Literal]:
    subj = ox.NamedNode(subject) if subject else None
    return [
        q.object
        for q in store.quads(subj, ox.NamedNode(predicate))
        if isinstance(q.object, ox.Literal)
    ]


def _with_text(text: str) -> dict[str, Any]:
    doc = copy.deepcopy(_story())
    doc["headline"] = "H " + text
    doc["sections"][0]["paragraphs"][0]["markdown"] = "P " + text
    doc["x_review_note"] = text
    return doc


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS)
def test_text_comes_back_as_nfc(text: str) -> None:
    store, report = _ingest(_with_text(text))
    with store:
        assert not report.failures, report.failures
        want = unicodedata.normalize("NFC", text)
        url = _story()["url"]
        (headline,) = _objects(store, "https://schema.org/headline", url)
        assert headline.value == unicodedata.normalize("NFC", "H " + text)
        texts = {o.value for o in _objects(store, "https://schema.org/text")}
        assert unicodedata.normalize("NFC", "P " + text) in texts
        extras = [
            json.loads(o.value) for o in _objects(store, "https://w3id.org/hcgraph/ns#unmappedJson")
        ]
        assert {"x_review_note": want} in extras or any(
            e.get("x_review_note") == want for e in extras if isinstance(e, dict)
        )


_RAPPER = shutil.which("rapper")


def _raptor_reads(text: str) -> bool:
    """Raptor's own limits, not ours (the same before the fast paths): it stops a literal at
    U+0000 and refuses noncharacters (U+FFFE, U+FDD0, ...) even as ``\\u`` escapes."""
    return not any(
        c == "\x00" or 0xFDD0 <= ord(c) <= 0xFDEF or (ord(c) & 0xFFFE) == 0xFFFE for c in text
    )


@pytest.mark.slow
@pytest.mark.skipif(_RAPPER is None, reason="rapper is not installed")
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS.filter(_raptor_reads))
def test_rapper_parses_the_export(text: str) -> None:
    store, report = _ingest(_with_text(text))
    with store:
        assert not report.failures, report.failures
        for fmt, syntax in (("ntriples", "ntriples"), ("turtle", "turtle")):
            out = io.BytesIO()
            export(store, fmt, out)
            done = subprocess.run(
                [str(_RAPPER), "-q", "-i", syntax, "-o", "ntriples", "-", "http://base/"],
                input=out.getvalue(),
                capture_output=True,
                check=False,
            )
            assert done.returncode == 0, (fmt, done.stderr.decode(errors="replace")[:500])
            back = list(ox.parse(done.stdout, format=ox.RdfFormat.N_TRIPLES))
            heads = [t.object.value for t in back if t.predicate.value.endswith("/headline")]
            assert unicodedata.normalize("NFC", "H " + text) in heads


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "a\\ud83d", "\\ude00b"])
def test_lone_surrogate_is_refused_in_one_line(escape: str) -> None:
    raw = json.dumps(_story()).encode()
    raw = raw.replace(b'"headline": "', b'"headline": "' + escape.encode(), 1)
    store, report = _ingest({}, raw)
    with store:
        (failure,) = report.failures
        assert failure.json_path == "headline" or "headline" in str(failure)
        assert "surrogate" in str(failure)
        assert "\n" not in str(failure)
