"""The audit HTML report in real headless Chromium: renders, 0 requests, hostile text inert."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hcgraph import Store, ingest_bytes
from hcgraph.provenance.auditing import audit
from hcgraph.provenance.report_html import write_report
from hcsample.corpus import generate_corpus
from tests.conftest import SEED
from tests.hostile import CANARY, hostile_story
from tests.support.chromium import CHROMIUM

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def report_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    seed = json.loads(SEED.read_text())
    stories = generate_corpus(60, seed=3, hostile=True, include_seed=seed).stories
    hostile = hostile_story(SEED)
    hostile["headline"] = CANARY
    hostile["manifests"][0]["title"] = CANARY
    hostile["manifests"][0]["source_url"] = "javascript:window.__pwned='link'"
    hostile["sections"][0]["paragraphs"][0]["markdown"] = CANARY
    hostile["sections"][0]["paragraphs"][0]["cites"] = []  # an uncited paragraph: evidence
    hostile["publishers"] = [CANARY]
    docs = [(json.dumps(s).encode(), f"s{i}") for i, s in enumerate([*stories, hostile])]
    path = tmp_path_factory.mktemp("audit") / "audit.html"
    with Store(None) as st:
        assert not ingest_bytes(st, docs).failures
        write_report(audit(st), path)
    return path


def test_report_renders_offline_and_hostile_text_stays_inert(
    browser: Any, report_path: Path
) -> None:
    errors: list[str] = []
    requests: list[str] = []
    dialogs: list[str] = []
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    def route(r: Any) -> None:
        if r.request.url.startswith(("http://", "https://", "ws://", "wss://")):
            requests.append(r.request.url)
            r.abort()
        else:
            r.continue_()

    page.route("**/*", route)
    page.goto(report_path.as_uri())
    page.wait_for_function("() => window.hcauditReady === true", timeout=30_000)
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert errors == [] and requests == [] and dialogs == []
    assert page.evaluate("window.__pwned === undefined")
    assert page.evaluate("document.scripts.length") == 1
    assert page.evaluate("document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert page.evaluate("document.querySelectorAll('a[href^=javascript]').length") == 0
    # The hostile text is on the page, as text.
    assert CANARY.split(" \u2028")[0] in page.inner_text("#scorecard")
    assert "<script>window.__pwned='script'</script>" in page.inner_text("body")
    assert page.evaluate("document.querySelectorAll('svg').length") == 3
    rows = page.evaluate("document.querySelectorAll('#scorecard tbody tr').length")
    assert rows == 62
    # Sorting: click "findings" twice (descending): the first row has the most findings.
    header = page.locator("#scorecard th", has_text="findings").first
    header.click()
    header.click()
    counts = page.evaluate(
        "Array.from(document.querySelectorAll('#scorecard tbody tr'))"
        ".map(r => +r.cells[4].getAttribute('data-v'))"
    )
    assert counts == sorted(counts, reverse=True) and counts[0] > 0
    page.close()
    csp = report_path.read_text().split('http-equiv="Content-Security-Policy" content="')[1]
    assert csp.startswith("default-src 'none'") and "unsafe" not in csp.split('"')[0]
